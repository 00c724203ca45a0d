"""Cities and countries of the demo world, and the distances between them."""

from __future__ import annotations

import math

from dtl_notebook.demo.derive import fold
from dtl_notebook.demo.world_data import _City, _Country, demo_data

DATA = demo_data()
CITIES = DATA.cities
CITY_INDEX = {fold(c.name): c for c in CITIES}
CITY_ALIASES = DATA.city_aliases
AIRPORTS = {c.iata: c for c in CITIES}
COUNTRIES = DATA.countries


def city(name: str) -> _City:
    """A city by name, alias or IATA code; an unknown one is a clear error."""
    key = fold(name.split(",")[0]) if isinstance(name, str) else ""
    found = CITY_INDEX.get(CITY_ALIASES.get(key, key)) or AIRPORTS.get(key.upper())
    if found is None:
        known = ", ".join(c.name for c in CITIES)
        raise ValueError(f"unknown city {name!r}; known cities: {known}")
    return found


def country(name: str) -> _Country:
    """A country by name, alias or ISO code; an unknown one is a clear error."""
    key = fold(name)
    code = DATA.country_aliases.get(key, key.upper())
    for candidate in COUNTRIES:
        if fold(candidate.name) == key or candidate.code == code:
            return candidate
    raise ValueError(
        f"unknown country {name!r}; known countries: {', '.join(c.name for c in COUNTRIES)}"
    )


def distance_km(a: tuple[float, float], b: tuple[float, float]) -> float:
    """Great-circle (haversine) distance in kilometres."""
    lat1, lon1, lat2, lon2 = map(math.radians, (*a, *b))
    h = (
        math.sin((lat2 - lat1) / 2) ** 2
        + math.cos(lat1) * math.cos(lat2) * math.sin((lon2 - lon1) / 2) ** 2
    )
    return 2 * 6371.0 * math.asin(math.sqrt(h))


def between(a: _City, b: _City) -> float:
    return distance_km((a.lat, a.lon), (b.lat, b.lon))
