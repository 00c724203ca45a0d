"""Masking API keys and auth headers in anything shown, saved, recorded or raised.

One rule, in the lowest layer so that every layer's error texts can use it. A credential is
recognised two ways: by its shape (`sk-…`, `AIza…`, a bearer credential), wherever it sits,
and by its place (a header, query parameter or JSON member named like a key, token or
cookie), whatever its shape. `Secrets` remembers the values seen in such places and masks
them wherever they reappear (an echoing error body, a response, a failure text).
"""

from __future__ import annotations

import re
from collections import OrderedDict
from typing import Any
from urllib.parse import unquote_plus

MASK = "[redacted]"
# OpenAI / Anthropic / OpenAI-compatible (sk-...), Google (AIza...), GitHub tokens, xAI,
# Groq (gsk_), Hugging Face (hf_), Slack (xox?-), GitLab (glpat-), and any bearer credential
_SECRET = re.compile(
    r"(sk-[A-Za-z0-9_-]{8,}|AIza[A-Za-z0-9_-]{20,}|gh[pousr]_[A-Za-z0-9]{16,}"
    r"|github_pat_[A-Za-z0-9_]{16,}|xai-[A-Za-z0-9_-]{16,}|gsk_[A-Za-z0-9]{16,}"
    r"|hf_[A-Za-z0-9]{16,}|xox[abprs]-[A-Za-z0-9-]{10,}|glpat-[A-Za-z0-9_-]{16,}"
    r"|Bearer\s+[A-Za-z0-9._~+/=-]{8,})"
)
# a key cut off at the end of a truncated text: its start is masked too
_CUT_SECRET = re.compile(
    r"(sk-|AIza|gh[pousr]_|github_pat_|xai-|gsk_|hf_|xox[abprs]-|glpat-|Bearer\s)"
    r"[A-Za-z0-9._~+/=-]*\Z"
)
# a JSON member that holds a credential (`api_key`, `x-portkey-api-key`, `authorization`);
# narrow on purpose: `token`, `key` and `prompt_cache_key` are ordinary content in a body
_CREDENTIAL_MEMBER = re.compile(
    r"(?:[a-z0-9]+[-_])*api[-_]?key|(?:proxy-)?authorization", re.IGNORECASE
)
# a header or query parameter named like a credential: the members above, and any name
# ending in key, token, secret, password, sig(nature), auth, credential(s) or cookie
# (`x-auth-token`, `access_token`, `?key=`, `?sig=`, `set-cookie`)
_CREDENTIAL_PARAMETER = re.compile(
    r"(?:[a-z0-9]+[-_])*(?:key|token|secret|password|passwd|sig|signature|auth"
    r"|credentials?|cookie|session)",
    re.IGNORECASE,
)
HUNTED_LENGTH = 8  # a value sent in a credential place is hunted elsewhere from this length:
# a shorter one would match ordinary text (it is still masked where it sits)


def is_credential_member(name: str) -> bool:
    """Whether a JSON member named `name` holds a credential."""
    return _CREDENTIAL_MEMBER.fullmatch(name) is not None


def is_credential_parameter(name: str) -> bool:
    """Whether a header or query parameter named `name` holds a credential."""
    return is_credential_member(name) or _CREDENTIAL_PARAMETER.fullmatch(name) is not None


def redact(value: Any) -> Any:
    """A copy with API keys and credential members masked (in keys, values and nested data)."""
    if isinstance(value, dict):
        return {
            redact(k) if isinstance(k, str) else k: MASK
            if is_credential_member(str(k))
            else redact(v)
            for k, v in value.items()
        }
    if isinstance(value, list):
        return [redact(v) for v in value]
    if isinstance(value, str):
        return _SECRET.sub(MASK, value)
    return value


def redact_cut(text: str) -> str:
    """`text` redacted, a key cut off at its end included (a text truncated at a limit)."""
    return _CUT_SECRET.sub(MASK, redact(text))


def masked_query(query: str) -> str:
    """A URL query string with the values of credential parameters masked, the rest as is."""
    if not query:
        return query
    parts = []
    for part in query.split("&"):
        name, equals, _ = part.partition("=")
        secret = equals and is_credential_parameter(unquote_plus(name))
        parts.append(f"{name}={MASK}" if secret else part)
    return "&".join(parts)


class Secrets:
    """The values seen in credential places (the `kept` latest), masked wherever they
    reappear, besides every key-shaped value."""

    def __init__(self, kept: int = 256) -> None:
        self.kept = kept
        self._values: OrderedDict[str, None] = OrderedDict()

    def learn(self, value: str) -> None:
        """Remember `value` (sent in a credential place) in every form it may reappear in:
        as sent, without its scheme (`Bearer …`), percent-decoded, and each cookie's value."""
        forms = {value, unquote_plus(value)}
        scheme, _, credential = value.strip().partition(" ")
        if credential and scheme.isalpha():
            forms.add(credential.strip())
        for cookie in value.split(";"):
            forms.add(cookie.partition("=")[2].strip())
        for form in forms:
            if len(form) >= HUNTED_LENGTH:
                self._values[form] = None
                self._values.move_to_end(form)
        while len(self._values) > self.kept:
            self._values.popitem(last=False)

    def learn_members(self, document: Any) -> None:
        """Remember the string values of credential members anywhere in a JSON document."""
        if isinstance(document, dict):
            for key, value in document.items():
                if isinstance(value, str) and is_credential_member(str(key)):
                    self.learn(value)
                else:
                    self.learn_members(value)
        elif isinstance(document, list):
            for item in document:
                self.learn_members(item)

    def mask(self, text: str, cut: bool = False) -> str:
        """`text` with every remembered value and every key-shaped value masked; `cut`: the
        text was truncated, so a key cut off at its end is masked too."""
        for value in sorted(self._values, key=len, reverse=True):
            if value in text:
                text = text.replace(value, MASK)
        return redact_cut(text) if cut else redact(text)


class MaskedError(Exception):
    """Stands in for an exception whose text may hold a key: its type name and masked text,
    with its traceback, so a chained traceback still shows where it came from."""


def masked_cause(exc: BaseException) -> BaseException:
    """An exception safe to chain as a `__cause__`: `exc` itself when neither its text, its
    notes nor its own chain hold a key, otherwise a MaskedError standing for it."""
    cause = exc.__cause__ or (None if exc.__suppress_context__ else exc.__context__)
    hidden = exc.__context__ if exc.__suppress_context__ else None
    if hidden is not None and hidden is not cause:
        # not displayed (`raise ... from`), but still reachable through the chain: masked too
        exc.__context__ = masked_cause(hidden)
    safe_cause = masked_cause(cause) if cause is not None else None
    texts = [str(exc), *getattr(exc, "__notes__", ())]
    if safe_cause is cause and all(redact(t) == t for t in texts):
        return exc
    name = f"{type(exc).__module__}.{type(exc).__qualname__}"
    stand_in = MaskedError(f"{name}: {redact(str(exc))}").with_traceback(exc.__traceback__)
    stand_in.__cause__ = safe_cause
    return stand_in
