// The dtl_notebook view, part 6 of 6: one view of the model. Selection, pins and previews
// belong to this view; the model's synced state is what every view follows (the newest
// request); everything this view asks travels as a custom message tagged with its id and is
// answered to it alone (`ANSWERS`: one handler per message type). Draws are coalesced to one
// per animation frame.

let viewCount = 0;

class View {
  constructor(model, el) {
    this.model = model;
    this.id = `v${++viewCount}-${Math.random().toString(36).slice(2, 8)}`;
    this.items = [];
    this.chosen = null; // null: follow the newest; an index; or "preview"
    this.preview = null; // {provider, current, item, data}
    this.query = "";
    this.asked = "";
    this.frame = 0;
    this.dirty = new Set();
    this.root = h("div", "dtl-view");
    this.header = new Header(this.root);
    this.panes = new Panes(this);
    this.linker = new Linker(this.root, this.panes.bodies);
    this.cache = pagePanes(model.get("panes_key") || this.id);
    this.timeline = new Timeline((i) => this.select(i), () => this.showPreview());
    this.toolbar = new Toolbar(this);
    this.header.warmth.listeners.push((now) => this.timeline.tickWarm(now));
    const p = this.panes;
    this.root.append(
      this.header.el, this.header.error, this.header.warmth.alert, this.toolbar.el, this.toolbar.notice, this.timeline.overviewRow,
      this.timeline.el, p.title, p.breakBox, p.summaryBox, this.toolbar.found, p.el,
    );
    el.appendChild(this.root);
    this.toolbar.say("");
  }

  send(msg) {
    this.model.send({ ...msg, view: this.id });
  }

  // What a request-specific ask names: the request on screen, or the preview's provider.
  target() {
    const shown = this.panes.shown;
    if (this.chosen === "preview" && this.preview) return { index: -1, provider: this.preview.provider };
    return { index: shown ? shown.index : -1 };
  }

  // -- what the user does ------------------------------------------------------------------
  select(index) {
    if (index < 0 || index >= this.items.length) return;
    this.chosen = index;
    this.timeline.setSelected(index);
    const data = this.cache.get(index);
    if (data) return this.showPanes(data);
    this.panes.waitFor(index, this.header.running);
    this.send({ type: "panes", index });
  }

  follow() {
    this.chosen = null;
    this.timeline.setSelected(null);
    this.showPanes(this.model.get("panes") || {});
  }

  current() {
    if (this.chosen === "preview") return this.items.length;
    return this.chosen === null ? this.items.length - 1 : this.chosen;
  }

  step(delta) {
    this.select(Math.min(this.items.length - 1, Math.max(0, this.current() + delta)));
    this.timeline.focusSelected();
  }

  jumpBreak(direction) {
    const at = this.current();
    const breaks = this.timeline.breaks();
    const target = direction > 0 ? breaks.find((i) => i > at) : breaks.reverse().find((i) => i < at);
    if (target === undefined) return this.toolbar.say(`no ${direction > 0 ? "later" : "earlier"} cache break`);
    this.toolbar.say("");
    this.select(target);
    this.timeline.focusSelected();
  }

  escape() {
    if (this.linker.unpin()) return;
    if (this.chosen !== null) this.follow();
  }

  enter(target) {
    const link = target.closest(".dtl-link");
    const el = link || this.root.querySelector(".dtl-hl") || this.root.querySelector(".dtl-brk-lit");
    if (!el) return;
    if (link) this.linker.pin(link);
    const details = el.matches("details") ? el : el.querySelector("details");
    if (details) details.open = true;
  }

  askPreview(provider) {
    this.toolbar.say(`previewing ${provider}…`);
    this.send({ type: "preview", provider });
  }

  showPreview() {
    if (!this.preview) return;
    this.chosen = "preview";
    this.timeline.setSelected("preview");
    this.showPanes(this.preview.data);
    this.toolbar.offerSwitch(this.preview.provider, this.preview.current);
  }

  switchTo(provider) {
    if (provider) this.send({ type: "switch", provider });
  }

  search(text) {
    this.query = text.trim();
    this.panes.found = new Set();
    this.panes.filter(this.query);
    if (!this.query) this.toolbar.drawFound("", [], null);
    else if (this.panes.shown) this.send({ type: "search", ...this.target(), query: this.query });
  }

  expandAll(open) {
    this.panes.expandAll(open);
  }

  copy(what, path) {
    if (this.panes.shown) this.send({ type: "copy", what, path: path || "", ...this.target() });
  }

  showPanes(data) {
    this.panes.show(data);
    if (this.chosen !== "preview") this.toolbar.offerSwitch(null);
    if (this.query) this.send({ type: "search", ...this.target(), query: this.query });
  }

  // -- what the model syncs ----------------------------------------------------------------
  schedule(what) {
    this.dirty.add(what);
    if (!this.frame) this.frame = requestAnimationFrame(() => this.draw());
  }

  draw() {
    this.frame = 0;
    if (this.dirty.has("header")) this.drawHeader();
    if (this.dirty.has("tail")) this.drawTail();
    if (this.dirty.has("panes")) this.drawNewest();
    if (this.dirty.has("switched")) this.drawSwitched();
    this.dirty.clear();
  }

  drawHeader() {
    const header = this.model.get("header") || {};
    this.header.draw(header);
    this.toolbar.drawProviders(this.model.get("providers") || [], !!header.live);
  }

  drawNewest() {
    const data = this.model.get("panes") || {};
    this.cache.keep(data);
    if (this.chosen === null) this.showPanes(data);
  }

  // each synced tail is taken as it arrives: two flushes before one animation frame must not
  // lose the first one's items (a busy kernel cannot answer a request for them)
  takeTail() {
    const tail = this.model.get("tail") || {};
    (tail.items || []).forEach((item, k) => (this.items[(tail.start || 0) + k] = item));
  }

  drawTail() {
    const items = this.items;
    const count = this.model.get("count");
    items.length = Math.min(items.length, count);
    const missing = items.findIndex((x) => x === undefined);
    if (missing >= 0 || items.length < count) {
      const start = missing >= 0 ? missing : items.length;
      if (this.asked !== `${start}:${count}`) {
        this.asked = `${start}:${count}`;
        this.send({ type: "timeline", start, end: count });
      }
    }
    this.timeline.update(items);
    this.timeline.tickWarm(this.header.warmth.now());
  }

  drawSwitched() {
    const switched = this.model.get("switched") || {};
    if (!switched.provider) {
      if (this.preview && this.preview.current) {
        this.preview = null;
        this.timeline.setPreview(null);
        if (this.chosen === "preview") this.follow();
      }
      return;
    }
    this.preview = { provider: switched.provider, current: true, item: switched.item, data: switched.panes };
    this.timeline.setPreview(switched.item);
    // Following, the newest panes are now the switched session's preview: its box is selected.
    if (this.chosen === null) this.showPreview();
  }

  // -- what the kernel answers -------------------------------------------------------------
  onMessage(msg) {
    if (!msg || (msg.view && msg.view !== this.id)) return;
    const handler = ANSWERS[msg.type];
    if (handler) handler(this, msg);
  }

  copyOut(text, what) {
    const done = () => this.toolbar.say(`copied ${what === "curl" ? "a curl command" : "JSON"} (${fmt(text.length)} characters)`);
    const manual = () => {
      const area = h("textarea", "dtl-copy-box");
      area.value = text;
      area.readOnly = true;
      this.toolbar.notice.replaceChildren(h("span", "", "The clipboard refused; select and copy: "), area);
      this.toolbar.notice.style.display = "";
      area.select();
    };
    if (navigator.clipboard && navigator.clipboard.writeText) navigator.clipboard.writeText(text).then(done, manual);
    else manual();
  }
}

// One handler per message the kernel sends (data/view.json's `answers`, in that order).
const ANSWERS = {
  panes(view, msg) {
    view.cache.keep(msg.data);
    if (view.chosen === msg.index) view.showPanes(msg.data);
  },
  body(view, msg) {
    const shown = view.panes.shown;
    if (shown && msg.index === shown.index) view.panes.fillBody(msg.ref, msg.html);
  },
  window(view, msg) {
    const shown = view.panes.shown;
    if (shown && msg.index === shown.index) view.panes.fillWindow(msg.ref, msg.start, msg.html);
  },
  search(view, msg) {
    if (msg.query !== view.query) return;
    view.panes.found = new Set(msg.found.map((m) => m.ref));
    view.panes.filter(view.query);
    view.toolbar.drawFound(view.query, msg.found, (match) => view.panes.reveal(match));
  },
  copy(view, msg) {
    view.copyOut(msg.text, msg.what);
  },
  timeline(view, msg) {
    msg.items.forEach((item, k) => (view.items[msg.start + k] = item));
    view.timeline.update(view.items);
  },
  preview(view, msg) {
    view.preview = msg;
    view.timeline.setPreview(msg.item);
    view.toolbar.say(msg.current ? `preview: the next request on ${msg.provider}, as the session stands` : `preview on ${msg.provider}: nothing is switched`);
    view.showPreview();
  },
  switched(view, msg) {
    view.drawSwitched(); // the synced preview came before this answer, perhaps not yet drawn
    if (view.preview) view.showPreview();
    else view.follow();
    view.toolbar.say(msg.text);
  },
  error(view, msg) {
    view.panes.el.removeAttribute("aria-busy");
    view.toolbar.say(msg.text, true);
  },
};

function installLazyBodies(view) {
  // Collapsed bodies arrive when opened (toggle does not bubble: listen while capturing).
  const onToggle = (event) => {
    const details = event.target;
    if (!(details instanceof HTMLDetailsElement) || !details.open) return;
    const slot = Array.from(details.children).find((c) => c.classList.contains("dtl-pending"));
    if (!slot || slot.dataset.asked) return;
    slot.dataset.asked = "1";
    view.send({ type: "body", ref: classValue(slot, "dtl-ref:"), ...view.target() });
  };
  view.root.addEventListener("toggle", onToggle, true);
}

function render({ model, el }) {
  ensureStyle();
  const view = new View(model, el);
  installLazyBodies(view);
  installLinking(view.root, view.linker);
  installKeyboard(view.root, view);
  const listeners = [
    ["change:tail", () => (view.takeTail(), view.schedule("tail"))],
    ["change:count", () => view.schedule("tail")],
    ["change:header", () => view.schedule("header")],
    ["change:providers", () => view.schedule("header")],
    ["change:panes", () => view.schedule("panes")],
    ["change:switched", () => view.schedule("switched")],
    ["change:panes_key", () => (view.cache = pagePanes(model.get("panes_key") || view.id))],
    ["msg:custom", (msg) => view.onMessage(msg)],
  ];
  for (const [name, listener] of listeners) model.on(name, listener);
  view.drawHeader();
  view.takeTail();
  view.drawTail();
  view.drawNewest();
  view.drawSwitched();
  return () => {
    cancelAnimationFrame(view.frame);
    view.header.warmth.stop();
    cancelAnimationFrame(view.timeline.scrollFrame);
    view.timeline.resizes.disconnect();
    for (const [name, listener] of listeners) model.off(name, listener);
  };
}

// Once per model, before any view renders: the page keeps the panes the kernel pushes while a
// turn runs, even those that arrive before the cell's view is drawn.
function initialize({ model }) {
  const kept = () => model.get("panes_key") && pagePanes(model.get("panes_key"));
  const keepPushed = (msg) => {
    if (msg && msg.type === "panes" && !msg.view && kept()) kept().keep(msg.data);
  };
  const keepNewest = () => kept() && kept().keep(model.get("panes"));
  model.on("msg:custom", keepPushed);
  model.on("change:panes", keepNewest);
  keepNewest();
  return () => {
    model.off("msg:custom", keepPushed);
    model.off("change:panes", keepNewest);
  };
}

export default { initialize, render };
