"""What the proxy forwards and where: the provider routes, the upstream origins and limits.

An upstream is an origin (`scheme://host[:port]`), fixed by configuration; the request's path
and query are appended as they came, so no request can pick another host (no open proxy).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit

from dtl_notebook.agent.secrets import redact
from dtl_notebook.wire.providers import by_endpoint

# path -> (upstream family, the provider its body is written for)
ROUTES = {
    path: (row.family, row.name)
    for endpoint, row in by_endpoint().items()
    for path in (endpoint, *row.extra_paths)
}
GENERATION_PATHS = frozenset(by_endpoint())
DEFAULT_ANTHROPIC = "https://api.anthropic.com"
DEFAULT_OPENAI = "https://api.openai.com"
DEFAULT_PORT = 8788
MAX_BODY_BYTES = 32 * 1024 * 1024
MAX_STORED_RESPONSE_BYTES = 16 * 1024 * 1024
LOOPBACK = frozenset({"127.0.0.1", "::1", "localhost"})
_HOST = re.compile(r"[A-Za-z0-9._:%-]+")  # a name, an IPv4 or an IPv6 address (no spaces)


class ProxyConfigError(ValueError):
    """A proxy setting that cannot work; names the setting and the value."""


def parse_origin(value: str, setting: str) -> str:
    """`value` as an origin `scheme://host[:port]` (no path, query or credentials)."""
    if not isinstance(value, str):
        raise ProxyConfigError(f"{setting}: expected an origin string, got {value!r}")
    parts = urlsplit(value.strip())
    shown = repr(_shown(value))
    host = parts.hostname or ""
    if parts.scheme not in ("http", "https") or not host or not _HOST.fullmatch(host):
        raise ProxyConfigError(
            f"{setting}: {shown} is not an origin: expected http(s)://host[:port]"
        )
    if parts.path not in ("", "/") or parts.query or parts.fragment:
        raise ProxyConfigError(
            f"{setting}: {shown} has a path; an upstream is an origin (scheme://host:port), "
            "the request's own path is kept as it came"
        )
    if parts.username or parts.password:
        raise ProxyConfigError(f"{setting}: credentials in the URL are not accepted")
    try:
        port = parts.port
    except ValueError:
        port = 0
    # `http://127.0.0.1:` (an unset shell variable after the colon) would otherwise be port 80
    if port == 0 or parts.netloc.endswith(":"):
        raise ProxyConfigError(
            f"{setting}: {shown} has no valid port: expected a number from 1 to 65535 "
            "after the colon, or no colon for the scheme's default"
        )
    host = f"[{host}]" if ":" in host else host
    return f"{parts.scheme}://{host}" + (f":{port}" if port is not None else "")


def _shown(value: str) -> str:
    """`value` fit for an error message: without its query or credentials, keys masked."""
    head = value.split("?", 1)[0].split("#", 1)[0]
    scheme, sep, rest = head.partition("://")
    if "@" in rest.split("/", 1)[0]:
        rest = "[redacted]@" + rest.split("@", 1)[1]
    return str(redact(scheme + sep + rest)) + ("?…" if "?" in value else "")


def _positive(value: int, setting: str) -> int:
    if not isinstance(value, int) or isinstance(value, bool) or value <= 0:
        raise ProxyConfigError(f"{setting}: expected a positive number of bytes, got {value!r}")
    return value


@dataclass(frozen=True)
class ProxyConfig:
    """Checked settings; build with `ProxyConfig.make(...)`."""

    host: str
    port: int
    store: Path | None
    upstreams: dict[str, str]  # family -> origin
    max_body: int
    max_stored_response: int

    @classmethod
    def make(
        cls,
        host: str = "127.0.0.1",
        port: int = DEFAULT_PORT,
        store: str | Path | None = None,
        upstream_anthropic: str = DEFAULT_ANTHROPIC,
        upstream_openai: str = DEFAULT_OPENAI,
        max_body: int = MAX_BODY_BYTES,
        max_stored_response: int = MAX_STORED_RESPONSE_BYTES,
    ) -> ProxyConfig:
        if not isinstance(port, int) or isinstance(port, bool) or not 0 <= port <= 65535:
            raise ProxyConfigError(f"port: expected a number from 0 to 65535, got {port!r}")
        if not isinstance(host, str) or not host:
            raise ProxyConfigError(f"host: expected an address, got {host!r}")
        upstreams = {
            "anthropic": parse_origin(upstream_anthropic, "upstream_anthropic"),
            "openai": parse_origin(upstream_openai, "upstream_openai"),
        }
        return cls(
            host,
            port,
            Path(store) if store is not None else None,
            upstreams,
            _positive(max_body, "max_body"),
            _positive(max_stored_response, "max_stored_response"),
        )

    @property
    def exposed(self) -> bool:
        """Listening beyond this machine: anyone who can reach the port can spend the keys
        its clients send."""
        return self.host not in LOOPBACK
