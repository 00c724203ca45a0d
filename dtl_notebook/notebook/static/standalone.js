// The exported page's stand-in for a widget model: state and bodies come from the page.
const data = JSON.parse(document.getElementById("dtl-data").textContent);
const state = data.state;
const handlers = {};
const fire = (name) => (handlers[name] || []).forEach((cb) => cb());
const model = {
  get: (name) => state[name],
  set: (name, value) => {
    state[name] = value;
    if (name === "selected") state.panes = data.panes[value] || state.panes;
  },
  save_changes: () => fire("change:panes"),
  on: (name, cb) => { (handlers[name] = handlers[name] || []).push(cb); },
  off: (name, cb) => { handlers[name] = (handlers[name] || []).filter((x) => x !== cb); },
  send: (msg) => {
    if (!msg || msg.type !== "body") return;
    const n = data.bodies[`${msg.index}|${msg.ref}`];
    const html = n === undefined ? "" : data.texts[n];
    const reply = { type: "body", index: msg.index, ref: msg.ref, html };
    setTimeout(() => (handlers["msg:custom"] || []).forEach((cb) => cb(reply)), 0);
  },
};
const url = URL.createObjectURL(new Blob([data.esm], { type: "text/javascript" }));
const view = await import(url);
const el = document.getElementById("dtl-root");
el.replaceChildren();
view.default.render({ model, el });
document.body.dataset.rendered = "1";
