// The dtl_notebook view, part 5 of 6: the three panes of one request (their HTML is rendered
// and escaped in Python), the filter over their rows, and the panes the page keeps so that
// earlier requests open while the kernel is busy running a turn.

const KEPT_PANES = 64; // requests' panes kept in the page per session (the newest of them)
const KEPT_SESSIONS = 8;

// Each request's panes, by index, the least recently used dropped first.
class PanesCache {
  constructor(limit) {
    this.limit = limit;
    this.entries = new Map();
  }

  keep(data) {
    if (!data || data.index === undefined || data.index < 0) return;
    this.entries.delete(data.index);
    this.entries.set(data.index, data);
    if (this.entries.size > this.limit) this.entries.delete(this.entries.keys().next().value);
  }

  get(index) {
    const data = this.entries.get(index);
    if (data) this.keep(data);
    return data;
  }

  clear() {
    this.entries.clear();
  }
}

// The page's panes of a session (`panes_key`: one per session and history, so every view of
// it, one cell after another, finds what the views before it were sent). On globalThis: each
// widget imports its own copy of this module.
function pagePanes(key) {
  const all = (globalThis.__dtlPanes = globalThis.__dtlPanes || new Map());
  let cache = all.get(key);
  if (!cache) {
    cache = new PanesCache(KEPT_PANES);
    all.set(key, cache);
    if (all.size > KEPT_SESSIONS) all.delete(all.keys().next().value);
  }
  return cache;
}

// The ref of a row's item: its lazy body's, or `request:tools.5` from a `tools[5]` label.
function rowRef(row) {
  const slot = row.querySelector(".dtl-pending");
  if (slot) return classValue(slot, "dtl-ref:");
  const label = row.querySelector("summary code");
  const m = label && /^(\w+)\[(\d+)\]/.exec(label.textContent);
  return m ? `request:${m[1]}.${m[2]}` : "";
}

function windowOf(row) {
  const [ref, start, end] = classValue(row, "dtl-win:").split(/:(?=\d)/);
  return { ref, start: Number(start), end: Number(end) };
}

class Panes {
  constructor(view) {
    this.view = view;
    this.title = h("div", "dtl-request-title");
    this.breakBox = h("div", "dtl-break");
    this.summaryBox = h("div", "dtl-summary");
    this.el = h("div", "dtl-panes");
    this.bodies = {};
    for (const [name, label] of VIEW_SPEC.panes) {
      const pane = h("section", `dtl-pane dtl-pane-${name}`);
      pane.appendChild(h("h3", "dtl-pane-title", label));
      this.bodies[name] = pane.appendChild(h("div", "dtl-pane-body"));
      this.el.appendChild(pane);
    }
    this.shown = null; // the panes data on screen
    this.found = new Set(); // refs the kernel found in collapsed bodies
    this.revealing = null; // a match waiting for its window to open
  }

  show(data) {
    this.shown = data;
    this.el.removeAttribute("aria-busy");
    this.title.textContent = data.title || "";
    this.breakBox.innerHTML = data.break || ""; // rendered and escaped in Python
    this.summaryBox.innerHTML = data.summary || ""; // rendered and escaped in Python
    for (const [name] of VIEW_SPEC.panes) this.bodies[name].innerHTML = data[name] || "";
    this.drawn();
  }

  // A request whose panes the page does not have: say so, and show nothing of another one.
  waitFor(index, busy) {
    this.shown = null;
    this.title.textContent = `Request ${index + 1} · ${busy ? "waiting: the kernel is running a turn" : "loading…"}`;
    this.breakBox.replaceChildren();
    this.summaryBox.replaceChildren();
    for (const body of Object.values(this.bodies)) body.replaceChildren();
    this.el.setAttribute("aria-busy", "true");
  }

  drawn() {
    this.decorate();
    this.view.linker.drawn();
    this.filter(this.view.query);
  }

  decorate() {
    for (const row of this.el.querySelectorAll(".dtl-window:not(.dtl-decorated)")) {
      row.classList.add("dtl-decorated");
      row.appendChild(button("show here", "Open these items in place", () => this.openWindow(row), "dtl-open-window"));
    }
    for (const row of this.bodies.request.querySelectorAll(".dtl-row:not(.dtl-decorated)")) {
      const label = row.querySelector("summary code");
      const m = label && /^(\w+)\[(\d+)\]/.exec(label.textContent);
      if (!m) continue;
      row.classList.add("dtl-decorated");
      const copy = (e) => {
        e.preventDefault();
        this.view.copy("item", `${m[1]}.${m[2]}`);
      };
      label.parentElement.appendChild(button("copy", `Copy ${m[1]}[${m[2]}] as JSON`, copy, "dtl-copy-item"));
    }
  }

  // Rows whose text holds the query stay, and so do rows the kernel found in their collapsed
  // bodies; windowed runs stay, so what they hide can be opened.
  filter(query) {
    const needle = query.toLowerCase();
    for (const body of Object.values(this.bodies)) {
      for (const row of body.querySelectorAll(".dtl-row, tr")) {
        const keep =
          !needle ||
          row.classList.contains("dtl-window") ||
          row.textContent.toLowerCase().includes(needle) ||
          this.found.has(rowRef(row));
        row.classList.toggle("dtl-filtered", !keep);
      }
    }
  }

  openWindow(row) {
    this.view.send({ type: "window", ...windowOf(row), ...this.view.target() });
  }

  fillBody(ref, html) {
    for (const slot of this.el.querySelectorAll(`.${CSS.escape(`dtl-ref:${ref}`)}.dtl-pending`)) {
      const body = h("div", "dtl-body");
      body.innerHTML = html; // rendered and escaped in Python
      slot.replaceWith(body);
    }
    this.view.linker.drawn();
  }

  fillWindow(ref, start, html) {
    const prefix = `${ref}:${start}:`;
    const row = Array.from(this.el.querySelectorAll(".dtl-window")).find((r) => classValue(r, "dtl-win:").startsWith(prefix));
    if (row) row.replaceWith(fragment(html));
    this.drawn();
    if (this.revealing) {
      const match = this.revealing;
      this.revealing = null;
      this.reveal(match);
    }
  }

  reveal(match) {
    const pane = this.bodies[match.ref.split(":")[0]];
    let found = pane.querySelector(`.${CSS.escape(`dtl-ref:${match.ref}`)}`);
    if (!found && match.window) {
      for (const row of pane.querySelectorAll(".dtl-window")) {
        const { ref, start, end } = windowOf(row);
        if (ref === match.window && start <= match.index && match.index < end) {
          this.revealing = match;
          return this.openWindow(row);
        }
      }
    }
    const label = `${match.ref.split(":")[1].replace(/\.(\d+)$/, "[$1]")} `;
    found = found || Array.from(pane.querySelectorAll("summary code")).find((c) => c.textContent.startsWith(label));
    const details = found && found.closest("details");
    if (!details) return this.view.toolbar.say(`${match.label}: shown above`);
    details.open = true;
    const row = details.closest(".dtl-row") || details;
    row.classList.remove("dtl-filtered");
    row.classList.add("dtl-hl");
    this.view.linker.scrollTo([row], null);
  }

  expandAll(open) {
    for (const d of this.el.querySelectorAll("details")) d.open = open;
  }
}
