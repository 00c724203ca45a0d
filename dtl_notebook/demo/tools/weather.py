"""The weather tools of the lessons: a modelled climate per city, now, ahead and in the past."""

from __future__ import annotations

import math
from datetime import date, timedelta

from dtl_notebook.demo import places
from dtl_notebook.demo.clock import parse_date
from dtl_notebook.demo.derive import pick, unit
from dtl_notebook.demo.records import J
from dtl_notebook.demo.world_data import _City


def _weather_day(place: _City, day: date | None) -> J:
    """The modelled weather of a city on a day (None: a typical current observation)."""
    key = (place.name, day.isoformat() if day else "current")
    season = 0.0
    if day is not None:
        season = math.cos(2 * math.pi * (day.timetuple().tm_yday - 200) / 365.25)
        season *= 1 if place.lat >= 0 else -1
    mean = place.mean_c + place.swing_c * season + (unit(*key, "temp") - 0.5) * 6
    spread = 5 + 7 * (1 - place.wet)
    chance = min(0.95, place.wet * (0.6 + 0.8 * unit(*key, "chance")))
    wet = unit(*key, "rain") < chance
    if wet:
        condition = (
            "snow" if mean < 1 else pick(("light rain", "rain", "showers", "thunderstorms"), *key)
        )
    else:
        condition = pick(("sunny", "clear", "partly cloudy", "cloudy", "overcast"), *key)
    return {
        "mean_c": mean,
        "low_c": mean - spread / 2,
        "high_c": mean + spread / 2,
        "condition": condition,
        "precipitation_chance_percent": round(100 * chance),
        "precipitation_mm": round(unit(*key, "mm") * 25 * place.wet + 0.2, 1) if wet else 0.0,
        "wind_kmh": round(4 + unit(*key, "wind") * 34),
        "humidity_percent": min(100, round(25 + 55 * place.wet + 20 * unit(*key, "hum"))),
    }


def _present(day: J, units: str, *fields: str) -> J:
    """Temperatures, wind and rain of a modelled day in the requested unit system."""
    out: J = {}
    for name in fields:
        value = day[name]
        if name.endswith("_c"):
            out[name[:-2]] = round(value if units == "metric" else value * 9 / 5 + 32, 1)
        elif name == "wind_kmh":
            out["wind_speed"] = value if units == "metric" else round(value / 1.609, 1)
        elif name == "precipitation_mm":
            out["precipitation"] = value if units == "metric" else round(value / 25.4, 2)
        else:
            out[name] = value
    out["units"] = (
        {"temperature": "°C", "wind_speed": "km/h", "precipitation": "mm"}
        if units == "metric"
        else {"temperature": "°F", "wind_speed": "mph", "precipitation": "in"}
    )
    return out


def _daily(place: _City, day: date, units: str) -> J:
    fields = ("low_c", "high_c", "condition", "precipitation_chance_percent")
    shown = _present(_weather_day(place, day), units, *fields, "precipitation_mm", "wind_kmh")
    return {"date": day.isoformat(), **shown}


def get_current_weather(city: str, units: str = "metric") -> J:
    place = places.city(city)
    model = _weather_day(place, None)
    feels = model["mean_c"] - (2 if model["wind_kmh"] > 25 else 0)
    fields = ("temperature_c", "feels_like_c", "condition", "wind_kmh", "humidity_percent")
    shown = _present(
        {**model, "temperature_c": model["mean_c"], "feels_like_c": feels}, units, *fields
    )
    return {"city": place.name, "country": place.country, **shown}


def get_weather_forecast(
    city: str, days: int = 3, start_date: str = "2025-06-15", units: str = "metric"
) -> J:
    place, first = places.city(city), parse_date(start_date, "start_date")
    if not 1 <= days <= 14:
        raise ValueError("days must be between 1 and 14")
    forecast = [_daily(place, first + timedelta(days=i), units) for i in range(days)]
    return {"city": place.name, "country": place.country, "forecast": forecast}


def get_historical_weather(city: str, date: str, units: str = "metric") -> J:
    place = places.city(city)
    return {"city": place.name, "recorded": True, **_daily(place, parse_date(date), units)}


TOOLS = (get_current_weather, get_weather_forecast, get_historical_weather)
