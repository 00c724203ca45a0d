"""Conversions of the lessons: currency at fixed reference rates, time zones, lengths, and a
word count."""

from __future__ import annotations

import re
from datetime import timedelta

from dtl_notebook.demo.clock import local_to_utc, offset_label, parse_datetime, utc_offset, zone
from dtl_notebook.demo.records import J
from dtl_notebook.demo.world_data import demo_data

# Fixed reference rates: units of each currency per 1 USD (not live market data).
RATES_PER_USD = demo_data().rates_per_usd
CURRENCY_NAMES = demo_data().currency_names
METRES_PER_UNIT = demo_data().length_units


def _currency(code: str) -> str:
    key = code.strip().upper() if isinstance(code, str) else ""
    if key not in RATES_PER_USD:
        raise ValueError(f"unsupported currency {code!r}; supported: {', '.join(RATES_PER_USD)}")
    return key


def _convert(amount: float, source: str, target: str) -> float:
    return amount / RATES_PER_USD[_currency(source)] * RATES_PER_USD[_currency(target)]


def convert_currency(amount: float, from_currency: str, to_currency: str) -> J:
    result = _convert(amount, from_currency, to_currency)
    _, symbol, decimals = CURRENCY_NAMES[_currency(to_currency)]
    sign = "-" if result < 0 else ""
    return {
        "amount": amount,
        "from": from_currency,
        "to": to_currency,
        "converted": round(result, decimals),
        "formatted": f"{sign}{symbol}{abs(result):,.{decimals}f}",
        "rate": round(_convert(1, from_currency, to_currency), 6),
    }


def convert_timezone(datetime: str, from_timezone: str, to_timezone: str) -> J:
    source, target = zone(from_timezone), zone(to_timezone)
    local = parse_datetime(datetime)
    utc = local_to_utc(local, source)
    result = utc + timedelta(hours=utc_offset(target, utc))
    return {
        "from": {
            "datetime": local.isoformat(timespec="minutes"),
            "timezone": source,
            "utc_offset": offset_label(utc_offset(source, utc)),
        },
        "to": {
            "datetime": result.isoformat(timespec="minutes"),
            "timezone": target,
            "utc_offset": offset_label(utc_offset(target, utc)),
        },
        "utc": utc.isoformat(timespec="minutes"),
    }


def convert_length(value: float, from_unit: str, to_unit: str) -> J:
    result = value * METRES_PER_UNIT[from_unit] / METRES_PER_UNIT[to_unit]
    return {"value": value, "from_unit": from_unit, "to_unit": to_unit, "result": round(result, 10)}


def count_words(text: str) -> J:
    return {
        "words": len(text.split()),
        "characters": len(text),
        "characters_without_spaces": len(re.sub(r"\s", "", text)),
        "sentences": len(re.findall(r"[^.!?]+[.!?]+", text)) or (1 if text.strip() else 0),
        "lines": len(text.splitlines()),
        "paragraphs": len([p for p in re.split(r"\n\s*\n", text) if p.strip()]),
    }


TOOLS = (convert_currency, convert_timezone, convert_length, count_words)
