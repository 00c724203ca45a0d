"""The demo: an application of the layers below it (never imported by them).

`demo_catalog()` is ~200 namespaced tools over a small fake business world, `demo_session()`
a session of them with only the search tool and a few file tools active, and the recorded demo
runs (one per provider) replay offline. Anything else that only serves the lessons (a demo
server, say) belongs here too, never in the layers below.
"""

from dtl_notebook.demo.catalog import (
    CatalogDataError,
    core_tool_names,
    demo_catalog,
    demo_group_summaries,
    namespaces,
)
from dtl_notebook.demo.sessions import (
    DEMO_MODELS,
    DEMO_TURNS,
    demo_session,
    record_demos,
    recording_path,
    replay_demo,
)

__all__ = [
    "DEMO_MODELS",
    "DEMO_TURNS",
    "CatalogDataError",
    "core_tool_names",
    "demo_catalog",
    "demo_group_summaries",
    "demo_session",
    "namespaces",
    "record_demos",
    "recording_path",
    "replay_demo",
]
