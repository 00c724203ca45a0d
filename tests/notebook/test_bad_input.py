"""Every bad input gets a clear error naming the field, and a failed call changes nothing.

One table of cases across the public entry points (agent, wire, context, cache, live and the
notebook arguments): each case makes one bad call and states the error type and a substring
that names the field. Where a session is involved, its saved JSON must be the same after the
failed call as before it.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from IPython.core.error import UsageError
from pydantic import ValidationError

from dtl_notebook import Session, Tool, ToolCall
from dtl_notebook.agent import (
    ImagePart,
    SectionNameError,
    SessionFileError,
    SystemUpdate,
    TextPart,
    ToolDefinitionError,
    ToolRegistry,
    ToolResultMessage,
    TranscriptError,
    UnknownToolError,
    UserMessage,
    make_engine,
    split_deferred_tools,
)
from dtl_notebook.agent.search import BM25Engine, KeywordEngine, RegexEngine, SearchQueryError
from dtl_notebook.cache import CaptureError, analyze, audit_capture
from dtl_notebook.context import model_context
from dtl_notebook.live import Agent, KeywordPolicy, Recorder, ReplayTransport, ScriptedPolicy
from dtl_notebook.live.recording import ReplayError
from dtl_notebook.notebook.args import parse_line, split_line
from dtl_notebook.notebook.commands import CommandContext, Commands
from dtl_notebook.notebook.errors import user_errors
from dtl_notebook.notebook.export import export_html
from dtl_notebook.notebook.magics import AgentMagics
from dtl_notebook.notebook.sessions import Sessions, Settings, new_agent
from dtl_notebook.testing import CacheRecorder, assert_cache_stable
from dtl_notebook.wire import ProviderError, ResponseFormatError, build_request, parse_response
from dtl_notebook.wire.validate import WireValidationError
from tests.support.real_recordings import need_real
from tests.support.tools import make_tools

ANTHROPIC = "claude-sonnet-4-6"
# vercel/ai packages/anthropic/src/__fixtures__/anthropic-tool-search-bm25.1.json: a real
# Anthropic response to native tool search (text, server_tool_use, tool_search_tool_result,
# text, tool_use), read at run time and corrupted one nested field at a time.
REAL_BM25 = ("vercel", "anthropic-tool-search-bm25.1.json")


@dataclass
class Ctx:
    """What a case may use: a session (checked unchanged afterwards) and a scratch folder."""

    s: Session
    tmp: Path

    def request(self, provider: str = "anthropic", model: str = ANTHROPIC) -> Any:
        return build_request(self.s, provider, model)

    def agent(self, **options: Any) -> Agent:
        return Agent(self.s, "anthropic", ANTHROPIC, **options)


def cell(line: str) -> object:
    """The `%%agent` line parsed as the magic parses it."""
    return parse_line(AgentMagics.agent, line)


def dtl(ctx: Ctx, line: str, **options: Any) -> object:
    """`%dtl LINE` without a shell, on a namespace holding the user's dict `df` and the
    session `agent` (an Agent on the case's session, with `options`)."""
    namespace: dict[str, Any] = {"df": {"a": 1}, "agent": ctx.agent(**options)}
    commands = Commands(CommandContext(Sessions(namespace), show=lambda _: None))
    try:
        return commands.run(line)
    finally:
        assert namespace["df"] == {"a": 1}, "a user's own value was replaced"


def fresh() -> Session:
    s = Session(tools=make_tools(), active=["tool_search", "read_file"])
    s.user("hi")
    return s


def pending() -> Session:
    s = fresh()
    s.assistant(tool_calls=[ToolCall(id="c1", name="read_file", arguments={"path": "a.txt"})])
    return s


def saved_data() -> dict[str, Any]:
    """A saved session: messages[3] is an assistant message whose content[0] is a tool call."""
    s = Session(tools=make_tools(), active=["tool_search", "read_file"])
    s.user("hi")
    s.assistant("hello")
    s.user("read a.txt")
    s.assistant(tool_calls=[ToolCall(id="c1", name="read_file", arguments={"path": "a.txt"})])
    s.tool_result("c1", "contents")
    return s.to_dict()


def load_with(change: Callable[[dict[str, Any]], Any]) -> Callable[[Ctx], object]:
    def run(ctx: Ctx) -> object:
        data = saved_data()
        change(data)
        path = ctx.tmp / "bad.json"
        path.write_text(json.dumps(data))
        return Session.load(path)

    return run


def load_binding(functions: Any) -> Callable[[Ctx], object]:
    """Session.load of a good file with a bad `functions` argument."""

    def run(ctx: Ctx) -> object:
        path = ctx.tmp / "good.json"
        path.write_text(json.dumps(saved_data()))
        return Session.load(path, functions)

    return run


def setter(*path: Any, value: Any) -> Callable[[dict[str, Any]], None]:
    def change(data: dict[str, Any]) -> None:
        target = data
        for key in path[:-1]:
            target = target[key]
        target[path[-1]] = value

    return change


def real_reply(*path: Any, value: Any = None, drop: bool = False) -> Callable[[Ctx], object]:
    def run(ctx: Ctx) -> object:
        data = json.loads(need_real().joinpath(*REAL_BM25).read_text())
        target = data
        for key in path[:-1]:
            target = target[key]
        if drop:
            del target[path[-1]]
        else:
            target[path[-1]] = value
        return parse_response(data, "anthropic")

    return run


def capture(*lines: Any, raw: bytes | None = None) -> Callable[[Ctx], object]:
    """Audit a capture file of these JSON lines (or these raw bytes)."""

    def run(ctx: Ctx) -> object:
        path = ctx.tmp / "capture.jsonl"
        path.write_bytes(raw if raw is not None else "\n".join(map(json.dumps, lines)).encode())
        return audit_capture(path)

    return run


CAPTURED = {"model": ANTHROPIC, "max_tokens": 9, "system": "x", "messages": []}
CAPTURED_REPLY = {"type": "message", "role": "assistant", "content": [], "model": ANTHROPIC}


@dataclass(frozen=True)
class Case:
    id: str
    call: Callable[[Ctx], object]
    error: type[BaseException]
    needle: str
    session: Callable[[], Session] | None = None  # a session the call must leave unchanged
    owner: str | None = None  # the fix is in a file owned by someone else: strict xfail


NAN, INF = math.nan, math.inf
LONE = "ab\udcff"  # what os.fsdecode makes of b"ab\xff"
C = Case
CASES: list[Case] = [
    # -- tools and the registry --------------------------------------------------------------
    C("tool-empty-name", lambda c: Tool(""), ToolDefinitionError, "name"),
    C("tool-name-space", lambda c: Tool("a b"), ToolDefinitionError, "name"),
    C("tool-name-int", lambda c: Tool(5), ToolDefinitionError, "name"),
    C("tool-params-str", lambda c: Tool("t", parameters="x"), ToolDefinitionError, "parameters"),
    C(
        "tool-params-not-object",
        lambda c: Tool("t", parameters={"type": "string"}),
        ToolDefinitionError,
        "parameters",
    ),
    C(
        "tool-params-bad-schema",
        lambda c: Tool("t", parameters={"type": "object", "properties": {"a": {"type": "no"}}}),
        ToolDefinitionError,
        "properties/a",
    ),
    C(
        "tool-params-nan",
        lambda c: Tool("t", parameters={"type": "object", "default": NAN}),
        ToolDefinitionError,
        "parameters",
    ),
    C(
        "tool-description-int",
        lambda c: Tool("t", description=5),
        ToolDefinitionError,
        "description",
    ),
    C("tool-execute-not-callable", lambda c: Tool("t", execute=5), ToolDefinitionError, "execute"),
    C("tool-namespace-bad", lambda c: Tool("t", namespace="a b"), ToolDefinitionError, "namespace"),
    C(
        "tool-snippet-int",
        lambda c: Tool("t", prompt_snippet=5),
        ToolDefinitionError,
        "prompt_snippet",
    ),
    C("tool-unknown-field", lambda c: Tool("t", bogus=1), ToolDefinitionError, "bogus"),
    C("registry-register-str", lambda c: ToolRegistry().register("x"), TypeError, "tool"),
    C(
        "registry-duplicate",
        lambda c: ToolRegistry([Tool("t"), Tool("t")]),
        ToolDefinitionError,
        "already registered",
    ),
    C("registry-unknown", lambda c: ToolRegistry().get("nope"), UnknownToolError, "nope"),
    # -- building a session ------------------------------------------------------------------
    C("session-system-int", lambda c: Session(system=5), TypeError, "system"),
    # a lone surrogate, as os.fsdecode makes of bytes that are not UTF-8: never saved or sent
    C("session-system-surrogate", lambda c: Session(system=LONE), ValueError, "system"),
    C(
        "session-section-surrogate",
        lambda c: Session(sections={"rules": LONE}),
        ValueError,
        "section 'rules' holds a lone surrogate '\\udcff' at position 2",
    ),
    C(
        "prompt-section-surrogate",
        lambda c: c.s.prompt.__setitem__("rules", LONE),
        ValueError,
        "section 'rules'",
        fresh,
    ),
    C(
        "tool-description-surrogate",
        lambda c: Tool("t", description=LONE),
        ToolDefinitionError,
        "description",
    ),
    C(
        "tool-params-surrogate",
        lambda c: Tool("t", parameters={"type": "object", "properties": {LONE: {}}}),
        ToolDefinitionError,
        "schema['properties'] key",
    ),
    C("session-tools-str", lambda c: Session(tools="abc"), TypeError, "tools"),
    C("session-tools-dict-item", lambda c: Session(tools=[{"name": "x"}]), TypeError, "tools[0]"),
    C(
        "session-active-bare-str",
        lambda c: Session(tools=make_tools(), active="read_file"),
        TypeError,
        "active",
    ),
    C(
        "session-active-int-item",
        lambda c: Session(tools=make_tools(), active=[5]),
        ValueError,
        "active[0]",
    ),
    C(
        "session-active-unknown",
        lambda c: Session(tools=make_tools(), active=["nope"]),
        UnknownToolError,
        "nope",
    ),
    C("session-search-unknown", lambda c: Session(search="embedding"), ValueError, "search"),
    C("session-search-list", lambda c: Session(search=["bm25"]), ValueError, "search"),
    C("session-sections-str", lambda c: Session(sections="x"), TypeError, "sections"),
    C(
        "session-section-name",
        lambda c: Session(sections={"Bad Name": "x"}),
        SectionNameError,
        "Bad Name",
    ),
    C("session-section-text-int", lambda c: Session(sections={"notes": 5}), TypeError, "notes"),
    # -- the active set ----------------------------------------------------------------------
    C(
        "set-active-bare-str",
        lambda c: c.s.set_active_tools("read_file"),
        TypeError,
        "names",
        fresh,
    ),
    C("set-active-none", lambda c: c.s.set_active_tools(None), TypeError, "names", fresh),
    C(
        "set-active-none-item",
        lambda c: c.s.set_active_tools([None]),
        ValueError,
        "names[0]",
        fresh,
    ),
    C(
        "set-active-unknown",
        lambda c: c.s.set_active_tools(["nope"]),
        UnknownToolError,
        "nope",
        fresh,
    ),
    C("set-active-mapping", lambda c: c.s.set_active_tools({"add": 1}), TypeError, "names", fresh),
    C("activate-bare-str", lambda c: c.s.activate("add"), TypeError, "names", fresh),
    C("activate-unknown", lambda c: c.s.activate(["ghost"]), UnknownToolError, "ghost", fresh),
    # -- user messages -----------------------------------------------------------------------
    C("user-none", lambda c: c.s.user(None), TypeError, "content", fresh),
    C("user-int", lambda c: c.s.user(5), TypeError, "content", fresh),
    C("user-empty", lambda c: c.s.user(""), ValueError, "content", fresh),
    C("user-blank", lambda c: c.s.user("   "), ValueError, "content", fresh),
    C("user-surrogate", lambda c: c.s.user(LONE), ValueError, "content", fresh),
    C(
        "user-part-surrogate",
        lambda c: c.s.user([TextPart(text=LONE)]),
        ValidationError,
        "lone surrogate",
        fresh,
    ),
    C("assistant-surrogate", lambda c: c.s.assistant(LONE), ValueError, "text", fresh),
    C(
        "append-dict-surrogate",
        lambda c: c.s.append({"role": "user", "content": [{"type": "text", "text": LONE}]}),
        TranscriptError,
        "message.content[0].text",
        fresh,
    ),
    C("user-empty-list", lambda c: c.s.user([]), TypeError, "content", fresh),
    C("user-dict", lambda c: c.s.user({"text": "x"}), TypeError, "content", fresh),
    C(
        "user-stray-part",
        lambda c: c.s.user([TextPart(text="a"), "b"]),
        ValueError,
        "content[1]",
        fresh,
    ),
    C("user-while-calls-pending", lambda c: c.s.user("next"), TranscriptError, "c1", pending),
    C("image-empty", lambda c: ImagePart(), ValidationError, "data"),
    C("image-data-without-type", lambda c: ImagePart(data="iVBO"), ValidationError, "media_type"),
    C("image-empty-url", lambda c: ImagePart(url=""), ValidationError, "url"),
    C(
        "image-both-sources",
        lambda c: ImagePart(url="https://x/y.png", data="iVBO", media_type="image/png"),
        ValidationError,
        "exactly one",
    ),
    C("user-message-empty", lambda c: UserMessage(content=[]), ValidationError, "content"),
    # -- assistant messages and tool calls ---------------------------------------------------
    C("assistant-text-int", lambda c: c.s.assistant(text=5), TypeError, "text", fresh),
    C(
        "assistant-single-call",
        lambda c: c.s.assistant(tool_calls=ToolCall(id="c", name="add")),
        TypeError,
        "tool_calls",
        fresh,
    ),
    C(
        "assistant-calls-str",
        lambda c: c.s.assistant(tool_calls="abc"),
        TypeError,
        "tool_calls",
        fresh,
    ),
    C(
        "assistant-call-dict",
        lambda c: c.s.assistant(tool_calls=[{"id": "x"}]),
        TypeError,
        "tool_calls[0]",
        fresh,
    ),
    C(
        "assistant-duplicate-ids",
        lambda c: c.s.assistant(
            tool_calls=[ToolCall(id="d", name="add"), ToolCall(id="d", name="add")]
        ),
        TranscriptError,
        "duplicate",
        fresh,
    ),
    C("assistant-native-str", lambda c: c.s.assistant(native="x"), TypeError, "native", fresh),
    C("call-empty-id", lambda c: ToolCall(id="", name="add"), ValidationError, "id"),
    C(
        "call-args-nan",
        lambda c: ToolCall(id="c", name="add", arguments={"a": NAN}),
        ValidationError,
        "arguments['a']",
    ),
    C(
        "call-args-nested-inf",
        lambda c: ToolCall(id="c", name="add", arguments={"v": [1, INF]}),
        ValidationError,
        "arguments['v'][1]",
    ),
    C(
        "call-args-str",
        lambda c: ToolCall(id="c", name="add", arguments="{}"),
        ValidationError,
        "arguments",
    ),
    C(
        "call-args-object",
        lambda c: ToolCall(id="c", name="add", arguments={"o": object()}),
        ValidationError,
        "arguments['o']",
    ),
    # -- append -------------------------------------------------------------------------------
    C("append-none", lambda c: c.s.append(None), TypeError, "message", fresh),
    C("append-str", lambda c: c.s.append("hello"), TypeError, "message", fresh),
    C(
        "append-dict-empty-content",
        lambda c: c.s.append({"role": "user", "content": []}),
        TranscriptError,
        "message.content",
        fresh,
    ),
    C(
        "append-dict-bad-role",
        lambda c: c.s.append({"role": "bogus"}),
        TranscriptError,
        "message",
        fresh,
    ),
    C(
        "append-dict-bad-arguments",
        lambda c: c.s.append(
            {
                "role": "assistant",
                "content": [
                    {"type": "tool_call", "call": {"id": "c9", "name": "add", "arguments": [1]}}
                ],
            }
        ),
        TranscriptError,
        "message.content[0].call.arguments",
        fresh,
    ),
    C(
        "append-orphan-result",
        lambda c: c.s.append(ToolResultMessage(call_id="zzz", content=[TextPart(text="x")])),
        TranscriptError,
        "zzz",
        pending,
    ),
    C(
        "append-result-unknown-marker",
        lambda c: c.s.append(
            ToolResultMessage(
                call_id="c1", content=[TextPart(text="x")], added_tool_names=["ghost"]
            )
        ),
        UnknownToolError,
        "ghost",
        pending,
    ),
    C(
        "append-system-update-bad-name",
        lambda c: c.s.append(SystemUpdate(sections={"Bad Name": "x"})),
        SectionNameError,
        "Bad Name",
        fresh,
    ),
    C(
        "append-user-while-pending",
        lambda c: c.s.append(UserMessage(content=[TextPart(text="x")])),
        TranscriptError,
        "c1",
        pending,
    ),
    # -- tool results ------------------------------------------------------------------------
    C("result-orphan-id", lambda c: c.s.tool_result("nope", "x"), TranscriptError, "nope", pending),
    C("result-id-int", lambda c: c.s.tool_result(5, "x"), TypeError, "call_id", pending),
    C("result-content-none", lambda c: c.s.tool_result("c1", None), TypeError, "content", pending),
    C("result-content-nan", lambda c: c.s.tool_result("c1", NAN), ValueError, "content", pending),
    C(
        "result-content-surrogate",
        lambda c: c.s.tool_result("c1", {"files": ["ok", LONE]}),
        ValueError,
        "content['files'][1] holds a lone surrogate",
        pending,
    ),
    C(
        "result-content-nested-inf",
        lambda c: c.s.tool_result("c1", {"x": INF}),
        ValueError,
        "content['x']",
        pending,
    ),
    C(
        "result-content-object",
        lambda c: c.s.tool_result("c1", object()),
        ValueError,
        "content",
        pending,
    ),
    C(
        "result-content-stray-part",
        lambda c: c.s.tool_result("c1", [TextPart(text="a"), 5]),
        ValueError,
        "content[1]",
        pending,
    ),
    C(
        "result-added-bare-str",
        lambda c: c.s.tool_result("c1", "x", added_tool_names="add"),
        TypeError,
        "added_tool_names",
        pending,
    ),
    C(
        "result-added-unknown",
        lambda c: c.s.tool_result("c1", "x", added_tool_names=["ghost"]),
        UnknownToolError,
        "ghost",
        pending,
    ),
    C(
        "result-is-error-str",
        lambda c: c.s.tool_result("c1", "x", is_error="yes"),
        TypeError,
        "is_error",
        pending,
    ),
    # -- execute -----------------------------------------------------------------------------
    C("execute-str", lambda c: c.s.execute("c1"), TypeError, "tool_call", pending),
    C("execute-none", lambda c: c.s.execute(None), TypeError, "tool_call", pending),
    C(
        "execute-not-pending",
        lambda c: c.s.execute(ToolCall(id="zz", name="read_file")),
        TranscriptError,
        "zz",
        pending,
    ),
    # -- save and load -----------------------------------------------------------------------
    C("save-path-int", lambda c: c.s.save(5), TypeError, "path", fresh),
    C("save-path-none", lambda c: c.s.save(None), TypeError, "path", fresh),
    C("save-path-empty", lambda c: c.s.save(""), ValueError, "path must not be empty", fresh),
    C("save-path-folder", lambda c: c.s.save(c.tmp), IsADirectoryError, "Is a directory", fresh),
    C(
        "load-functions-names",
        load_binding(["read_file"]),
        TypeError,
        "functions[0] must be a Tool",
    ),
    C("load-functions-str", load_binding("read_file"), TypeError, "functions must be a dict"),
    C(
        "load-functions-not-callable",
        load_binding({"read_file": "cat"}),
        TypeError,
        "functions['read_file'] must be a function",
    ),
    C("load-functions-int-key", load_binding({5: print}), TypeError, "functions[5]"),
    C("load-path-int", lambda c: Session.load(5), TypeError, "path"),
    C(
        "load-missing-file",
        lambda c: Session.load(c.tmp / "nope.json"),
        SessionFileError,
        "cannot read",
    ),
    C(
        "load-not-json",
        lambda c: (c.tmp / "x.json").write_text("{no") and Session.load(c.tmp / "x.json"),
        SessionFileError,
        "not valid JSON",
    ),
    C(
        "load-version-str",
        load_with(setter("schema_version", value="1")),
        SessionFileError,
        "unsupported schema_version '1'",
    ),
    C(
        "load-version-zero",
        load_with(setter("schema_version", value=0)),
        SessionFileError,
        "unsupported schema_version 0",
    ),
    C(
        "load-version-newer",
        load_with(setter("schema_version", value=99)),
        SessionFileError,
        "unsupported schema_version 99",
    ),
    C(
        "load-version-bool",
        load_with(setter("schema_version", value=True)),
        SessionFileError,
        "schema_version",
    ),
    C("load-format-missing", load_with(lambda d: d.pop("format")), SessionFileError, "format"),
    C("load-extra-field", load_with(setter("bogus", value=1)), SessionFileError, "bogus"),
    C("load-search-bad", load_with(setter("search", value="x")), SessionFileError, "search"),
    C("load-tools-not-list", load_with(setter("tools", value="x")), SessionFileError, "tools"),
    C(
        "load-tool-params-str",
        load_with(setter("tools", 0, "parameters", value="x")),
        SessionFileError,
        "tools[0].parameters",
    ),
    C(
        "load-tool-duplicate",
        load_with(lambda d: d["tools"].append(d["tools"][1])),
        SessionFileError,
        "tools[5]",
    ),
    C(
        "load-active-bare-str",
        load_with(setter("active", value="read_file")),
        SessionFileError,
        "active",
    ),
    C(
        "load-active-unknown",
        load_with(setter("active", value=["ghost"])),
        SessionFileError,
        "active[0]",
    ),
    C(
        "load-section-int",
        load_with(setter("sections", value={"notes": 5})),
        SessionFileError,
        "sections.notes",
    ),
    C(
        "load-section-name",
        load_with(setter("sections", value={"Bad": "x"})),
        SessionFileError,
        "sections.Bad",
    ),
    C(
        "load-call-arguments-str",
        load_with(setter("messages", 3, "content", 0, "call", "arguments", value="x")),
        SessionFileError,
        "messages[3].content[0].call.arguments",
    ),
    C(
        "load-call-arguments-nan",
        load_with(setter("messages", 3, "content", 0, "call", "arguments", value={"a": NAN})),
        SessionFileError,
        "messages[3].content[0].call.arguments",
    ),
    C(
        "load-call-id-missing",
        load_with(lambda d: d["messages"][3]["content"][0]["call"].pop("id")),
        SessionFileError,
        "messages[3].content[0].call.id",
    ),
    C(
        "load-text-int",
        load_with(setter("messages", 0, "content", 0, "text", value=5)),
        SessionFileError,
        "messages[0].content[0].text",
    ),
    C(
        "load-role-bad",
        load_with(setter("messages", 0, "role", value="x")),
        SessionFileError,
        "messages[0]",
    ),
    C(
        "load-orphan-result",
        load_with(setter("messages", 4, "call_id", value="zz")),
        SessionFileError,
        "messages[4]",
    ),
    C(
        "load-marker-unknown",
        load_with(setter("messages", 4, "added_tool_names", value=["ghost"])),
        SessionFileError,
        "messages[4]",
    ),
    C(
        "load-is-error-str",
        load_with(setter("messages", 4, "is_error", value="maybe")),
        SessionFileError,
        "messages[4].is_error",
    ),
    # -- split and search --------------------------------------------------------------------
    C("split-tools-str", lambda c: split_deferred_tools("abc", []), TypeError, "tools"),
    C(
        "split-tools-dict-item",
        lambda c: split_deferred_tools([{"name": "x"}], []),
        TypeError,
        "tools[0]",
    ),
    C("split-messages-none", lambda c: split_deferred_tools([], None), TypeError, "messages"),
    C("engine-unknown", lambda c: make_engine("embedding"), ValueError, "unknown search engine"),
    C("bm25-limit-zero", lambda c: BM25Engine().search("weather", 0), ValueError, "limit"),
    C("regex-limit-negative", lambda c: RegexEngine().search("weather", -1), ValueError, "limit"),
    C("keyword-limit-str", lambda c: KeywordEngine().search("weather", "5"), TypeError, "limit"),
    C("search-empty-query", lambda c: BM25Engine().search("", 5), SearchQueryError, "query"),
    C(
        "regex-invalid",
        lambda c: RegexEngine().search("(", 5),
        SearchQueryError,
        "invalid regular expression",
    ),
    C(
        "bm25-query-too-long",
        lambda c: BM25Engine().search("w " * 300, 5),
        SearchQueryError,
        "limit is 500",
    ),
    # -- wire: build_request -----------------------------------------------------------------
    C(
        "build-session-str",
        lambda c: build_request("x", "anthropic", ANTHROPIC),
        TypeError,
        "session",
    ),
    C(
        "build-provider-unknown",
        lambda c: build_request(c.s, "bogus", "m"),
        ValueError,
        "provider",
        fresh,
    ),
    C(
        "build-model-empty",
        lambda c: build_request(c.s, "anthropic", ""),
        ValueError,
        "model",
        fresh,
    ),
    C(
        "build-profile-str",
        lambda c: build_request(c.s, "anthropic", ANTHROPIC, profile="x"),
        TypeError,
        "profile",
        fresh,
    ),
    C(
        "build-profile-unknown-flag",
        lambda c: build_request(c.s, "anthropic", ANTHROPIC, profile={"min_cache": 1}),
        ValueError,
        "min_cache",
        fresh,
    ),
    C(
        "build-profile-int-str",
        lambda c: build_request(c.s, "anthropic", ANTHROPIC, profile={"min_cacheable_tokens": "x"}),
        TypeError,
        "min_cacheable_tokens",
        fresh,
    ),
    C(
        "build-profile-granularity-zero",
        lambda c: build_request(c.s, "anthropic", ANTHROPIC, profile={"cache_granularity": 0}),
        ValueError,
        "cache_granularity",
        fresh,
    ),
    C(
        "build-profile-bool-str",
        lambda c: build_request(c.s, "anthropic", ANTHROPIC, profile={"tool_reference": "yes"}),
        TypeError,
        "tool_reference",
        fresh,
    ),
    C(
        "build-profile-provider",
        lambda c: build_request(c.s, "anthropic", ANTHROPIC, profile={"provider": "kimi"}),
        ValueError,
        "provider",
        fresh,
    ),
    C(
        "build-max-tokens-str",
        lambda c: build_request(c.s, "anthropic", ANTHROPIC, max_tokens="5"),
        TypeError,
        "max_tokens",
        fresh,
    ),
    C(
        "build-max-tokens-zero",
        lambda c: build_request(c.s, "anthropic", ANTHROPIC, max_tokens=0),
        ValueError,
        "max_tokens",
        fresh,
    ),
    C(
        "build-max-tokens-negative",
        lambda c: build_request(c.s, "anthropic", ANTHROPIC, max_tokens=-1),
        ValueError,
        "max_tokens",
        fresh,
    ),
    C(
        "build-max-tokens-bool",
        lambda c: build_request(c.s, "anthropic", ANTHROPIC, max_tokens=True),
        TypeError,
        "max_tokens",
        fresh,
    ),
    C(
        "build-max-output-zero",
        lambda c: build_request(c.s, "openai-responses", "gpt-5.4", max_output_tokens=0),
        ValueError,
        "max_output_tokens",
        fresh,
    ),
    C(
        "build-validate-str",
        lambda c: build_request(c.s, "anthropic", ANTHROPIC, validate="no"),
        TypeError,
        "validate",
        fresh,
    ),
    C(
        "build-search-unknown",
        lambda c: build_request(c.s, "anthropic", ANTHROPIC, search="nope"),
        ValueError,
        "search",
        fresh,
    ),
    C(
        "build-cache-unknown",
        lambda c: build_request(c.s, "anthropic", ANTHROPIC, cache="nope"),
        ValueError,
        "cache",
        fresh,
    ),
    C(
        "build-ttl-bad",
        lambda c: build_request(c.s, "anthropic", ANTHROPIC, ttl="3h"),
        WireValidationError,
        "ttl",
        fresh,
    ),
    C(
        "build-load-mode-bad",
        lambda c: build_request(c.s, "openai-responses", "gpt-5.4", load_mode="x"),
        ValueError,
        "load_mode",
        fresh,
    ),
    C(
        "build-namespaces-str",
        lambda c: build_request(c.s, "openai-responses", "gpt-5.4", namespaces="x"),
        TypeError,
        "namespaces",
        fresh,
    ),
    C(
        "build-system-updates-bad",
        lambda c: build_request(c.s, "openai-chat", "gpt-5.4", system_updates="x"),
        ValueError,
        "system_updates",
        fresh,
    ),
    C(
        "build-temperature-str",
        lambda c: build_request(c.s, "openai-chat", "gpt-5.4", temperature="hot"),
        WireValidationError,
        "temperature",
        fresh,
    ),
    C(
        "build-no-messages",
        lambda c: build_request(Session(tools=make_tools()), "anthropic", ANTHROPIC),
        ValueError,
        "session.messages",
    ),
    # -- wire: parse_response ----------------------------------------------------------------
    C("parse-none", lambda c: parse_response(None, "anthropic"), ResponseFormatError, "<root>"),
    C(
        "parse-not-json",
        lambda c: parse_response("not json", "anthropic"),
        ResponseFormatError,
        "not JSON",
    ),
    C("parse-provider-unknown", lambda c: parse_response({}, "bogus"), ValueError, "provider"),
    C(
        "parse-chat-no-choices",
        lambda c: parse_response(
            {"id": "c", "object": "chat.completion", "created": 1, "model": "x", "choices": []},
            "openai-chat",
        ),
        ResponseFormatError,
        "choices",
    ),
    C(
        "parse-responses-output-str",
        lambda c: parse_response(
            {
                "id": "r",
                "object": "response",
                "created_at": 1,
                "model": "x",
                "output": "x",
                "status": "completed",
            },
            "openai-responses",
        ),
        ResponseFormatError,
        "output",
    ),
    C(
        "parse-real-text-missing",
        real_reply("content", 0, "text", drop=True),
        ResponseFormatError,
        "content.0.text",
    ),
    C(
        "parse-real-tool-use-id-missing",
        real_reply("content", 4, "id", drop=True),
        ResponseFormatError,
        "content.4.id",
    ),
    C(
        "parse-real-block-str",
        real_reply("content", 1, value="oops"),
        ResponseFormatError,
        "content.1",
    ),
    C(
        "parse-real-content-str",
        real_reply("content", value="oops"),
        ResponseFormatError,
        "content",
    ),
    C(
        "parse-real-search-result-str",
        real_reply("content", 2, "content", value="oops"),
        ResponseFormatError,
        "content.2.content",
    ),
    C(
        "parse-real-search-references-str",
        real_reply("content", 2, "content", "tool_references", value="oops"),
        ResponseFormatError,
        "content.2.content.tool_references",
    ),
    C(
        "parse-vllm-error-body",
        lambda c: parse_response(
            {"object": "error", "message": "no model", "type": "NotFound"}, "openai-chat"
        ),
        ProviderError,
        "(NotFound): no model",
    ),
    C(
        "parse-proxy-error-text",
        lambda c: parse_response({"error": "Invalid API key"}, "openai-chat"),
        ProviderError,
        "Invalid API key",
    ),
    C(
        "parse-responses-failed",
        lambda c: parse_response(
            {
                "status": "failed",
                "output": [],
                "error": {"code": "server_error", "message": "boom"},
            },
            "openai-responses",
        ),
        ProviderError,
        "(server_error): boom",
    ),
    C(
        "parse-anthropic-stream-cut",
        lambda c: parse_response(
            [{"type": "message_start", "message": CAPTURED_REPLY}], "anthropic"
        ),
        ResponseFormatError,
        "no message_stop event",
    ),
    C(
        "parse-two-streams",
        lambda c: parse_response(
            [{"type": "message_start", "message": CAPTURED_REPLY}, {"type": "message_stop"}] * 2,
            "anthropic",
        ),
        ResponseFormatError,
        "<stream>.2: a second stream starts here",
    ),
    # -- context and cache -------------------------------------------------------------------
    C(
        "capture-message-str",
        capture({**CAPTURED, "messages": ["hi"]}),
        CaptureError,
        "capture.jsonl:1: request messages[0]: expected an object, got 'hi'",
    ),
    C(
        "capture-tool-str",
        capture({**CAPTURED, "tools": [5]}),
        CaptureError,
        "request tools[0]: expected an object, got int 5",
    ),
    C(
        "capture-usage-str",
        capture(
            {"request": CAPTURED, "response": {**CAPTURED_REPLY, "usage": {"input_tokens": "x"}}}
        ),
        CaptureError,
        "usage.input_tokens: expected a token count, got 'x'",
    ),
    C(
        "capture-not-utf8",
        capture(raw=b'{"model": "\xff"}'),
        CaptureError,
        "capture.jsonl:1: not UTF-8: byte 0xff at offset 11",
    ),
    C(
        "capture-too-deep",
        capture(raw=b'{"model": "m", "x": ' + b"[" * 100_000 + b"]" * 100_000 + b"}"),
        CaptureError,
        "nested too deep",
    ),
    C(
        "capture-response-int",
        capture({"request": CAPTURED, "response": 5}),
        CaptureError,
        "response: expected an object, a streamed text or a list of events, got int",
    ),
    C("context-request-str", lambda c: model_context("x"), TypeError, "request"),
    C("context-payload-no-provider", lambda c: model_context({}), ValueError, "provider"),
    C(
        "context-provider-unknown",
        lambda c: model_context(c.request().payload, provider="bogus"),
        ValueError,
        "provider",
        fresh,
    ),
    C(
        "context-model-int",
        lambda c: model_context(c.request().payload, "anthropic", 5),
        TypeError,
        "model",
        fresh,
    ),
    C(
        "context-messages-str",
        lambda c: model_context({"messages": "x"}, "anthropic"),
        TypeError,
        "payload['messages']",
    ),
    C("analyze-str", lambda c: analyze("abc"), TypeError, "requests"),
    C("analyze-none", lambda c: analyze(None), TypeError, "requests"),
    C("analyze-single-request", lambda c: analyze(c.request()), TypeError, "requests", fresh),
    C("analyze-int-item", lambda c: analyze([5], provider="anthropic"), TypeError, "requests[0]"),
    C(
        "analyze-payload-no-provider",
        lambda c: analyze([c.request().payload]),
        ValueError,
        "provider",
        fresh,
    ),
    C(
        "analyze-responses-length",
        lambda c: analyze([c.request(), c.request()], responses=[{}]),
        ValueError,
        "responses",
        fresh,
    ),
    C(
        "analyze-times-length",
        lambda c: analyze([c.request(), c.request()], times=[0.0]),
        ValueError,
        "times",
        fresh,
    ),
    C(
        "analyze-times-nan",
        lambda c: analyze([c.request(), c.request()], times=[0.0, NAN]),
        TypeError,
        "times[1]",
        fresh,
    ),
    C(
        "analyze-times-backwards",
        lambda c: analyze([c.request(), c.request()], times=[10.0, 0.0]),
        ValueError,
        "times[1]",
        fresh,
    ),
    # -- the pytest helper (`assert_cache_stable`, plugin `dtl_notebook.pytest_plugin`) ------
    C("stable-empty-list", lambda c: assert_cache_stable([]), AssertionError, "no requests"),
    C(
        "stable-empty-recorder",
        lambda c: assert_cache_stable(CacheRecorder()),
        AssertionError,
        "cache_recorder.http_client()",
    ),
    C("stable-none", lambda c: assert_cache_stable(None), TypeError, "got NoneType"),
    C(
        "stable-one-dict",
        lambda c: assert_cache_stable(c.request().payload),
        TypeError,
        "one request body",
        fresh,
    ),
    C("stable-int-item", lambda c: assert_cache_stable([5]), TypeError, "requests_or_capture[0]"),
    C(
        "stable-fail-on-typo",
        lambda c: assert_cache_stable([c.request()], fail_on="eror"),
        ValueError,
        "fail_on: unknown code or severity 'eror'",
        fresh,
    ),
    C(
        "stable-fail-on-none",
        lambda c: assert_cache_stable([c.request()], fail_on=None),  # type: ignore[arg-type]
        ValueError,
        "fail_on",
        fresh,
    ),
    C(
        "analyze-unknown-override",
        lambda c: analyze([c.request()], bogus=1),
        ValueError,
        "bogus",
        fresh,
    ),
    C(
        "analyze-granularity-zero",
        lambda c: analyze([c.request()], cache_granularity=0),
        ValueError,
        "cache_granularity",
        fresh,
    ),
    # -- live: the agent, transports, recordings and policies --------------------------------
    C("agent-session-str", lambda c: Agent("x", "anthropic", ANTHROPIC), TypeError, "session"),
    C("agent-provider-unknown", lambda c: Agent(c.s, "bogus", "m"), ValueError, "provider", fresh),
    C("agent-model-empty", lambda c: Agent(c.s, "anthropic", ""), ValueError, "model", fresh),
    C("agent-max-steps-zero", lambda c: c.agent(max_steps=0), ValueError, "max_steps", fresh),
    C("agent-max-steps-negative", lambda c: c.agent(max_steps=-1), ValueError, "max_steps", fresh),
    C("agent-max-steps-str", lambda c: c.agent(max_steps="5"), TypeError, "max_steps", fresh),
    C(
        "agent-transport-unknown",
        lambda c: c.agent(transport="pigeon"),
        ValueError,
        "transport",
        fresh,
    ),
    C("agent-transport-int", lambda c: c.agent(transport=5), TypeError, "transport", fresh),
    C("agent-profile-str", lambda c: c.agent(profile="x"), TypeError, "profile", fresh),
    C(
        "agent-profile-int-key",
        lambda c: c.agent(profile={5: True}),
        TypeError,
        "profile key 5",
        fresh,
    ),
    C(
        "build-profile-int-key",
        lambda c: build_request(c.s, "anthropic", ANTHROPIC, profile={5: True}),
        TypeError,
        "profile key 5",
        fresh,
    ),
    C("agent-record-empty", lambda c: c.agent(record=""), ValueError, "record", fresh),
    C("export-path-none", lambda c: export_html(c.agent(), None), TypeError, "path", fresh),
    C("export-path-empty", lambda c: export_html(c.agent(), ""), ValueError, "path", fresh),
    C("export-source-str", lambda c: export_html("x", c.tmp / "p.html"), TypeError, "source"),
    C(
        "export-title-int",
        lambda c: export_html(c.agent(), c.tmp / "p.html", 5),
        TypeError,
        "title",
    ),
    C("agent-record-int", lambda c: c.agent(record=5), TypeError, "record", fresh),
    C("run-text-none", lambda c: c.agent().run(None), TypeError, "text", fresh),
    C("run-text-empty", lambda c: c.agent().run(""), ValueError, "text", fresh),
    C("run-on-step-int", lambda c: c.agent().run("hi", on_step=5), TypeError, "on_step", fresh),
    C(
        "switch-provider-unknown",
        lambda c: c.agent().switch("bogus", "m"),
        ValueError,
        "provider",
        fresh,
    ),
    C(
        "switch-profile-str",
        lambda c: c.agent().switch("kimi", "kimi-k2", profile="x"),
        TypeError,
        "profile",
        fresh,
    ),
    C(
        "use-transport-str",
        lambda c: c.agent().use_transport("emulator"),
        TypeError,
        "transport",
        fresh,
    ),
    C(
        "replay-missing",
        lambda c: ReplayTransport(c.tmp / "none.jsonl"),
        ReplayError,
        "cannot read recording",
    ),
    C(
        "replay-torn-line",
        lambda c: (
            (c.tmp / "r.jsonl").write_text(
                '{"provider": "x", "request": {}, "response": {}}\n{"prov'
            )
            and ReplayTransport(c.tmp / "r.jsonl")
        ),
        ReplayError,
        "line 2",
    ),
    C(
        "replay-not-exchange",
        lambda c: (c.tmp / "r.jsonl").write_text("[1]\n") and ReplayTransport(c.tmp / "r.jsonl"),
        ReplayError,
        "line 1",
    ),
    C(
        "recorder-path-int",
        lambda c: Recorder(c.agent().transport, 5, "anthropic", ANTHROPIC),
        TypeError,
        "path",
        fresh,
    ),
    C("scripted-steps-str", lambda c: ScriptedPolicy("abc"), TypeError, "steps"),
    C(
        "scripted-step-unknown-key",
        lambda c: ScriptedPolicy([{"bogus": 1}]),
        ValueError,
        "steps[0]",
    ),
    C("scripted-call-int", lambda c: ScriptedPolicy([{"call": 5}]), TypeError, "steps[0]['call']"),
    C(
        "scripted-arguments-str",
        lambda c: ScriptedPolicy([{"call": "add", "arguments": "y"}]),
        TypeError,
        "steps[0]['arguments']",
    ),
    C(
        "scripted-two-kinds",
        lambda c: ScriptedPolicy([{"text": "a", "search": "b"}]),
        ValueError,
        "steps[0]",
    ),
    C(
        "scripted-arguments-nan",
        lambda c: ScriptedPolicy([{"call": "add", "arguments": {"a": NAN}}]),
        ValueError,
        "steps[0]['arguments']",
    ),
    C("keyword-min-score-negative", lambda c: KeywordPolicy(min_score=-1), ValueError, "min_score"),
    C(
        "keyword-max-searches-str",
        lambda c: KeywordPolicy(max_searches="2"),
        TypeError,
        "max_searches",
    ),
    # -- notebook magic arguments ------------------------------------------------------------
    C("args-max-steps-zero", lambda c: cell("--max-steps 0"), UsageError, "--max-steps"),
    C("args-max-steps-big", lambda c: cell("--max-steps 101"), UsageError, "--max-steps"),
    C("args-max-steps-word", lambda c: cell("--max-steps many"), UsageError, "'many'"),
    C("args-provider-unknown", lambda c: cell("--provider bogus"), UsageError, "'bogus'"),
    C("args-search-unknown", lambda c: cell("--search nope"), UsageError, "'nope'"),
    C("args-load-mode-unknown", lambda c: cell("--load-mode x"), UsageError, "--load-mode"),
    C("args-session-not-name", lambda c: cell("--session 1abc"), UsageError, "--session"),
    C(
        "args-native-search-mismatch",
        lambda c: user_errors(new_agent)(Settings(), "anthropic", None, "hosted"),
        UsageError,
        "search='hosted'",
    ),
    C(
        "args-load-mode-wrong-provider",
        lambda c: user_errors(new_agent)(Settings(), "anthropic", None, None, "full_list"),
        UsageError,
        "load_mode='full_list'",
    ),
    C("args-unknown-option", lambda c: cell("--bogus 1"), UsageError, "--bogus"),
    C("args-live-value", lambda c: cell("--live maybe"), UsageError, "maybe"),
    C("args-unclosed-quote", lambda c: split_line('"unclosed'), UsageError, "cannot parse"),
    # -- %dtl on the sessions of a namespace (no shell) ------------------------------------------
    C("dtl-session-not-name", lambda c: dtl(c, "tools --session 1x"), UsageError, "--session"),
    C("dtl-reset-over-a-dict", lambda c: dtl(c, "reset --session df"), UsageError, "`df`"),
    C("dtl-reset-names-the-type", lambda c: dtl(c, "reset --session df"), UsageError, "dict"),
    C("dtl-load-over-a-dict", lambda c: dtl(c, "load x.json --session df"), UsageError, "`df`"),
    C("dtl-tools-typo", lambda c: dtl(c, "tools --session agnet"), UsageError, "`agent`"),
    C("dtl-save-typo", lambda c: dtl(c, "save x.json --session agnet"), UsageError, "agnet"),
    C("dtl-provider-unknown", lambda c: dtl(c, "provider gemini"), UsageError, "'gemini'"),
    C(
        "dtl-provider-native-search",
        lambda c: dtl(c, "provider kimi", search="native-bm25"),
        UsageError,
        "search='native-bm25'",
    ),
    C("dtl-limit-zero", lambda c: dtl(c, "search x --limit 0"), UsageError, "--limit"),
    C("dtl-show-out-of-range", lambda c: dtl(c, "show 5"), UsageError, "no request yet"),
    C("dtl-load-missing", lambda c: dtl(c, "load missing.json"), UsageError, "missing.json"),
]


def _params() -> list[Any]:
    out = []
    for case in CASES:
        marks = [pytest.mark.xfail(strict=True, reason=case.owner)] if case.owner else []
        out.append(pytest.param(case, id=case.id, marks=marks))
    return out


def _state(s: Session) -> str:
    return json.dumps(s.to_dict(), sort_keys=True)


def test_the_table_is_broad() -> None:
    ids = [c.id for c in CASES]
    assert len(ids) == len(set(ids)) >= 100


@pytest.mark.parametrize("case", _params())
def test_bad_input_is_named_and_changes_nothing(case: Case, tmp_path: Path) -> None:
    session = case.session() if case.session else fresh()
    before = _state(session)
    with pytest.raises(case.error) as info:
        case.call(Ctx(session, tmp_path))
    message = str(info.value)
    assert case.needle in message, message
    assert "Traceback" not in message and len(message) < 1500
    if case.session:
        assert _state(session) == before


def test_error_values_are_redacted_and_shortened() -> None:
    s = fresh()
    key = "sk-ant-api03-" + "x" * 40
    with pytest.raises(ValueError) as info:
        s.set_active_tools([key, ""])
    with pytest.raises(TypeError) as long_info:
        s.user({"text": key + "y" * 10_000})
    for error in (info.value, long_info.value):
        assert key not in str(error)
    assert len(str(long_info.value)) < 300
    assert "[redacted]" in str(long_info.value)


# -- a failed turn changes nothing --------------------------------------------------------------
class Broken:
    """A transport that answers the first `good` requests through the emulator, then fails."""

    name = "broken"

    def __init__(self, inner: Any, good: int, failure: Callable[[dict[str, Any]], Any]) -> None:
        self.inner, self.good, self.failure, self.sent = inner, good, failure, 0

    def send(self, request: Any) -> Any:
        self.sent += 1
        response = self.inner.send(request)
        return response if self.sent <= self.good else self.failure(response)


def _raise(response: dict[str, Any]) -> Any:
    raise ConnectionError("connection reset by peer")


def _drop_content(response: dict[str, Any]) -> Any:
    return {k: v for k, v in response.items() if k != "content"}


def _nested_garbage(response: dict[str, Any]) -> Any:
    return {**response, "content": [{"type": "tool_use", "name": "add"}]}


@pytest.mark.parametrize(
    ("good", "failure", "needle"),
    [
        (0, _raise, "connection reset"),
        (1, _raise, "connection reset"),  # after a search ran and wrote its marker
        (0, _drop_content, "content"),
        (1, _nested_garbage, "content.0.id"),
    ],
)
def test_failed_turn_leaves_the_session_as_it_was(good: int, failure: Any, needle: str) -> None:
    from dtl_notebook.live import TurnError, emulator_transport

    s = fresh()
    s.assistant("hello")
    policy = ScriptedPolicy(
        [{"search": "weather"}, {"call": "get_weather", "arguments": {"location": "Oslo"}}]
    )
    transport = Broken(emulator_transport("anthropic", policy), good, failure)
    agent = Agent(s, "anthropic", ANTHROPIC, transport=transport)
    before = (_state(s), list(s.messages), s.active_tools, s.prompt.copy())
    with pytest.raises(TurnError) as info:
        agent.run("What's the weather in Oslo?")
    assert needle in str(info.value) and "session is unchanged" in str(info.value)
    assert (_state(s), list(s.messages), s.active_tools, s.prompt.copy()) == before
    assert agent.steps == [] and agent.turns == 0


def test_tool_interrupt_fails_the_turn_and_restores_the_session() -> None:
    from dtl_notebook.live import emulator_transport

    def stop(location: str) -> str:
        raise KeyboardInterrupt

    tools = [t for t in make_tools() if t.name != "get_weather"]
    weather = next(t for t in make_tools() if t.name == "get_weather")
    s = Session(tools=[*tools, Tool(**weather.spec().model_dump(), execute=stop)])
    s.user("hi")
    s.assistant("hello")
    policy = ScriptedPolicy(
        [{"search": "weather"}, {"call": "get_weather", "arguments": {"location": "Oslo"}}]
    )
    agent = Agent(s, "anthropic", ANTHROPIC, transport=emulator_transport("anthropic", policy))
    before = _state(s)
    with pytest.raises(KeyboardInterrupt):
        agent.run("What's the weather in Oslo?")
    assert _state(s) == before


def test_tool_error_and_non_finite_output_become_error_results() -> None:
    """An ordinary exception, or NaN in a tool's output, is the tool's failure, not the turn's:
    the model gets an is_error result and every request body stays valid JSON."""
    s = pending()
    s.registry.register(Tool("nan_tool", execute=lambda: {"x": NAN}))
    s.activate(["nan_tool"])
    s.tool_result("c1", "contents")
    s.assistant(tool_calls=[ToolCall(id="c2", name="nan_tool")])
    result = s.execute(s.pending_calls()[0])
    assert result.is_error and "not finite JSON" in result.text and "content['x']" in result.text
    body = build_request(s, "anthropic", ANTHROPIC).json()
    assert "NaN" not in body
    json.loads(body, parse_constant=lambda c: pytest.fail(f"non-finite {c} in the body"))


def _holds_itself() -> dict[str, Any]:
    value: dict[str, Any] = {"rows": [1]}
    value["rows"].append(value)
    return value


def _nested(depth: int) -> list[Any]:
    value: list[Any] = []
    for _ in range(depth):
        value = [value]
    return value


@pytest.mark.parametrize(
    ("output", "named"),
    [
        (_holds_itself, "content['rows'][1] is not finite JSON (Circular reference detected)"),
        (lambda: _nested(100_000), "content is not JSON: nested too deep to write"),
    ],
)
def test_a_tool_output_that_json_cannot_write_is_named(output: Any, named: str) -> None:
    s = pending()
    s.registry.register(Tool("odd_tool", execute=output))
    s.activate(["odd_tool"])
    s.tool_result("c1", "contents")
    s.assistant(tool_calls=[ToolCall(id="c2", name="odd_tool")])
    result = s.execute(s.pending_calls()[0])
    assert result.is_error and named in result.text and "RecursionError" not in result.text
    json.loads(build_request(s, "anthropic", ANTHROPIC).json())


# -- recordings are written atomically ----------------------------------------------------------
def _recorded_turn(tmp_path: Path) -> tuple[Agent, Path]:
    """An agent recording to run.jsonl, after one whole turn."""
    path = tmp_path / "run.jsonl"
    agent = Agent(fresh(), "anthropic", ANTHROPIC, record=str(path))
    agent.run("What's the weather in Paris?")
    assert path.read_bytes().endswith(b"\n")
    assert len(ReplayTransport(path).exchanges) == len(agent.steps)
    return agent, path


def test_a_kill_mid_write_leaves_the_previous_recording_whole(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import os

    from dtl_notebook.agent import files

    agent, path = _recorded_turn(tmp_path)
    recorded = path.read_bytes()

    real_fsync = os.fsync

    def killed(fd: int) -> None:  # the new file is half written when the process dies
        os.ftruncate(fd, os.fstat(fd).st_size // 2)
        real_fsync(fd)
        raise KeyboardInterrupt

    monkeypatch.setattr(files.os, "fsync", killed)
    with pytest.raises(KeyboardInterrupt):
        agent.run("And in Oslo?")
    monkeypatch.undo()
    assert path.read_bytes() == recorded
    assert [p.name for p in tmp_path.iterdir()] == ["run.jsonl"]  # no temporary file left
    assert len(ReplayTransport(path).exchanges) == len(agent.steps)


def test_a_full_disk_mid_turn_leaves_no_exchange_of_the_failed_turn_recorded(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import errno

    from dtl_notebook.live import TurnError, recording

    agent, path = _recorded_turn(tmp_path)
    recorded, before = path.read_bytes(), _state(agent.session)
    writes = []
    real_write = recording.write_atomic

    def full_on_the_second(target: Path, data: bytes) -> None:
        writes.append(target)
        if len(writes) == 2:  # the turn's first exchange was recorded; the disk fills up
            raise OSError(errno.ENOSPC, "No space left on device")
        real_write(target, data)

    monkeypatch.setattr(recording, "write_atomic", full_on_the_second)
    with pytest.raises(TurnError, match="No space left on device"):
        agent.run("And in Oslo?")
    assert len(writes) == 2 and path.read_bytes() == recorded
    assert _state(agent.session) == before
    assert len(ReplayTransport(path).exchanges) == len(agent.steps)


@pytest.mark.parametrize(
    ("provider", "path", "body"),
    [
        ("openai-chat", "/v1/chat/completions", {"messages": [{"role": "user", "content": "hi"}]}),
        ("openai-responses", "/v1/responses", {"input": "hi"}),
    ],
)
def test_the_emulator_names_the_field_and_the_value_it_refuses(
    provider: str, path: str, body: dict[str, Any]
) -> None:
    import httpx2

    from dtl_notebook.live.emulator import Emulator

    sent = {"model": "gpt-5.4", "temperature": "hot", **body}
    answer = Emulator(provider).handle(
        httpx2.Request("POST", f"http://127.0.0.1{path}", content=json.dumps(sent).encode())
    )
    error = answer.json()["error"]
    assert answer.status_code == 400 and error["param"] == "temperature"
    assert error["message"].startswith("temperature: ") and "'hot'" in error["message"]
