"""Headers across the proxy: what is forwarded (RFC 9110 §7.6.1: hop-by-hop fields are the
connection's, not the message's) and what is stored (never credentials, wherever they
reappear, nor key-like values)."""

from __future__ import annotations

from urllib.parse import unquote_plus

from dtl_notebook.agent.secrets import MASK, Secrets, is_credential_parameter

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


def learn_credentials(secrets: Secrets, headers: RawHeaders, query: str) -> None:
    """Teach `secrets` the values of the credential headers and query parameters sent."""
    for raw_name, raw_value in headers:
        if is_credential_parameter(raw_name.decode("latin-1")):
            secrets.learn(raw_value.decode("latin-1"))
    for part in query.split("&"):
        name, equals, value = part.partition("=")
        if equals and is_credential_parameter(unquote_plus(name)):
            secrets.learn(value)


def stored_headers(headers: RawHeaders, secrets: Secrets) -> list[list[str]]:
    """Headers as [name, value] pairs fit to store: credential headers masked by name, any
    value `secrets` knows or that looks like a key masked in the others."""
    stored = []
    for raw_name, raw_value in headers:
        name = raw_name.decode("latin-1")
        value = raw_value.decode("latin-1")
        stored.append([name, MASK if is_credential_parameter(name) else secrets.mask(value)])
    return stored
