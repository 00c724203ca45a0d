"""The weather namespace: a modelled climate per city, forecasts, sun and air."""

from __future__ import annotations

import math
from datetime import date, datetime, timedelta

from dtl_notebook.live.demo_tools.fakes import _hash, _pick, _unit
from dtl_notebook.live.demo_tools.places import CITIES, _city, _distance_km
from dtl_notebook.live.demo_tools.registry import J, _Domain
from dtl_notebook.live.demo_tools.tables import _City
from dtl_notebook.live.demo_tools.timekeeping import _date, _hhmm, _offset_label, _span, _utc_offset
from dtl_notebook.live.demo_tools.world import _World


def _weather_day(city: _City, day: date | None) -> J:
    """The modelled weather of a city on a day (None: a typical current observation)."""
    key = (city.name, day.isoformat() if day else "current")
    season = 0.0
    if day is not None:
        season = math.cos(2 * math.pi * (day.timetuple().tm_yday - 200) / 365.25)
        season *= 1 if city.lat >= 0 else -1
    mean = city.mean_c + city.swing_c * season + (_unit(*key, "temp") - 0.5) * 6
    spread = 5 + 7 * (1 - city.wet)
    chance = min(0.95, city.wet * (0.6 + 0.8 * _unit(*key, "chance")))
    wet = _unit(*key, "rain") < chance
    if wet:
        condition = (
            "snow" if mean < 1 else _pick(("light rain", "rain", "showers", "thunderstorms"), *key)
        )
    else:
        condition = _pick(("sunny", "clear", "partly cloudy", "cloudy", "overcast"), *key)
    return {
        "mean_c": mean,
        "low_c": mean - spread / 2,
        "high_c": mean + spread / 2,
        "condition": condition,
        "precipitation_chance_percent": round(100 * chance),
        "precipitation_mm": round(_unit(*key, "mm") * 25 * city.wet + 0.2, 1) if wet else 0.0,
        "wind_kmh": round(4 + _unit(*key, "wind") * 34),
        "humidity_percent": min(100, round(25 + 55 * city.wet + 20 * _unit(*key, "hum"))),
    }


def _temp(celsius: float, units: str) -> float:
    return round(celsius if units == "metric" else celsius * 9 / 5 + 32, 1)


def _present(day: J, units: str, *fields: str) -> J:
    """Temperatures, wind and rain of a modelled day in the requested unit system."""
    out: J = {}
    for name in fields:
        value = day[name]
        if name.endswith("_c"):
            out[name[:-2]] = _temp(value, units)
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


def _sun(city: _City, day: date) -> J:
    """Sunrise, solar noon and sunset in local time (NOAA-style approximation)."""
    doy = day.timetuple().tm_yday
    declination = math.radians(23.44) * math.sin(2 * math.pi * (284 + doy) / 365)
    b = 2 * math.pi * (doy - 81) / 364
    equation_of_time = 9.87 * math.sin(2 * b) - 7.53 * math.cos(b) - 1.5 * math.sin(b)
    noon_utc = 12 * 60 - 4 * city.lon - equation_of_time
    offset = _utc_offset(city.tz, datetime.combine(day, datetime.min.time()) + timedelta(hours=12))
    noon = noon_utc + offset * 60
    lat = math.radians(city.lat)
    cos_h = (math.sin(math.radians(-0.833)) - math.sin(lat) * math.sin(declination)) / (
        math.cos(lat) * math.cos(declination)
    )
    out: J = {"city": city.name, "date": day.isoformat(), "solar_noon": _hhmm(noon)}
    if cos_h <= -1 or cos_h >= 1:
        out["note"] = "polar day" if cos_h <= -1 else "polar night"
        return out
    half = math.degrees(math.acos(cos_h)) * 4
    out.update(
        sunrise=_hhmm(noon - half),
        sunset=_hhmm(noon + half),
        day_length=_span(int(2 * half)),
        utc_offset=_offset_label(offset),
    )
    return out


def _weather(tool: _Domain, world: _World) -> None:
    def daily(city: _City, day: date, units: str) -> J:
        model = _weather_day(city, day)
        fields = ("low_c", "high_c", "condition", "precipitation_chance_percent")
        return {
            "date": day.isoformat(),
            **_present(model, units, *fields, "precipitation_mm", "wind_kmh"),
        }

    @tool
    def get_current_weather(city: str, units: str = "metric") -> J:
        place = _city(city)
        model = _weather_day(place, None)
        feels = model["mean_c"] - (2 if model["wind_kmh"] > 25 else 0)
        fields = ("temperature_c", "feels_like_c", "condition", "wind_kmh", "humidity_percent")
        shown = _present(
            {**model, "temperature_c": model["mean_c"], "feels_like_c": feels}, units, *fields
        )
        return {"city": place.name, "country": place.country, **shown}

    @tool
    def get_weather_forecast(
        city: str, days: int = 3, start_date: str = "2025-06-15", units: str = "metric"
    ) -> J:
        place, first = _city(city), _date(start_date, "start_date")
        if not 1 <= days <= 14:
            raise ValueError("days must be between 1 and 14")
        forecast = [daily(place, first + timedelta(days=i), units) for i in range(days)]
        return {"city": place.name, "country": place.country, "forecast": forecast}

    @tool
    def get_hourly_forecast(city: str, date: str, hours: int = 24, units: str = "metric") -> J:
        place, day = _city(city), _date(date)
        model = _weather_day(place, day)
        spread = model["high_c"] - model["low_c"]
        rows = [
            {
                "time": f"{h:02d}:00",
                "temperature": _temp(
                    model["mean_c"] + spread / 2 * math.sin(2 * math.pi * (h - 9) / 24), units
                ),
                "precipitation_chance_percent": min(
                    100,
                    round(
                        model["precipitation_chance_percent"] * (0.5 + _unit(place.name, date, h))
                    ),
                ),
            }
            for h in range(max(1, min(hours, 24)))
        ]
        return {
            "city": place.name,
            "date": day.isoformat(),
            "condition": model["condition"],
            "unit": "°C" if units == "metric" else "°F",
            "hours": rows,
        }

    @tool
    def get_historical_weather(city: str, date: str, units: str = "metric") -> J:
        place = _city(city)
        return {"city": place.name, "recorded": True, **daily(place, _date(date), units)}

    @tool
    def get_air_quality(city: str) -> J:
        place = _city(city)
        aqi = 15 + _hash("aqi", place.name) % 160
        bands = ((50, "good"), (100, "moderate"), (150, "unhealthy for sensitive groups"))
        category = next((label for top, label in bands if aqi <= top), "unhealthy")
        return {
            "city": place.name,
            "aqi": aqi,
            "category": category,
            "pollutants_ug_m3": {
                "pm2_5": round(aqi * 0.35, 1),
                "pm10": round(aqi * 0.6, 1),
                "o3": round(40 + _hash("o3", place.name) % 80, 1),
                "no2": round(10 + _hash("no2", place.name) % 60, 1),
            },
        }

    @tool
    def get_uv_index(city: str, date: str) -> J:
        place, day = _city(city), _date(date)
        declination = 23.44 * math.sin(2 * math.pi * (284 + day.timetuple().tm_yday) / 365)
        elevation = max(0.0, 90 - abs(place.lat - declination))
        cloud = 0.55 if _weather_day(place, day)["precipitation_mm"] > 0 else 1.0
        uv = round(12.5 * math.sin(math.radians(elevation)) ** 2.5 * cloud, 1)
        advice = (
            "low: no protection needed"
            if uv < 3
            else "moderate: wear sunscreen"
            if uv < 6
            else "high: seek shade at midday"
            if uv < 8
            else "very high: avoid the midday sun"
        )
        return {"city": place.name, "date": day.isoformat(), "uv_index": uv, "advice": advice}

    @tool
    def get_sunrise_sunset(city: str, date: str) -> J:
        return _sun(_city(city), _date(date))

    @tool
    def get_weather_alerts(city: str, date: str) -> J:
        place, day = _city(city), _date(date)
        model = _weather_day(place, day)
        checks = (
            (model["high_c"] > 33, "heat advisory", "Very high temperatures expected."),
            (model["low_c"] < -8, "extreme cold warning", "Dangerously low temperatures."),
            (model["precipitation_mm"] > 12, "heavy rain warning", "Localised flooding possible."),
            (model["wind_kmh"] > 32, "wind advisory", "Strong gusts; secure loose objects."),
            (model["condition"] == "snow", "winter weather advisory", "Snow on roads."),
            (model["condition"] == "thunderstorms", "thunderstorm watch", "Lightning likely."),
        )
        alerts = [{"type": kind, "message": text} for hit, kind, text in checks if hit]
        return {"city": place.name, "date": day.isoformat(), "alerts": alerts}

    @tool
    def compare_weather(city_a: str, city_b: str, date: str, units: str = "metric") -> J:
        day = _date(date)
        a, b = daily(_city(city_a), day, units), daily(_city(city_b), day, units)
        return {
            _city(city_a).name: a,
            _city(city_b).name: b,
            "warmer": _city(city_a).name if a["high"] >= b["high"] else _city(city_b).name,
            "high_difference": round(abs(a["high"] - b["high"]), 1),
        }

    @tool
    def get_weather_by_coordinates(latitude: float, longitude: float, units: str = "metric") -> J:
        nearest = min(CITIES, key=lambda c: _distance_km((latitude, longitude), (c.lat, c.lon)))
        km = _distance_km((latitude, longitude), (nearest.lat, nearest.lon))
        if km > 300:
            raise ValueError(
                f"no weather station within 300 km (nearest: {nearest.name}, {km:.0f} km)"
            )
        return {
            "station": nearest.name,
            "distance_km": round(km, 1),
            **get_current_weather(nearest.name, units),
        }
