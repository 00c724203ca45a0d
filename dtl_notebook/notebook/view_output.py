"""The output of a cell that shows a live view: the saved snapshot, then the widget.

JupyterLab renders one mimetype per output, and for a trusted notebook it prefers the widget's
over `text/html`; reopened with a fresh kernel, the widget's model is gone and the output says
"Error displaying widget: model not found" (or "Loading widget…" while no kernel answers). So
the cell's turn is its own output, plain `text/html` (`FALLBACK`), and the widget a second one
with no HTML. Each hides the other with CSS alone, so it holds with or without a kernel:

- while the view renders, the view's stylesheet hides the fallback (`.dtl-view` follows it);
- while the widget is missing (loading, model not found), the fallback's own `<style>` hides
  the widget's output. Untrusted notebooks drop that `<style>` but choose the widget output's
  `text/plain` line anyway; GitHub, nbviewer and nbconvert show the fallback.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Protocol

from dtl_notebook.notebook.html import element


class LiveView(Protocol):
    """What a live cell needs of its view (`AgentView`)."""

    title: str
    cell_start: int | None

    def snapshot(self, start: int = 0) -> tuple[str, str]: ...

    def widget_bundle(self) -> tuple[dict[str, Any], dict[str, Any]]: ...


FALLBACK = "dtl-fallback"
# A widget output beside a fallback, in the same output area, that shows no view. The widget
# renderer alone leaves `data-mime-type` off its output (JupyterLab's own renderers set it).
MISSING_WIDGET_CSS = (
    f".jp-OutputArea-child:has(.{FALLBACK}) ~ .jp-OutputArea-child"
    ":has(> .jp-OutputArea-output:not([data-mime-type])):not(:has(.dtl-view)){display:none}"
)


class _Bundle:
    """A display value with a fixed mimebundle (data, or data and metadata)."""

    def __init__(self, bundle: dict[str, Any] | tuple[dict[str, Any], dict[str, Any]]) -> None:
        self.bundle = bundle

    def _repr_mimebundle_(self, **_kwargs: Any) -> Any:
        return self.bundle


def fallback(html: str, text: str) -> _Bundle:
    """The saved turn of a live cell (`html`, `text`: its snapshot) as the widget's stand-in."""
    return _Bundle(
        {
            "text/html": element("div", element("style", MISSING_WIDGET_CSS) + html, cls=FALLBACK),
            "text/plain": text,
        }
    )


class LiveCell:
    """The two outputs of a live cell, updated as one display handle."""

    def __init__(self, view: LiveView, show: Callable[..., Any]) -> None:
        self.view = view
        self.fallback = show(fallback(*self._snapshot()), display_id=True)
        data, metadata = view.widget_bundle()
        # Saved with the notebook and shown where widgets are not (untrusted, text exports):
        # a line that stays true, not the counts of the moment it was displayed.
        data["text/plain"] = f"{view.title}: live view (its saved turn is above)"
        self.widget = show(_Bundle((data, metadata)), display_id=True)

    def _snapshot(self) -> tuple[str, str]:
        return self.view.snapshot(self.view.cell_start or 0)

    def update(self, value: Any) -> None:
        """The view itself: the saved turn catches up with its requests. Anything else (what
        a retired cell keeps) replaces the turn, and the widget's output empties."""
        if value is self.view:
            self.fallback.update(fallback(*self._snapshot()))
            return
        self.fallback.update(fallback(value._repr_html_(), repr(value)))
        self.widget.update(_Bundle({"text/plain": ""}))
