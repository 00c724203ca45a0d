// The exported page's stand-in for a widget model: state and bodies come from the page.
// It answers the view's messages it can (requests' panes, bodies, copies); the others say so.
const data = JSON.parse(document.getElementById("dtl-data").textContent);
const state = data.state;
const handlers = {};
const reply = (msg) => setTimeout(() => (handlers["msg:custom"] || []).forEach((cb) => cb(msg)), 0);
const answers = {
  panes: (msg) => data.panes[msg.index] && { type: "panes", index: msg.index, data: data.panes[msg.index] },
  body: (msg) => {
    const n = data.bodies[`${msg.index}|${msg.ref}`];
    return { type: "body", index: msg.index, ref: msg.ref, html: n === undefined ? "" : data.texts[n] };
  },
  copy: (msg) => {  // from the page's own JSON: no kernel needed
    const c = data.copies.requests[msg.index];
    if (!c) return { type: "error", text: "copy: no such request in this page" };
    if (msg.what === "curl" && c.curl === null) return { type: "error", text: "copy curl: no public endpoint" };
    const item = (n) => JSON.parse(data.copies.items[n]);
    const body = {};
    for (const [name, ids] of Object.entries(c.fields)) body[name] = Array.isArray(ids) ? ids.map(item) : item(ids);
    let value = body;
    if (msg.what === "item") {
      const [field, index] = msg.path.split(".");
      value = index === undefined ? body[field] : body[field][Number(index)];
    }
    const json = JSON.stringify(value, null, 2);
    return { type: "copy", what: msg.what, text: msg.what === "curl" ? c.curl + json + data.copies.tail : json };
  },
};
const model = {
  get: (name) => state[name],
  set: (name, value) => { state[name] = value; },
  save_changes: () => {},
  on: (name, cb) => { (handlers[name] = handlers[name] || []).push(cb); },
  off: (name, cb) => { handlers[name] = (handlers[name] || []).filter((x) => x !== cb); },
  send: (msg) => {
    if (!msg || msg.type === "timeline") return;
    const answer = answers[msg.type] ? answers[msg.type](msg) : {
      type: "error", text: `${msg.type}: not available in an exported page (open the notebook)`,
    };
    if (answer) reply({ ...answer, view: msg.view });
  },
};
const url = URL.createObjectURL(new Blob([data.esm], { type: "text/javascript" }));
const view = await import(url);
const el = document.getElementById("dtl-root");
el.replaceChildren();
view.default.render({ model, el });
document.body.dataset.rendered = "1";
