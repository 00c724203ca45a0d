"""A local cache-inspector proxy: point any agent's base URL at it, it forwards every request
to the provider unchanged and keeps each exchange in a SQLite store that `audit_capture`
reads like any capture."""

from dtl_notebook.cache.conversation_key import Conversations
from dtl_notebook.proxy.config import ProxyConfig, ProxyConfigError
from dtl_notebook.proxy.server import Proxy
from dtl_notebook.proxy.store_queue import Arrived, Event, Finished, StoreQueue
from dtl_notebook.proxy.summary import Summary

__all__ = [
    "Arrived",
    "Conversations",
    "Event",
    "Finished",
    "Proxy",
    "ProxyConfig",
    "ProxyConfigError",
    "StoreQueue",
    "Summary",
]
