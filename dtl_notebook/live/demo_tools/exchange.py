"""The currency namespace: conversion at fixed reference rates and formatting."""

from __future__ import annotations

from dtl_notebook.live.demo_tools.money import (
    CURRENCIES,
    CURRENCY_NAMES,
    RATES_PER_USD,
    _convert,
    _format_money,
)
from dtl_notebook.live.demo_tools.places import _country
from dtl_notebook.live.demo_tools.registry import J, _Domain
from dtl_notebook.live.demo_tools.world import _World


def _currency_domain(tool: _Domain, world: _World) -> None:

    @tool
    def convert_currency(amount: float, from_currency: str, to_currency: str) -> J:
        result = _convert(amount, from_currency, to_currency)
        return {
            "amount": amount,
            "from": from_currency,
            "to": to_currency,
            "converted": round(result, CURRENCY_NAMES[to_currency][2]),
            "formatted": _format_money(result, to_currency),
            "rate": round(_convert(1, from_currency, to_currency), 6),
        }

    @tool
    def get_exchange_rate(base_currency: str, quote_currency: str) -> J:
        rate = _convert(1, base_currency, quote_currency)
        return {
            "base": base_currency,
            "quote": quote_currency,
            "rate": round(rate, 6),
            "inverse": round(1 / rate, 6),
            "source": "fixed reference rates",
        }

    @tool
    def list_supported_currencies() -> J:
        return {
            "currencies": [
                {
                    "code": c,
                    "name": CURRENCY_NAMES[c][0],
                    "symbol": CURRENCY_NAMES[c][1].strip(),
                    "per_usd": RATES_PER_USD[c],
                }
                for c in CURRENCIES
            ]
        }

    @tool
    def format_money(amount: float, currency: str) -> J:
        return {"formatted": _format_money(amount, currency)}

    @tool
    def convert_to_many_currencies(
        amount: float, from_currency: str, to_currencies: list[str]
    ) -> J:
        return {
            "amount": amount,
            "from": from_currency,
            "converted": {
                c: round(_convert(amount, from_currency, c), CURRENCY_NAMES[c][2])
                for c in to_currencies
            },
        }

    @tool
    def get_currency_for_country(country: str) -> J:
        found = _country(country)
        return {
            "country": found.name,
            "currency": found.currency,
            "name": CURRENCY_NAMES[found.currency][0],
        }

    @tool
    def estimate_card_fx_cost(
        amount: float, foreign_currency: str, home_currency: str, fee_percent: float = 2.5
    ) -> J:
        base = _convert(amount, foreign_currency, home_currency)
        fee = base * fee_percent / 100
        return {
            "converted": round(base, 2),
            "fee": round(fee, 2),
            "total": round(base + fee, 2),
            "currency": home_currency,
        }
