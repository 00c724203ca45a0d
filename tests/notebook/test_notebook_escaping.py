"""Hostile payloads and secrets in every HTML the notebook layer produces.

A tool result, a user message, an assistant answer, a tool error and a captured request log
carry `<script>`, `<img onerror>` and `javascript:` payloads and API keys. They must appear
only as escaped text (no element, no event handler, no link) and the keys never at all: in
the widget panes, the bodies fetched by ref, the static fallback, the export, `%dtl inspect`,
`%dtl show`, `%dtl compare`, `%dtl diff`, `%dtl tools` and the display formatters.
"""

from __future__ import annotations

import html
import json
import re
from collections.abc import Iterator
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from IPython.core.interactiveshell import InteractiveShell
from IPython.utils.capture import capture_output

from dtl_notebook import Session, Tool
from dtl_notebook.cache import analyze
from dtl_notebook.demo import DEMO_MODELS
from dtl_notebook.live import Agent, ScriptedPolicy, redact
from dtl_notebook.notebook import AgentView, export_html
from dtl_notebook.notebook import html as markup
from dtl_notebook.notebook.html import esc, json_html
from dtl_notebook.notebook.word_diff import inline_diff
from tests.support.notebook_shell import FlakyTransport, run_cell

KEY_ANT = "sk-ant-api03-" + "Q7xK" * 10
KEY_PROJ = "sk-proj-" + "Zr4mW" * 8
KEYS = (KEY_ANT, KEY_PROJ)
SCRIPT = "<script>alert(1)</script>"
IMG = "<img src=x onerror=alert(1)>"
LINK = '<a href="javascript:alert(1)">click me</a>'
HOSTILE = f"{SCRIPT} {IMG} {LINK} [md](javascript:alert(1)) javascript:alert(1)"
SHOWN = "&lt;script&gt;alert(1)&lt;/script&gt;"  # how the payload must read: escaped text
PROVIDERS = list(DEMO_MODELS)
URL_ATTRIBUTES = {"href", "src", "action", "formaction", "srcdoc", "xlink:href", "data"}
PAGE_SCRIPTS = {"application/json", "module"}


# -- checking HTML -----------------------------------------------------------------------------
class _Tags(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: list[tuple[str, dict[str, str | None]]] = []
        self.text: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, dict(attrs)))

    handle_startendtag = handle_starttag

    def handle_data(self, data: str) -> None:
        self.text.append(data)


def parse(fragment: str) -> _Tags:
    parser = _Tags()
    parser.feed(fragment)
    parser.close()
    return parser


def assert_safe(fragment: str, where: str, *, page: bool = False) -> None:
    """No hostile element, handler or link, and no key, anywhere in `fragment`."""
    assert "<script>alert" not in fragment, where
    assert "<img" not in fragment.lower(), where
    for key in KEYS:
        assert key not in fragment, f"{where}: key leaked"
    for tag, attrs in parse(fragment).tags:
        assert tag not in ("img", "iframe", "object", "embed", "a", "svg", "form"), (where, tag)
        if tag == "script":
            assert page and attrs.get("type") in PAGE_SCRIPTS and "src" not in attrs, where
        for name in attrs:
            assert not name.startswith("on"), (where, tag, name)
            assert name not in URL_ATTRIBUTES, (where, tag, name)


def assert_no_key(text: str, where: str) -> None:
    for key in KEYS:
        assert key not in text, f"{where}: key leaked"


# -- hostile sessions ----------------------------------------------------------------------------
def fetch_page(url: str = "") -> str:
    return f"Page at {url}: {HOSTILE} token={KEY_ANT}"


def login() -> str:
    raise RuntimeError(f"auth failed for key {KEY_PROJ} {IMG}")


def hostile_tools() -> list[Tool]:
    url = {"type": "object", "properties": {"url": {"type": "string"}}}
    return [
        Tool("fetch_page", description=f"Fetch a page {IMG}", parameters=url, execute=fetch_page),
        Tool("login", description="Log in", parameters={"type": "object"}, execute=login),
    ]


def hostile_agent(provider: str, transport: Any = "emulator") -> Agent:
    session = Session(
        system=f"You are helpful. {SCRIPT}",
        tools=hostile_tools(),
        active=["tool_search", "fetch_page", "login"],
    )
    policy = ScriptedPolicy(
        [
            {"call": "fetch_page", "arguments": {"url": "javascript:alert(1)"}},
            {"call": "login", "arguments": {}},
            {"text": f"Done: {HOSTILE} {KEY_ANT}"},
            {"text": f"Again: {IMG} {KEY_PROJ}"},
        ]
    )
    return Agent(session, provider, DEMO_MODELS[provider], transport, policy=policy)


def run_hostile(agent: Agent) -> Agent:
    agent.run(f"Fetch {HOSTILE} with my key {KEY_ANT}")
    agent.run(f"Once more, {IMG} {KEY_PROJ}")  # the answer above is in these requests
    return agent


@pytest.fixture(scope="module", params=PROVIDERS)
def hostile(request: pytest.FixtureRequest) -> Agent:
    agent = run_hostile(hostile_agent(request.param))
    messages = json.dumps([s.request.payload for s in agent.steps])
    assert SCRIPT in messages or json.dumps(SCRIPT)[1:-1] in messages  # the payload is on the wire
    return agent


def all_pane_html(view: AgentView) -> Iterator[tuple[str, str]]:
    """Every pane and every body fetched by ref, for every request of the view."""
    sent: list[dict[str, Any]] = []
    view.send = lambda content, buffers=None: sent.append(content)  # type: ignore[method-assign]
    for index in range(len(view.records)):
        view.selected = index
        panes = dict(view.panes)
        for name in ("state", "request", "context", "break", "title"):
            yield f"request {index + 1} {name} pane", str(panes.get(name, ""))
        markup = "".join(str(panes.get(n, "")) for n in ("state", "request", "context"))
        for classes in re.findall(r'class="([^"]*)"', markup):
            for ref in (c[8:] for c in classes.split() if c.startswith("dtl-ref:")):
                view._on_message(view, {"type": "body", "index": index, "ref": ref}, [])
                yield f"request {index + 1} body {ref}", sent[-1]["html"]


# -- the widget, the static fallback and the export ---------------------------------------------
def test_widget_panes_and_bodies(hostile: Agent) -> None:
    view = AgentView(hostile)
    shown = []
    for where, fragment in all_pane_html(view):
        assert_safe(fragment, where)
        shown.append(fragment)
    everything = "".join(shown)
    assert SHOWN in everything  # the payload is shown, as text
    assert "[redacted]" in everything
    assert "javascript:alert(1)" in html.unescape(everything)


def test_widget_state_outside_the_panes(hostile: Agent) -> None:
    view = AgentView(hostile)
    for item in view.tail["items"]:
        if item["break"]:
            assert_safe(item["break"], "timeline break")
    assert_no_key(json.dumps(view.tail), "timeline")
    assert_no_key(json.dumps(view.header), "header")
    assert_no_key(repr(view), "text/plain")


def test_static_fallback(hostile: Agent) -> None:
    view = AgentView(hostile)
    for index in range(-1, len(view.records)):
        view.selected = index
        data, _ = view._repr_mimebundle_()
        assert_safe(data["text/html"], f"static fallback, request {index}")
        assert_no_key(data["text/plain"], "text/plain")
    assert SHOWN in data["text/html"]


def test_export(hostile: Agent, tmp_path: Path) -> None:
    page = export_html(hostile, tmp_path / "hostile.html").read_text(encoding="utf-8")
    assert_safe(page, "export page", page=True)
    scripts = [attrs.get("type") for tag, attrs in parse(page).tags if tag == "script"]
    assert sorted(scripts) == ["application/json", "module"]
    match = re.search(r'<script type="application/json" id="dtl-data">(.*?)</script>', page, re.S)
    assert match
    data = json.loads(match.group(1))
    for k, pane in enumerate(data["panes"]):
        for name in ("state", "request", "context", "break", "title"):
            assert_safe(str(pane.get(name, "")), f"export pane {k} {name}")
    for n, text in enumerate(data["texts"]):
        assert_safe(text, f"export body {n}")
    assert_no_key(json.dumps(data["state"]), "export state")
    assert_no_key(json.dumps(data["copies"]), "export copies")  # the copy buttons' bodies


def test_a_failed_turn_redacts_its_error(tmp_path: Path) -> None:
    message = f"invalid x-api-key {KEY_ANT} {IMG}"
    agent = hostile_agent("anthropic", FlakyTransport(fail_at=2, message=message))
    view = AgentView(agent)
    with pytest.raises(Exception, match="turn failed"):
        agent.run(f"Fetch {HOSTILE}")
    error = view.header["error"]
    assert error and "invalid x-api-key" in error
    assert_no_key(error, "view error")
    assert_safe(view._repr_mimebundle_()[0]["text/html"], "static fallback after a failure")


# -- the magics ------------------------------------------------------------------------------------
def html_of(value: Any) -> str:
    return str(value._repr_html_())


def magic(ip: InteractiveShell, line: str) -> Any:
    with capture_output():
        return ip.run_line_magic("dtl", line)


def test_dtl_show_compare_diff_and_tools(ip: InteractiveShell, hostile: Agent) -> None:
    ip.user_ns["agent"] = hostile
    count = len(hostile.steps)
    for step in range(1, count + 1):
        assert_safe(html_of(magic(ip, f"show {step}")), f"%dtl show {step}")
    assert_safe(html_of(magic(ip, "compare")), "%dtl compare")
    assert_no_key(repr(magic(ip, "compare")), "%dtl compare text")
    for a, b in zip(range(1, count), range(2, count + 1), strict=True):
        assert_safe(html_of(magic(ip, f"diff {a} {b}")), f"%dtl diff {a} {b}")
    for provider in PROVIDERS:
        diff = html_of(magic(ip, f"diff {count} {hostile.provider} {provider}"))
        assert_safe(diff, f"%dtl diff {count} {hostile.provider} {provider}")
    assert_safe(html_of(magic(ip, "tools")), "%dtl tools")
    assert_safe(html_of(magic(ip, "search fetch page")), "%dtl search")
    assert SHOWN in html_of(magic(ip, f"show {count}"))


def test_agent_cell_with_a_hostile_message(ip: InteractiveShell) -> None:
    ip.user_ns["agent"] = hostile_agent("openai-responses")
    result, captured = run_cell(ip, f"%%agent\nFetch {HOSTILE} with {KEY_ANT}")
    assert result.success, result.error_in_exec
    assert captured.outputs
    assert any("text/html" in output.data for output in captured.outputs)
    for output in captured.outputs:  # the saved turn (HTML) and the widget (no HTML)
        assert_safe(output.data.get("text/html", ""), "%%agent display")
        assert_no_key(output.data["text/plain"], "%%agent display text")


def test_agent_cell_failure_line_is_redacted(ip: InteractiveShell) -> None:
    message = f"bad key {KEY_PROJ}"
    ip.user_ns["agent"] = hostile_agent("anthropic", FlakyTransport(fail_at=1, message=message))
    result, captured = run_cell(ip, "%%agent\nhello")
    assert result.error_in_exec is not None
    (line,) = result.error_in_exec._render_traceback_()  # type: ignore[attr-defined]
    assert "bad key" in line
    assert_no_key(line, "error line")
    assert_no_key(captured.stdout + captured.stderr, "cell output")


def test_display_formatters(ip: InteractiveShell, hostile: Agent) -> None:
    objects: dict[str, Any] = {
        "Session": hostile.session,
        "Agent": hostile,
        "CacheReport": analyze([s.request for s in hostile.steps]),
    }
    for k, step in enumerate(hostile.steps):
        objects |= {
            f"Step {k}": step,
            f"WireRequest {k}": step.request,
            f"ModelContext {k}": step.context,
            f"CacheEntry {k}": step.cache,
        }
    for name, value in objects.items():
        data, _ = ip.display_formatter.format(value)
        assert "text/html" in data, name
        assert_safe(data["text/html"], f"{name} formatter")
        assert_no_key(data["text/plain"], f"{name} repr")


def test_turn_result_formatter(ip: InteractiveShell) -> None:
    agent = hostile_agent("kimi")
    result = agent.run(f"Fetch {HOSTILE}")
    assert result.text is not None and SCRIPT in result.text
    data, _ = ip.display_formatter.format(result)
    assert_safe(data["text/html"], "TurnResult formatter")
    assert SHOWN in data["text/html"]
    assert_no_key(data["text/plain"], "TurnResult repr")


# -- captured logs -------------------------------------------------------------------------------
STEADY = "Answer with care and cite the page you read. " * 120  # past the cache minimum


def hostile_capture(path: Path) -> Path:
    """Two Anthropic requests with hostile content and keys; the system prompt changes after
    the first wrote the cache at its breakpoint (past the minimum), so the second breaks it."""
    tools = [
        {
            "name": "fetch_page",
            "description": f"Fetch {IMG} {KEY_PROJ}",
            "input_schema": {"type": "object", "properties": {"url": {"type": "string"}}},
        }
    ]
    first = {
        "model": "claude-sonnet-4-6",
        "max_tokens": 1024,
        "system": f"You are helpful. api_key={KEY_ANT} " + STEADY,
        "tools": tools,
        "messages": [
            {
                "role": "user",
                "content": [
                    {
                        "type": "text",
                        "text": f"{HOSTILE} {KEY_ANT}",
                        "cache_control": {"type": "ephemeral"},
                    }
                ],
            }
        ],
        "metadata": {"user_id": KEY_PROJ},
    }
    call = {
        "type": "tool_use",
        "id": "toolu_01",
        "name": "fetch_page",
        "input": {"url": "javascript:alert(1)"},
    }
    response = {
        "id": "msg_01",
        "type": "message",
        "role": "assistant",
        "model": "claude-sonnet-4-6",
        "content": [{"type": "text", "text": f"{SCRIPT} {KEY_PROJ}"}, call],
        "stop_reason": "tool_use",
        "usage": {"input_tokens": 900, "output_tokens": 20},
    }
    result = {
        "type": "tool_result",
        "tool_use_id": "toolu_01",
        "content": f"{HOSTILE} {KEY_ANT}",
    }
    second = {
        **first,
        "system": f"You are helpful. {SCRIPT} {IMG} " + STEADY,  # a break, a hostile diff
        "x-api-key": KEY_ANT,
        "messages": [
            *first["messages"],  # type: ignore[list-item]
            {"role": "assistant", "content": response["content"]},
            {"role": "user", "content": [result]},
        ],
    }
    lines = [json.dumps({"request": first, "response": response}), json.dumps(second)]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def test_dtl_inspect_of_a_hostile_log(ip: InteractiveShell, tmp_path: Path) -> None:
    path = hostile_capture(tmp_path / "captured.jsonl")
    view = magic(ip, f"inspect {path}")
    assert isinstance(view, AgentView) and len(view.records) == 2
    assert view.records[1].cache.cache_break is not None
    for where, fragment in all_pane_html(view):
        assert_safe(fragment, f"inspect {where}")
    view.selected = 1
    assert SHOWN in view.panes["break"] + view.panes["context"]
    data, _ = view._repr_mimebundle_()
    assert_safe(data["text/html"], "inspect static fallback")
    assert_no_key(json.dumps(view.tail) + json.dumps(view.header), "inspect state")
    page = export_html(view, tmp_path / "captured.html").read_text(encoding="utf-8")
    assert_safe(page, "inspect export", page=True)


def test_dtl_inspect_of_a_log_with_a_hostile_file_name(
    ip: InteractiveShell, tmp_path: Path
) -> None:
    name = "x <img src=x onerror=alert(1)>.jsonl"
    path = hostile_capture(tmp_path / name)
    view = magic(ip, f'inspect "{path}"')
    assert name in view.header["title"]  # plain text, drawn with textContent
    assert_safe(view._repr_mimebundle_()[0]["text/html"], "static fallback title")
    page = export_html(view, tmp_path / "named.html").read_text(encoding="utf-8")
    assert_safe(page, "export title", page=True)


def test_a_key_used_as_a_json_object_key_is_masked(ip: InteractiveShell, tmp_path: Path) -> None:
    """A secret is a secret wherever it sits in a logged body, a member name included."""
    body = {
        "model": "gpt-4.1",
        "messages": [{"role": "user", "content": "hello"}],
        "metadata": {KEY_PROJ: "owner"},
    }
    path = tmp_path / "keys.jsonl"
    path.write_text(json.dumps(body) + "\n", encoding="utf-8")
    view = magic(ip, f"inspect {path}")
    for where, fragment in all_pane_html(view):
        assert_no_key(fragment, where)
    assert_no_key(view._repr_mimebundle_()[0]["text/html"], "static fallback")


# -- properties ------------------------------------------------------------------------------------
FRAGMENTS = [
    "<script>",
    "</script>",
    "<img src=x onerror=alert(1)>",
    "javascript:",
    '<a href="',
    '"',
    "'",
    "&",
    "&lt;",
    "<!--",
    "-->",
    "</pre>",
    "</details>",
    "<",
    ">",
    "=",
    "\u2028",
    "\\",
    "{",
    "}",
]
hostile_text = st.lists(st.sampled_from(FRAGMENTS) | st.text(max_size=6), max_size=12).map("".join)
json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | hostile_text,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(hostile_text, inner, max_size=4),
    max_leaves=12,
)


@given(hostile_text)
def test_esc_leaves_only_text(text: str) -> None:
    escaped = esc(text)
    parsed = parse(f"<div>{escaped}</div>")
    assert [tag for tag, _ in parsed.tags] == ["div"]
    assert html.unescape(escaped) == redact(text)
    assert_safe(escaped, "esc")


@given(hostile_text, hostile_text)
def test_element_escapes_its_attributes_and_text_its_content(value: str, content: str) -> None:
    inner = markup.element("span", markup.text("b", content), title=value, cls="dtl-x")
    rendered = markup.static_block(inner)
    parsed = parse(rendered)
    assert [tag for tag, _ in parsed.tags] == ["div", "span", "b"]
    assert parsed.tags[1][1] == {"title": value, "class": "dtl-x"}
    assert "".join(parsed.text) == redact(content)
    assert_safe(rendered, "element")


def test_a_search_without_a_hit_escapes_the_query(ip: InteractiveShell, hostile: Agent) -> None:
    ip.user_ns["agent"] = hostile
    shown = html_of(magic(ip, f"search <marquee>zzqq</marquee> {KEY_ANT}"))
    assert "no tool matches" in shown and "&lt;marquee&gt;zzqq&lt;/marquee&gt;" in shown
    assert_safe(shown, "%dtl search without a hit")


@given(json_values)
def test_json_html_leaves_only_highlighting(value: Any) -> None:
    rendered = json_html(value, 2, limit=10**6)
    parsed = parse(f"<pre>{rendered}</pre>")
    assert {tag for tag, _ in parsed.tags} <= {"pre", "span"}
    assert all(set(attrs) <= {"class"} for _, attrs in parsed.tags)
    shown = "".join(parsed.text)
    assert shown == json.dumps(redact(value), indent=2, ensure_ascii=False)


@given(hostile_text, hostile_text)
def test_inline_diff_leaves_only_del_and_ins(old: str, new: str) -> None:
    left, right = inline_diff(old, new)
    for side, text in ((left, old), (right, new)):
        parsed = parse(f"<pre>{side}</pre>")
        assert {tag for tag, _ in parsed.tags} <= {"pre", "del", "ins"}
        assert all(set(attrs) <= {"style"} for _, attrs in parsed.tags)
        assert "".join(parsed.text) == redact(text)  # every character, as text


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(hostile_text)
def test_any_tool_output_is_escaped_in_every_pane(output: str) -> None:
    tool = Tool(
        "echo",
        description="Echo a text",
        parameters={"type": "object"},
        execute=lambda: f"{output}{SCRIPT}",
    )
    session = Session(system="s", tools=[tool], active=["echo"], search=None)
    policy = ScriptedPolicy([{"call": "echo", "arguments": {}}, {"text": output}])
    agent = Agent(session, "openai-chat", DEMO_MODELS["openai-chat"], policy=policy)
    agent.run(f"echo {output}")
    view = AgentView(agent)
    for where, fragment in all_pane_html(view):
        assert_safe(fragment, where)
    assert_safe(view._repr_mimebundle_()[0]["text/html"], "static fallback")
