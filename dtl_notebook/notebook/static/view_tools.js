// The dtl_notebook view, part 4 of 6: the header (title, session, status, full width), the
// toolbar (navigation, filter, copy, expand and collapse, the provider preview and the
// explicit switch) and the keyboard.

class Header {
  constructor(root) {
    this.el = h("div", "dtl-head");
    this.title = h("span", "dtl-title");
    this.meta = h("span", "dtl-meta");
    this.status = h("span", "dtl-status");
    this.status.setAttribute("role", "status");
    this.running = false;
    const full = h("button", "dtl-fullbtn", "full width");
    full.type = "button";
    full.title = "Stack the panes at full width, each as tall as its content";
    full.addEventListener("click", () => full.classList.toggle("dtl-on", root.classList.toggle("dtl-full")));
    this.warmth = new Warmth();
    this.el.append(this.title, this.meta, this.warmth.el, this.warmth.health, this.status, full);
    this.error = h("div", "dtl-error");
  }

  draw(header) {
    this.title.textContent = header.title || "dtl_notebook";
    this.meta.textContent = `${header.provider} · ${header.model} · ${header.label} · tools ${header.tools}`;
    const status = header.status || "";
    this.running = status.startsWith("running");
    if (this.status.textContent !== status) this.status.textContent = status;
    this.status.classList.toggle("dtl-running", this.running);
    this.error.textContent = header.error || "";
    this.error.style.display = header.error ? "block" : "none";
    this.warmth.draw(header);
  }
}

class Toolbar {
  constructor(view) {
    this.view = view;
    this.el = h("div", "dtl-toolbar");
    const nav = h("span", "dtl-group");
    nav.append(
      button("◀", "Previous request (←)", () => view.step(-1)),
      button("▶", "Next request (→)", () => view.step(1)),
      button("✕◀", "Previous cache break (p)", () => view.jumpBreak(-1)),
      button("▶✕", "Next cache break (n)", () => view.jumpBreak(1)),
    );
    this.live = button("live", "Follow the newest request (Esc)", () => view.follow(), "dtl-live");
    nav.appendChild(this.live);
    this.filter = h("input", "dtl-filter");
    this.filter.type = "search";
    this.filter.placeholder = "filter (searches collapsed items too)";
    this.filter.setAttribute("aria-label", "Filter the panes");
    let timer = null;
    this.filter.addEventListener("input", () => {
      clearTimeout(timer);
      timer = setTimeout(() => view.search(this.filter.value), 200);
    });
    const edit = h("span", "dtl-group");
    edit.append(
      button("expand all", "Open every item of the panes", () => view.expandAll(true)),
      button("collapse all", "Close every item of the panes", () => view.expandAll(false)),
      button("copy JSON", "Copy this request's JSON body", () => view.copy("json")),
      button("copy curl", "Copy a curl command sending this request (the key from $…_API_KEY)", () => view.copy("curl")),
    );
    this.chooser = h("select", "dtl-switcher");
    this.chooser.title = "Preview the session serialized for a provider (nothing is switched)";
    this.switchButton = button("", "", () => view.switchTo(this.switchButton.dataset.provider), "dtl-switch");
    this.chooser.addEventListener("change", () => {
      const provider = this.chooser.value;
      this.chooser.value = "";
      if (provider) view.askPreview(provider);
    });
    this.el.append(nav, this.filter, edit, this.chooser, this.switchButton);
    this.found = h("div", "dtl-found");
    this.notice = h("div", "dtl-notice");
  }

  drawProviders(providers, live) {
    const options = [h("option", "", "preview as…")];
    options[0].value = "";
    for (const p of providers) {
      const option = h("option", "", p);
      option.value = p;
      options.push(option);
    }
    this.chooser.replaceChildren(...options);
    this.chooser.value = "";
    this.chooser.style.display = providers.length ? "" : "none";
    this.chooser.disabled = !live;
  }

  // The switch button shows only while a preview of another provider is on screen.
  offerSwitch(provider, current) {
    const show = !!provider && !current;
    this.switchButton.style.display = show ? "inline-block" : "none";
    this.switchButton.dataset.provider = provider || "";
    this.switchButton.textContent = show ? `switch the session to ${provider}` : "";
    this.switchButton.title = show
      ? `From the next turn on, send this session to ${provider} (its cache starts cold)`
      : "";
  }

  say(text, isError) {
    this.notice.textContent = text || "";
    this.notice.classList.toggle("dtl-notice-error", !!isError);
    this.notice.style.display = text ? "" : "none";
  }

  drawFound(query, found, reveal) {
    this.found.replaceChildren();
    if (!query) return;
    this.found.appendChild(h("span", "dtl-muted", found.length ? `${found.length} match(es): ` : "no match"));
    for (const match of found.slice(0, FOUND_SHOWN)) {
      const b = button(match.label, `open ${match.ref} in place`, () => reveal(match), "dtl-found-item");
      this.found.appendChild(b);
    }
    if (found.length > FOUND_SHOWN) {
      this.found.appendChild(h("span", "dtl-muted", ` … and ${found.length - FOUND_SHOWN} more (narrow the filter)`));
    }
  }
}

const FOUND_SHOWN = 16;
const TYPING = new Set(["INPUT", "TEXTAREA", "SELECT"]);

// Keys act on the view and stop there, so JupyterLab's notebook shortcuts (a, b, j, k,
// arrows, Enter) never fire while the view has the focus.
function installKeyboard(root, view) {
  root.tabIndex = 0;
  root.setAttribute("data-lm-suppress-shortcuts", "true");
  root.addEventListener("keydown", (event) => {
    event.stopPropagation();
    if (TYPING.has(event.target.tagName)) {
      if (event.key === "Escape") event.target.blur();
      return;
    }
    if (event.ctrlKey || event.metaKey || event.altKey) return;
    const keys = {
      ArrowLeft: () => view.step(-1),
      ArrowRight: () => view.step(1),
      n: () => view.jumpBreak(1),
      p: () => view.jumpBreak(-1),
      Escape: () => view.escape(),
      Enter: () => view.enter(event.target),
    };
    const action = keys[event.key];
    if (!action) return;
    if (event.key === "Enter" && event.target.closest("summary, button")) return; // their own
    event.preventDefault();
    action();
  });
}
