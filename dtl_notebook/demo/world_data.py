"""The world the demo tools draw on, read from data/demo_world.json and validated.

The data (names, cities, countries, exchange rates, products, seed files, knowledge base...)
lives in package data; `demo_data()` reads and validates it once, on first use. Numbers keep
the type the file gives them (an integer stays an integer), so answers are exactly what the
data says.
"""

from __future__ import annotations

import json
from functools import lru_cache
from importlib import resources
from typing import Any, NamedTuple

from pydantic import BaseModel, ConfigDict, ValidationError

DATA_FILE = "demo_world.json"
Num = int | float


class DemoDataError(ValueError):
    """The demo data file is malformed; the message names the field."""


# The record types keep their historic names: `_sample` hashes str(record), so the repr is
# part of every sampled answer.
class _City(NamedTuple):
    name: str
    country: str
    lat: float
    lon: float
    tz: str
    iata: str
    mean_c: float  # annual mean temperature
    swing_c: float  # seasonal amplitude
    wet: float  # share of days with precipitation


class _Country(NamedTuple):
    name: str
    code: str
    capital: str
    currency: str
    continent: str
    calling_code: str
    population_millions: float
    languages: str


class _Product(NamedTuple):
    sku: str
    name: str
    category: str
    price_usd: float
    weight_kg: float
    reorder_point: int
    supplier: str


class SeedTicket(BaseModel):
    """A support ticket that exists before any tool runs."""

    model_config = ConfigDict(frozen=True, extra="forbid", strict=True)

    customer_id: str
    subject: str
    priority: str
    status: str
    created_at: str


class DemoData(BaseModel):
    """Every table of the data file; see the tools that use each one."""

    model_config = ConfigDict(frozen=True, extra="forbid", strict=True)

    first_names: tuple[str, ...]
    last_names: tuple[str, ...]
    company_words: tuple[str, ...]
    company_suffixes: tuple[str, ...]
    timezones: dict[str, tuple[Num, str | None]]  # standard UTC offset, daylight-saving rule
    cities: tuple[_City, ...]
    city_aliases: dict[str, str]
    countries: tuple[_Country, ...]
    country_aliases: dict[str, str]
    rates_per_usd: dict[str, Num]
    currency_names: dict[str, tuple[str, str, int]]  # name, symbol, decimals
    products: tuple[_Product, ...]
    warehouses: dict[str, tuple[str, str]]  # name, city
    departments: tuple[str, ...]
    roles: dict[str, tuple[str, str, str]]
    seed_files: dict[str, str]
    seed_tickets: tuple[SeedTicket, ...]
    carriers: dict[str, dict[str, Any]]
    service_levels: dict[str, int]
    length_units: dict[str, Num]  # metres per unit
    kb_articles: dict[str, tuple[str, str, str]]  # title, category, body


def parse_demo_data(text: str) -> DemoData:
    """Validate the data file's text, naming the first bad field."""
    try:
        return DemoData.model_validate_json(text)
    except ValidationError as exc:
        error = exc.errors()[0]
        field = ".".join(str(p) for p in error["loc"]) or "<root>"
        raise DemoDataError(f"{DATA_FILE}: field {field!r}: {error['msg']}") from None


@lru_cache(maxsize=1)
def demo_data() -> DemoData:
    """The validated demo data, read once from the package data."""
    text = resources.files("dtl_notebook.demo").joinpath("data", DATA_FILE).read_text("utf-8")
    try:
        json.loads(text)
    except json.JSONDecodeError as exc:
        raise DemoDataError(f"{DATA_FILE}: line {exc.lineno}: not valid JSON: {exc.msg}") from None
    return parse_demo_data(text)
