"""The time namespace: time zones, date arithmetic, business days and durations."""

from __future__ import annotations

import re
from datetime import datetime, timedelta
from typing import Any

from dtl_notebook.live.demo_tools.registry import J, _Domain
from dtl_notebook.live.demo_tools.tables import demo_data
from dtl_notebook.live.demo_tools.timekeeping import (
    DAY_NAMES,
    MONTH_NAMES,
    TIMEZONES,
    _business_days,
    _date,
    _datetime,
    _holiday_country,
    _holidays,
    _local_to_utc,
    _offset_label,
    _utc_offset,
    _zone,
)
from dtl_notebook.live.demo_tools.world import _World

DATA = demo_data()
_DURATION_UNITS = DATA.duration_units


def _time(tool: _Domain, world: _World) -> None:
    @tool
    def convert_timezone(datetime: str, from_timezone: str, to_timezone: str) -> J:
        source, target = _zone(from_timezone), _zone(to_timezone)
        utc = _local_to_utc(_datetime(datetime), source)
        result = utc + timedelta(hours=_utc_offset(target, utc))
        return {
            "from": {
                "datetime": _datetime(datetime).isoformat(timespec="minutes"),
                "timezone": source,
                "utc_offset": _offset_label(_utc_offset(source, utc)),
            },
            "to": {
                "datetime": result.isoformat(timespec="minutes"),
                "timezone": target,
                "utc_offset": _offset_label(_utc_offset(target, utc)),
            },
            "utc": utc.isoformat(timespec="minutes"),
        }

    @tool
    def get_utc_offset(timezone: str, date: str) -> J:
        zone = _zone(timezone)
        noon = datetime.combine(_date(date), datetime.min.time()) + timedelta(hours=12)
        standard = TIMEZONES[zone][0]
        offset = _utc_offset(zone, noon)
        return {
            "timezone": zone,
            "date": noon.date().isoformat(),
            "utc_offset": _offset_label(offset),
            "offset_hours": offset,
            "daylight_saving": offset != standard,
        }

    @tool
    def list_time_zones() -> J:
        return {
            "timezones": [
                {"timezone": z, "standard_offset": _offset_label(o), "observes_dst": r is not None}
                for z, (o, r) in TIMEZONES.items()
            ]
        }

    @tool
    def days_between_dates(start_date: str, end_date: str) -> J:
        days = (_date(end_date, "end_date") - _date(start_date, "start_date")).days
        return {"days": days, "weeks": round(days / 7, 2)}

    @tool
    def add_days_to_date(date: str, days: int) -> J:
        try:
            result = _date(date) + timedelta(days=days)
        except OverflowError:
            raise ValueError("the resulting date is out of range") from None
        return {"date": result.isoformat(), "weekday": DAY_NAMES[result.weekday()]}

    @tool
    def get_day_of_week(date: str) -> J:
        day = _date(date)
        return {
            "date": day.isoformat(),
            "weekday": DAY_NAMES[day.weekday()],
            "is_weekend": day.weekday() >= 5,
        }

    @tool
    def business_days_between(start_date: str, end_date: str, country: str | None = None) -> J:
        days = _business_days(_date(start_date, "start_date"), _date(end_date, "end_date"), country)
        return {
            "business_days": days,
            "holidays_from": _holiday_country(country) if country else None,
        }

    @tool
    def add_business_days(date: str, days: int, country: str | None = None) -> J:
        current = _date(date)
        if not 0 <= days <= 1000:
            raise ValueError("days must be between 0 and 1000")
        closed: set[Any] = set()
        if country:
            for year in range(current.year, current.year + 5):
                closed.update(_holidays(country, year))
        left = days
        while left:
            current += timedelta(days=1)
            if current.weekday() < 5 and current not in closed:
                left -= 1
        return {"date": current.isoformat(), "weekday": DAY_NAMES[current.weekday()]}

    @tool
    def is_leap_year(year: int) -> J:
        leap = year % 4 == 0 and (year % 100 != 0 or year % 400 == 0)
        return {"year": year, "leap_year": leap, "days": 366 if leap else 365}

    @tool
    def get_iso_week_number(date: str) -> J:
        year, week, weekday = _date(date).isocalendar()
        return {"iso_year": year, "iso_week": week, "iso_weekday": weekday}

    @tool
    def format_date(date: str, style: str = "long") -> J:
        d = _date(date)
        month = MONTH_NAMES[d.month - 1]
        out = {
            "iso": d.isoformat(),
            "us": f"{d.month:02d}/{d.day:02d}/{d.year}",
            "eu": f"{d.day:02d}/{d.month:02d}/{d.year}",
            "long": f"{DAY_NAMES[d.weekday()]}, {d.day} {month} {d.year}",
            "short": f"{d.day} {month[:3]} {d.year}",
        }[style]
        return {"formatted": out}

    @tool
    def parse_duration(duration: str) -> J:
        text = duration.strip().lower()
        parts = re.findall(r"(\d+(?:\.\d+)?)\s*([a-z]+)", text)
        leftover = re.sub(r"(\d+(?:\.\d+)?)\s*([a-z]+)|[\s,]|and", "", text)
        if not parts or leftover or any(unit not in _DURATION_UNITS for _, unit in parts):
            raise ValueError(
                f"cannot parse duration {duration!r}; try e.g. '1h30m' or '2 days 3 hours'"
            )
        seconds = sum(float(n) * _DURATION_UNITS[u] for n, u in parts)
        return {
            "seconds": seconds,
            "minutes": round(seconds / 60, 4),
            "hours": round(seconds / 3600, 4),
        }
