// The dtl_notebook view: cache warmth counted down in the page, with no kernel round trip.
// The kernel sends an expiry as a timestamp on the agent's clock, and that clock's time when
// it sent it (`clock`); the page keeps the offset to its own clock and counts down to it.

function clockSpan(seconds) {
  const s = Math.max(0, Math.floor(seconds));
  const hours = Math.floor(s / 3600);
  const minutes = Math.floor((s % 3600) / 60);
  const rest = String(s % 60).padStart(2, "0");
  return hours ? `${hours}:${String(minutes).padStart(2, "0")}:${rest}` : `${minutes}:${rest}`;
}

function money(dollars) {
  if (dollars === null || dollars === undefined) return "";
  return dollars < 0.01 ? `$${dollars.toFixed(4)}` : `$${dollars.toFixed(2)}`;
}

class Warmth {
  constructor() {
    this.el = h("span", "dtl-warm");
    this.el.setAttribute("aria-live", "off");
    this.health = h("span", "dtl-health");
    this.alert = h("div", "dtl-miss-alert");
    this.alert.setAttribute("role", "alert");
    this.alert.style.display = "none";
    this.data = null;
    this.offset = 0; // the agent's clock less the page's, in seconds
    this.listeners = [];
    this.timer = setInterval(() => this.tick(), 1000);
  }

  now() {
    return Date.now() / 1000 + this.offset;
  }

  // the header's `warm`, `health` and `miss`; nothing of them: a capture, shown as before
  draw(header) {
    const warm = header.warm || null;
    if (warm) this.offset = warm.clock - Date.now() / 1000;
    this.data = warm;
    const health = header.health || {};
    this.health.textContent = health.words || "";
    this.health.title = health.requests
      ? `this session: ${fmt(health.requests)} request(s), ${Math.round(100 * health.hit_rate)}% of input tokens read from the cache` +
        (health.spent !== null ? `; input ${money(health.spent)} against ${money(health.uncached)} had nothing been cached` : "")
      : "";
    const miss = header.miss || "";
    if (this.alert.textContent !== miss) this.alert.textContent = miss;
    this.alert.style.display = miss ? "" : "none";
    this.tick();
  }

  tick() {
    const warm = this.data;
    for (const listener of this.listeners) listener(this.now());
    if (!warm) {
      this.el.textContent = "";
      return;
    }
    const left = warm.expires_at === null ? 0 : warm.expires_at - this.now();
    const on = warm.keep_warm ? " · keep-warm on" : "";
    let text = "cache cold" + on;
    if (left > 0 && warm.tokens > 0) {
      text = `${warm.best_effort ? "~" : ""}warm ${fmt(warm.tokens)} tok · ${clockSpan(left)} left${on}`;
      if (warm.warning) text += ` · ⚠ expires before the next likely turn: ${fmt(warm.warning.tokens)} tok again${warm.warning.dollars !== null ? `, ${money(warm.warning.dollars)}` : ""}`;
    }
    if (this.el.textContent !== text) this.el.textContent = text;
    this.el.classList.toggle("dtl-warm-cold", !(left > 0 && warm.tokens > 0));
    this.el.classList.toggle("dtl-warm-soon", left > 0 && left < 60);
    this.el.classList.toggle("dtl-warm-warn", left > 0 && !!warm.warning);
    this.el.title = warm.best_effort
      ? "best effort: the provider may clear it sooner (OpenAI: after 5 to 10 minutes idle)"
      : warm.warning ? `fix: ${warm.warning.fix}` : "what the last request left in the provider's cache, counted down here";
  }

  stop() {
    clearInterval(this.timer);
  }
}
