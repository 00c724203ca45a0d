"""Dates and times for the demo tools: parsing, public holidays, business days, time zones."""

from __future__ import annotations

import re
from datetime import date, datetime, timedelta

from dtl_notebook.live.demo_tools.fakes import _fold
from dtl_notebook.live.demo_tools.places import _ALIASES, _CITY_INDEX
from dtl_notebook.live.demo_tools.tables import demo_data

DATA = demo_data()

DAY_NAMES = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday")
MONTH_NAMES = (
    "January February March April May June July August September October November December"
).split()


def _date(value: str, what: str = "date") -> date:
    try:
        return date.fromisoformat(value.strip())
    except (AttributeError, ValueError):
        raise ValueError(f"{what} must be an ISO date YYYY-MM-DD, got {value!r}") from None


def _datetime(value: str, what: str = "datetime") -> datetime:
    try:
        parsed = datetime.fromisoformat(value.strip())
    except (AttributeError, ValueError):
        raise ValueError(
            f"{what} must be an ISO datetime YYYY-MM-DDTHH:MM, got {value!r}"
        ) from None
    if parsed.tzinfo is not None:
        raise ValueError(f"{what} must be a local time without a UTC offset, got {value!r}")
    return parsed


def _clock(value: str, what: str = "time") -> int:
    """Minutes after midnight of an HH:MM time."""
    match = re.fullmatch(r"([01]?\d|2[0-3]):([0-5]\d)", value.strip())
    if not match:
        raise ValueError(f"{what} must be HH:MM in 24-hour time, got {value!r}")
    return int(match[1]) * 60 + int(match[2])


def _hhmm(minutes: float) -> str:
    total = round(minutes) % (24 * 60)
    return f"{total // 60:02d}:{total % 60:02d}"


def _span(minutes: int) -> str:
    return f"{minutes // 60}h {minutes % 60:02d}m"


def _nth_weekday(year: int, month: int, weekday: int, n: int) -> date:
    """The n-th given weekday (0=Monday) of a month; n=-1 is the last one."""
    if n > 0:
        first = date(year, month, 1)
        return first + timedelta(days=(weekday - first.weekday()) % 7 + 7 * (n - 1))
    last = (date(year + month // 12, month % 12 + 1, 1)) - timedelta(days=1)
    return last - timedelta(days=(last.weekday() - weekday) % 7)


def _easter(year: int) -> date:
    """Gregorian Easter Sunday (the anonymous Gregorian algorithm)."""
    a, b, c = year % 19, year // 100, year % 100
    d, e = divmod(b, 4)
    g = (8 * b + 13) // 25
    h = (19 * a + b - d - g + 15) % 30
    i, k = divmod(c, 4)
    rest = (32 + 2 * e + 2 * i - h - k) % 7
    m = (a + 11 * h + 22 * rest) // 451
    month, day = divmod(h + rest - 7 * m + 114, 31)
    return date(year, month, day + 1)


# Holiday rules: ("fixed", month, day), ("easter", offset days), ("nth", month, weekday, n).
_HOLIDAYS = DATA.holidays
_HOLIDAY_ALIASES = DATA.holiday_aliases


def _holiday_country(country: str) -> str:
    key = _fold(country)
    for name in _HOLIDAYS:
        if _fold(name) == key:
            return name
    if key in _HOLIDAY_ALIASES:
        return _HOLIDAY_ALIASES[key]
    raise ValueError(
        f"no holiday calendar for {country!r}; available: {', '.join(_HOLIDAYS)} "
        "(or US, UK, FR, DE, JP)"
    )


def _holidays(country: str, year: int) -> dict[date, str]:
    if not 1900 <= year <= 2200:
        raise ValueError(f"year must be between 1900 and 2200, got {year}")
    out: dict[date, str] = {}
    for name, rule in _HOLIDAYS[_holiday_country(country)]:
        if rule[0] == "fixed":
            day = date(year, rule[1], rule[2])
        elif rule[0] == "easter":
            day = _easter(year) + timedelta(days=rule[1])
        else:
            day = _nth_weekday(year, rule[1], rule[2], rule[3])
        out[day] = name
    return dict(sorted(out.items()))


def _business_days(start: date, end: date, country: str | None = None) -> int:
    """Weekdays (minus public holidays of `country`) from start (inclusive) to end (exclusive)."""
    sign, (lo, hi) = (1, (start, end)) if start <= end else (-1, (end, start))
    if (hi - lo).days > 366 * 20:
        raise ValueError("date range is limited to 20 years")
    closed: set[date] = set()
    if country:
        for year in range(lo.year, hi.year + 1):
            closed.update(_holidays(country, year))
    count = sum(
        1
        for i in range((hi - lo).days)
        if (lo + timedelta(days=i)).weekday() < 5 and lo + timedelta(days=i) not in closed
    )
    return sign * count


# Standard UTC offsets with daylight-saving rules for Europe, North America, Australia and NZ.
TIMEZONES = DATA.timezones


def _in_dst(rule: str | None, utc: datetime, standard: float) -> bool:
    if rule is None:
        return False
    year = utc.year
    local = utc + timedelta(hours=standard)
    if rule == "eu":  # last Sunday of March to last Sunday of October, 01:00 UTC
        start = datetime.combine(_nth_weekday(year, 3, 6, -1), datetime.min.time()) + timedelta(
            hours=1
        )
        end = datetime.combine(_nth_weekday(year, 10, 6, -1), datetime.min.time()) + timedelta(
            hours=1
        )
        return start <= utc < end
    if rule == "us":  # second Sunday of March 02:00 to first Sunday of November 02:00 (DST)
        start = datetime.combine(_nth_weekday(year, 3, 6, 2), datetime.min.time()) + timedelta(
            hours=2
        )
        end = datetime.combine(_nth_weekday(year, 11, 6, 1), datetime.min.time()) + timedelta(
            hours=1
        )
        return start <= local < end
    # southern hemisphere: DST from spring (Sep/Oct) until the first Sunday of April
    begin_month, begin_n = (10, 1) if rule == "au" else (9, -1)
    start = datetime.combine(_nth_weekday(year, begin_month, 6, begin_n), datetime.min.time())
    end = datetime.combine(_nth_weekday(year, 4, 6, 1), datetime.min.time())
    hours2 = timedelta(hours=2)
    return not (end + hours2 <= local < start + hours2)


def _zone(name: str) -> str:
    """An IANA zone name from a zone name, 'UTC'/'GMT', or a known city."""
    key = _fold(name).replace(" ", "_")
    for zone in TIMEZONES:
        if zone.lower() == key:
            return zone
    if key in ("gmt", "z", "utc"):
        return "UTC"
    city = _CITY_INDEX.get(_ALIASES.get(_fold(name), _fold(name)))
    if city is not None:
        return city.tz
    raise ValueError(
        f"unknown time zone {name!r}: use an IANA name such as Europe/Paris, 'UTC', "
        "or a known city name"
    )


def _utc_offset(zone: str, utc: datetime) -> float:
    standard, rule = TIMEZONES[zone]
    return standard + (1 if _in_dst(rule, utc, standard) else 0)


def _local_to_utc(local: datetime, zone: str) -> datetime:
    standard, _ = TIMEZONES[zone]
    guess = local - timedelta(hours=standard)
    return local - timedelta(hours=_utc_offset(zone, guess - timedelta(hours=1)))


def _offset_label(hours: float) -> str:
    sign = "+" if hours >= 0 else "-"
    whole = int(abs(hours) * 60)
    return f"UTC{sign}{whole // 60:02d}:{whole % 60:02d}"
