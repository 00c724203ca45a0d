// The dtl_notebook view, part 2 of 6: the timeline (one box per request, updated in place so
// focus survives), the overview strip (one thin mark per request, grouped by turn) and the
// box of the provider preview.

// a reported figure the engine did not give (vLLM, SGLang omit cache details) is unknown, not 0
function said(n) {
  return n === null || n === undefined ? "unknown" : fmt(n);
}

function boxTitle(item) {
  const calls = item.calls && item.calls.length ? ` → ${item.calls.join(", ")}` : "";
  const r = item.reported;
  const reported = r
    ? `\nreported: cached ${said(r.cached)}, written ${said(r.written)}, uncached ${said(r.uncached)}`
    : "";
  const turn = item.index < 0 ? "preview, not sent" : `request ${item.index + 1}, turn ${item.turn + 1}`;
  return (
    `${turn}, ${item.provider} ${item.model}, mode ${item.mode}${calls}\n` +
    `predicted: cached ${fmt(item.cached)}, written ${fmt(item.written)}, ` +
    `uncached ${fmt(item.uncached)}${reported}` +
    (item.break ? `\ncache break: ${decodeHtml(item.break)}` : "") +
    (item.keep_warm ? `\nkeep-warm refresh: saved ${money(item.keep_warm.saving)} for ${money(item.keep_warm.cost)}` : "") +
    (item.miss ? `\n${item.miss.text}` : "") +
    (item.warmth && item.warmth.warning ? `\n${item.warmth.warning}` : "") +
    (item.notes || []).map((n) => `\n${n.text}: ${n.title}`).join("")
  );
}

function fillBox(box, item, previous) {
  box.classList.toggle("dtl-tl-break", !!item.break);
  const top = h("div", "dtl-tl-top");
  top.appendChild(h("span", "dtl-tl-index", item.index < 0 ? "preview" : `#${item.index + 1}`));
  if (!previous || previous.provider !== item.provider || item.index < 0) {
    top.appendChild(h("span", "dtl-tl-provider", item.provider));
  }
  if (item.loads) top.appendChild(h("span", "dtl-tl-loads", `+${item.loads}`));
  for (const note of item.notes || []) {
    const mark = h("span", "dtl-tl-note", note.text); // a fact, not a break: grey
    mark.title = note.title;
    top.appendChild(mark);
  }
  if (item.break) top.appendChild(h("span", "dtl-tl-breakmark", "✕"));
  if (item.keep_warm) top.appendChild(h("span", "dtl-tl-keepwarm", "keep-warm"));
  if (item.miss) top.appendChild(h("span", "dtl-tl-miss", `miss: ${item.miss.reason}`));
  const parts = [top, strip(item, item.total, "dtl-predicted")];
  if (item.reported) {
    const r = item.reported;
    parts.push(strip(r, (r.cached || 0) + (r.written || 0) + (r.uncached || 0), "dtl-reported"));
  }
  const share = item.total ? Math.round((100 * item.cached) / item.total) : 0;
  const saved = item.keep_warm ? ` · saved ${money(item.keep_warm.saving)}` : "";
  parts.push(h("div", "dtl-tl-caption", `${share}% cached · ${fmt(item.total)} tok${saved}`));
  if (item.warmth) parts.push(h("div", "dtl-tl-warm")); // counted down on the newest box
  box.replaceChildren(...parts);
  box.title = boxTitle(item);
}

class Timeline {
  constructor(onSelect, onPreview) {
    this.el = h("div", "dtl-timeline");
    this.el.setAttribute("role", "listbox");
    this.overview = h("div", "dtl-overview");
    this.overview.setAttribute("aria-label", "Every request, grouped by turn");
    this.overviewRow = h("div", "dtl-overview-row");
    const label = h("span", "dtl-overview-label", "all requests");
    label.title = "One mark per request, grouped by turn: green the cached share, red a cache break, an amber top tools loaded; click a mark to open its request";
    this.overviewRow.append(label, this.overview);
    this.boxes = [];
    this.marks = [];
    this.signatures = [];
    this.items = [];
    this.selected = null;
    this.scrollFrame = 0;
    this.onSelect = onSelect;
    this.empty = h("span", "dtl-empty", "No request yet.");
    this.previewBox = h("button", "dtl-tl-item dtl-tl-preview");
    this.previewBox.type = "button";
    this.previewBox.addEventListener("click", () => onPreview());
    this.el.appendChild(this.empty);
    // a strip that changes width (a theme, a side panel, the cell scrolled back into the
    // notebook's window) keeps the selected box in view
    this.resizes = new ResizeObserver(() => {
      if (!this.scrollFrame) this.scrollFrame = requestAnimationFrame(() => this.scrollToSelected());
    });
    this.resizes.observe(this.el);
  }

  update(items) {
    this.items = items;
    let rebuildOverview = false;
    for (let i = this.boxes.length - 1; i >= items.length; i--) {
      if (this.boxes[i]) this.boxes[i].remove();
      rebuildOverview = true;
    }
    this.boxes.length = Math.min(this.boxes.length, items.length);
    this.signatures.length = this.boxes.length;
    items.forEach((item, i) => {
      if (!item) return;
      const signature = JSON.stringify(item) + (items[i - 1] ? items[i - 1].provider : "");
      if (this.signatures[i] === signature) return;
      this.signatures[i] = signature;
      let box = this.boxes[i];
      if (!box) {
        box = h("button", "dtl-tl-item");
        box.type = "button";
        box.setAttribute("role", "option");
        box.addEventListener("click", () => this.onSelect(i));
        const next = this.boxes.slice(i + 1).find(Boolean);
        this.el.insertBefore(box, next || (this.previewBox.isConnected ? this.previewBox : null));
        this.boxes[i] = box;
        if (next) rebuildOverview = true;
      }
      fillBox(box, item, items[i - 1]);
      if (!rebuildOverview) this.mark(i, item);
    });
    if (rebuildOverview) this.drawOverview();
    this.empty.style.display = items.length ? "none" : "";
    this.overviewRow.style.display = items.length > 1 ? "" : "none";
    this.setSelected(this.selected, this.selected === null); // following: the newest in view
  }

  mark(i, item) {
    let mark = this.marks[i];
    if (!mark) {
      mark = h("span", "dtl-ov-mark");
      mark.addEventListener("click", () => this.onSelect(i));
      const before = this.items[i - 1];
      let group = before && before.turn === item.turn && this.marks[i - 1]?.parentElement;
      if (!group) {
        group = h("span", "dtl-ov-turn");
        group.title = `turn ${item.turn + 1}`;
        this.overview.appendChild(group);
      }
      group.appendChild(mark);
      this.marks[i] = mark;
    }
    const share = item.total ? item.cached / item.total : 0;
    mark.style.setProperty("--dtl-share", `${Math.round(100 * share)}%`);
    mark.classList.toggle("dtl-ov-break", !!item.break);
    mark.classList.toggle("dtl-ov-load", !!item.loads);
    mark.title = `#${item.index + 1} · turn ${item.turn + 1} · ${Math.round(100 * share)}% cached` +
      (item.break ? " · cache break" : "") + (item.loads ? ` · +${item.loads} loaded` : "");
  }

  drawOverview() {
    this.overview.replaceChildren();
    this.marks = [];
    this.items.forEach((item, i) => item && this.mark(i, item));
  }

  setPreview(item) {
    if (!item) {
      this.previewBox.remove();
      return;
    }
    fillBox(this.previewBox, item, null);
    this.previewBox.title = `${boxTitle(item)}\nthe session serialized for ${item.provider}, not sent`;
    if (!this.previewBox.isConnected) this.el.appendChild(this.previewBox);
  }

  // `index`: a request, "preview", or null (following the newest). The box scrolls into the
  // timeline's view (the timeline only: the notebook itself does not move), once per frame:
  // reading the layout while a cell's outputs change would lay the whole notebook out again.
  setSelected(index, scroll = true) {
    const shown = index === null ? this.items.length - 1 : index;
    for (const el of this.el.querySelectorAll(".dtl-tl-selected")) el.classList.remove("dtl-tl-selected");
    for (const el of this.overview.querySelectorAll(".dtl-ov-selected")) el.classList.remove("dtl-ov-selected");
    this.selected = index;
    const box = shown === "preview" ? this.previewBox : this.boxes[shown];
    if (!box) return;
    box.classList.add("dtl-tl-selected");
    box.setAttribute("aria-selected", "true");
    if (this.marks[shown]) this.marks[shown].classList.add("dtl-ov-selected");
    if (scroll && !this.scrollFrame) this.scrollFrame = requestAnimationFrame(() => this.scrollToSelected());
  }

  scrollToSelected(tries = 0) {
    this.scrollFrame = 0;
    const box = this.el.querySelector(".dtl-tl-selected");
    if (!box) return;
    if (!this.el.clientWidth) {
      // not laid out yet (just rendered) or hidden: try a few frames, then leave it
      if (tries < 10) this.scrollFrame = requestAnimationFrame(() => this.scrollToSelected(tries + 1));
      return;
    }
    const left = box.offsetLeft - this.el.offsetLeft;
    if (left < this.el.scrollLeft || left + box.offsetWidth > this.el.scrollLeft + this.el.clientWidth) {
      this.el.scrollLeft = left - this.el.clientWidth / 2 + box.offsetWidth / 2;
    }
  }

  focusSelected() {
    const box = this.selected === "preview" ? this.previewBox : this.boxes[this.selected ?? this.items.length - 1];
    if (box) box.focus({ preventScroll: true });
  }

  // the newest request's box counts down what it left warm; earlier boxes are past it
  tickWarm(now) {
    const last = this.items.length - 1;
    this.boxes.forEach((box, i) => {
      const slot = box && box.querySelector(".dtl-tl-warm");
      if (!slot) return;
      const item = this.items[i];
      const left = i === last && item && item.warmth ? item.warmth.expires_at - now : 0;
      const text = left > 0 ? `warm ${clockSpan(left)}` : i === last ? "cold" : "";
      if (slot.textContent !== text) slot.textContent = text;
      slot.classList.toggle("dtl-tl-warm-warn", left > 0 && !!(item && item.warmth.warning));
    });
  }

  breaks() {
    return this.items.filter((x) => x && x.break).map((x) => x.index);
  }
}
