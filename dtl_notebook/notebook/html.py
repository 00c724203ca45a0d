"""HTML primitives shared by every renderer: escaping, JSON highlighting, link keys, styles.

Everything that reaches HTML from a model, a tool, a user or a log goes through `esc` (or
through Pygments, which escapes too) after secrets are masked. Styling is inline so that the
static fallback survives sanitizers (GitHub, nbconvert, untrusted notebooks); the widget's CSS
only adds layout, theming and the highlight used for linking. Keys for linking are classes,
never `data-*` attributes, which JupyterLab's sanitizer strips.
"""

from __future__ import annotations

import html
import json
import re
from typing import Any

from pygments import highlight
from pygments.formatters import HtmlFormatter
from pygments.lexers import JsonLexer

from dtl_notebook._reuse.registry import memoized
from dtl_notebook.live.transport import redact
from dtl_notebook.notebook.theme import DELETED, INSERTED, LOAD, NEUTRAL, tinted

_KEY_UNSAFE = re.compile(r"[^A-Za-z0-9_-]")
_FORMATTER = HtmlFormatter(nowrap=True)  # short token classes, coloured by `token_css()`
_LEXER = JsonLexer()
_TOKENS = ".dtl-json"


def esc(value: Any) -> str:
    """Escaped text with secrets masked: safe inside an element or a quoted attribute."""
    return html.escape(str(redact(str(value))), quote=True)


def element(tag: str, inner_html: str = "", **attrs: Any) -> str:
    """`<tag attrs>inner_html</tag>`. Attribute values are escaped (`cls` is `class`, a
    trailing `_` is dropped, `_` is `-`; True writes the bare name, None or False nothing);
    text from a model, a tool, a log or a user that goes into one is masked with `redact`
    first (not `esc`: it would be escaped twice). `inner_html` is HTML already: escape text
    with `esc`, or write it with `text`."""
    written = "".join(
        f" {_name(name)}" if value is True else f' {_name(name)}="{_escape(str(value))}"'
        for name, value in attrs.items()
        if value is not None and value is not False
    )
    return f"<{tag}{written}>{inner_html}</{tag}>"


def _name(attribute: str) -> str:
    return "class" if attribute == "cls" else attribute.rstrip("_").replace("_", "-")


def _escape(value: str) -> str:
    return html.escape(value, quote=True)


def text(tag: str, value: Any, **attrs: Any) -> str:
    """An element holding `value` as text (escaped, secrets masked)."""
    return element(tag, esc(value), **attrs)


# A static rendering: readable without the view's CSS or JS, and no MathJax (`mathjax_ignore`
# for JupyterLab 4, `tex2jax_ignore` for MathJax 2): the costs' dollar signs are not TeX.
_STATIC = "dtl-static tex2jax_ignore mathjax_ignore"


def static_block(inner_html: str, *classes: str, style: str = "text-align:left") -> str:
    """The wrapper of every static rendering (a `%dtl` result, a snapshot, the fallback)."""
    return element("div", inner_html, cls=" ".join((_STATIC, *classes)), style=style)


def key(kind: str, name: str | int) -> str:
    """A link key shared by every pane, e.g. `dtl-k-tool-get_weather`."""
    return f"dtl-k-{kind}-{_KEY_UNSAFE.sub('_', str(name))[:80]}"


def link_classes(*keys: str, cls: str = "") -> str | None:
    """The classes of an element that takes part in linking (when it has keys), for
    `element(..., cls=...)`; None when there are none."""
    return " ".join(c for c in (cls, "dtl-link" if keys else "", *keys) if c) or None


def link_attrs(*keys: str, cls: str = "") -> str:
    """The `class` attribute of an element that takes part in linking (when it has keys)."""
    classes = link_classes(*keys, cls=cls)
    return f'class="{classes}"' if classes else ""


def dumps(value: Any, indent: int | None = 2) -> str:
    return json.dumps(redact(value), ensure_ascii=False, indent=indent)


_COMMENT = re.compile(r"\s*/\*.*?\*/")
_PLAIN_SPAN = re.compile(r'<span class="(?:w|p)">([^<]*)</span>')


@memoized("highlighted json")
def _highlight(text: str) -> str:
    # Whitespace and punctuation stay uncoloured: dropping their spans halves the bytes.
    return _PLAIN_SPAN.sub(r"\1", highlight(text, _LEXER, _FORMATTER).rstrip("\n"))


def json_html(value: Any, indent: int | None = 2, limit: int = 20_000) -> str:
    """Pygments-highlighted JSON, clipped to `limit` characters of source.

    Token colours are classes (a tenth of the bytes of inline styles); without the view's CSS
    the JSON stays plain, readable text.
    """
    text = dumps(value, indent)
    clipped = ""
    if len(text) > limit:
        clipped = f"\n… {len(text) - limit:,} more characters"
        text = text[:limit]
    return f'<span class="dtl-json">{_highlight(text)}</span>{esc(clipped)}'


def token_css(dark_scope: str = 'body[data-jp-theme-light="false"]') -> str:
    """Colours for highlighted JSON: light, and dark under `dark_scope` (Lab's dark themes)."""
    light = HtmlFormatter(style="default").get_style_defs(_TOKENS)
    dark = HtmlFormatter(style="github-dark").get_style_defs(f"{dark_scope} {_TOKENS}")
    rules = []
    for line in (light + "\n" + dark).splitlines():
        if line.startswith(("pre", "td.", "span.", ".")) and _TOKENS not in line:
            continue
        if " .hll " in line or "background" in line:
            continue
        rules.append(_COMMENT.sub("", line).rstrip())
    return "\n".join(rules)


def pre(inner_html: str) -> str:
    """Preformatted text that wraps at spaces (a long word breaks only where it must)."""
    return (
        '<pre style="margin:0;white-space:pre-wrap;word-break:normal;overflow-wrap:anywhere;'
        f'color:inherit;background:transparent">{inner_html}</pre>'
    )


def badge(label: str, tint: str = NEUTRAL) -> str:
    """A label; its tint is inline (it carries meaning) with the theme's text colour."""
    return text(
        "span", label, cls="dtl-badge", style=tinted(tint, "border-radius:3px;padding:0 4px")
    )


def muted(inner_html: str, tag: str = "div") -> str:
    return element(tag, inner_html, cls="dtl-muted")


def clip(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def code(value: Any) -> str:
    """`value` as inline code (escaped, secrets masked)."""
    return text("code", value)


def heading(title: str) -> str:
    return text("h4", title, cls="dtl-h")


def mark(inner_html: str, tint: str = LOAD, cls: str | None = None) -> str:
    """`<mark>` (yellow without CSS) in the theme's colours; `cls`: e.g. `link_classes(...)`."""
    return element("mark", inner_html, cls=cls, style=tinted(tint))


def deleted(inner_html: str) -> str:
    return element("del", inner_html, style=tinted(DELETED))


def inserted(inner_html: str) -> str:
    return element("ins", inner_html, style=tinted(INSERTED))


def grey_mark(label: str, hint: str = "") -> str:
    """A fact that is not a break (below the minimum, cold on a new provider), as text."""
    style = tinted(NEUTRAL, "padding:0 3px;border-radius:3px")
    return text("span", label, cls="dtl-note", style=style, title=redact(hint) if hint else None)
