"""Checks of the arguments of the wire, context and cache entry points, before any work.

Each failure names the parameter and shows the (redacted, shortened) value; the SDK type
checks in validate.py then see only well-typed options.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

from dtl_notebook.agent import checks
from dtl_notebook.agent.errors import InvalidArgumentError
from dtl_notebook.wire.modes import PROVIDERS, check_modes, check_provider
from dtl_notebook.wire.profiles import check_profile_overrides, profile_for
from dtl_notebook.wire.request import WireRequest

# Options whose value is a token count: an int of at least 1.
TOKEN_LIMITS = ("max_tokens", "max_output_tokens", "max_completion_tokens")


def check_build_arguments(
    session: Any, profile: Any, validate: Any, options: Mapping[str, Any]
) -> None:
    """build_request's arguments: a Session, a profile dict, a bool and well-typed limits."""
    from dtl_notebook.agent.session import Session  # agent/ is below wire/: no cycle at run time

    if not isinstance(session, Session):
        raise checks.type_error("session", "a Session", session)
    if profile is not None:
        check_profile_overrides(checks.mapping(profile, "profile"))
    checks.boolean(validate, "validate")
    for name in TOKEN_LIMITS:
        if name in options:
            checks.positive_int(options[name], name)
    if "tool_changes" in options:
        checks.choice(options["tool_changes"], "tool_changes", ("keep", "rewrite"))
    namespaces = options.get("namespaces")
    if namespaces is not None:
        for key, text in checks.mapping(namespaces, "namespaces").items():
            if not isinstance(key, str) or not isinstance(text, str):
                raise checks.type_error(f"namespaces[{key!r}]", "a description string", text)
    if not any(m.role in ("user", "assistant") for m in session.messages):
        raise InvalidArgumentError(
            "session.messages holds no user or assistant message: a provider needs at least "
            "one (call session.user(text) first)"
        )


def check_context_arguments(request: Any, provider: Any, model: Any) -> None:
    """model_context's arguments: a WireRequest, or a payload dict with its provider."""
    if isinstance(request, WireRequest):
        return
    if not isinstance(request, Mapping):
        raise checks.type_error("request", "a WireRequest or a payload dict", request)
    if provider is None:
        raise InvalidArgumentError(
            f"provider is required with a payload dict (one of {', '.join(PROVIDERS)})"
        )
    check_provider(provider)
    if model is not None:
        checks.text(model, "model")
    for key, kinds in (("messages", list), ("tools", list), ("input", list | str)):
        if key in request and not isinstance(request[key], kinds):
            raise checks.type_error(f"payload[{key!r}]", "a list", request[key])


def check_analyze_arguments(
    requests: Any, provider: Any, model: Any, responses: Any, times: Any
) -> None:
    """analyze's arguments: a list of requests, per-request lists of the same length, and
    send times that are finite and never go back."""
    if isinstance(requests, str | bytes | Mapping | WireRequest) or not isinstance(
        requests, Sequence
    ):
        raise checks.type_error("requests", "a list of WireRequests or payload dicts", requests)
    for i, request in enumerate(requests):
        if not isinstance(request, WireRequest | Mapping):
            raise checks.type_error(f"requests[{i}]", "a WireRequest or a payload dict", request)
        if not isinstance(request, WireRequest):
            check_context_arguments(request, provider, model)
    checks.same_length("responses", responses, "requests", len(requests))
    checks.same_length("times", times, "requests", len(requests))
    previous = -math.inf
    for i, at in enumerate(times or []):
        if isinstance(at, bool) or not isinstance(at, int | float) or not math.isfinite(at):
            raise checks.type_error(f"times[{i}]", "a finite number of seconds", at)
        if at < previous:
            raise InvalidArgumentError(
                f"times[{i}] is {at}, earlier than times[{i - 1}] ({previous}): "
                "send times must not go back"
            )
        previous = at


def check_provider_options(provider: str, model: str, options: Mapping[str, Any]) -> None:
    """The provider, its search and load modes (the one cross-field check) and the profile:
    what an agent checks when it is made, before it has a session to build."""
    check_modes(provider, options.get("search"), options.get("load_mode"))
    profile = options.get("profile")
    if profile is not None:
        check_profile_overrides(checks.mapping(profile, "profile"))
    profile_for(provider, model, **(profile or {}))
