"""What the view's copy buttons put on the clipboard: a request's JSON, one item, a curl line.

Payloads in records are already masked; the curl line never holds a key either: it reads
the provider's key variable from the shell (`$ANTHROPIC_API_KEY`, `$OPENAI_API_KEY`...).
"""

from __future__ import annotations

import json
import shlex
from typing import Any

from dtl_notebook.live.transport import redact
from dtl_notebook.notebook.records import RequestRecord
from dtl_notebook.wire.providers import spec
from dtl_notebook.wire.validate import required_betas

ANTHROPIC_VERSION = "2023-06-01"  # https://docs.anthropic.com/en/api/versioning


def request_json(rec: RequestRecord) -> str:
    return json.dumps(redact(rec.payload), ensure_ascii=False, indent=2)


def item_json(rec: RequestRecord, path: str) -> str:
    """One item of the request, by `field` or `field.index` (e.g. `tools.5`)."""
    field_name, _, index = path.partition(".")
    if field_name not in rec.payload:
        raise KeyError(f"path {path!r}: the request has no field {field_name!r}")
    value: Any = rec.payload[field_name]
    if index:
        if not (isinstance(value, list) and index.isdigit() and int(index) < len(value)):
            raise KeyError(f"path {path!r}: no item {index} in {field_name}")
        value = value[int(index)]
    return json.dumps(redact(value), ensure_ascii=False, indent=2)


def curl_command(rec: RequestRecord) -> str:
    """A shell command that sends the same body; the key comes from the environment."""
    return curl_head(rec) + request_json(rec) + CURL_TAIL


CURL_TAIL = "\nJSON\n"  # ends the here-document that `curl_head` opens


def curl_head(rec: RequestRecord) -> str:
    """The curl command up to the request's JSON (a here-document on its standard input)."""
    row = spec(rec.provider)
    url, variable = row.endpoint_url, row.key_variable
    headers = ["content-type: application/json"]
    if spec(rec.provider).key_header == "x-api-key":  # its own key header and version
        headers += [f"x-api-key: ${variable}", f"anthropic-version: {ANTHROPIC_VERSION}"]
        betas = required_betas(rec.payload, rec.provider)
        if betas:
            headers.append(f"anthropic-beta: {','.join(betas)}")
    else:
        headers.append(f"authorization: Bearer ${variable}")
    # Double quotes so the shell expands the key variable; nothing else in them is special.
    lines = [f"curl {shlex.quote(url)}"]
    lines += [f'  -H "{h}"' for h in headers]
    lines.append("  --data-binary @- <<'JSON'")
    return " \\\n".join(lines) + "\n"


def copy_text(rec: RequestRecord, what: str, path: str = "") -> str:
    """`what` is "json" (the request), "item" (one item by path) or "curl"."""
    if what == "json":
        return request_json(rec)
    if what == "item":
        return item_json(rec, path)
    if what == "curl":
        return curl_command(rec)
    raise KeyError(f"copy: unknown kind {what!r} (json, item or curl)")
