"""The geography namespace: cities, countries, distances and bearings."""

from __future__ import annotations

import math

from dtl_notebook.live.demo_tools.places import CITIES, _between, _city, _country, _distance_km
from dtl_notebook.live.demo_tools.registry import J, _Domain
from dtl_notebook.live.demo_tools.tables import _City
from dtl_notebook.live.demo_tools.world import _World


def _geography(tool: _Domain, world: _World) -> None:
    def info(city: _City) -> J:
        return {
            "city": city.name,
            "country": city.country,
            "country_code": _country(city.country).code,
            "latitude": city.lat,
            "longitude": city.lon,
            "timezone": city.tz,
            "main_airport": city.iata,
        }

    @tool
    def get_city_info(city: str) -> J:
        return info(_city(city))

    @tool
    def get_city_coordinates(city: str) -> J:
        place = _city(city)
        return {"city": place.name, "latitude": place.lat, "longitude": place.lon}

    @tool
    def distance_between_cities(city_a: str, city_b: str, unit: str = "km") -> J:
        a, b = _city(city_a), _city(city_b)
        km = _between(a, b)
        value = km if unit == "km" else km / 1.609344 if unit == "mi" else km / 1.852
        return {"from": a.name, "to": b.name, "distance": round(value, 1), "unit": unit}

    @tool
    def bearing_between_cities(from_city: str, to_city: str) -> J:
        a, b = _city(from_city), _city(to_city)
        lat1, lat2 = math.radians(a.lat), math.radians(b.lat)
        dlon = math.radians(b.lon - a.lon)
        x = math.sin(dlon) * math.cos(lat2)
        y = math.cos(lat1) * math.sin(lat2) - math.sin(lat1) * math.cos(lat2) * math.cos(dlon)
        bearing = (math.degrees(math.atan2(x, y)) + 360) % 360
        points = ("N", "NE", "E", "SE", "S", "SW", "W", "NW")
        return {
            "from": a.name,
            "to": b.name,
            "bearing_degrees": round(bearing, 1),
            "compass": points[round(bearing / 45) % 8],
        }

    @tool
    def list_cities(country: str | None = None) -> J:
        wanted = _country(country).name if country else None
        return {"cities": [c.name for c in CITIES if wanted in (None, c.country)]}

    @tool
    def get_country_info(country: str) -> J:
        return _country(country)._asdict()

    @tool
    def find_nearest_cities(city: str, limit: int = 3) -> J:
        place = _city(city)
        others = sorted((_between(place, c), c.name) for c in CITIES if c != place)
        return {
            "city": place.name,
            "nearest": [{"city": n, "distance_km": round(d, 1)} for d, n in others[:limit]],
        }

    @tool
    def find_city_near_coordinates(latitude: float, longitude: float) -> J:
        km, place = min((_distance_km((latitude, longitude), (c.lat, c.lon)), c) for c in CITIES)
        return {**info(place), "distance_km": round(km, 1)}
