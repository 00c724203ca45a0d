// The dtl_notebook view: layout, timeline and cross-pane linking.
// Pane HTML is rendered (and escaped) in Python; this file only places it. Everything built
// here from data uses textContent, never innerHTML.

const PANES = [
  ["state", "Agent state"],
  ["request", "Request JSON"],
  ["context", "Model context"],
];

function h(tag, className, text) {
  const el = document.createElement(tag);
  if (className) el.className = className;
  if (text !== undefined) el.textContent = text;
  return el;
}

function linkKeys(el) {
  return Array.from(el.classList).filter((c) => c.startsWith("dtl-k-"));
}

function pct(part, total) {
  return total > 0 ? `${(100 * part) / total}%` : "0%";
}

function strip(figures, total, className) {
  const bar = h("div", `dtl-strip ${className || ""}`);
  for (const [name, value] of [
    ["cached", figures.cached],
    ["written", figures.written],
    ["uncached", figures.uncached],
  ]) {
    const seg = h("span", `dtl-strip-${name}`);
    seg.style.width = pct(value || 0, total);
    bar.appendChild(seg);
  }
  return bar;
}

function timelineEntry(item, selected, onSelect) {
  const button = h("button", "dtl-tl-item");
  button.type = "button";
  if (item.break) button.classList.add("dtl-tl-break");
  if (selected) button.classList.add("dtl-tl-selected");
  const top = h("div", "dtl-tl-top");
  top.appendChild(h("span", "dtl-tl-index", `#${item.index + 1}`));
  top.appendChild(h("span", "dtl-tl-provider", item.provider));
  if (item.loads) top.appendChild(h("span", "dtl-tl-loads", `+${item.loads}`));
  for (const note of item.notes || []) {
    const mark = h("span", "dtl-tl-note", note.text); // a fact, not a break: grey
    mark.title = note.title;
    top.appendChild(mark);
  }
  if (item.break) top.appendChild(h("span", "dtl-tl-breakmark", "✕"));
  button.appendChild(top);
  button.appendChild(strip(item, item.total, "dtl-predicted"));
  if (item.reported) {
    const r = item.reported;
    const total = (r.cached || 0) + (r.written || 0) + (r.uncached || 0);
    button.appendChild(strip(r, total, "dtl-reported"));
  }
  const share = item.total ? Math.round((100 * item.cached) / item.total) : 0;
  button.appendChild(h("div", "dtl-tl-caption", `${share}% cached · ${item.total} tok`));
  const calls = item.calls && item.calls.length ? ` → ${item.calls.join(", ")}` : "";
  const reported = item.reported
    ? `\nreported: cached ${item.reported.cached ?? "unknown"}, written ${item.reported.written ?? "unknown"}, uncached ${item.reported.uncached ?? "unknown"}`
    : "";
  // item.break is HTML-escaped by Python; decode it for the plain-text tooltip.
  const decoded = item.break ? new DOMParser().parseFromString(item.break, "text/html").body.textContent : "";
  button.title =
    `request ${item.index + 1}, turn ${item.turn + 1}, ${item.provider} ${item.model}, ` +
    `mode ${item.mode}${calls}\npredicted: cached ${item.cached}, written ${item.written}, ` +
    `uncached ${item.uncached}${reported}` + (item.break ? `\ncache break: ${decoded}` : "") +
    (item.notes || []).map((n) => `\n${n.text}: ${n.title}`).join("");
  button.addEventListener("click", () => onSelect(item.index));
  return button;
}

function render({ model, el }) {
  const root = h("div", "dtl-view");
  const head = h("div", "dtl-head");
  const title = h("span", "dtl-title");
  const meta = h("span", "dtl-meta");
  const status = h("span", "dtl-status");
  const switcher = h("select", "dtl-switcher");
  const full = h("button", "dtl-fullbtn", "full width");
  full.type = "button";
  full.title = "Stack the panes at full width, each as tall as its content";
  full.addEventListener("click", () => full.classList.toggle("dtl-on", root.classList.toggle("dtl-full")));
  switcher.title = "Serialize the same session for another provider";
  head.append(title, meta, status, switcher, full);
  const error = h("div", "dtl-error");
  const timeline = h("div", "dtl-timeline");
  const requestTitle = h("div", "dtl-request-title");
  const breakBox = h("div", "dtl-break");
  const summaryBox = h("div", "dtl-summary");
  const panes = h("div", "dtl-panes");
  const bodies = {};
  for (const [name, label] of PANES) {
    const pane = h("section", `dtl-pane dtl-pane-${name}`);
    pane.appendChild(h("h3", "dtl-pane-title", label));
    const body = h("div", "dtl-pane-body");
    pane.appendChild(body);
    panes.appendChild(pane);
    bodies[name] = body;
  }
  root.append(head, error, timeline, requestTitle, breakBox, summaryBox, panes);
  el.appendChild(root);

  let items = [];
  let pinned = null;
  let asked = "";

  function absorb(start, list) {
    list.forEach((item, k) => {
      items[start + k] = item;
    });
  }

  function drawTimeline() {
    const count = model.get("count");
    items.length = Math.min(items.length, count);
    const missing = items.findIndex((x) => x === undefined);
    if (missing >= 0 || items.length < count) {
      const start = missing >= 0 ? missing : items.length;
      if (asked !== `${start}:${count}`) {
        asked = `${start}:${count}`;
        model.send({ type: "timeline", start, end: count });
      }
    }
    const shown = model.get("panes").index;
    timeline.replaceChildren();
    if (!count) timeline.appendChild(h("span", "dtl-empty", "No request yet."));
    for (const item of items) {
      if (item) timeline.appendChild(timelineEntry(item, item.index === shown, select));
    }
    const current = timeline.querySelector(".dtl-tl-selected");
    if (current) timeline.scrollLeft = current.offsetLeft - timeline.clientWidth / 2;
  }

  function select(index) {
    model.set("selected", index);
    model.save_changes();
  }

  function drawHeader() {
    const header = model.get("header") || {};
    title.textContent = header.title || "dtl_notebook";
    meta.textContent = `${header.provider} · ${header.model} · ${header.label} · tools ${header.tools}`;
    status.textContent = header.status || "";
    status.classList.toggle("dtl-running", (header.status || "").startsWith("running"));
    error.textContent = header.error || "";
    error.style.display = header.error ? "block" : "none";
    const providers = model.get("providers") || [];
    switcher.replaceChildren();
    switcher.style.display = providers.length ? "" : "none";
    for (const p of providers) {
      const option = h("option", "", p);
      option.value = p;
      option.selected = p === header.provider;
      switcher.appendChild(option);
    }
    switcher.disabled = !header.live;
  }

  function drawPanes() {
    const data = model.get("panes") || {};
    requestTitle.textContent = data.title || "";
    breakBox.innerHTML = data.break || "";
    summaryBox.innerHTML = data.summary || ""; // rendered and escaped in Python
    for (const [name] of PANES) bodies[name].innerHTML = data[name] || "";
    pinned = null;
    drawTimeline();
  }

  // Highlight every element sharing a link key; scroll the *other* panes to their first one.
  function highlight(keys, source) {
    root.querySelectorAll(".dtl-hl").forEach((x) => x.classList.remove("dtl-hl"));
    if (!keys.length) return;
    const selector = keys.map((k) => `.${CSS.escape(k)}`).join(",");
    const found = Array.from(root.querySelectorAll(selector));
    found.forEach((x) => x.classList.add("dtl-hl"));
    if (!source) return;
    for (const body of Object.values(bodies)) {
      if (body.contains(source)) continue;
      const first = found.find((x) => body.contains(x));
      if (!first) continue;
      const top = first.getBoundingClientRect().top - body.getBoundingClientRect().top;
      if (top < 0 || top > body.clientHeight - 20) body.scrollTop += top - 24;
    }
  }

  root.addEventListener("mouseover", (event) => {
    if (pinned) return;
    const link = event.target.closest(".dtl-link");
    if (link && root.contains(link)) highlight(linkKeys(link), link);
  });
  root.addEventListener("mouseleave", () => {
    if (!pinned) highlight([], null);
  });
  root.addEventListener("click", (event) => {
    const link = event.target.closest(".dtl-link");
    if (!link || !root.contains(link) || event.target.closest("summary")) return;
    const keys = linkKeys(link);
    pinned = pinned && pinned.join() === keys.join() ? null : keys;
    highlight(pinned || [], link);
  });
  switcher.addEventListener("change", () => {
    model.set("provider_choice", switcher.value);
    model.save_changes();
  });

  const onTail = () => {
    const tail = model.get("tail") || {};
    absorb(tail.start || 0, tail.items || []);
    drawTimeline();
  };
  const onMessage = (msg) => {
    if (msg && msg.type === "timeline") {
      absorb(msg.start, msg.items);
      drawTimeline();
    } else if (msg && msg.type === "body" && msg.index === (model.get("panes") || {}).index) {
      const cls = `dtl-ref:${msg.ref}`;
      for (const slot of root.querySelectorAll(".dtl-pending")) {
        if (slot.classList.contains(cls)) {
          const body = h("div", "dtl-body");
          body.innerHTML = msg.html; // rendered and escaped in Python
          slot.replaceWith(body);
        }
      }
    }
  };
  // Collapsed bodies arrive when opened (toggle does not bubble: listen while capturing).
  root.addEventListener(
    "toggle",
    (event) => {
      const details = event.target;
      if (!(details instanceof HTMLDetailsElement) || !details.open) return;
      const slot = Array.from(details.children).find((c) => c.classList.contains("dtl-pending"));
      if (!slot || slot.dataset.asked) return;
      slot.dataset.asked = "1";
      const ref = Array.from(slot.classList).find((c) => c.startsWith("dtl-ref:"));
      const index = (model.get("panes") || {}).index;
      if (ref) model.send({ type: "body", index, ref: ref.slice(8) });
    },
    true,
  );
  const listeners = [
    ["change:tail", onTail],
    ["change:count", drawTimeline],
    ["change:header", drawHeader],
    ["change:providers", drawHeader],
    ["change:panes", drawPanes],
    ["msg:custom", onMessage],
  ];
  for (const [name, listener] of listeners) model.on(name, listener);
  onTail();
  drawHeader();
  drawPanes();
  return () => {
    for (const [name, listener] of listeners) model.off(name, listener);
  };
}

export default { render };
