// The proxy view: the agent view (view.js, joined in front of this file by proxy_view.py, its
// default export as `agentView`) under a bar with the conversation picker. Built with textContent only, never innerHTML.

function renderProxy({ model, el }) {
  const bar = document.createElement("div");
  bar.className = "dtl-proxy-bar";
  const label = document.createElement("label");
  label.textContent = "Conversation ";
  const picker = document.createElement("select");
  picker.className = "dtl-conv-picker";
  label.appendChild(picker);
  bar.appendChild(label);
  el.appendChild(bar);
  const cleanup = agentView.render({ model, el });

  function draw() {
    const list = model.get("conversations") || [];
    const chosen = model.get("conversation") || "";
    const follow = document.createElement("option");
    follow.value = "";
    follow.textContent = "newest (follows the traffic)";
    const options = [follow];
    for (const c of list) {
      const option = document.createElement("option");
      option.value = c.name;
      option.textContent = c.label;
      options.push(option);
    }
    picker.replaceChildren(...options);
    picker.value = chosen;
  }
  const onChange = () => {
    model.set("conversation", picker.value);
    model.save_changes();
  };
  picker.addEventListener("change", onChange);
  model.on("change:conversations", draw);
  model.on("change:conversation", draw);
  draw();
  return () => {
    picker.removeEventListener("change", onChange);
    model.off("change:conversations", draw);
    model.off("change:conversation", draw);
    if (typeof cleanup === "function") cleanup();
  };
}

export default { initialize: agentView.initialize, render: renderProxy };
