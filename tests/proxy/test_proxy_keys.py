"""Keys through the proxy: whatever their shape, a credential sent in a header, a query
parameter or a credential member of the body reaches the upstream unchanged, and never the
store's file, the terminal line, the log or what listeners (the view) are given, even where
the upstream echoes it back in a response or an error."""

from __future__ import annotations

import json
import logging
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import quote

import httpx2
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from dtl_notebook.agent.secrets import is_credential_parameter, masked_query, redact
from dtl_notebook.proxy import Event, Proxy, Summary
from tests.support.proxy_servers import FaultUpstream

# any characters a header value or a URL-encoded query value can carry, any length
KEYS = st.text(
    "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-._~+/=",
    min_size=12,
    max_size=64,
)
HEADERS = [
    ("authorization", "Bearer {}"),
    ("authorization", "Basic {}"),
    ("authorization", "{}"),
    ("x-api-key", "{}"),
    ("api-key", "{}"),
    ("x-portkey-api-key", "{}"),
    ("x-goog-api-key", "{}"),
    ("x-auth-token", "{}"),
    ("cookie", "theme=dark; session={}"),
    ("x-test-cookie", "{}"),  # the upstream sets it back as a cookie
]
QUERY = ["api_key", "key", "token", "access_token", "sig", "apikey"]
PLACES = st.one_of(
    st.tuples(st.just("header"), st.sampled_from(HEADERS)),
    st.tuples(st.just("query"), st.sampled_from(QUERY)),
    st.tuples(st.just("member"), st.sampled_from(["api_key", "x-api-key"])),
)


class Heard:
    """Everything the proxy gives out besides the store: listener events, terminal lines."""

    def __init__(self) -> None:
        self.lines: list[str] = []
        self.summary = Summary(self.lines.append)
        self.events: list[str] = []

    def __call__(self, event: Event) -> None:
        self.events.append(repr(event))
        self.summary(event)


@pytest.fixture(scope="module")
def heard() -> Heard:
    return Heard()


@pytest.fixture(scope="module")
def key_proxy(
    heard: Heard, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[tuple[Proxy, FaultUpstream]]:
    store = tmp_path_factory.mktemp("keys") / "keys.sqlite"
    with (
        FaultUpstream() as upstream,
        Proxy(store=store, port=0, upstream_anthropic=upstream.url, listeners=[heard]) as proxy,
    ):
        yield proxy, upstream


def store_bytes(store: Path) -> bytes:
    """The store's files as they are on disk: the database, its WAL and shared memory."""
    return b"".join(p.read_bytes() for p in sorted(store.parent.glob(store.name + "*")))


@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(key=KEYS, place=PLACES, fault=st.sampled_from(["echo", "401"]), in_text=st.booleans())
def test_keys_of_any_shape_never_reach_the_store_or_the_terminal(
    key_proxy: tuple[Proxy, FaultUpstream],
    heard: Heard,
    caplog: pytest.LogCaptureFixture,
    key: str,
    place: tuple[str, object],
    fault: str,
    in_text: bool,
) -> None:
    assume(len(set(key)) >= 4)  # a key, not a run of one character that plain text holds
    proxy, upstream = key_proxy
    caplog.set_level(logging.INFO)
    kind, where = place
    headers, path = {"x-test-fault": fault}, "/v1/messages"
    payload: dict[str, object] = {"model": "claude-sonnet-4-5", "max_tokens": 5}
    # the same value may also appear where no rule would see it: it is masked there too
    payload["messages"] = [{"role": "user", "content": f"my key: {key}" if in_text else "hi"}]
    if kind == "header":
        name, shape = where  # type: ignore[misc]
        headers[name] = shape.format(key)
    elif kind == "query":
        path += f"?{where}={quote(key, safe='')}&beta=true"
    else:
        payload[str(where)] = key
    assert proxy.store_queue is not None
    before = proxy.store_queue.handled
    with httpx2.Client(base_url=proxy.url) as http:
        http.post(path, content=json.dumps(payload).encode(), headers=headers)
    forwarded_headers, forwarded_body = upstream.received[-1]
    sent = json.dumps(forwarded_headers) + forwarded_body.decode()
    assert key in sent or quote(key, safe="") in upstream.targets[-1]  # forwarded unchanged
    assert proxy.store_queue.wait(before + 1)
    proxy.store_queue.flush()
    heard.summary.close()  # every line written so far
    heard.summary = Summary(heard.lines.append)
    assert proxy.config.store is not None
    stored = store_bytes(proxy.config.store)
    # the log, less the test client's own lines (which show its own request)
    logged = [r.getMessage() for r in caplog.records if proxy.url not in r.getMessage()]
    shown = "\n".join(heard.lines + heard.events + logged)
    for form in {key, quote(key, safe=""), json.dumps(key)[1:-1]}:
        assert form.encode() not in stored
        assert form not in shown


def test_the_masking_rule_by_place_leaves_ordinary_fields_alone() -> None:
    body = {"prompt_cache_key": "agent-7", "max_tokens": 5, "logprobs": [{"token": "Hi"}]}
    assert redact(body) == body  # body members named like tokens are content
    assert redact({"x-portkey-api-key": "k", "apiKey": "k"}) == {
        "x-portkey-api-key": "[redacted]",
        "apiKey": "[redacted]",
    }
    named = ["x-auth-token", "access_token", "set-cookie", "sig", "key", "proxy-authorization"]
    assert all(is_credential_parameter(n) for n in named)
    plain = ["anthropic-version", "content-type", "x-stainless-retry-count", "beta", "monkey"]
    assert not any(is_credential_parameter(n) for n in plain)
    query = "beta=true&api%5Fkey=abc&key=&x=1"
    assert masked_query(query) == "beta=true&api%5Fkey=[redacted]&key=[redacted]&x=1"
