"""Dates and time zones of the demo world: ISO parsing and UTC offsets with daylight saving."""

from __future__ import annotations

from datetime import date, datetime, timedelta

from dtl_notebook.demo.derive import fold
from dtl_notebook.demo.places import CITY_ALIASES, CITY_INDEX
from dtl_notebook.demo.world_data import demo_data

# Standard UTC offsets with daylight-saving rules for Europe, North America, Australia and NZ.
TIMEZONES = demo_data().timezones


def parse_date(value: str, what: str = "date") -> date:
    try:
        return date.fromisoformat(value.strip())
    except (AttributeError, ValueError):
        raise ValueError(f"{what} must be an ISO date YYYY-MM-DD, got {value!r}") from None


def parse_datetime(value: str, what: str = "datetime") -> datetime:
    try:
        parsed = datetime.fromisoformat(value.strip())
    except (AttributeError, ValueError):
        raise ValueError(
            f"{what} must be an ISO datetime YYYY-MM-DDTHH:MM, got {value!r}"
        ) from None
    if parsed.tzinfo is not None:
        raise ValueError(f"{what} must be a local time without a UTC offset, got {value!r}")
    return parsed


def _nth_weekday(year: int, month: int, weekday: int, n: int) -> date:
    """The n-th given weekday (0=Monday) of a month; n=-1 is the last one."""
    if n > 0:
        first = date(year, month, 1)
        return first + timedelta(days=(weekday - first.weekday()) % 7 + 7 * (n - 1))
    last = (date(year + month // 12, month % 12 + 1, 1)) - timedelta(days=1)
    return last - timedelta(days=(last.weekday() - weekday) % 7)


def _at(day: date, hours: int) -> datetime:
    return datetime.combine(day, datetime.min.time()) + timedelta(hours=hours)


def _in_dst(rule: str | None, utc: datetime, standard: float) -> bool:
    if rule is None:
        return False
    year = utc.year
    local = utc + timedelta(hours=standard)
    if rule == "eu":  # last Sunday of March to last Sunday of October, 01:00 UTC
        return _at(_nth_weekday(year, 3, 6, -1), 1) <= utc < _at(_nth_weekday(year, 10, 6, -1), 1)
    if rule == "us":  # second Sunday of March 02:00 to first Sunday of November 02:00 (DST)
        return _at(_nth_weekday(year, 3, 6, 2), 2) <= local < _at(_nth_weekday(year, 11, 6, 1), 1)
    # southern hemisphere: DST from spring (Sep/Oct) until the first Sunday of April
    begin_month, begin_n = (10, 1) if rule == "au" else (9, -1)
    start = _at(_nth_weekday(year, begin_month, 6, begin_n), 2)
    end = _at(_nth_weekday(year, 4, 6, 1), 2)
    return not (end <= local < start)


def zone(name: str) -> str:
    """An IANA zone name from a zone name, 'UTC'/'GMT', or a known city."""
    key = fold(name).replace(" ", "_")
    for candidate in TIMEZONES:
        if candidate.lower() == key:
            return candidate
    if key in ("gmt", "z", "utc"):
        return "UTC"
    city = CITY_INDEX.get(CITY_ALIASES.get(fold(name), fold(name)))
    if city is not None:
        return city.tz
    raise ValueError(
        f"unknown time zone {name!r}: use an IANA name such as Europe/Paris, 'UTC', "
        "or a known city name"
    )


def utc_offset(zone_name: str, utc: datetime) -> float:
    standard, rule = TIMEZONES[zone_name]
    return standard + (1 if _in_dst(rule, utc, standard) else 0)


def local_to_utc(local: datetime, zone_name: str) -> datetime:
    standard, _ = TIMEZONES[zone_name]
    guess = local - timedelta(hours=standard)
    return local - timedelta(hours=utc_offset(zone_name, guess - timedelta(hours=1)))


def offset_label(hours: float) -> str:
    sign = "+" if hours >= 0 else "-"
    whole = int(abs(hours) * 60)
    return f"UTC{sign}{whole // 60:02d}:{whole % 60:02d}"
