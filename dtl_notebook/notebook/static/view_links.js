// The dtl_notebook view, part 3 of 6: linking across panes. Hovering lights the hovered
// item's own key (one tool lights that tool, a load point its tools); clicking pins it and
// scrolls the other panes there; hover never scrolls. A cache break is lit in all three panes
// (the request item, the agent-state row, the segment) whenever its request is shown.

const BREAK_KEY = "dtl-k-brk-here";

class Linker {
  constructor(root, bodies) {
    this.root = root;
    this.bodies = bodies;
    this.pinned = null; // the keys of the pinned item
  }

  light(keys, source, scroll) {
    for (const x of this.root.querySelectorAll(".dtl-hl")) x.classList.remove("dtl-hl");
    if (!keys.length) return [];
    const selector = keys.map((k) => `.${CSS.escape(k)}`).join(",");
    const found = Array.from(this.root.querySelectorAll(selector));
    for (const x of found) x.classList.add("dtl-hl");
    if (scroll) this.scrollTo(found, source);
    return found;
  }

  // Scroll each pane (not the page) to its first lit element, unless it is in view already.
  scrollTo(found, source) {
    for (const body of Object.values(this.bodies)) {
      if (source && body.contains(source)) continue;
      const first = found.find((x) => body.contains(x));
      if (!first) continue;
      const top = first.getBoundingClientRect().top - body.getBoundingClientRect().top;
      if (top < 0 || top > body.clientHeight - 20) body.scrollTop += top - 24;
    }
  }

  hover(el) {
    if (this.pinned) return;
    this.light(el ? linkKeys(el).slice(0, 1) : [], el, false);
  }

  pin(el) {
    const keys = linkKeys(el).slice(0, 1);
    if (this.pinned && this.pinned.join() === keys.join()) return this.unpin();
    this.pinned = keys;
    this.light(keys, el, true);
    return true;
  }

  unpin() {
    const had = this.pinned !== null;
    this.pinned = null;
    this.light([], null, false);
    return had;
  }

  // After new pane HTML: mark the break's elements in every pane and scroll each pane to
  // its own (Request JSON's list is long: its lit item is rarely at the top); a pin survives
  // if its key is still there, and then it is what the panes scroll to.
  drawn() {
    const lit = Array.from(this.root.querySelectorAll(`.${BREAK_KEY}`));
    for (const x of lit) x.classList.add("dtl-brk-lit");
    if (this.pinned && !this.light(this.pinned, null, true).length) this.pinned = null;
    if (!this.pinned && lit.length) this.scrollTo(lit, null);
  }
}

function installLinking(root, linker) {
  root.addEventListener("mouseover", (event) => {
    const link = event.target.closest(".dtl-link");
    if (link && root.contains(link)) linker.hover(link);
  });
  root.addEventListener("mouseleave", () => linker.hover(null));
  root.addEventListener("click", (event) => {
    const link = event.target.closest(".dtl-link");
    if (!link || !root.contains(link) || event.target.closest("summary, button")) return;
    linker.pin(link);
  });
}
