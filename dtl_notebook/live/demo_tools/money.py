"""Currencies of the demo world: fixed reference rates, conversion and formatting."""

from __future__ import annotations

from dtl_notebook.live.demo_tools.tables import demo_data

DATA = demo_data()

# Fixed reference rates: units of each currency per 1 USD (not live market data).
RATES_PER_USD = DATA.rates_per_usd
CURRENCY_NAMES = DATA.currency_names
CURRENCIES = tuple(RATES_PER_USD)


def _currency(code: str) -> str:
    key = code.strip().upper() if isinstance(code, str) else ""
    if key not in RATES_PER_USD:
        raise ValueError(f"unsupported currency {code!r}; supported: {', '.join(CURRENCIES)}")
    return key


def _convert(amount: float, source: str, target: str) -> float:
    return amount / RATES_PER_USD[_currency(source)] * RATES_PER_USD[_currency(target)]


def _format_money(amount: float, code: str) -> str:
    _, symbol, decimals = CURRENCY_NAMES[_currency(code)]
    sign = "-" if amount < 0 else ""
    return f"{sign}{symbol}{abs(amount):,.{decimals}f}"
