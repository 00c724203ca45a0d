"""Ground-truth corpus of cache breaks, generated from the providers' documented rules.

Every case is a short conversation (3 requests): a first request, a second that appends one
exchange and makes one documented change (or none), and a third that appends again with no
change (a break must be reported once, not again). The truth for each later request is the
cause code that the documented rule implies and the place in the payload, or none. Rules:
Anthropic's prompt-caching page ("What invalidates the cache", lookback, TTL, breakpoints:
https://platform.claude.com/docs/en/build-with-claude/prompt-caching) and OpenAI's
prompt-caching guide (https://developers.openai.com/api/docs/guides/prompt-caching).
Sizes are realistic: long system prompts (about 10k tokens), tool lists with schemas,
multi-turn histories with tool calls, images and PDFs, one in ten cases with a 1 MB document.

`python benchmarks/cache_corpus.py OUT.jsonl` writes the corpus; `cases()` yields it.
"""

from __future__ import annotations

import base64
import copy
import hashlib
import json
import random
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

JSON = dict[str, Any]
WORDS = (
    "the agent reads files before editing them and keeps answers short when the user asks "
    "for a summary of changes across the repository including tests build scripts and docs "
    "never invent paths prefer small diffs explain risky steps and cite the file and line"
).split()
ANTHROPIC_MODEL = "claude-sonnet-4-6"
OPENAI_MODEL = "gpt-5.4"
EPH = {"type": "ephemeral"}


@dataclass
class Case:
    """One conversation and the truth for each request after the first."""

    name: str
    provider: str
    requests: list[JSON]
    truth: list[tuple[str | None, str | None]]  # (cause code, place) for requests 1..n-1
    times: list[float] = field(default_factory=list)


def prose(rng: random.Random, words: int) -> str:
    lines, line = [], []
    for _ in range(words):
        line.append(rng.choice(WORDS))
        if len(line) >= 14:
            lines.append(" ".join(line) + ".")
            line = []
    return "\n".join([*lines, " ".join(line)])


def png(rng: random.Random, size: int = 3000) -> str:
    """A valid PNG header (1000x800) followed by random bytes: a distinct image per seed."""
    head = b"\x89PNG\r\n\x1a\n" + b"\x00\x00\x00\rIHDR" + (1000).to_bytes(4, "big")
    head += (800).to_bytes(4, "big") + b"\x08\x02\x00\x00\x00" + b"\x00" * 4
    return base64.b64encode(head + rng.randbytes(size)).decode()


def pdf(rng: random.Random) -> str:
    body = b"%PDF-1.4\n1 0 obj << /Type /Page >> endobj\n" + rng.randbytes(4000)
    return base64.b64encode(body + b"\n%%EOF").decode()


def tools(rng: random.Random, n: int = 8) -> list[JSON]:
    names = ["read_file", "write_file", "grep", "list_dir", "run_tests", "git_diff"]
    names += ["fetch_url", "search_docs", "open_issue", "lint"]
    return [
        {
            "name": name,
            "description": prose(rng, 40),
            "input_schema": {
                "type": "object",
                "properties": {
                    "path": {"type": "string", "description": prose(rng, 12)},
                    "limit": {"type": "integer"},
                },
                "required": ["path"],
            },
        }
        for name in names[:n]
    ]


# -- Anthropic ---------------------------------------------------------------------------
def anthropic_base(rng: random.Random, marking: str, big_doc: bool) -> JSON:
    system_text = prose(rng, 7000)
    tl = tools(rng)
    tl[-1]["cache_control"] = EPH
    system: list[JSON] = [{"type": "text", "text": system_text, "cache_control": EPH}]
    messages: list[JSON] = []
    first: list[JSON] = [{"type": "text", "text": prose(rng, 60)}]
    if big_doc:
        first.insert(
            0,
            {
                "type": "document",
                "source": {"type": "text", "media_type": "text/plain", "data": prose(rng, 170_000)},
            },
        )
    else:
        first.insert(
            0,
            {
                "type": "image",
                "source": {"type": "base64", "media_type": "image/png", "data": png(rng)},
            },
        )
        first.insert(
            1,
            {
                "type": "document",
                "source": {"type": "base64", "media_type": "application/pdf", "data": pdf(rng)},
            },
        )
    messages.append({"role": "user", "content": first})
    for t in range(rng.randint(3, 6)):
        messages += exchange(rng, t)
    body = {
        "model": ANTHROPIC_MODEL,
        "max_tokens": 2048,
        "tools": tl,
        "system": system,
        "messages": messages,
    }
    mark(body, marking)
    return body


def exchange(rng: random.Random, t: int) -> list[JSON]:
    call = f"toolu_{t:02d}{rng.randrange(10**6):06d}"
    return [
        {
            "role": "assistant",
            "content": [
                {"type": "text", "text": prose(rng, 30)},
                {
                    "type": "tool_use",
                    "id": call,
                    "name": "read_file",
                    "input": {"path": f"src/f{t}.py"},
                },
            ],
        },
        {
            "role": "user",
            "content": [
                {"type": "tool_result", "tool_use_id": call, "content": prose(rng, 200)},
                {"type": "text", "text": prose(rng, 25)},
            ],
        },
    ]


def mark(body: JSON, marking: str) -> None:
    """Breakpoints as clients set them: on the last block, or on the system prompt only."""
    for m in body["messages"]:
        for b in m["content"] if isinstance(m["content"], list) else []:
            b.pop("cache_control", None)
    if marking == "last":
        body["messages"][-1]["content"][-1]["cache_control"] = EPH


def grow(rng: random.Random, body: JSON, marking: str, turn: int) -> JSON:
    out = copy.deepcopy(body)
    out["messages"] += exchange(rng, 100 + turn)
    mark(out, marking)
    return out


def anthropic_changes() -> dict[
    str, tuple[str | None, str | None, Callable[[JSON, random.Random], None]]
]:
    def tool_order(b: JSON, r: random.Random) -> None:
        b["tools"][0], b["tools"][1] = b["tools"][1], b["tools"][0]

    def tool_added(b: JSON, r: random.Random) -> None:
        b["tools"].insert(2, tools(r, 10)[9])

    def tool_edit(b: JSON, r: random.Random) -> None:
        b["tools"][3]["description"] += " Also reads binary files."

    def system_edit(b: JSON, r: random.Random) -> None:
        t = b["system"][0]["text"]
        k = len(t) // 2
        b["system"][0]["text"] = t[:k] + " Today is 2026-11-14." + t[k:]

    def history_edit(b: JSON, r: random.Random) -> None:
        b["messages"][3]["content"][0]["text"] += " (edited)"

    def image(b: JSON, r: random.Random) -> None:
        b["messages"][0]["content"][0]["source"]["data"] = png(r)

    def pdf_change(b: JSON, r: random.Random) -> None:
        b["messages"][0]["content"][1]["source"]["data"] = pdf(r)

    def thinking(b: JSON, r: random.Random) -> None:
        b["thinking"] = {"type": "enabled", "budget_tokens": 4096}

    def effort(b: JSON, r: random.Random) -> None:
        b["output_config"] = {"effort": "low"}

    def tool_choice(b: JSON, r: random.Random) -> None:
        b["tool_choice"] = {"type": "any"}

    def parallel(b: JSON, r: random.Random) -> None:
        b["tool_choice"] = {"type": "auto", "disable_parallel_tool_use": True}

    def model(b: JSON, r: random.Random) -> None:
        b["model"] = "claude-opus-4-8"

    def unmarked(b: JSON, r: random.Random) -> None:
        for t in b["tools"]:
            t.pop("cache_control", None)
        for s in b["system"]:
            s.pop("cache_control", None)
        mark(b, "none")

    def moved_back(b: JSON, r: random.Random) -> None:
        mark(b, "none")
        b["messages"][2]["content"][-1]["cache_control"] = EPH

    def none(b: JSON, r: random.Random) -> None:
        return None

    return {
        "append": (None, None, none),
        "tool_order": ("tool_order_changed", "tools", tool_order),
        "tool_added": ("tool_set_changed", "tools", tool_added),
        "tool_edit": ("tool_set_changed", "tools.3", tool_edit),
        "system_edit": ("system_changed", "system.0", system_edit),
        "history_edit": ("history_rewritten", "messages.3", history_edit),
        "image": ("media_changed", "messages.0.content.0", image),
        "pdf": ("media_changed", "messages.0.content.1", pdf_change),
        "thinking": ("thinking_changed", "thinking", thinking),
        "effort": ("effort_changed", "output_config.effort", effort),
        "tool_choice": ("tool_choice_changed", "tool_choice", tool_choice),
        "parallel": (
            "parallel_tool_use_changed",
            "tool_choice.disable_parallel_tool_use",
            parallel,
        ),
        "model": ("model_changed", None, model),
        "no_breakpoint": ("no_breakpoint", None, unmarked),
        "moved_back": ("breakpoint_moved_back", None, moved_back),
    }


def anthropic_cases(rng: random.Random, n: int) -> Iterator[Case]:
    changes = anthropic_changes()
    for name, (cause, place, change) in changes.items():
        for k in range(n):
            for marking in ("last", "system"):
                # system-only clients never cache messages: only an edit there is a case
                if marking == "system" and name in ("moved_back", "image", "pdf"):
                    continue
                big = k == 0 and name in ("append", "system_edit", "history_edit")
                base = anthropic_base(rng, marking, big)
                second = grow(rng, base, marking, 1)
                change(second, rng)
                third = grow(rng, second, marking, 2)
                if name == "no_breakpoint":
                    change(third, rng)
                if name == "moved_back":
                    third["messages"][2]["content"][-1]["cache_control"] = EPH
                c, p = cause, place
                if marking == "system" and name in (
                    "history_edit",
                    "thinking",
                    "effort",
                    "tool_choice",
                    "parallel",
                ):
                    c, p = None, None  # only tools and system were written: they survive
                truth = [(c, p), (None, None)]
                yield Case(
                    f"anthropic/{name}/{marking}/{k}", "anthropic", [base, second, third], truth
                )
        if name == "append":
            for k in range(n):  # expiry: the second request after the 5-minute TTL
                base = anthropic_base(rng, "last", False)
                second, third = grow(rng, base, "last", 1), None
                third = grow(rng, second, "last", 2)
                yield Case(
                    f"anthropic/expired/{k}",
                    "anthropic",
                    [base, second, third],
                    [("expired", None), (None, None)],
                    [0.0, 400.0, 420.0],
                )
            for k in range(n):  # a long turn: more than 20 new blocks behind the breakpoint
                base = anthropic_base(rng, "last", False)
                second = copy.deepcopy(base)
                for t in range(12):
                    second["messages"] += exchange(rng, 200 + t)
                mark(second, "last")
                third = grow(rng, second, "last", 3)
                yield Case(
                    f"anthropic/lookback/{k}",
                    "anthropic",
                    [base, second, third],
                    [("breakpoint_out_of_lookback", None), (None, None)],
                )


# -- OpenAI Responses and Chat Completions ------------------------------------------------
def openai_tools(rng: random.Random, chat: bool) -> list[JSON]:
    out = []
    for t in tools(rng):
        params = t["input_schema"]
        if chat:
            out.append(
                {
                    "type": "function",
                    "function": {
                        "name": t["name"],
                        "description": t["description"],
                        "parameters": params,
                    },
                }
            )
        else:
            out.append(
                {
                    "type": "function",
                    "name": t["name"],
                    "description": t["description"],
                    "parameters": params,
                    "strict": None,
                }
            )
    return out


def responses_base(rng: random.Random) -> JSON:
    items: list[JSON] = [
        {
            "role": "user",
            "content": [
                {"type": "input_image", "image_url": f"data:image/png;base64,{png(rng)}"},
                {"type": "input_text", "text": prose(rng, 60)},
            ],
        }
    ]
    for t in range(rng.randint(3, 6)):
        items += responses_exchange(rng, t)
    return {
        "model": OPENAI_MODEL,
        "instructions": prose(rng, 7000),
        "tools": openai_tools(rng, False),
        "input": items,
    }


def responses_exchange(rng: random.Random, t: int) -> list[JSON]:
    call = f"call_{t}_{rng.randrange(10**6)}"
    return [
        {
            "type": "function_call",
            "call_id": call,
            "name": "read_file",
            "arguments": json.dumps({"path": f"f{t}.py"}),
        },
        {"type": "function_call_output", "call_id": call, "output": prose(rng, 200)},
        {"role": "user", "content": prose(rng, 25)},
    ]


def chat_base(rng: random.Random) -> JSON:
    messages: list[JSON] = [
        {"role": "system", "content": prose(rng, 7000)},
        {
            "role": "user",
            "content": [
                {"type": "image_url", "image_url": {"url": f"data:image/png;base64,{png(rng)}"}},
                {"type": "text", "text": prose(rng, 60)},
            ],
        },
    ]
    for t in range(rng.randint(3, 6)):
        messages += chat_exchange(rng, t)
    return {"model": OPENAI_MODEL, "tools": openai_tools(rng, True), "messages": messages}


def chat_exchange(rng: random.Random, t: int) -> list[JSON]:
    call = f"call_{t}_{rng.randrange(10**6)}"
    return [
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {
                    "id": call,
                    "type": "function",
                    "function": {
                        "name": "read_file",
                        "arguments": json.dumps({"path": f"f{t}.py"}),
                    },
                }
            ],
        },
        {"role": "tool", "tool_call_id": call, "content": prose(rng, 200)},
        {"role": "user", "content": prose(rng, 25)},
    ]


def openai_cases(rng: random.Random, n: int, provider: str) -> Iterator[Case]:
    chat = provider == "openai-chat"
    history = "messages" if chat else "input"
    system = "messages.0" if chat else "instructions"
    schema = {"name": "answer", "schema": {"type": "object"}}
    fmt = (
        {"type": "json_schema", "json_schema": schema}
        if chat
        else {"type": "json_schema", **schema}
    )
    edits: dict[str, tuple[str | None, str | None, Callable[[JSON], None]]] = {
        "append": (None, None, lambda b: None),
        "tool_order": ("tool_order_changed", "tools", lambda b: b["tools"].reverse()),
        "tool_added": ("tool_set_changed", "tools", lambda b: _add_tool(b, chat)),
        "system_edit": ("system_changed", system, lambda b: _edit_system(b, chat)),
        "history_edit": ("history_rewritten", f"{history}.3", lambda b: _edit_history(b, chat)),
        "image": ("media_changed", f"{history}.{1 if chat else 0}", lambda b: _edit_image(b, chat)),
        "parallel": (
            "parallel_tool_calls_changed",
            "parallel_tool_calls",
            lambda b: b.update(parallel_tool_calls=False),
        ),
        "format": (
            "text_format_changed",
            "response_format" if chat else "text.format",
            lambda b: b.update(response_format=fmt) if chat else b.update(text={"format": fmt}),
        ),
        "effort": (
            "reasoning_effort_changed",
            "reasoning_effort" if chat else "reasoning.effort",
            lambda b: (
                b.update(reasoning_effort="high")
                if chat
                else b.update(reasoning={"effort": "high"})
            ),
        ),
        "cache_key": (
            "cache_key_changed",
            "prompt_cache_key",
            lambda b: b.update(prompt_cache_key="tenant-2"),
        ),
        "model": ("model_changed", None, lambda b: b.update(model="gpt-5.4-mini")),
    }
    for name, (cause, place, change) in edits.items():
        for k in range(n):
            base = chat_base(rng) if chat else responses_base(rng)
            more = chat_exchange if chat else responses_exchange
            second = copy.deepcopy(base)
            second[history] += more(rng, 100)
            change(second)
            third = copy.deepcopy(second)
            third[history] += more(rng, 101)
            yield Case(
                f"{provider}/{name}/{k}",
                provider,
                [base, second, third],
                [(cause, place), (None, None)],
            )


def _add_tool(b: JSON, chat: bool) -> None:
    tool = copy.deepcopy(b["tools"][0])
    (tool["function"] if chat else tool)["name"] = "extra_tool"
    b["tools"].insert(1, tool)


def _edit_system(b: JSON, chat: bool) -> None:
    if chat:
        b["messages"][0]["content"] = b["messages"][0]["content"].replace("agent", "assistant", 1)
    else:
        b["instructions"] = b["instructions"].replace("agent", "assistant", 1)


def _edit_history(b: JSON, chat: bool) -> None:
    items = b["messages" if chat else "input"]
    items[3]["content"] = str(items[3].get("content") or items[3].get("output")) + " (edited)"
    if not chat:
        items[3]["output"] = items[3].pop("content")


def _edit_image(b: JSON, chat: bool) -> None:
    rng = random.Random(99)
    if chat:
        b["messages"][1]["content"][0]["image_url"]["url"] = f"data:image/png;base64,{png(rng)}"
    else:
        b["input"][0]["content"][0]["image_url"] = f"data:image/png;base64,{png(rng)}"


def cases(n: int = 3, seed: int = 20) -> list[Case]:
    rng = random.Random(seed)
    out = list(anthropic_cases(rng, n))
    out += openai_cases(rng, n, "openai-responses")
    out += openai_cases(rng, n, "openai-chat")
    return out


def main() -> None:
    with open(sys.argv[1], "w") as f:
        for case in cases():
            f.write(json.dumps(case.__dict__) + "\n")
    with open(sys.argv[1], "rb") as f:
        digest = hashlib.sha256(f.read()).hexdigest()[:12]
    print(f"wrote {sys.argv[1]} ({digest})")


if __name__ == "__main__":
    main()
