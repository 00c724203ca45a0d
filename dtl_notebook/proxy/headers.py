"""Headers across the proxy: what is forwarded (RFC 9110 §7.6.1: hop-by-hop fields are the
connection's, not the message's) and what is stored (never credentials or key-like values)."""

from __future__ import annotations

from dtl_notebook.agent.secrets import redact

RawHeaders = list[tuple[bytes, bytes]]

# fields that belong to one connection (RFC 9110 §7.6.1, RFC 9112 §6.1) or that the sending
# side sets for the connection it opens (host, content-length of the bytes it writes)
HOP_BY_HOP = frozenset(
    {
        b"connection",
        b"keep-alive",
        b"proxy-connection",
        b"proxy-authenticate",
        b"proxy-authorization",
        b"te",
        b"trailer",
        b"transfer-encoding",
        b"upgrade",
    }
)
# never stored (their values, not only key-like ones)
SECRET_HEADERS = frozenset(
    {
        "authorization",
        "proxy-authorization",
        "x-api-key",
        "api-key",
        "openai-api-key",
        "x-goog-api-key",
        "cookie",
        "set-cookie",
    }
)
MASK = "[redacted]"


def _connection_tokens(headers: RawHeaders) -> set[bytes]:
    named = set()
    for name, value in headers:
        if name.lower() == b"connection":
            named |= {t.strip().lower() for t in value.split(b",") if t.strip()}
    return named


def end_to_end(headers: RawHeaders, *, drop: frozenset[bytes] = frozenset()) -> RawHeaders:
    """`headers` without hop-by-hop fields, those named in `Connection`, and `drop`; order and
    repeated fields kept."""
    unwanted = HOP_BY_HOP | _connection_tokens(headers) | drop
    return [(n, v) for n, v in headers if n.lower() not in unwanted]


def stored_headers(headers: RawHeaders) -> list[list[str]]:
    """Headers as [name, value] pairs fit to store: credentials masked by name, any key-like
    value (in any field, e.g. a custom one) masked by shape."""
    stored = []
    for raw_name, raw_value in headers:
        name = raw_name.decode("latin-1")
        value = raw_value.decode("latin-1")
        stored.append([name, MASK if name.lower() in SECRET_HEADERS else redact(value)])
    return stored
