// The dtl_notebook view, part 1 of 6: DOM helpers. widget.py concatenates view_*.js and
// view.js into one ES module. Everything built here from data uses textContent; only HTML
// rendered and escaped in Python goes through innerHTML.

function h(tag, className, text) {
  const el = document.createElement(tag);
  if (className) el.className = className;
  if (text !== undefined) el.textContent = text;
  return el;
}

// One formatter for the page: toLocaleString builds one for every call (slow in a long timeline).
const NUMBER_FORMAT = new Intl.NumberFormat("en-US");
function fmt(n) {
  return NUMBER_FORMAT.format(Number(n || 0));
}

function linkKeys(el) {
  return Array.from(el.classList).filter((c) => c.startsWith("dtl-k-"));
}

function pct(part, total) {
  return total > 0 ? `${(100 * part) / total}%` : "0%";
}

function strip(figures, total, className) {
  const bar = h("div", `dtl-strip ${className || ""}`);
  for (const name of ["cached", "written", "uncached"]) {
    const seg = h("span", `dtl-strip-${name}`);
    seg.style.width = pct(figures[name] || 0, total);
    bar.appendChild(seg);
  }
  return bar;
}

// Python escapes break texts for HTML; tooltips want them as plain text.
function decodeHtml(text) {
  return text ? new DOMParser().parseFromString(text, "text/html").body.textContent : "";
}

function fragment(html) {
  const t = document.createElement("template");
  t.innerHTML = html; // rendered and escaped in Python
  return t.content;
}

function button(label, title, onClick, className) {
  const b = h("button", `dtl-btn ${className || ""}`, label);
  b.type = "button";
  b.title = title;
  b.addEventListener("click", onClick);
  return b;
}

// A class of the form `prefix...` on an element, without the prefix ("" when none).
function classValue(el, prefix) {
  const c = Array.from(el.classList).find((x) => x.startsWith(prefix));
  return c ? c.slice(prefix.length) : "";
}

// The view's stylesheet, installed once per page and rewritten only when it changed.
function ensureStyle() {
  if (!VIEW_CSS) return;
  let style = document.getElementById("dtl-view-style");
  if (style && style.textContent === VIEW_CSS) return;
  if (!style) {
    style = document.createElement("style");
    style.id = "dtl-view-style";
    document.head.appendChild(style);
  }
  style.textContent = VIEW_CSS;
}
