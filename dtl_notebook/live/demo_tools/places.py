"""Cities and countries of the demo world, and distances between them."""

from __future__ import annotations

import math

from dtl_notebook.live.demo_tools.fakes import _fold
from dtl_notebook.live.demo_tools.tables import _City, _Country, demo_data

DATA = demo_data()


CITIES = DATA.cities
_CITY_INDEX = {_fold(c.name): c for c in CITIES}
_ALIASES = DATA.city_aliases
_AIRPORTS = {c.iata: c for c in CITIES}


def _city(name: str) -> _City:
    key = _fold(name.split(",")[0]) if isinstance(name, str) else ""
    city = _CITY_INDEX.get(_ALIASES.get(key, key)) or _AIRPORTS.get(key.upper())
    if city is None:
        known = ", ".join(c.name for c in CITIES)
        raise ValueError(f"unknown city {name!r}; known cities: {known}")
    return city


COUNTRIES = DATA.countries
_COUNTRY_ALIASES = DATA.country_aliases


def _country(name: str) -> _Country:
    key = _fold(name)
    code = _COUNTRY_ALIASES.get(key, key.upper())
    for country in COUNTRIES:
        if _fold(country.name) == key or country.code == code:
            return country
    raise ValueError(
        f"unknown country {name!r}; known countries: {', '.join(c.name for c in COUNTRIES)}"
    )


def _distance_km(a: tuple[float, float], b: tuple[float, float]) -> float:
    """Great-circle (haversine) distance in kilometres."""
    lat1, lon1, lat2, lon2 = map(math.radians, (*a, *b))
    h = (
        math.sin((lat2 - lat1) / 2) ** 2
        + math.cos(lat1) * math.cos(lat2) * math.sin((lon2 - lon1) / 2) ** 2
    )
    return 2 * 6371.0 * math.asin(math.sqrt(h))


def _between(a: _City, b: _City) -> float:
    return _distance_km((a.lat, a.lon), (b.lat, b.lon))
