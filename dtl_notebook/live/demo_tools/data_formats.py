"""The data namespace: JSON and CSV parsing, querying, merging and validation."""

from __future__ import annotations

import csv
import io
import json
import math
import re
import statistics
from typing import Any

from jsonschema import Draft202012Validator
from jsonschema.exceptions import SchemaError

from dtl_notebook.live.demo_tools.registry import J, _Domain
from dtl_notebook.live.demo_tools.world import _World


def _load_json(text: str, what: str = "json_text") -> Any:
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise ValueError(
            f"{what} is not valid JSON: {exc.msg} at line {exc.lineno} column {exc.colno}"
        ) from None


def _load_csv(text: str, delimiter: str = ",") -> list[dict[str, str]]:
    rows = list(csv.DictReader(io.StringIO(text.strip()), delimiter=delimiter))
    if not rows:
        raise ValueError("the CSV needs a header row and at least one data row")
    return rows


def _dump_csv(rows: list[dict[str, Any]], columns: list[str]) -> str:
    out = io.StringIO()
    writer = csv.DictWriter(out, fieldnames=columns, lineterminator="\n", extrasaction="ignore")
    writer.writeheader()
    writer.writerows(rows)
    return out.getvalue()


def _number(value: Any) -> float | None:
    try:
        return float(value)
    except (TypeError, ValueError):
        return None


def _merge(base: Any, override: Any) -> Any:
    if isinstance(base, dict) and isinstance(override, dict):
        return {**base, **{k: _merge(base.get(k), v) for k, v in override.items()}}
    return override


def _data(tool: _Domain, world: _World) -> None:
    @tool
    def validate_json(json_text: str) -> J:
        try:
            value = json.loads(json_text)
        except json.JSONDecodeError as exc:
            return {"valid": False, "error": exc.msg, "line": exc.lineno, "column": exc.colno}
        return {"valid": True, "type": type(value).__name__}

    @tool
    def pretty_print_json(json_text: str, indent: int = 2, sort_keys: bool = False) -> str:
        return json.dumps(
            _load_json(json_text), indent=indent, sort_keys=sort_keys, ensure_ascii=False
        )

    @tool
    def minify_json(json_text: str) -> str:
        return json.dumps(_load_json(json_text), separators=(",", ":"), ensure_ascii=False)

    @tool
    def get_json_value(json_text: str, path: str) -> J:
        value = _load_json(json_text)
        for step in [s for s in path.split(".") if s]:
            if isinstance(value, dict) and step in value:
                value = value[step]
            elif (
                isinstance(value, list)
                and re.fullmatch(r"-?\d+", step)
                and -len(value) <= int(step) < len(value)
            ):
                value = value[int(step)]
            else:
                raise ValueError(f"path {path!r}: no {step!r} at this level")
        return {"path": path, "value": value}

    @tool
    def merge_json_objects(base_json: str, override_json: str) -> J:
        base, override = (
            _load_json(base_json, "base_json"),
            _load_json(override_json, "override_json"),
        )
        if not isinstance(base, dict) or not isinstance(override, dict):
            raise ValueError("both documents must be JSON objects")
        return {"merged": _merge(base, override)}

    @tool
    def csv_to_json(csv_text: str, delimiter: str = ",") -> J:
        rows = _load_csv(csv_text, delimiter)
        return {"rows": rows, "count": len(rows)}

    @tool
    def json_to_csv(json_text: str) -> str:
        rows = _load_json(json_text)
        if not isinstance(rows, list) or not rows or not all(isinstance(r, dict) for r in rows):
            raise ValueError("json_text must be a non-empty array of objects")
        columns = list(dict.fromkeys(k for r in rows for k in r))
        flat = [
            {k: json.dumps(v) if isinstance(v, dict | list) else v for k, v in r.items()}
            for r in rows
        ]
        return _dump_csv(flat, columns)

    @tool
    def summarize_csv(csv_text: str) -> J:
        rows = _load_csv(csv_text)
        columns: J = {}
        for name in rows[0]:
            values = [r[name] for r in rows]
            numbers = [n for n in map(_number, values) if n is not None]
            if numbers and len(numbers) == len(values):
                columns[name] = {
                    "type": "number",
                    "min": min(numbers),
                    "max": max(numbers),
                    "mean": round(statistics.fmean(numbers), 4),
                    "sum": math.fsum(numbers),
                }
            else:
                columns[name] = {"type": "text", "distinct": len(set(values))}
        return {"rows": len(rows), "columns": columns}

    @tool
    def filter_csv_rows(csv_text: str, column: str, operator: str, value: str) -> str:
        rows = _load_csv(csv_text)
        if column not in rows[0]:
            raise ValueError(f"no column {column!r}; columns: {', '.join(rows[0])}")

        def keep(cell: str) -> bool:
            a, b = _number(cell), _number(value)
            if operator in ("greater_than", "less_than"):
                if a is None or b is None:
                    raise ValueError(f"{operator} needs numbers; got {cell!r} and {value!r}")
                return a > b if operator == "greater_than" else a < b
            if operator == "contains":
                return value.lower() in cell.lower()
            same = a == b if a is not None and b is not None else cell == value
            return same if operator == "equals" else not same

        return _dump_csv([r for r in rows if keep(r[column])], list(rows[0]))

    @tool
    def sort_csv_rows(csv_text: str, column: str, descending: bool = False) -> str:
        rows = _load_csv(csv_text)
        if column not in rows[0]:
            raise ValueError(f"no column {column!r}; columns: {', '.join(rows[0])}")
        numeric = all(_number(r[column]) is not None for r in rows)
        if numeric:
            rows.sort(key=lambda r: float(r[column]), reverse=descending)
        else:
            rows.sort(key=lambda r: r[column], reverse=descending)
        return _dump_csv(rows, list(rows[0]))

    @tool
    def validate_json_schema(json_text: str, schema_json: str) -> J:
        document, schema = _load_json(json_text), _load_json(schema_json, "schema_json")
        try:
            Draft202012Validator.check_schema(schema)
        except SchemaError as exc:
            raise ValueError(f"schema_json is not a valid JSON Schema: {exc.message}") from None
        errors = [
            {"path": "/".join(map(str, e.absolute_path)) or "<root>", "message": e.message}
            for e in Draft202012Validator(schema).iter_errors(document)
        ]
        return {"valid": not errors, "errors": errors[:50]}
