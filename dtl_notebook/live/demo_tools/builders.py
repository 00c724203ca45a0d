"""Every namespace's builder, and `implementations()`: the catalog's behaviour."""

from __future__ import annotations

from collections.abc import Callable

from dtl_notebook.live.demo_tools.billing import _billing
from dtl_notebook.live.demo_tools.calendar_events import _calendar
from dtl_notebook.live.demo_tools.crm import _crm
from dtl_notebook.live.demo_tools.data_formats import _data
from dtl_notebook.live.demo_tools.dates_times import _time
from dtl_notebook.live.demo_tools.email_drafts import _email
from dtl_notebook.live.demo_tools.exchange import _currency_domain
from dtl_notebook.live.demo_tools.files import _files
from dtl_notebook.live.demo_tools.geography import _geography
from dtl_notebook.live.demo_tools.hr import _hr
from dtl_notebook.live.demo_tools.inventory import _inventory
from dtl_notebook.live.demo_tools.knowledge import _knowledge
from dtl_notebook.live.demo_tools.maths import _maths
from dtl_notebook.live.demo_tools.notes import _notes
from dtl_notebook.live.demo_tools.registry import Fn, _Domain
from dtl_notebook.live.demo_tools.shipping import _shipping
from dtl_notebook.live.demo_tools.support import _support
from dtl_notebook.live.demo_tools.text import _text
from dtl_notebook.live.demo_tools.travel import _travel
from dtl_notebook.live.demo_tools.units import _units
from dtl_notebook.live.demo_tools.weather import _weather
from dtl_notebook.live.demo_tools.world import _World

_BUILDERS: tuple[tuple[str, Callable[[_Domain, _World], None]], ...] = (
    ("weather", _weather),
    ("shipping", _shipping),
    ("crm", _crm),
    ("billing", _billing),
    ("files", _files),
    ("calendar", _calendar),
    ("maths", _maths),
    ("units", _units),
    ("time", _time),
    ("currency", _currency_domain),
    ("travel", _travel),
    ("support", _support),
    ("hr", _hr),
    ("inventory", _inventory),
    ("email", _email),
    ("notes", _notes),
    ("knowledge", _knowledge),
    ("geography", _geography),
    ("text", _text),
    ("data", _data),
)


def implementations() -> dict[str, tuple[str, Fn]]:
    """Every tool implementation by name, as (namespace, function), bound to a fresh world."""
    world = _World()
    out: dict[str, tuple[str, Fn]] = {}
    for namespace, build in _BUILDERS:
        build(_Domain(namespace, out), world)
    return out


__all__ = ["implementations"]
