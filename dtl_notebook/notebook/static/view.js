// The dtl_notebook view, part 5 of 5: one view of the model. Selection, pins and previews
// belong to this view; the model's synced state is what every view follows (the newest
// request); everything this view asks travels as a custom message tagged with its id and is
// answered to it alone. Draws are coalesced to one per animation frame.

const PANES = [
  ["state", "Agent state"],
  ["request", "Request JSON"],
  ["context", "Model context"],
];
const CACHED_PANES = 16;
let viewCount = 0;

function render({ model, el }) {
  ensureStyle();
  const id = `v${++viewCount}-${Math.random().toString(36).slice(2, 8)}`;
  const root = h("div", "dtl-view");
  const head = h("div", "dtl-head");
  const title = h("span", "dtl-title");
  const meta = h("span", "dtl-meta");
  const status = h("span", "dtl-status");
  const full = h("button", "dtl-fullbtn", "full width");
  full.type = "button";
  full.title = "Stack the panes at full width, each as tall as its content";
  full.addEventListener("click", () => full.classList.toggle("dtl-on", root.classList.toggle("dtl-full")));
  head.append(title, meta, status, full);
  const error = h("div", "dtl-error");
  const requestTitle = h("div", "dtl-request-title");
  const breakBox = h("div", "dtl-break");
  const summaryBox = h("div", "dtl-summary");
  const panesEl = h("div", "dtl-panes");
  const bodies = {};
  for (const [name, label] of PANES) {
    const pane = h("section", `dtl-pane dtl-pane-${name}`);
    pane.appendChild(h("h3", "dtl-pane-title", label));
    bodies[name] = pane.appendChild(h("div", "dtl-pane-body"));
    panesEl.appendChild(pane);
  }
  const linker = new Linker(root, bodies);
  const send = (msg) => model.send({ ...msg, view: id });
  let items = [];
  let chosen = null; // null: follow the newest; an index; or "preview"
  let shown = null; // the panes data on screen
  let preview = null; // {provider, current, item, data}
  let query = "";
  let revealing = null;
  const cache = new Map();
  const remember = (data) => {
    if (!data || data.index === undefined || data.index < 0) return;
    cache.delete(data.index);
    cache.set(data.index, data);
    if (cache.size > CACHED_PANES) cache.delete(cache.keys().next().value);
  };

  const view = {
    select(index) {
      if (index < 0 || index >= items.length) return;
      chosen = index;
      timeline.setSelected(index);
      const data = cache.get(index);
      if (data) showPanes(data);
      else {
        requestTitle.textContent = `Request ${index + 1} · loading…`;
        panesEl.setAttribute("aria-busy", "true"); // the panes below still show the previous request
        send({ type: "panes", index });
      }
    },
    follow() {
      chosen = null;
      timeline.setSelected(null);
      showPanes(model.get("panes") || {});
    },
    current() {
      if (chosen === "preview") return items.length;
      return chosen === null ? items.length - 1 : chosen;
    },
    step(delta) {
      const next = Math.min(items.length - 1, Math.max(0, view.current() + delta));
      view.select(next);
      timeline.focusSelected();
    },
    jumpBreak(direction) {
      const at = view.current();
      const breaks = timeline.breaks();
      const target = direction > 0 ? breaks.find((i) => i > at) : breaks.reverse().find((i) => i < at);
      if (target === undefined) return toolbar.say(`no ${direction > 0 ? "later" : "earlier"} cache break`);
      toolbar.say("");
      view.select(target);
      timeline.focusSelected();
    },
    escape() {
      if (linker.unpin()) return;
      if (chosen !== null) view.follow();
    },
    enter(target) {
      const link = target.closest(".dtl-link");
      const el = link || root.querySelector(".dtl-hl") || root.querySelector(".dtl-brk-lit");
      if (!el) return;
      if (link) linker.pin(link);
      const details = el.matches("details") ? el : el.querySelector("details");
      if (details) details.open = true;
    },
    preview(provider) {
      toolbar.say(`previewing ${provider}…`);
      send({ type: "preview", provider });
    },
    showPreview() {
      if (!preview) return;
      chosen = "preview";
      timeline.setSelected("preview");
      showPanes(preview.data);
      toolbar.offerSwitch(preview.provider, preview.current);
    },
    switchTo(provider) {
      if (provider) send({ type: "switch", provider });
    },
    search(text) {
      query = text.trim();
      foundRefs = new Set();
      applyFilter();
      if (shown) send({ type: "search", ...target(), query });
    },
    expandAll(open) {
      for (const d of panesEl.querySelectorAll("details")) d.open = open;
    },
    copy(what, path) {
      if (shown) send({ type: "copy", what, path: path || "", ...target() });
    },
  };

  const target = () =>
    chosen === "preview" && preview ? { index: -1, provider: preview.provider } : { index: shown ? shown.index : -1 };

  const timeline = new Timeline((i) => view.select(i), () => view.showPreview());
  const toolbar = new Toolbar(view);
  root.append(head, error, toolbar.el, toolbar.notice, timeline.overview, timeline.el, requestTitle, breakBox, summaryBox, toolbar.found, panesEl);
  el.appendChild(root);
  toolbar.say("");

  // The ref of a row's item: its lazy body's, or `request:tools.5` from a `tools[5]` label.
  function rowRef(row) {
    const slot = row.querySelector(".dtl-pending");
    if (slot) return classValue(slot, "dtl-ref:");
    const label = row.querySelector("summary code");
    const m = label && /^(\w+)\[(\d+)\]/.exec(label.textContent);
    return m ? `request:${m[1]}.${m[2]}` : "";
  }

  // Rows whose text holds the query stay, and so do rows the kernel found in their collapsed
  // bodies (`foundRefs`); windowed runs stay, so what they hide can be opened.
  let foundRefs = new Set();
  function applyFilter() {
    const needle = query.toLowerCase();
    for (const body of Object.values(bodies)) {
      for (const row of body.querySelectorAll(".dtl-row, tr")) {
        const keep =
          !needle ||
          row.classList.contains("dtl-window") ||
          row.textContent.toLowerCase().includes(needle) ||
          foundRefs.has(rowRef(row));
        row.classList.toggle("dtl-filtered", !keep);
      }
    }
    if (!query) toolbar.drawFound("", [], null);
  }

  function decorate() {
    for (const row of panesEl.querySelectorAll(".dtl-window:not(.dtl-decorated)")) {
      row.classList.add("dtl-decorated");
      row.appendChild(button("show here", "Open these items in place", () => openWindow(row), "dtl-open-window"));
    }
    for (const row of bodies.request.querySelectorAll(".dtl-row:not(.dtl-decorated)")) {
      const label = row.querySelector("summary code");
      const m = label && /^(\w+)\[(\d+)\]/.exec(label.textContent);
      if (!m) continue;
      row.classList.add("dtl-decorated");
      const copy = button("copy", `Copy ${m[1]}[${m[2]}] as JSON`, (e) => {
        e.preventDefault();
        view.copy("item", `${m[1]}.${m[2]}`);
      }, "dtl-copy-item");
      label.parentElement.appendChild(copy);
    }
  }

  function openWindow(row) {
    const [ref, start, end] = classValue(row, "dtl-win:").split(/:(?=\d)/);
    send({ type: "window", ref, start: Number(start), end: Number(end), ...target() });
  }

  function showPanes(data) {
    shown = data;
    panesEl.removeAttribute("aria-busy");
    requestTitle.textContent = data.title || "";
    breakBox.innerHTML = data.break || ""; // rendered and escaped in Python
    summaryBox.innerHTML = data.summary || ""; // rendered and escaped in Python
    for (const [name] of PANES) bodies[name].innerHTML = data[name] || "";
    if (chosen !== "preview") toolbar.offerSwitch(null);
    decorate();
    linker.drawn();
    applyFilter();
    if (query) send({ type: "search", ...target(), query });
  }

  function reveal(match) {
    const pane = bodies[match.ref.split(":")[0]];
    let found = pane.querySelector(`.${CSS.escape(`dtl-ref:${match.ref}`)}`);
    if (!found && match.window) {
      for (const row of pane.querySelectorAll(".dtl-window")) {
        const [ref, start, end] = classValue(row, "dtl-win:").split(/:(?=\d)/);
        if (ref === match.window && Number(start) <= match.index && match.index < Number(end)) {
          revealing = match;
          return openWindow(row);
        }
      }
    }
    const label = `${match.ref.split(":")[1].replace(/\.(\d+)$/, "[$1]")} `;
    found = found || Array.from(pane.querySelectorAll("summary code")).find((c) => c.textContent.startsWith(label));
    const details = found && found.closest("details");
    if (!details) return toolbar.say(`${match.label}: shown above`);
    details.open = true;
    const row = details.closest(".dtl-row") || details;
    row.classList.remove("dtl-filtered");
    row.classList.add("dtl-hl");
    linker.scrollTo([row], null);
  }

  // -- what the model sends -----------------------------------------------------------------
  let frame = 0;
  const dirty = new Set();
  function schedule(what) {
    dirty.add(what);
    if (!frame) frame = requestAnimationFrame(draw);
  }
  function draw() {
    frame = 0;
    if (dirty.has("header")) drawHeader();
    if (dirty.has("tail")) drawTail();
    if (dirty.has("panes")) {
      const data = model.get("panes") || {};
      remember(data);
      if (chosen === null) showPanes(data);
    }
    if (dirty.has("switched")) drawSwitched();
    dirty.clear();
  }

  function drawHeader() {
    const header = model.get("header") || {};
    title.textContent = header.title || "dtl_notebook";
    meta.textContent = `${header.provider} · ${header.model} · ${header.label} · tools ${header.tools}`;
    status.textContent = header.status || "";
    status.classList.toggle("dtl-running", (header.status || "").startsWith("running"));
    error.textContent = header.error || "";
    error.style.display = header.error ? "block" : "none";
    toolbar.drawProviders(model.get("providers") || [], !!header.live);
  }

  let asked = "";
  function drawTail() {
    const tail = model.get("tail") || {};
    (tail.items || []).forEach((item, k) => (items[(tail.start || 0) + k] = item));
    const count = model.get("count");
    items.length = Math.min(items.length, count);
    const missing = items.findIndex((x) => x === undefined);
    if (missing >= 0 || items.length < count) {
      const start = missing >= 0 ? missing : items.length;
      if (asked !== `${start}:${count}`) {
        asked = `${start}:${count}`;
        send({ type: "timeline", start, end: count });
      }
    }
    timeline.update(items);
  }

  function drawSwitched() {
    const switched = model.get("switched") || {};
    if (!switched.provider) {
      if (preview && preview.current) {
        preview = null;
        timeline.setPreview(null);
        if (chosen === "preview") view.follow();
      }
      return;
    }
    preview = { provider: switched.provider, current: true, item: switched.item, data: switched.panes };
    timeline.setPreview(switched.item);
    if (chosen === null) timeline.setSelected(null);
  }

  const onMessage = (msg) => {
    if (!msg || (msg.view && msg.view !== id)) return;
    if (msg.type === "timeline") {
      msg.items.forEach((item, k) => (items[msg.start + k] = item));
      timeline.update(items);
    } else if (msg.type === "panes") {
      remember(msg.data);
      if (chosen === msg.index) showPanes(msg.data);
    } else if (msg.type === "body" && shown && msg.index === shown.index) {
      for (const slot of root.querySelectorAll(`.${CSS.escape(`dtl-ref:${msg.ref}`)}.dtl-pending`)) {
        const body = h("div", "dtl-body");
        body.innerHTML = msg.html; // rendered and escaped in Python
        slot.replaceWith(body);
      }
      linker.drawn();
    } else if (msg.type === "window" && shown && msg.index === shown.index) {
      const prefix = `${msg.ref}:${msg.start}:`;
      const row = Array.from(panesEl.querySelectorAll(".dtl-window")).find((r) => classValue(r, "dtl-win:").startsWith(prefix));
      if (row) row.replaceWith(fragment(msg.html));
      decorate();
      linker.drawn();
      applyFilter();
      if (revealing) {
        const match = revealing;
        revealing = null;
        reveal(match);
      }
    } else if (msg.type === "search" && msg.query === query) {
      foundRefs = new Set(msg.found.map((m) => m.ref));
      applyFilter();
      toolbar.drawFound(query, msg.found, reveal);
    } else if (msg.type === "preview") {
      preview = msg;
      timeline.setPreview(msg.item);
      toolbar.say(msg.current ? `preview: the next request on ${msg.provider}, as the session stands` : `preview on ${msg.provider}: nothing is switched`);
      view.showPreview();
    } else if (msg.type === "switched") {
      toolbar.say(msg.text);
      view.follow();
    } else if (msg.type === "copy") {
      copyOut(msg.text, msg.what);
    } else if (msg.type === "error") {
      panesEl.removeAttribute("aria-busy");
      toolbar.say(msg.text, true);
    }
  };

  function copyOut(text, what) {
    const done = () => toolbar.say(`copied ${what === "curl" ? "a curl command" : "JSON"} (${fmt(text.length)} characters)`);
    const manual = () => {
      const area = h("textarea", "dtl-copy-box");
      area.value = text;
      area.readOnly = true;
      toolbar.notice.replaceChildren(h("span", "", "The clipboard refused; select and copy: "), area);
      toolbar.notice.style.display = "";
      area.select();
    };
    if (navigator.clipboard && navigator.clipboard.writeText) navigator.clipboard.writeText(text).then(done, manual);
    else manual();
  }

  // Collapsed bodies arrive when opened (toggle does not bubble: listen while capturing).
  root.addEventListener(
    "toggle",
    (event) => {
      const details = event.target;
      if (!(details instanceof HTMLDetailsElement) || !details.open) return;
      const slot = Array.from(details.children).find((c) => c.classList.contains("dtl-pending"));
      if (!slot || slot.dataset.asked) return;
      slot.dataset.asked = "1";
      send({ type: "body", ref: classValue(slot, "dtl-ref:"), ...target() });
    },
    true,
  );
  installLinking(root, linker);
  installKeyboard(root, view);

  const listeners = [
    ["change:tail", () => schedule("tail")],
    ["change:count", () => schedule("tail")],
    ["change:header", () => schedule("header")],
    ["change:providers", () => schedule("header")],
    ["change:panes", () => schedule("panes")],
    ["change:switched", () => schedule("switched")],
    ["msg:custom", onMessage],
  ];
  for (const [name, listener] of listeners) model.on(name, listener);
  drawHeader();
  drawTail();
  const first = model.get("panes") || {};
  remember(first);
  showPanes(first);
  drawSwitched();
  return () => {
    cancelAnimationFrame(frame);
    cancelAnimationFrame(timeline.scrollFrame);
    for (const [name, listener] of listeners) model.off(name, listener);
  };
}

export default { render };
