"""Implementations of the demo catalog's tools (see `dtl_notebook.live.catalog`).

The tool definitions (names, namespaces, descriptions, parameter schemas) are data, in
data/demo_catalog.json; this module holds the behaviour and the fake data it draws on, each
implementation registered under its tool's name. Implementations are deterministic: fake data
comes from a stable hash of the arguments, never from a clock or an unseeded random generator,
so two catalogs answer the same call the same way. Stateful tools (files, notes, email drafts,
calendar, tickets, stock, bookings...) keep their state in a `_World` created by each
`implementations()` call, so two catalogs never share state.
"""

from __future__ import annotations

import ast
import base64
import csv
import difflib
import fnmatch
import hashlib
import io
import json
import math
import operator
import posixpath
import re
import statistics
import unicodedata
from collections.abc import Callable, Iterable, Sequence
from datetime import date, datetime, timedelta
from functools import cached_property
from typing import Any, NamedTuple, TypeVar

from jsonschema import Draft202012Validator
from jsonschema.exceptions import SchemaError

J = dict[str, Any]
Fn = Callable[..., Any]
T = TypeVar("T")
F = TypeVar("F", bound=Fn)


# -- implementation registry ---------------------------------------------------------------


class _Domain:
    """Collects the implementations of one namespace by tool name: `@tool` on a function
    registers it under the function's name, `tool.add(name, fn)` under an explicit one. The
    definitions (descriptions and parameter schemas) live in data/demo_catalog.json."""

    def __init__(self, namespace: str, out: dict[str, tuple[str, Fn]]) -> None:
        self.namespace = namespace
        self.out = out

    def add(self, name: str, fn: Fn) -> None:
        if name in self.out:
            raise ValueError(f"implementation {name!r} registered twice")
        self.out[name] = (self.namespace, fn)

    def __call__(self, fn: F) -> F:
        self.add(fn.__name__, fn)
        return fn


# -- deterministic fake data ----------------------------------------------------------------


def _hash(*parts: object) -> int:
    """A stable 64-bit hash of the parts (unlike hash(), the same in every process)."""
    data = "\x1f".join(str(p) for p in parts).encode()
    return int.from_bytes(hashlib.blake2b(data, digest_size=8).digest(), "big")


def _unit(*parts: object) -> float:
    """A stable number in [0, 1) derived from the parts."""
    return _hash(*parts) / 2**64


def _pick(options: Sequence[T], *parts: object) -> T:
    return options[_hash(*parts) % len(options)]


def _sample(options: Sequence[T], k: int, *parts: object) -> list[T]:
    """k distinct options in a stable pseudo-random order."""
    return sorted(options, key=lambda o: _hash(*parts, o))[:k]


def _fold(text: str) -> str:
    """Lower case, accents removed, spaces collapsed: the key for name lookups."""
    plain = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode()
    return " ".join(plain.lower().replace("_", " ").split())


def _words(text: str) -> list[str]:
    return re.findall(r"[a-z0-9]+", _fold(text))


STOPWORDS = frozenset(
    "a an and are as at be but by can do does for from has have how i in is it its my of on or "
    "that the this to was were what when will with you your we our".split()
)


def _match_score(query: str, *fields: str) -> int:
    """How many query words (stop words aside) occur in the fields (0: no match)."""
    haystack = {_stem(w) for w in _words(" ".join(fields))}
    return sum(1 for w in set(_words(query)) - STOPWORDS if _stem(w) in haystack)


def _stem(word: str) -> str:
    """A crude plural stem, so that 'invoices' matches 'invoice'."""
    return word[:-1] if len(word) > 3 and word.endswith("s") and not word.endswith("ss") else word


def _money(value: float) -> float:
    return round(value + 0.0, 2)


def _finite(value: float) -> float:
    if isinstance(value, float) and not math.isfinite(value):
        raise ValueError("the result is too large to represent")
    return value


FIRST_NAMES = (
    "Alice Bruno Chloe Daniel Elena Farid Grace Hiro Ines Jonas Kofi Lena Marco Nadia Omar "
    "Priya Quentin Rosa Sven Tara Umar Vera Wei Xavier Yuki Zoe Amara Ben Carmen Diego"
).split()
LAST_NAMES = (
    "Martin Schmidt Rossi Tanaka Okafor Silva Novak Dubois Kim Patel Larsen Garcia Cohen Ito "
    "Moreau Fischer Haddad Nguyen Kowalski Santos Berg Costa Mensah Ramos Weber Sato Ali Brown"
).split()
COMPANY_WORDS = (
    "Acme Globex Initech Umbrella Stark Wayne Hooli Vandelay Soylent Tyrell Cyberdyne Wonka "
    "Aperture Massive Nimbus Orbital Pioneer Quantum Redwood Summit"
).split()
COMPANY_SUFFIXES = ("Corp", "Ltd", "GmbH", "Labs", "Industries", "Group", "SA", "Inc")


def _person(*parts: object) -> tuple[str, str]:
    return _pick(FIRST_NAMES, *parts, "first"), _pick(LAST_NAMES, *parts, "last")


# -- dates and times ------------------------------------------------------------------------

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
_HOLIDAYS: dict[str, tuple[tuple[str, tuple[Any, ...]], ...]] = {
    "United States": (
        ("New Year's Day", ("fixed", 1, 1)),
        ("Martin Luther King Jr. Day", ("nth", 1, 0, 3)),
        ("Presidents' Day", ("nth", 2, 0, 3)),
        ("Memorial Day", ("nth", 5, 0, -1)),
        ("Juneteenth", ("fixed", 6, 19)),
        ("Independence Day", ("fixed", 7, 4)),
        ("Labor Day", ("nth", 9, 0, 1)),
        ("Veterans Day", ("fixed", 11, 11)),
        ("Thanksgiving Day", ("nth", 11, 3, 4)),
        ("Christmas Day", ("fixed", 12, 25)),
    ),
    "United Kingdom": (
        ("New Year's Day", ("fixed", 1, 1)),
        ("Good Friday", ("easter", -2)),
        ("Easter Monday", ("easter", 1)),
        ("Early May Bank Holiday", ("nth", 5, 0, 1)),
        ("Spring Bank Holiday", ("nth", 5, 0, -1)),
        ("Summer Bank Holiday", ("nth", 8, 0, -1)),
        ("Christmas Day", ("fixed", 12, 25)),
        ("Boxing Day", ("fixed", 12, 26)),
    ),
    "France": (
        ("Jour de l'an", ("fixed", 1, 1)),
        ("Lundi de Pâques", ("easter", 1)),
        ("Fête du Travail", ("fixed", 5, 1)),
        ("Victoire 1945", ("fixed", 5, 8)),
        ("Ascension", ("easter", 39)),
        ("Lundi de Pentecôte", ("easter", 50)),
        ("Fête nationale", ("fixed", 7, 14)),
        ("Assomption", ("fixed", 8, 15)),
        ("Toussaint", ("fixed", 11, 1)),
        ("Armistice 1918", ("fixed", 11, 11)),
        ("Noël", ("fixed", 12, 25)),
    ),
    "Germany": (
        ("Neujahr", ("fixed", 1, 1)),
        ("Karfreitag", ("easter", -2)),
        ("Ostermontag", ("easter", 1)),
        ("Tag der Arbeit", ("fixed", 5, 1)),
        ("Christi Himmelfahrt", ("easter", 39)),
        ("Pfingstmontag", ("easter", 50)),
        ("Tag der Deutschen Einheit", ("fixed", 10, 3)),
        ("1. Weihnachtstag", ("fixed", 12, 25)),
        ("2. Weihnachtstag", ("fixed", 12, 26)),
    ),
    "Japan": (
        ("New Year's Day", ("fixed", 1, 1)),
        ("Coming of Age Day", ("nth", 1, 0, 2)),
        ("National Foundation Day", ("fixed", 2, 11)),
        ("Emperor's Birthday", ("fixed", 2, 23)),
        ("Showa Day", ("fixed", 4, 29)),
        ("Constitution Memorial Day", ("fixed", 5, 3)),
        ("Greenery Day", ("fixed", 5, 4)),
        ("Children's Day", ("fixed", 5, 5)),
        ("Marine Day", ("nth", 7, 0, 3)),
        ("Mountain Day", ("fixed", 8, 11)),
        ("Respect for the Aged Day", ("nth", 9, 0, 3)),
        ("Sports Day", ("nth", 10, 0, 2)),
        ("Culture Day", ("fixed", 11, 3)),
        ("Labour Thanksgiving Day", ("fixed", 11, 23)),
    ),
}
_HOLIDAY_ALIASES = {
    "us": "United States",
    "usa": "United States",
    "uk": "United Kingdom",
    "gb": "United Kingdom",
    "fr": "France",
    "de": "Germany",
    "jp": "Japan",
}


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
TIMEZONES: dict[str, tuple[float, str | None]] = {
    "UTC": (0, None),
    "Europe/London": (0, "eu"),
    "Europe/Lisbon": (0, "eu"),
    "Europe/Paris": (1, "eu"),
    "Europe/Berlin": (1, "eu"),
    "Europe/Madrid": (1, "eu"),
    "Europe/Rome": (1, "eu"),
    "Europe/Amsterdam": (1, "eu"),
    "Europe/Stockholm": (1, "eu"),
    "Europe/Moscow": (3, None),
    "Europe/Istanbul": (3, None),
    "Africa/Cairo": (2, None),
    "Africa/Nairobi": (3, None),
    "Africa/Lagos": (1, None),
    "Africa/Johannesburg": (2, None),
    "Asia/Dubai": (4, None),
    "Asia/Kolkata": (5.5, None),
    "Asia/Bangkok": (7, None),
    "Asia/Singapore": (8, None),
    "Asia/Shanghai": (8, None),
    "Asia/Seoul": (9, None),
    "Asia/Tokyo": (9, None),
    "Australia/Sydney": (10, "au"),
    "Pacific/Auckland": (12, "nz"),
    "America/Sao_Paulo": (-3, None),
    "America/Argentina/Buenos_Aires": (-3, None),
    "America/New_York": (-5, "us"),
    "America/Toronto": (-5, "us"),
    "America/Chicago": (-6, "us"),
    "America/Mexico_City": (-6, None),
    "America/Los_Angeles": (-8, "us"),
}


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


# -- places ---------------------------------------------------------------------------------


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


CITIES: tuple[_City, ...] = tuple(
    _City(*row)
    for row in (
        ("Paris", "France", 48.8566, 2.3522, "Europe/Paris", "CDG", 12.5, 8.0, 0.35),
        ("London", "United Kingdom", 51.5074, -0.1278, "Europe/London", "LHR", 11.5, 7.0, 0.42),
        ("Berlin", "Germany", 52.52, 13.405, "Europe/Berlin", "BER", 10.0, 9.5, 0.33),
        ("Madrid", "Spain", 40.4168, -3.7038, "Europe/Madrid", "MAD", 15.0, 10.0, 0.2),
        ("Rome", "Italy", 41.9028, 12.4964, "Europe/Rome", "FCO", 15.5, 8.5, 0.25),
        ("Amsterdam", "Netherlands", 52.3676, 4.9041, "Europe/Amsterdam", "AMS", 10.5, 7.0, 0.45),
        ("Lisbon", "Portugal", 38.7223, -9.1393, "Europe/Lisbon", "LIS", 17.0, 5.5, 0.25),
        ("Stockholm", "Sweden", 59.3293, 18.0686, "Europe/Stockholm", "ARN", 7.5, 10.0, 0.33),
        ("Moscow", "Russia", 55.7558, 37.6173, "Europe/Moscow", "SVO", 6.0, 13.0, 0.35),
        ("Istanbul", "Turkey", 41.0082, 28.9784, "Europe/Istanbul", "IST", 15.0, 9.0, 0.3),
        ("Cairo", "Egypt", 30.0444, 31.2357, "Africa/Cairo", "CAI", 22.5, 7.0, 0.02),
        ("Nairobi", "Kenya", -1.2921, 36.8219, "Africa/Nairobi", "NBO", 19.0, 1.5, 0.3),
        ("Lagos", "Nigeria", 6.5244, 3.3792, "Africa/Lagos", "LOS", 27.0, 1.5, 0.45),
        (
            "Cape Town",
            "South Africa",
            -33.9249,
            18.4241,
            "Africa/Johannesburg",
            "CPT",
            17.0,
            4.0,
            0.25,
        ),
        ("Dubai", "United Arab Emirates", 25.2048, 55.2708, "Asia/Dubai", "DXB", 28.0, 7.0, 0.02),
        ("Mumbai", "India", 19.076, 72.8777, "Asia/Kolkata", "BOM", 27.5, 2.5, 0.35),
        ("Delhi", "India", 28.6139, 77.209, "Asia/Kolkata", "DEL", 25.0, 8.5, 0.2),
        ("Bangkok", "Thailand", 13.7563, 100.5018, "Asia/Bangkok", "BKK", 28.5, 1.5, 0.4),
        ("Singapore", "Singapore", 1.3521, 103.8198, "Asia/Singapore", "SIN", 27.5, 0.8, 0.5),
        ("Beijing", "China", 39.9042, 116.4074, "Asia/Shanghai", "PEK", 12.5, 15.0, 0.2),
        ("Shanghai", "China", 31.2304, 121.4737, "Asia/Shanghai", "PVG", 16.5, 11.0, 0.35),
        ("Seoul", "South Korea", 37.5665, 126.978, "Asia/Seoul", "ICN", 12.5, 14.0, 0.3),
        ("Tokyo", "Japan", 35.6762, 139.6503, "Asia/Tokyo", "HND", 16.0, 10.0, 0.33),
        ("Sydney", "Australia", -33.8688, 151.2093, "Australia/Sydney", "SYD", 18.0, 5.0, 0.33),
        ("Auckland", "New Zealand", -36.8485, 174.7633, "Pacific/Auckland", "AKL", 15.5, 4.0, 0.4),
        ("New York", "United States", 40.7128, -74.006, "America/New_York", "JFK", 13.0, 12.0, 0.3),
        ("Chicago", "United States", 41.8781, -87.6298, "America/Chicago", "ORD", 10.0, 14.0, 0.3),
        (
            "Los Angeles",
            "United States",
            34.0522,
            -118.2437,
            "America/Los_Angeles",
            "LAX",
            18.5,
            4.5,
            0.1,
        ),
        (
            "San Francisco",
            "United States",
            37.7749,
            -122.4194,
            "America/Los_Angeles",
            "SFO",
            14.5,
            3.0,
            0.2,
        ),
        ("Toronto", "Canada", 43.6532, -79.3832, "America/Toronto", "YYZ", 9.0, 13.0, 0.3),
        ("Mexico City", "Mexico", 19.4326, -99.1332, "America/Mexico_City", "MEX", 16.5, 3.0, 0.3),
        ("São Paulo", "Brazil", -23.5505, -46.6333, "America/Sao_Paulo", "GRU", 20.0, 3.5, 0.4),
        (
            "Buenos Aires",
            "Argentina",
            -34.6037,
            -58.3816,
            "America/Argentina/Buenos_Aires",
            "EZE",
            18.0,
            6.5,
            0.27,
        ),
    )
)
_CITY_INDEX = {_fold(c.name): c for c in CITIES}
_ALIASES = {
    "nyc": "new york",
    "new york city": "new york",
    "la": "los angeles",
    "sf": "san francisco",
    "bombay": "mumbai",
    "new delhi": "delhi",
    "peking": "beijing",
}
_AIRPORTS = {c.iata: c for c in CITIES}


def _city(name: str) -> _City:
    key = _fold(name.split(",")[0]) if isinstance(name, str) else ""
    city = _CITY_INDEX.get(_ALIASES.get(key, key)) or _AIRPORTS.get(key.upper())
    if city is None:
        known = ", ".join(c.name for c in CITIES)
        raise ValueError(f"unknown city {name!r}; known cities: {known}")
    return city


class _Country(NamedTuple):
    name: str
    code: str
    capital: str
    currency: str
    continent: str
    calling_code: str
    population_millions: float
    languages: str


COUNTRIES: tuple[_Country, ...] = tuple(
    _Country(*row)
    for row in (
        ("France", "FR", "Paris", "EUR", "Europe", "+33", 68.2, "French"),
        ("United Kingdom", "GB", "London", "GBP", "Europe", "+44", 67.7, "English"),
        ("Germany", "DE", "Berlin", "EUR", "Europe", "+49", 84.4, "German"),
        ("Spain", "ES", "Madrid", "EUR", "Europe", "+34", 48.6, "Spanish"),
        ("Italy", "IT", "Rome", "EUR", "Europe", "+39", 58.9, "Italian"),
        ("Netherlands", "NL", "Amsterdam", "EUR", "Europe", "+31", 17.9, "Dutch"),
        ("Portugal", "PT", "Lisbon", "EUR", "Europe", "+351", 10.4, "Portuguese"),
        ("Sweden", "SE", "Stockholm", "SEK", "Europe", "+46", 10.5, "Swedish"),
        ("Switzerland", "CH", "Bern", "CHF", "Europe", "+41", 8.8, "German, French, Italian"),
        ("Russia", "RU", "Moscow", "RUB", "Europe", "+7", 146.0, "Russian"),
        ("Turkey", "TR", "Ankara", "TRY", "Asia", "+90", 85.3, "Turkish"),
        ("Egypt", "EG", "Cairo", "EGP", "Africa", "+20", 112.7, "Arabic"),
        ("Kenya", "KE", "Nairobi", "KES", "Africa", "+254", 55.1, "Swahili, English"),
        ("Nigeria", "NG", "Abuja", "NGN", "Africa", "+234", 223.8, "English"),
        (
            "South Africa",
            "ZA",
            "Pretoria",
            "ZAR",
            "Africa",
            "+27",
            60.4,
            "Zulu, Xhosa, Afrikaans, English",
        ),
        ("United Arab Emirates", "AE", "Abu Dhabi", "AED", "Asia", "+971", 9.5, "Arabic"),
        ("India", "IN", "New Delhi", "INR", "Asia", "+91", 1428.0, "Hindi, English"),
        ("Thailand", "TH", "Bangkok", "THB", "Asia", "+66", 71.8, "Thai"),
        (
            "Singapore",
            "SG",
            "Singapore",
            "SGD",
            "Asia",
            "+65",
            5.9,
            "English, Malay, Mandarin, Tamil",
        ),
        ("China", "CN", "Beijing", "CNY", "Asia", "+86", 1410.0, "Mandarin"),
        ("South Korea", "KR", "Seoul", "KRW", "Asia", "+82", 51.7, "Korean"),
        ("Japan", "JP", "Tokyo", "JPY", "Asia", "+81", 124.5, "Japanese"),
        ("Australia", "AU", "Canberra", "AUD", "Oceania", "+61", 26.6, "English"),
        ("New Zealand", "NZ", "Wellington", "NZD", "Oceania", "+64", 5.2, "English, Maori"),
        ("United States", "US", "Washington, D.C.", "USD", "North America", "+1", 334.9, "English"),
        ("Canada", "CA", "Ottawa", "CAD", "North America", "+1", 40.1, "English, French"),
        ("Mexico", "MX", "Mexico City", "MXN", "North America", "+52", 128.5, "Spanish"),
        ("Brazil", "BR", "Brasília", "BRL", "South America", "+55", 216.4, "Portuguese"),
        ("Argentina", "AR", "Buenos Aires", "ARS", "South America", "+54", 46.6, "Spanish"),
    )
)
_COUNTRY_ALIASES = {"usa": "US", "uk": "GB", "england": "GB", "holland": "NL", "uae": "AE"}


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


# -- money ----------------------------------------------------------------------------------

# Fixed reference rates: units of each currency per 1 USD (not live market data).
RATES_PER_USD: dict[str, float] = {
    "USD": 1.0,
    "EUR": 0.92,
    "GBP": 0.79,
    "JPY": 150.0,
    "CHF": 0.88,
    "CAD": 1.36,
    "AUD": 1.52,
    "NZD": 1.65,
    "CNY": 7.2,
    "INR": 83.0,
    "SGD": 1.34,
    "KRW": 1350.0,
    "THB": 36.0,
    "AED": 3.6725,
    "SEK": 10.5,
    "RUB": 92.0,
    "TRY": 32.0,
    "EGP": 47.0,
    "KES": 130.0,
    "NGN": 1500.0,
    "ZAR": 18.5,
    "MXN": 17.0,
    "BRL": 5.0,
    "ARS": 870.0,
}
CURRENCY_NAMES = {
    "USD": ("US dollar", "$", 2),
    "EUR": ("Euro", "€", 2),
    "GBP": ("Pound sterling", "£", 2),
    "JPY": ("Japanese yen", "¥", 0),
    "CHF": ("Swiss franc", "CHF ", 2),
    "CAD": ("Canadian dollar", "CA$", 2),
    "AUD": ("Australian dollar", "A$", 2),
    "NZD": ("New Zealand dollar", "NZ$", 2),
    "CNY": ("Chinese yuan", "CN¥", 2),
    "INR": ("Indian rupee", "₹", 2),
    "SGD": ("Singapore dollar", "S$", 2),
    "KRW": ("South Korean won", "₩", 0),
    "THB": ("Thai baht", "฿", 2),
    "AED": ("UAE dirham", "AED ", 2),
    "SEK": ("Swedish krona", "SEK ", 2),
    "RUB": ("Russian ruble", "₽", 2),
    "TRY": ("Turkish lira", "₺", 2),
    "EGP": ("Egyptian pound", "E£", 2),
    "KES": ("Kenyan shilling", "KSh ", 2),
    "NGN": ("Nigerian naira", "₦", 2),
    "ZAR": ("South African rand", "R ", 2),
    "MXN": ("Mexican peso", "MX$", 2),
    "BRL": ("Brazilian real", "R$", 2),
    "ARS": ("Argentine peso", "AR$", 2),
}
CURRENCIES = tuple(RATES_PER_USD)


def _currency(code: str) -> str:
    key = code.strip().upper() if isinstance(code, str) else ""
    if key not in RATES_PER_USD:
        raise ValueError(f"unsupported currency {code!r}; supported: {', '.join(CURRENCIES)}")
    return key


def _convert(amount: float, source: str, target: str) -> float:
    return amount / RATES_PER_USD[_currency(source)] * RATES_PER_USD[_currency(target)]


def _format_money(amount: float, code: str) -> str:
    _, symbol, decimals = CURRENCY_NAMES[_currency(code)]
    sign = "-" if amount < 0 else ""
    return f"{sign}{symbol}{abs(amount):,.{decimals}f}"


# -- shared business data -------------------------------------------------------------------


class _Product(NamedTuple):
    sku: str
    name: str
    category: str
    price_usd: float
    weight_kg: float
    reorder_point: int
    supplier: str


PRODUCTS: tuple[_Product, ...] = tuple(
    _Product(*row)
    for row in (
        ("SKU-1001", "Wireless Mouse", "electronics", 24.99, 0.12, 40, "Logi Supply Co"),
        ("SKU-1002", "Mechanical Keyboard", "electronics", 89.0, 0.95, 25, "Logi Supply Co"),
        ("SKU-1003", "27-inch 4K Monitor", "electronics", 329.0, 6.2, 10, "Panel Works"),
        ("SKU-1004", "USB-C Docking Station", "electronics", 149.0, 0.45, 15, "Panel Works"),
        ("SKU-1005", "Noise-Cancelling Headphones", "electronics", 199.0, 0.3, 20, "SoundHouse"),
        ("SKU-1006", "Ergonomic Office Chair", "furniture", 279.0, 17.5, 8, "SitWell"),
        ("SKU-1007", "Standing Desk", "furniture", 499.0, 32.0, 5, "SitWell"),
        ("SKU-1008", "Desk Lamp", "furniture", 39.5, 1.1, 30, "Brightline"),
        ("SKU-1009", "A5 Notebook (pack of 3)", "stationery", 12.0, 0.6, 100, "PaperMill"),
        ("SKU-1010", "Gel Pens (pack of 10)", "stationery", 8.5, 0.15, 150, "PaperMill"),
        ("SKU-1011", "Whiteboard 90x60 cm", "stationery", 65.0, 5.0, 12, "PaperMill"),
        ("SKU-1012", "Espresso Beans 1 kg", "pantry", 21.0, 1.0, 60, "Roast & Co"),
        ("SKU-1013", "Green Tea (100 bags)", "pantry", 9.9, 0.25, 80, "Roast & Co"),
        ("SKU-1014", "Laptop Backpack", "accessories", 59.0, 0.9, 35, "CarryAll"),
        ("SKU-1015", "Travel Adapter", "accessories", 18.0, 0.2, 50, "CarryAll"),
        ("SKU-1016", "Portable SSD 1 TB", "electronics", 109.0, 0.06, 30, "DataVault"),
    )
)
_PRODUCT_INDEX = {p.sku: p for p in PRODUCTS}
CATEGORIES = tuple(dict.fromkeys(p.category for p in PRODUCTS))
WAREHOUSES: dict[str, tuple[str, str]] = {
    "WH-EAST": ("Newark fulfilment centre", "New York"),
    "WH-WEST": ("Reno fulfilment centre", "San Francisco"),
    "WH-EU": ("Rotterdam distribution hub", "Amsterdam"),
    "WH-APAC": ("Singapore distribution hub", "Singapore"),
}


def _product(sku: str) -> _Product:
    key = sku.strip().upper() if isinstance(sku, str) else ""
    if key not in _PRODUCT_INDEX:
        if not re.fullmatch(r"SKU-\d{4}", key):
            raise ValueError(
                f"invalid SKU {sku!r}: expected the format SKU-<4 digits>, e.g. SKU-1001"
            )
        raise ValueError(f"unknown SKU {sku!r}; known SKUs: SKU-1001 to SKU-{1000 + len(PRODUCTS)}")
    return _PRODUCT_INDEX[key]


def _warehouse(code: str) -> str:
    key = code.strip().upper() if isinstance(code, str) else ""
    if key not in WAREHOUSES:
        raise ValueError(f"unknown warehouse {code!r}; known: {', '.join(WAREHOUSES)}")
    return key


DEPARTMENTS = ("Engineering", "Sales", "Marketing", "Support", "Finance", "People")
ROLES = {
    "Engineering": ("Software Engineer", "Senior Engineer", "Engineering Manager"),
    "Sales": ("Account Executive", "Account Manager", "Sales Director"),
    "Marketing": ("Marketing Specialist", "Content Lead", "Marketing Director"),
    "Support": ("Support Agent", "Senior Support Agent", "Support Manager"),
    "Finance": ("Accountant", "Financial Analyst", "Finance Director"),
    "People": ("HR Generalist", "Recruiter", "Head of People"),
}
N_EMPLOYEES = 40
N_CUSTOMERS = 50
SEGMENTS = ("enterprise", "mid-market", "smb")
TIERS = ("bronze", "silver", "gold", "platinum")
COMPANY_DOMAIN = "northwind.example"

SEED_FILES = {
    "README.md": (
        "# Northwind workspace\n\nShared files for the operations team.\n\n"
        "- notes/todo.txt: open tasks\n- data/sales.csv: monthly sales by region\n"
        "- config/settings.json: service settings\n- docs/handbook.md: team handbook\n"
    ),
    "notes/todo.txt": (
        "Follow up with cust_1001 about order_42\nPrepare Q3 planning deck\n"
        "Renew SSL certificate before 2025-09-30\nReview inventory for SKU-1003\n"
    ),
    "data/sales.csv": (
        "month,region,units,revenue_usd\n2025-01,EMEA,120,18400\n2025-01,AMER,210,31950\n"
        "2025-02,EMEA,135,20100\n2025-02,AMER,190,29800\n2025-03,EMEA,160,24650\n"
        "2025-03,AMER,230,35900\n"
    ),
    "config/settings.json": json.dumps(
        {
            "service": "orders-api",
            "region": "eu-west",
            "retries": 3,
            "timeout_s": 30,
            "features": {"tracking": True, "returns": True},
        },
        indent=2,
    )
    + "\n",
    "docs/handbook.md": (
        "# Team handbook\n\n## Working hours\nCore hours are 10:00 to 16:00 local time.\n\n"
        "## Expenses\nSubmit receipts within 30 days. Travel must be booked through the "
        "travel tools.\n\n## Support rotation\nEach engineer covers one week of on-call per "
        "quarter.\n"
    ),
}


def _raise_unknown(kind: str, key: str, example: str) -> Any:
    raise ValueError(f"unknown {kind} {key!r} (example of a valid id: {example})")


class _World:
    """Everything the catalog's stateful tools read and change; one per demo_catalog()."""

    def __init__(self) -> None:
        self.counters: dict[str, int] = {}
        self.files: dict[str, str] = dict(SEED_FILES)
        self.notes: dict[str, J] = {}
        self.drafts: dict[str, J] = {}
        self.events: dict[str, J] = {}
        self.bookings: dict[str, J] = {}
        self.leads: dict[str, J] = {}
        self.customer_notes: dict[str, list[J]] = {}
        self.time_off: dict[str, J] = {}
        self.order_changes: dict[str, J] = {}
        self.returns: dict[str, J] = {}
        self.refunds: dict[str, J] = {}
        self.reservations: dict[str, J] = {}

    def new_id(self, prefix: str, start: int = 0, width: int = 0) -> str:
        self.counters[prefix] = self.counters.get(prefix, start) + 1
        return f"{prefix}_{self.counters[prefix]:0{width}d}"

    # -- generated records (built on first use, then owned by this world) --------------------
    @cached_property
    def employees(self) -> dict[str, J]:
        out: dict[str, J] = {}
        emails: set[str] = set()
        for i in range(1, N_EMPLOYEES + 1):
            first, last = _person("emp", i)
            if i == 1:
                dept, role, level, manager = "Executive", "Chief Executive Officer", 7, None
            elif i <= 1 + len(DEPARTMENTS):
                dept = DEPARTMENTS[i - 2]
                role, level, manager = ROLES[dept][2], 6, "emp_001"
            else:
                dept = DEPARTMENTS[(i - 8) % len(DEPARTMENTS)]
                level = 2 + _hash("level", i) % 4
                role = ROLES[dept][0 if level <= 3 else 1]
                manager = f"emp_{2 + DEPARTMENTS.index(dept):03d}"
            email = f"{first}.{last}".lower()
            if email in emails:
                email += str(i)
            emails.add(email)
            out[f"emp_{i:03d}"] = {
                "employee_id": f"emp_{i:03d}",
                "name": f"{first} {last}",
                "email": f"{email}@{COMPANY_DOMAIN}",
                "department": dept,
                "role": role,
                "level": f"L{level}",
                "manager_id": manager,
                "office": _pick(
                    ("Paris", "London", "New York", "Berlin", "Singapore", "Toronto"), "office", i
                ),
                "hire_date": (
                    date(2015, 1, 5) + timedelta(days=_hash("hired", i) % 3600)
                ).isoformat(),
            }
        return out

    def employee(self, employee_id: str) -> J:
        key = employee_id.strip().lower() if isinstance(employee_id, str) else ""
        if not re.fullmatch(r"emp_\d{3}", key):
            raise ValueError(
                f"invalid employee id {employee_id!r}: expected emp_<3 digits>, e.g. emp_012"
            )
        return self.employees.get(key) or _raise_unknown("employee", employee_id, "emp_012")

    @cached_property
    def customers(self) -> dict[str, J]:
        sales = [e["employee_id"] for e in self.employees.values() if e["department"] == "Sales"]
        out: dict[str, J] = {}
        for k in range(N_CUSTOMERS):
            cid = f"cust_{1000 + k}"
            first, last = _person("cust", k)
            word = _pick(COMPANY_WORDS, "company", k)
            city = _pick(CITIES, "city", k)
            country = _country(city.country)
            out[cid] = {
                "customer_id": cid,
                "name": f"{first} {last}",
                "company": f"{word} {_pick(COMPANY_SUFFIXES, 'suffix', k)}",
                "email": f"{first}.{last}@{word}.example".lower(),
                "phone": f"{country.calling_code} {_hash('phone', k) % 90_000_000 + 10_000_000}",
                "city": city.name,
                "country": city.country,
                "segment": _pick(SEGMENTS, "segment", k),
                "tier": _pick(TIERS, "tier", k),
                "status": "churned" if _hash("churn", k) % 10 == 0 else "active",
                "customer_since": (
                    date(2019, 1, 1) + timedelta(days=_hash("since", k) % 2000)
                ).isoformat(),
                "account_manager_id": _pick(sales, "manager", k),
            }
        return out

    def customer(self, customer_id: str) -> J:
        key = customer_id.strip().lower() if isinstance(customer_id, str) else ""
        if not re.fullmatch(r"cust_\d+", key):
            raise ValueError(
                f"invalid customer id {customer_id!r}: expected cust_<number>, e.g. cust_1001"
            )
        return self.customers.get(key) or _raise_unknown("customer", customer_id, "cust_1001")

    @cached_property
    def invoices(self) -> dict[str, J]:
        out: dict[str, J] = {}
        for k, cid in enumerate(list(self.customers)):
            terms = 60 if self.customers[cid]["segment"] == "enterprise" else 30
            for j in range(3):
                number = 5001 + 3 * k + j
                lines = [
                    {
                        "description": p.name,
                        "sku": p.sku,
                        "quantity": 1 + _hash("qty", number, n) % 5,
                        "unit_price": p.price_usd,
                    }
                    for n, p in enumerate(
                        _sample(PRODUCTS, 1 + _hash("lines", number) % 3, "line", number)
                    )
                ]
                issued = date(2025, 1, 10) + timedelta(days=45 * j + _hash("issued", number) % 20)
                paid = j == 0 or (j == 1 and _hash("paid", number) % 10 < 7)
                invoice = {
                    "invoice_id": f"inv_{number}",
                    "customer_id": cid,
                    "currency": "USD",
                    "issue_date": issued.isoformat(),
                    "due_date": (issued + timedelta(days=terms)).isoformat(),
                    "status": "paid" if paid else "open",
                    "paid_on": (
                        issued + timedelta(days=10 + _hash("payday", number) % 20)
                    ).isoformat()
                    if paid
                    else None,
                    **_totals(lines, 8.0, 0.0),
                }
                out[invoice["invoice_id"]] = invoice
        return out

    def invoice(self, invoice_id: str) -> J:
        key = invoice_id.strip().lower() if isinstance(invoice_id, str) else ""
        if not re.fullmatch(r"inv_\d+", key):
            raise ValueError(
                f"invalid invoice id {invoice_id!r}: expected inv_<number>, e.g. inv_5004"
            )
        return self.invoices.get(key) or _raise_unknown("invoice", invoice_id, "inv_5004")

    @cached_property
    def stock(self) -> dict[tuple[str, str], int]:
        return {
            (p.sku, wh): _hash("stock", p.sku, wh) % (3 * p.reorder_point + 1)
            for p in PRODUCTS
            for wh in WAREHOUSES
        }

    @cached_property
    def tickets(self) -> dict[str, J]:
        seeds = (  # customer | subject | priority | status | reported at
            "cust_1001|Package for order_42 has not arrived yet|high|open|2025-06-13T09:15",
            "cust_1007|Invoice inv_5022 was charged twice|normal|pending|2025-06-11T14:02",
            "cust_1012|Cannot reset my account password|low|resolved|2025-06-03T08:40",
            "cust_1020|Request a bulk discount for standing desks|normal|open|2025-06-12T16:30",
            "cust_1033|Monitor arrived with a cracked screen|urgent|open|2025-06-13T11:05",
            "cust_1001|Please update our billing address|low|closed|2025-05-28T10:00",
        )
        agents = [e["employee_id"] for e in self.employees.values() if e["department"] == "Support"]
        out: dict[str, J] = {}
        for n, row in enumerate(seeds):
            cid, subject, priority, status, created = row.split("|")
            tid = f"tkt_{1001 + n}"
            out[tid] = {
                "ticket_id": tid,
                "customer_id": cid,
                "subject": subject,
                "description": subject + ". Customer contacted us by email.",
                "priority": priority,
                "status": status,
                "assignee_id": agents[n % len(agents)],
                "created_at": created,
                "comments": [],
                "escalation_level": 0,
            }
        self.counters["tkt"] = 1000 + len(seeds)
        return out

    def ticket(self, ticket_id: str) -> J:
        key = ticket_id.strip().lower() if isinstance(ticket_id, str) else ""
        if not re.fullmatch(r"tkt_\d+", key):
            raise ValueError(
                f"invalid ticket id {ticket_id!r}: expected tkt_<number>, e.g. tkt_1001"
            )
        return self.tickets.get(key) or _raise_unknown("ticket", ticket_id, "tkt_1001")

    def lookup(self, table: dict[str, J], kind: str, key: str) -> J:
        """A record of a per-world table by id, or a clear error."""
        if key not in table:
            known = ", ".join(list(table)[:10]) or "none yet"
            raise ValueError(f"unknown {kind} {key!r}; existing: {known}")
        return table[key]


def _totals(lines: list[J], tax_rate_percent: float, discount_percent: float) -> J:
    if not lines:
        raise ValueError("at least one line item is required")
    if not 0 <= tax_rate_percent <= 50:
        raise ValueError("tax_rate_percent must be between 0 and 50")
    if not 0 <= discount_percent <= 100:
        raise ValueError("discount_percent must be between 0 and 100")
    for line in lines:
        if line["quantity"] <= 0 or line["unit_price"] < 0:
            raise ValueError(f"line {line['description']!r}: quantity must be > 0, price >= 0")
    subtotal = sum(line["quantity"] * line["unit_price"] for line in lines)
    discount = subtotal * discount_percent / 100
    tax = (subtotal - discount) * tax_rate_percent / 100
    return {
        "line_items": [
            {**line, "line_total": _money(line["quantity"] * line["unit_price"])} for line in lines
        ],
        "subtotal": _money(subtotal),
        "discount": _money(discount),
        "tax_rate_percent": tax_rate_percent,
        "tax": _money(tax),
        "total": _money(subtotal - discount + tax),
    }


# == domains ================================================================================
# Each builder registers one namespace's tools; `world` holds the catalog's state.


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


CARRIERS: dict[str, J] = {
    "ups": {
        "name": "UPS",
        "prefix": "1Z",
        "base_usd": 9.0,
        "per_kg_usd": 1.6,
        "phone": "+1 800 742 5877",
    },
    "fedex": {
        "name": "FedEx",
        "prefix": "FX",
        "base_usd": 10.5,
        "per_kg_usd": 1.5,
        "phone": "+1 800 463 3339",
    },
    "dhl": {
        "name": "DHL Express",
        "prefix": "JD",
        "base_usd": 12.0,
        "per_kg_usd": 1.9,
        "phone": "+1 800 225 5345",
    },
    "usps": {
        "name": "USPS",
        "prefix": "94",
        "base_usd": 6.5,
        "per_kg_usd": 1.2,
        "phone": "+1 800 275 8777",
    },
}
SERVICE_LEVELS = {"economy": 6, "standard": 4, "express": 2, "overnight": 1}
ORDER_STAGES = ("processing", "shipped", "in_transit", "out_for_delivery", "delivered")
# Orders are generated as of this snapshot date (their status follows from it), never the clock.
DATA_AS_OF = date(2025, 6, 14)
# The demo order: cust_1001's parcel, still in transit (see support ticket tkt_1001).
PINNED_ORDERS = {42: ("cust_1001", 2)}
RETURN_REASONS = ("damaged", "wrong_item", "not_as_described", "no_longer_needed", "late_delivery")


def _transit_days(origin: _City, destination: _City, service: str) -> int:
    km = _between(origin, destination)
    extra = 0 if km < 800 else 1 if km < 3000 else 3
    if service in ("express", "overnight"):  # air freight: distance matters less
        extra = min(extra, 1)
    international = origin.country != destination.country
    return SERVICE_LEVELS[service] + extra + (2 if international and service == "economy" else 0)


def _origin_for(city: _City) -> str:
    if city.lon < -100:
        return "WH-WEST"
    if city.lon < -30:
        return "WH-EAST"
    return "WH-EU" if city.lon < 60 else "WH-APAC"


def _shipping(tool: _Domain, world: _World) -> None:
    def order(order_id: str) -> J:
        key = order_id.strip().lower() if isinstance(order_id, str) else ""
        match = re.fullmatch(r"order_(\d{1,7})", key)
        if not match or int(match[1]) == 0:
            raise ValueError(
                f"unknown order id format {order_id!r}: expected order_<number>, e.g. order_42"
            )
        n = int(match[1])
        key = f"order_{n}"
        pinned_customer, pinned_age = PINNED_ORDERS.get(n, (None, None))
        customer = world.customer(
            pinned_customer or f"cust_{1000 + _hash('order-customer', n) % N_CUSTOMERS}"
        )
        items: list[J] = [
            {
                "sku": p.sku,
                "name": p.name,
                "quantity": 1 + _hash("order-qty", n, i) % 3,
                "unit_price_usd": p.price_usd,
            }
            for i, p in enumerate(_sample(PRODUCTS, 1 + _hash("items", n) % 3, "order-item", n))
        ]
        age = pinned_age if pinned_age is not None else _hash("placed", n) % 14
        placed = DATA_AS_OF - timedelta(days=age)
        destination = _city(world.order_changes.get(key, {}).get("city") or customer["city"])
        warehouse = _origin_for(destination)
        service = _pick(tuple(SERVICE_LEVELS), "service", n)
        carrier = _pick(tuple(CARRIERS), "carrier", n)
        shipped = placed + timedelta(days=1)
        eta = shipped + timedelta(
            days=_transit_days(_city(WAREHOUSES[warehouse][1]), destination, service)
        )
        today = DATA_AS_OF
        checkpoints = (today < shipped, today == shipped, today < eta, today == eta)
        stage = next((i for i, hit in enumerate(checkpoints) if hit), 4)
        record = {
            "order_id": key,
            "customer_id": customer["customer_id"],
            "placed_on": placed.isoformat(),
            "status": ORDER_STAGES[stage],
            "items": items,
            "total_usd": _money(sum(i["quantity"] * i["unit_price_usd"] for i in items)),
            "carrier": carrier,
            "service_level": service,
            "ships_from": warehouse,
            "destination_city": destination.name,
            "destination_country": destination.country,
            "ship_date": shipped.isoformat(),
            "estimated_delivery": eta.isoformat(),
            "tracking_number": f"{CARRIERS[carrier]['prefix']}{n:010d}",
        }
        record.update(world.order_changes.get(key, {}).get("fields", {}))
        return record

    def change(order_id: str, **fields: Any) -> None:
        key = order(order_id)["order_id"]
        world.order_changes.setdefault(key, {}).setdefault("fields", {}).update(fields)

    @tool
    def get_shipping_eta(order_id: str) -> J:
        o = order(order_id)
        return {
            k: o[k]
            for k in (
                "order_id",
                "status",
                "carrier",
                "service_level",
                "ship_date",
                "estimated_delivery",
                "destination_city",
                "tracking_number",
            )
        }

    @tool
    def get_order_status(order_id: str) -> J:
        return order(order_id)

    @tool
    def list_order_items(order_id: str) -> J:
        o = order(order_id)
        return {"order_id": o["order_id"], "items": o["items"], "total_usd": o["total_usd"]}

    @tool
    def track_package(tracking_number: str) -> J:
        code = tracking_number.strip().upper()
        prefixes = {c["prefix"]: name for name, c in CARRIERS.items()}
        if code[:2] not in prefixes or not re.fullmatch(r"\d{10}", code[2:]):
            raise ValueError(
                f"unrecognised tracking number {tracking_number!r}: expected a carrier prefix "
                f"({', '.join(prefixes)}) and 10 digits"
            )
        o = order(f"order_{int(code[2:])}")
        if o["tracking_number"] != code:
            raise ValueError(f"no shipment with tracking number {tracking_number!r}")
        origin, stage = (
            WAREHOUSES[o["ships_from"]],
            ORDER_STAGES.index(o["status"]) if o["status"] in ORDER_STAGES else 0,
        )
        ship = date.fromisoformat(o["ship_date"])
        timeline = [
            (ship - timedelta(days=1), "label created", origin[0]),
            (ship, "picked up by carrier", origin[0]),
            (ship + timedelta(days=1), "in transit", "regional sort hub"),
            (
                date.fromisoformat(o["estimated_delivery"]),
                "out for delivery",
                o["destination_city"],
            ),
            (date.fromisoformat(o["estimated_delivery"]), "delivered", o["destination_city"]),
        ]
        events = [
            {"date": d.isoformat(), "event": e, "location": loc}
            for d, e, loc in timeline[: stage + 1]
        ]
        return {
            "tracking_number": code,
            "carrier": CARRIERS[o["carrier"]]["name"],
            "order_id": o["order_id"],
            "status": o["status"],
            "events": events,
        }

    @tool
    def list_customer_orders(customer_id: str, limit: int = 5) -> J:
        cid = world.customer(customer_id)["customer_id"]
        found = [
            {
                k: o[k]
                for k in ("order_id", "placed_on", "status", "total_usd", "estimated_delivery")
            }
            for o in (order(f"order_{n}") for n in range(1, 301))
            if o["customer_id"] == cid
        ]
        return {
            "customer_id": cid,
            "orders": sorted(found, key=lambda o: o["placed_on"], reverse=True)[:limit],
        }

    @tool
    def get_shipping_rates(origin_city: str, destination_city: str, weight_kg: float) -> J:
        a, b = _city(origin_city), _city(destination_city)
        if not 0 < weight_kg <= 70:
            raise ValueError("weight_kg must be above 0 and at most 70 kg")
        km = _between(a, b)
        speed = {"economy": 1.0, "standard": 1.3, "express": 2.1, "overnight": 3.4}
        quotes = [
            {
                "carrier": c["name"],
                "service_level": level,
                "transit_days": _transit_days(a, b, level),
                "price_usd": _money(
                    (c["base_usd"] + c["per_kg_usd"] * weight_kg + km / 400) * speed[level]
                ),
            }
            for c in CARRIERS.values()
            for level in SERVICE_LEVELS
        ]
        return {
            "from": a.name,
            "to": b.name,
            "distance_km": round(km),
            "quotes": sorted(quotes, key=lambda q: q["price_usd"]),
        }

    @tool
    def estimate_delivery_date(
        origin_city: str, destination_city: str, ship_date: str, service_level: str = "standard"
    ) -> J:
        a, b, start = _city(origin_city), _city(destination_city), _date(ship_date, "ship_date")
        days = _transit_days(a, b, service_level)
        return {
            "transit_days": days,
            "estimated_delivery": (start + timedelta(days=days)).isoformat(),
            "from": a.name,
            "to": b.name,
            "service_level": service_level,
        }

    @tool
    def validate_address(street: str, city: str, postal_code: str, country: str) -> J:
        formats = {
            "US": r"\d{5}(-\d{4})?",
            "FR": r"\d{5}",
            "DE": r"\d{5}",
            "ES": r"\d{5}",
            "IT": r"\d{5}",
            "JP": r"\d{3}-?\d{4}",
            "GB": r"[A-Z]{1,2}\d[A-Z\d]? ?\d[A-Z]{2}",
            "CA": r"[A-Z]\d[A-Z] ?\d[A-Z]\d",
            "NL": r"\d{4} ?[A-Z]{2}",
            "AU": r"\d{4}",
        }
        problems = []
        land = _country(country)
        try:
            place = _city(city)
            if place.country != land.name:
                problems.append(f"{place.name} is in {place.country}, not {land.name}")
        except ValueError:
            problems.append(f"city {city!r} is not in the address database")
        pattern = formats.get(land.code)
        if pattern and not re.fullmatch(pattern, postal_code.strip().upper()):
            problems.append(f"postal code {postal_code!r} does not match the {land.code} format")
        if not re.search(r"\d", street) or len(street.strip()) < 5:
            problems.append("street should include a house number and street name")
        return {
            "valid": not problems,
            "problems": problems,
            "normalised": {
                "street": " ".join(street.split()).title(),
                "city": city.strip().title(),
                "postal_code": postal_code.strip().upper(),
                "country": land.name,
            },
        }

    @tool
    def cancel_order(order_id: str, reason: str = "customer request") -> J:
        o = order(order_id)
        if o["status"] != "processing":
            raise ValueError(
                f"order {o['order_id']} is {o['status']}; only processing orders can be cancelled"
            )
        change(order_id, status="cancelled", cancellation_reason=reason, estimated_delivery=None)
        return {"order_id": o["order_id"], "status": "cancelled", "refund_usd": o["total_usd"]}

    @tool
    def update_shipping_address(order_id: str, street: str, city: str, postal_code: str) -> J:
        o = order(order_id)
        if o["status"] in ("delivered", "cancelled", "out_for_delivery"):
            raise ValueError(
                f"order {o['order_id']} is {o['status']}; the address can no longer change"
            )
        place = _city(city)
        world.order_changes.setdefault(o["order_id"], {})["city"] = place.name
        change(
            order_id,
            delivery_address={"street": street, "city": place.name, "postal_code": postal_code},
        )
        return get_shipping_eta(order_id)

    @tool
    def request_return(order_id: str, reason: str) -> J:
        o = order(order_id)
        if o["status"] != "delivered":
            raise ValueError(
                f"order {o['order_id']} is {o['status']}; only delivered orders can be returned"
            )
        rma = world.new_id("rma", 7000)
        world.returns[rma] = {
            "rma_id": rma,
            "order_id": o["order_id"],
            "reason": reason,
            "return_to": WAREHOUSES[o["ships_from"]][0],
            "refund_usd": o["total_usd"],
        }
        return world.returns[rma]


CHANNELS = ("email", "phone", "meeting", "chat", "video_call")


def _crm(tool: _Domain, world: _World) -> None:
    def summary(c: J) -> J:
        return {
            k: c[k] for k in ("customer_id", "name", "company", "email", "city", "segment", "tier")
        }

    @tool
    def lookup_customer(customer_id: str) -> J:
        return dict(world.customer(customer_id))

    @tool
    def search_customers(query: str, limit: int = 5) -> J:
        scored = [
            (-_match_score(query, c["name"], c["company"], c["email"], c["city"]), cid)
            for cid, c in world.customers.items()
        ]
        hits = [world.customers[cid] for score, cid in sorted(scored) if score < 0]
        return {"query": query, "customers": [summary(c) for c in hits[:limit]]}

    @tool
    def find_customer_by_email(email: str) -> J:
        wanted = email.strip().lower()
        for c in world.customers.values():
            if c["email"] == wanted:
                return dict(c)
        raise ValueError(f"no customer with email {email!r}")

    @tool
    def list_customers_by_segment(segment: str, tier: str | None = None, limit: int = 10) -> J:
        hits = [
            summary(c)
            for c in world.customers.values()
            if c["segment"] == segment and tier in (None, c["tier"])
        ]
        return {"segment": segment, "count": len(hits), "customers": hits[:limit]}

    @tool
    def get_customer_lifetime_value(customer_id: str) -> J:
        cid = world.customer(customer_id)["customer_id"]
        invoices = [i for i in world.invoices.values() if i["customer_id"] == cid]
        paid = sum(i["total"] for i in invoices if i["status"] == "paid")
        billed = sum(i["total"] for i in invoices)
        return {
            "customer_id": cid,
            "invoices": len(invoices),
            "total_billed_usd": _money(billed),
            "paid_usd": _money(paid),
            "outstanding_usd": _money(billed - paid),
        }

    @tool
    def get_customer_health_score(customer_id: str) -> J:
        c = world.customer(customer_id)
        cid = c["customer_id"]
        open_tickets = sum(
            1
            for t in world.tickets.values()
            if t["customer_id"] == cid and t["status"] in ("open", "pending")
        )
        unpaid = sum(
            1 for i in world.invoices.values() if i["customer_id"] == cid and i["status"] == "open"
        )
        usage = 40 + _hash("usage", cid) % 50
        score = max(
            0,
            min(
                100,
                usage
                + 10 * TIERS.index(c["tier"])
                - 8 * open_tickets
                - 5 * unpaid
                - (40 if c["status"] == "churned" else 0),
            ),
        )
        risk = "high" if score < 40 else "medium" if score < 70 else "low"
        return {
            "customer_id": cid,
            "health_score": score,
            "churn_risk": risk,
            "factors": {
                "product_usage": usage,
                "open_tickets": open_tickets,
                "unpaid_invoices": unpaid,
                "tier": c["tier"],
            },
        }

    @tool
    def add_customer_note(customer_id: str, note: str) -> J:
        cid = world.customer(customer_id)["customer_id"]
        entry = {"note_id": world.new_id("cnote"), "text": note.strip()}
        world.customer_notes.setdefault(cid, []).append(entry)
        return {"customer_id": cid, **entry}

    @tool
    def list_customer_notes(customer_id: str) -> J:
        cid = world.customer(customer_id)["customer_id"]
        return {"customer_id": cid, "notes": list(world.customer_notes.get(cid, []))}

    @tool
    def log_customer_interaction(customer_id: str, channel: str, summary: str, date: str) -> J:
        cid = world.customer(customer_id)["customer_id"]
        entry = {
            "note_id": world.new_id("cnote"),
            "text": summary.strip(),
            "channel": channel,
            "date": _date(date).isoformat(),
        }
        world.customer_notes.setdefault(cid, []).append(entry)
        return {"customer_id": cid, **entry}

    @tool
    def update_customer_contact(
        customer_id: str, email: str | None = None, phone: str | None = None
    ) -> J:
        c = world.customer(customer_id)
        if email is None and phone is None:
            raise ValueError("give an email, a phone number, or both")
        if email is not None:
            c["email"] = _check_email(email)
        if phone is not None:
            if not re.fullmatch(r"\+?[\d ()-]{6,20}", phone.strip()):
                raise ValueError(f"invalid phone number {phone!r}")
            c["phone"] = phone.strip()
        return dict(c)

    @tool
    def create_lead(name: str, company: str, email: str, source: str = "website") -> J:
        lid = world.new_id("lead")
        world.leads[lid] = {
            "lead_id": lid,
            "name": name.strip(),
            "company": company.strip(),
            "email": _check_email(email),
            "source": source,
            "status": "new",
        }
        return world.leads[lid]

    @tool
    def convert_lead_to_customer(lead_id: str, segment: str, city: str) -> J:
        lead = world.lookup(world.leads, "lead", lead_id)
        if lead["status"] == "converted":
            raise ValueError(f"lead {lead_id} was already converted to {lead['customer_id']}")
        place = _city(city)
        cid = f"cust_{1000 + len(world.customers)}"
        world.customers[cid] = {
            "customer_id": cid,
            "name": lead["name"],
            "company": lead["company"],
            "email": lead["email"],
            "phone": None,
            "city": place.name,
            "country": place.country,
            "segment": segment,
            "tier": "bronze",
            "status": "active",
            "customer_since": None,
            "account_manager_id": _pick(
                [e for e, r in world.employees.items() if r["department"] == "Sales"], cid
            ),
        }
        lead.update(status="converted", customer_id=cid)
        return world.customers[cid]

    @tool
    def get_account_manager(customer_id: str) -> J:
        c = world.customer(customer_id)
        manager = world.employee(c["account_manager_id"])
        return {
            "customer_id": c["customer_id"],
            "account_manager": {k: manager[k] for k in ("employee_id", "name", "email", "office")},
        }


def _check_email(email: str) -> str:
    value = email.strip().lower()
    if not re.fullmatch(r"[a-z0-9._%+-]+@[a-z0-9-]+(\.[a-z0-9-]+)*\.[a-z]{2,}", value):
        raise ValueError(f"invalid email address {email!r}")
    return value


DISCOUNT_CODES = {
    "WELCOME10": (10.0, 0.0, "10% off a first order"),
    "SPRING25": (25.0, 100.0, "25% off orders of 100 or more"),
    "LOYAL5": (5.0, 0.0, "5% loyalty discount"),
    "BULK15": (15.0, 1000.0, "15% off orders of 1000 or more"),
}
TAX_RATES = {
    "US-CA": 7.25,
    "US-NY": 4.0,
    "US-TX": 6.25,
    "US-OR": 0.0,
    "GB": 20.0,
    "DE": 19.0,
    "FR": 20.0,
    "NL": 21.0,
    "JP": 10.0,
    "AU": 10.0,
    "CA": 5.0,
    "SG": 9.0,
}


def _billing(tool: _Domain, world: _World) -> None:
    def brief(i: J) -> J:
        return {
            k: i[k] for k in ("invoice_id", "issue_date", "due_date", "status", "total", "currency")
        }

    @tool
    def get_invoice(invoice_id: str) -> J:
        return dict(world.invoice(invoice_id))

    @tool
    def list_customer_invoices(customer_id: str, status: str = "all") -> J:
        cid = world.customer(customer_id)["customer_id"]
        hits = [
            brief(i)
            for i in world.invoices.values()
            if i["customer_id"] == cid and status in ("all", i["status"])
        ]
        return {"customer_id": cid, "invoices": hits}

    @tool
    def create_invoice(
        customer_id: str,
        line_items: list[J],
        issue_date: str,
        due_date: str,
        currency: str = "USD",
        tax_rate_percent: float = 0.0,
        discount_percent: float = 0.0,
    ) -> J:
        cid = world.customer(customer_id)["customer_id"]
        issued, due = _date(issue_date, "issue_date"), _date(due_date, "due_date")
        if due < issued:
            raise ValueError("due_date must not be before issue_date")
        number = max(int(k[4:]) for k in world.invoices) + 1
        invoice = {
            "invoice_id": f"inv_{number}",
            "customer_id": cid,
            "currency": _currency(currency),
            "issue_date": issued.isoformat(),
            "due_date": due.isoformat(),
            "status": "open",
            "paid_on": None,
            **_totals(line_items, tax_rate_percent, discount_percent),
        }
        world.invoices[invoice["invoice_id"]] = invoice
        return invoice

    @tool
    def calculate_invoice_total(
        line_items: list[J], tax_rate_percent: float = 0.0, discount_percent: float = 0.0
    ) -> J:
        return _totals(line_items, tax_rate_percent, discount_percent)

    @tool
    def mark_invoice_paid(invoice_id: str, payment_date: str, method: str = "bank_transfer") -> J:
        invoice = world.invoice(invoice_id)
        if invoice["status"] == "paid":
            raise ValueError(
                f"invoice {invoice['invoice_id']} is already paid (on {invoice['paid_on']})"
            )
        invoice.update(
            status="paid",
            paid_on=_date(payment_date, "payment_date").isoformat(),
            payment_method=method,
        )
        return brief(invoice)

    @tool
    def get_outstanding_balance(customer_id: str) -> J:
        cid = world.customer(customer_id)["customer_id"]
        open_ = [
            i for i in world.invoices.values() if i["customer_id"] == cid and i["status"] == "open"
        ]
        return {
            "customer_id": cid,
            "open_invoices": [i["invoice_id"] for i in open_],
            "outstanding_usd": _money(
                sum(_convert(i["total"], i["currency"], "USD") for i in open_)
            ),
        }

    @tool
    def list_overdue_invoices(as_of_date: str, limit: int = 20) -> J:
        today = _date(as_of_date, "as_of_date")
        late = sorted(
            (
                {
                    **brief(i),
                    "customer_id": i["customer_id"],
                    "days_overdue": (today - date.fromisoformat(i["due_date"])).days,
                }
                for i in world.invoices.values()
                if i["status"] == "open" and date.fromisoformat(i["due_date"]) < today
            ),
            key=lambda i: -i["days_overdue"],
        )
        return {"as_of": today.isoformat(), "count": len(late), "invoices": late[:limit]}

    @tool
    def issue_refund(invoice_id: str, amount: float, reason: str) -> J:
        invoice = world.invoice(invoice_id)
        if invoice["status"] != "paid":
            raise ValueError(f"invoice {invoice['invoice_id']} is not paid; nothing to refund")
        done = sum(
            r["amount"] for r in world.refunds.values() if r["invoice_id"] == invoice["invoice_id"]
        )
        if amount <= 0 or amount > invoice["total"] - done + 1e-9:
            raise ValueError(
                f"refund must be above 0 and at most {_money(invoice['total'] - done)}"
            )
        rid = world.new_id("rfd", 300)
        world.refunds[rid] = {
            "refund_id": rid,
            "invoice_id": invoice["invoice_id"],
            "amount": _money(amount),
            "currency": invoice["currency"],
            "reason": reason,
        }
        return world.refunds[rid]

    @tool
    def apply_discount_code(amount: float, code: str) -> J:
        key = code.strip().upper()
        if key not in DISCOUNT_CODES:
            raise ValueError(f"discount code {code!r} is not valid")
        percent, minimum, label = DISCOUNT_CODES[key]
        if amount < minimum:
            raise ValueError(f"code {key} needs an order of at least {minimum:g}")
        off = amount * percent / 100
        return {
            "code": key,
            "description": label,
            "discount": _money(off),
            "total": _money(amount - off),
        }

    @tool
    def calculate_sales_tax(amount: float, region: str) -> J:
        rate = TAX_RATES[region]
        return {
            "region": region,
            "rate_percent": rate,
            "tax": _money(amount * rate / 100),
            "total_with_tax": _money(amount * (1 + rate / 100)),
        }

    @tool
    def generate_payment_link(invoice_id: str) -> J:
        invoice = world.invoice(invoice_id)
        if invoice["status"] == "paid":
            raise ValueError(f"invoice {invoice['invoice_id']} is already paid")
        token = f"{_hash('pay', invoice['invoice_id']):016x}"
        return {
            "invoice_id": invoice["invoice_id"],
            "amount": invoice["total"],
            "currency": invoice["currency"],
            "url": f"https://pay.{COMPANY_DOMAIN}/i/{invoice['invoice_id']}?t={token}",
        }


MAX_FILE_CHARS = 200_000


def _norm_path(path: str, *, allow_root: bool = False) -> str:
    raw = path.strip().replace("\\", "/") if isinstance(path, str) else ""
    clean = posixpath.normpath("/" + raw).lstrip("/")
    if ".." in raw.split("/"):
        raise ValueError(f"path {path!r} may not contain '..'")
    if clean in ("", ".") and not allow_root:
        raise ValueError("a file path is required")
    return "" if clean == "." else clean


def _files(tool: _Domain, world: _World) -> None:
    files = world.files

    def existing(path: str) -> str:
        key = _norm_path(path)
        if key not in files:
            near = difflib.get_close_matches(key, list(files), n=3)
            hint = f"; did you mean {', '.join(near)}?" if near else ""
            raise ValueError(f"no such file {key!r}{hint}")
        return key

    def store(path: str, content: str) -> str:
        key = _norm_path(path)
        if any(f.startswith(key + "/") for f in files):
            raise ValueError(f"{key!r} is a directory")
        if len(content) > MAX_FILE_CHARS:
            raise ValueError(f"content is limited to {MAX_FILE_CHARS} characters")
        files[key] = content
        return key

    @tool
    def list_files(directory: str = "") -> J:
        base = _norm_path(directory, allow_root=True)
        prefix = base + "/" if base else ""
        entries: dict[str, J] = {}
        for path, content in sorted(files.items()):
            if not path.startswith(prefix):
                continue
            head, _, rest = path[len(prefix) :].partition("/")
            if rest:
                entries.setdefault(head + "/", {"name": head + "/", "type": "directory"})
            else:
                entries[head] = {"name": head, "type": "file", "size_bytes": len(content.encode())}
        if base and not entries:
            raise ValueError(f"no such directory {base!r}")
        return {"directory": base or "/", "entries": list(entries.values())}

    @tool
    def read_file(path: str) -> str:
        return files[existing(path)]

    @tool
    def read_file_lines(path: str, start_line: int = 1, end_line: int = 50) -> J:
        lines = files[existing(path)].splitlines()
        if start_line < 1 or end_line < start_line:
            raise ValueError("need 1 <= start_line <= end_line")
        chosen = lines[start_line - 1 : end_line]
        return {
            "path": _norm_path(path),
            "total_lines": len(lines),
            "lines": [f"{start_line + i}: {text}" for i, text in enumerate(chosen)],
        }

    @tool
    def write_file(path: str, content: str, overwrite: bool = True) -> J:
        if _norm_path(path) in files and not overwrite:
            raise ValueError(f"file {_norm_path(path)!r} exists and overwrite is false")
        key = store(path, content)
        return {"path": key, "size_bytes": len(content.encode()), "written": True}

    @tool
    def append_to_file(path: str, content: str) -> J:
        key = _norm_path(path)
        store(key, files.get(key, "") + content)
        return {"path": key, "size_bytes": len(files[key].encode())}

    @tool
    def delete_file(path: str) -> J:
        key = existing(path)
        del files[key]
        return {"path": key, "deleted": True}

    @tool
    def move_file(source_path: str, destination_path: str) -> J:
        source = existing(source_path)
        target = store(destination_path, files[source])
        if target != source:
            del files[source]
        return {"from": source, "to": target}

    @tool
    def copy_file(source_path: str, destination_path: str) -> J:
        source = existing(source_path)
        return {"from": source, "to": store(destination_path, files[source])}

    @tool
    def get_file_info(path: str) -> J:
        key = existing(path)
        text = files[key]
        kinds = {".md": "markdown", ".txt": "text", ".csv": "csv", ".json": "json", ".py": "python"}
        return {
            "path": key,
            "size_bytes": len(text.encode()),
            "lines": len(text.splitlines()),
            "words": len(text.split()),
            "type": kinds.get(posixpath.splitext(key)[1], "unknown"),
        }

    @tool
    def search_file_contents(pattern: str, directory: str = "") -> J:
        try:
            rx = re.compile(pattern, re.IGNORECASE)
        except re.error as exc:
            raise ValueError(f"invalid regular expression {pattern!r}: {exc}") from None
        base = _norm_path(directory, allow_root=True)
        hits = [
            {"path": path, "line": n, "text": line}
            for path, text in sorted(files.items())
            if not base or path.startswith(base + "/")
            for n, line in enumerate(text.splitlines(), 1)
            if rx.search(line)
        ]
        return {"pattern": pattern, "matches": hits[:100], "truncated": len(hits) > 100}

    @tool
    def find_files(name_pattern: str) -> J:
        hits = [
            p
            for p in sorted(files)
            if fnmatch.fnmatch(p, name_pattern)
            or fnmatch.fnmatch(posixpath.basename(p), name_pattern)
        ]
        return {"pattern": name_pattern, "files": hits}

    @tool
    def diff_files(path_a: str, path_b: str) -> J:
        a, b = existing(path_a), existing(path_b)
        diff = difflib.unified_diff(files[a].splitlines(), files[b].splitlines(), a, b, lineterm="")
        lines = list(diff)
        return {"identical": not lines, "diff": "\n".join(lines)}


def _calendar(tool: _Domain, world: _World) -> None:
    events = world.events

    def make(
        title: str, day: str, start: str, minutes: int, location: str, attendees: list[str]
    ) -> J:
        begin = _clock(start, "start_time")
        if not 5 <= minutes <= 12 * 60:
            raise ValueError("duration_minutes must be between 5 and 720")
        if begin + minutes > 24 * 60:
            raise ValueError("the event must end on the same day")
        if not title.strip():
            raise ValueError("title must not be empty")
        eid = world.new_id("evt")
        events[eid] = {
            "event_id": eid,
            "title": title.strip(),
            "date": _date(day).isoformat(),
            "start_time": _hhmm(begin),
            "end_time": _hhmm(begin + minutes),
            "duration_minutes": minutes,
            "location": location,
            "attendees": [_check_email(a) for a in attendees],
        }
        return events[eid]

    for seed in (
        ("Team standup", "2025-06-16", "09:00", 30, "Room 2A", ["alice.martin@northwind.example"]),
        ("Quarterly planning", "2025-06-17", "14:00", 90, "Board room", []),
        (
            "Customer call: Acme Corp",
            "2025-06-18",
            "11:00",
            60,
            "Video call",
            ["buyer@acme.example"],
        ),
    ):
        make(*seed)

    def span(e: J) -> tuple[str, int, int]:
        begin = _clock(e["start_time"])
        return e["date"], begin, begin + e["duration_minutes"]

    def clashes(day: str, begin: int, end: int, skip: str = "") -> list[J]:
        return [
            e
            for e in events.values()
            if e["event_id"] != skip
            and span(e)[0] == day
            and span(e)[1] < end
            and begin < span(e)[2]
        ]

    @tool
    def create_event(
        title: str,
        date: str,
        start_time: str,
        duration_minutes: int = 60,
        location: str = "",
        attendees: list[str] | None = None,
    ) -> J:
        event = make(title, date, start_time, duration_minutes, location, attendees or [])
        conflicts = [
            e["event_id"] for e in clashes(event["date"], *span(event)[1:], skip=event["event_id"])
        ]
        return {**event, "conflicts_with": conflicts}

    @tool
    def list_events(start_date: str, end_date: str | None = None) -> J:
        lo = _date(start_date, "start_date")
        hi = _date(end_date, "end_date") if end_date else lo
        hits = sorted(
            (e for e in events.values() if lo <= date.fromisoformat(e["date"]) <= hi),
            key=lambda e: (e["date"], e["start_time"]),
        )
        return {"from": lo.isoformat(), "to": hi.isoformat(), "events": hits}

    @tool
    def get_event(event_id: str) -> J:
        return world.lookup(events, "event", event_id)

    @tool
    def reschedule_event(event_id: str, new_date: str, new_start_time: str) -> J:
        event = world.lookup(events, "event", event_id)
        begin = _clock(new_start_time, "new_start_time")
        if begin + event["duration_minutes"] > 24 * 60:
            raise ValueError("the event must end on the same day")
        event.update(
            date=_date(new_date, "new_date").isoformat(),
            start_time=_hhmm(begin),
            end_time=_hhmm(begin + event["duration_minutes"]),
        )
        conflicts = [e["event_id"] for e in clashes(event["date"], *span(event)[1:], skip=event_id)]
        return {**event, "conflicts_with": conflicts}

    @tool
    def update_event_details(
        event_id: str, title: str | None = None, location: str | None = None
    ) -> J:
        event = world.lookup(events, "event", event_id)
        event.update({k: v for k, v in (("title", title), ("location", location)) if v is not None})
        return event

    @tool
    def cancel_event(event_id: str) -> J:
        event = world.lookup(events, "event", event_id)
        del events[event_id]
        return {"event_id": event_id, "title": event["title"], "cancelled": True}

    @tool
    def add_event_attendee(event_id: str, email: str) -> J:
        event = world.lookup(events, "event", event_id)
        address = _check_email(email)
        if address not in event["attendees"]:
            event["attendees"].append(address)
        return event

    @tool
    def check_availability(date: str, start_time: str, duration_minutes: int = 30) -> J:
        day, begin = _date(date).isoformat(), _clock(start_time, "start_time")
        conflicts = clashes(day, begin, begin + duration_minutes)
        return {
            "date": day,
            "start_time": _hhmm(begin),
            "end_time": _hhmm(begin + duration_minutes),
            "available": not conflicts,
            "conflicts": [e["title"] for e in conflicts],
        }

    @tool
    def find_free_slots(
        date: str, duration_minutes: int = 30, day_start: str = "09:00", day_end: str = "17:00"
    ) -> J:
        day = _date(date).isoformat()
        cursor, stop = _clock(day_start, "day_start"), _clock(day_end, "day_end")
        if stop <= cursor:
            raise ValueError("day_end must be after day_start")
        busy = sorted(span(e)[1:] for e in events.values() if e["date"] == day)
        slots = []
        for begin, end in [*busy, (stop, stop)]:
            if min(begin, stop) - cursor >= duration_minutes:
                slots.append({"start": _hhmm(cursor), "end": _hhmm(min(begin, stop))})
            cursor = max(cursor, end)
        return {"date": day, "free_slots": slots}

    @tool
    def count_meeting_hours(start_date: str, end_date: str) -> J:
        lo, hi = _date(start_date, "start_date"), _date(end_date, "end_date")
        per_day: dict[str, float] = {}
        for e in events.values():
            if lo <= date.fromisoformat(e["date"]) <= hi:
                per_day[e["date"]] = per_day.get(e["date"], 0) + e["duration_minutes"] / 60
        return {
            "total_hours": round(sum(per_day.values()), 2),
            "per_day": {d: round(h, 2) for d, h in sorted(per_day.items())},
        }


def _notes(tool: _Domain, world: _World) -> None:
    notes = world.notes

    def add(title: str, body: str, tags: Iterable[str]) -> J:
        if not title.strip():
            raise ValueError("title must not be empty")
        nid = world.new_id("note")
        notes[nid] = {
            "note_id": nid,
            "title": title.strip(),
            "body": body,
            "tags": sorted({t.strip().lower() for t in tags if t.strip()}),
        }
        return notes[nid]

    add("Welcome", "Use notes to keep meeting minutes and ideas.", ["getting-started"])
    add("Q3 goals", "Reduce shipping delays; launch the returns portal.", ["planning", "q3"])

    @tool
    def create_note(title: str, body: str, tags: list[str] | None = None) -> J:
        return add(title, body, tags or [])

    @tool
    def get_note(note_id: str) -> J:
        return world.lookup(notes, "note", note_id)

    @tool
    def list_notes(tag: str | None = None) -> J:
        wanted = tag.strip().lower() if tag else None
        return {
            "notes": [
                {"note_id": n["note_id"], "title": n["title"], "tags": n["tags"]}
                for n in notes.values()
                if wanted is None or wanted in n["tags"]
            ]
        }

    @tool
    def search_notes(query: str) -> J:
        ranked = sorted(
            (
                (-_match_score(query, n["title"], n["body"], " ".join(n["tags"])), nid)
                for nid, n in notes.items()
            )
        )
        return {"query": query, "notes": [notes[nid] for score, nid in ranked if score < 0]}

    @tool
    def update_note(note_id: str, title: str | None = None, body: str | None = None) -> J:
        note = world.lookup(notes, "note", note_id)
        if title is not None and not title.strip():
            raise ValueError("title must not be empty")
        note.update({k: v for k, v in (("title", title), ("body", body)) if v is not None})
        return note

    @tool
    def append_to_note(note_id: str, text: str) -> J:
        note = world.lookup(notes, "note", note_id)
        note["body"] = f"{note['body']}\n{text}" if note["body"] else text
        return note

    @tool
    def delete_note(note_id: str) -> J:
        world.lookup(notes, "note", note_id)
        del notes[note_id]
        return {"note_id": note_id, "deleted": True}

    @tool
    def tag_note(note_id: str, tag: str) -> J:
        note = world.lookup(notes, "note", note_id)
        if not tag.strip():
            raise ValueError("tag must not be empty")
        note["tags"] = sorted({*note["tags"], tag.strip().lower()})
        return note

    @tool
    def list_note_tags() -> J:
        counts: dict[str, int] = {}
        for n in notes.values():
            for t in n["tags"]:
                counts[t] = counts.get(t, 0) + 1
        return {"tags": dict(sorted(counts.items()))}


TEMPLATES = {
    "order_shipped": (
        "Your order {reference} is on its way",
        "Hi {name},\n\nGood news: your order {reference} has shipped. You can track it from your "
        "account page.\n\nBest regards,\n{sender}",
    ),
    "invoice_reminder": (
        "Reminder: invoice {reference} is due",
        "Hi {name},\n\nThis is a friendly reminder that invoice {reference} is due for payment. "
        "Please let us know if you have any questions.\n\nKind regards,\n{sender}",
    ),
    "meeting_follow_up": (
        "Follow-up: {reference}",
        "Hi {name},\n\nThank you for your time today. Here is a short summary of {reference} and "
        "the next steps we agreed on.\n\nBest,\n{sender}",
    ),
    "welcome": (
        "Welcome aboard, {name}!",
        "Hi {name},\n\nWelcome! Your account {reference} is ready. Reply to this email if you need "
        "anything.\n\nCheers,\n{sender}",
    ),
    "ticket_update": (
        "Update on your support ticket {reference}",
        "Hi {name},\n\nWe have an update on ticket {reference}. Please see the details in the "
        "support portal.\n\nThanks,\n{sender}",
    ),
}


def _email(tool: _Domain, world: _World) -> None:
    drafts = world.drafts

    @tool
    def create_email_draft(
        to: list[str], subject: str, body: str, cc: list[str] | None = None
    ) -> J:
        did = world.new_id("draft")
        drafts[did] = {
            "draft_id": did,
            "to": [_check_email(a) for a in to],
            "cc": [_check_email(a) for a in cc or []],
            "bcc": [],
            "subject": subject,
            "body": body,
            "status": "draft",
        }
        return drafts[did]

    @tool
    def list_email_drafts() -> J:
        return {
            "drafts": [
                {k: d[k] for k in ("draft_id", "to", "subject", "status")} for d in drafts.values()
            ]
        }

    @tool
    def get_email_draft(draft_id: str) -> J:
        return world.lookup(drafts, "draft", draft_id)

    @tool
    def update_email_draft(draft_id: str, subject: str | None = None, body: str | None = None) -> J:
        draft = world.lookup(drafts, "draft", draft_id)
        draft.update({k: v for k, v in (("subject", subject), ("body", body)) if v is not None})
        return draft

    @tool
    def delete_email_draft(draft_id: str) -> J:
        world.lookup(drafts, "draft", draft_id)
        del drafts[draft_id]
        return {"draft_id": draft_id, "deleted": True}

    @tool
    def add_draft_recipient(draft_id: str, email: str, field: str = "to") -> J:
        draft = world.lookup(drafts, "draft", draft_id)
        address = _check_email(email)
        if address not in draft[field]:
            draft[field].append(address)
        return draft

    @tool
    def validate_email_address(email: str) -> J:
        try:
            return {"email": _check_email(email), "valid": True}
        except ValueError as exc:
            return {"email": email, "valid": False, "reason": str(exc)}

    @tool
    def render_email_template(
        template: str, recipient_name: str, reference: str, sender_name: str = "The Northwind team"
    ) -> J:
        subject, body = TEMPLATES[template]
        values = {"name": recipient_name, "reference": reference, "sender": sender_name}
        return {"subject": subject.format(**values), "body": body.format(**values)}

    @tool
    def search_email_drafts(query: str) -> J:
        hits = [
            d
            for d in drafts.values()
            if _match_score(query, d["subject"], d["body"], " ".join(d["to"] + d["cc"]))
        ]
        return {"query": query, "drafts": hits}


_BINARY: dict[type[ast.operator], Callable[[Any, Any], Any]] = {
    ast.Add: operator.add,
    ast.Sub: operator.sub,
    ast.Mult: operator.mul,
    ast.Div: operator.truediv,
    ast.FloorDiv: operator.floordiv,
    ast.Mod: operator.mod,
    ast.Pow: operator.pow,
}
_FUNCTIONS: dict[str, Callable[..., float]] = {
    "sqrt": math.sqrt,
    "sin": math.sin,
    "cos": math.cos,
    "tan": math.tan,
    "log": math.log,
    "log10": math.log10,
    "exp": math.exp,
    "abs": abs,
    "round": round,
    "floor": math.floor,
    "ceil": math.ceil,
    "min": min,
    "max": max,
}
_CONSTANTS = {"pi": math.pi, "e": math.e, "tau": math.tau}


def _evaluate(node: ast.AST) -> Any:
    """Evaluate a parsed arithmetic expression: numbers, operators and a few math functions."""
    if isinstance(node, ast.Expression):
        return _evaluate(node.body)
    if isinstance(node, ast.Constant) and type(node.value) in (int, float):
        return node.value
    if isinstance(node, ast.Name) and node.id in _CONSTANTS:
        return _CONSTANTS[node.id]
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub | ast.UAdd):
        value = _evaluate(node.operand)
        return -value if isinstance(node.op, ast.USub) else value
    if isinstance(node, ast.BinOp) and type(node.op) in _BINARY:
        left, right = _evaluate(node.left), _evaluate(node.right)
        if isinstance(node.op, ast.Pow) and abs(right) > 1000:
            raise ValueError("exponents are limited to 1000")
        if isinstance(node.op, ast.Div | ast.FloorDiv | ast.Mod) and right == 0:
            raise ValueError("division by zero")
        return _BINARY[type(node.op)](left, right)
    if (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Name)
        and node.func.id in _FUNCTIONS
        and not node.keywords
    ):
        return _FUNCTIONS[node.func.id](*(_evaluate(a) for a in node.args))
    raise ValueError(f"unsupported syntax in expression: {ast.dump(node)[:80]}")


def _maths(tool: _Domain, world: _World) -> None:

    @tool
    def add(a: float, b: float) -> J:
        return {"result": _finite(a + b)}

    @tool
    def subtract(a: float, b: float) -> J:
        return {"result": _finite(a - b)}

    @tool
    def multiply(a: float, b: float) -> J:
        return {"result": _finite(a * b)}

    @tool
    def divide(dividend: float, divisor: float) -> J:
        if divisor == 0:
            raise ValueError("division by zero: the divisor must not be 0")
        return {"result": _finite(dividend / divisor)}

    @tool
    def power(base: float, exponent: float) -> J:
        if abs(exponent) > 1000:
            raise ValueError("exponents are limited to +/-1000")
        if base == 0 and exponent < 0:
            raise ValueError("0 cannot be raised to a negative power")
        if base < 0 and not float(exponent).is_integer():
            raise ValueError("a negative base needs an integer exponent")
        return {"result": _finite(float(base) ** exponent)}

    @tool
    def evaluate_expression(expression: str) -> J:
        try:
            tree = ast.parse(expression.strip(), mode="eval")
        except SyntaxError:
            raise ValueError(f"cannot parse expression {expression!r}") from None
        try:
            value = _evaluate(tree)
        except (ArithmeticError, TypeError) as exc:
            raise ValueError(f"cannot evaluate {expression!r}: {exc}") from None
        return {"expression": expression, "result": _finite(value)}

    @tool
    def statistics_summary(values: list[float]) -> J:
        data = sorted(values)
        if not data:
            raise ValueError("values must not be empty")
        quartiles = statistics.quantiles(data, n=4) if len(data) > 1 else [data[0]] * 3
        return {
            "count": len(data),
            "sum": _finite(math.fsum(data)),
            "mean": statistics.fmean(data),
            "median": statistics.median(data),
            "mode": statistics.mode(data),
            "stdev": statistics.stdev(data) if len(data) > 1 else 0.0,
            "min": data[0],
            "max": data[-1],
            "q1": quartiles[0],
            "q3": quartiles[2],
        }

    @tool
    def linear_regression(x_values: list[float], y_values: list[float]) -> J:
        if len(x_values) != len(y_values):
            raise ValueError("x_values and y_values must have the same length")
        try:
            slope, intercept = statistics.linear_regression(x_values, y_values)
            r = statistics.correlation(x_values, y_values)
        except statistics.StatisticsError as exc:
            raise ValueError(str(exc)) from None
        return {"slope": slope, "intercept": intercept, "r": r, "r_squared": r * r}

    @tool
    def solve_quadratic(a: float, b: float, c: float) -> J:
        if a == 0:
            raise ValueError("a must not be 0 (that is a linear equation)")
        disc = b * b - 4 * a * c
        if disc >= 0:
            roots = sorted({(-b - math.sqrt(disc)) / (2 * a), (-b + math.sqrt(disc)) / (2 * a)})
            return {"discriminant": disc, "roots": roots, "complex": False}
        re_, im = -b / (2 * a), math.sqrt(-disc) / (2 * abs(a))
        return {
            "discriminant": disc,
            "roots": [f"{re_:g}-{im:g}i", f"{re_:g}+{im:g}i"],
            "complex": True,
        }

    @tool
    def prime_factors(n: int) -> J:
        if not 2 <= n <= 10**12:
            raise ValueError("n must be between 2 and 10^12")
        factors, rest, p = [], n, 2
        while p * p <= rest:
            while rest % p == 0:
                factors.append(p)
                rest //= p
            p += 1 if p == 2 else 2
        if rest > 1:
            factors.append(rest)
        return {"n": n, "is_prime": factors == [n], "prime_factors": factors}

    @tool
    def factorial(n: int) -> J:
        if not 0 <= n <= 500:
            raise ValueError("n must be between 0 and 500")
        return {"n": n, "factorial": str(math.factorial(n))}

    @tool
    def percent_change(old_value: float, new_value: float) -> J:
        if old_value == 0:
            raise ValueError("old_value must not be 0")
        change = (new_value - old_value) / abs(old_value) * 100
        return {
            "percent_change": round(change, 4),
            "direction": "up" if change > 0 else "down" if change < 0 else "flat",
        }

    @tool
    def percentage_of(percent: float, value: float) -> J:
        return {"result": _finite(value * percent / 100)}

    @tool
    def compound_interest(
        principal: float, annual_rate_percent: float, years: float, compounds_per_year: int = 12
    ) -> J:
        rate = annual_rate_percent / 100 / compounds_per_year
        future = _finite(principal * (1 + rate) ** (compounds_per_year * years))
        return {"future_value": _money(future), "interest_earned": _money(future - principal)}

    @tool
    def loan_payment(principal: float, annual_rate_percent: float, years: int) -> J:
        months = years * 12
        rate = annual_rate_percent / 100 / 12
        payment = (
            principal / months if rate == 0 else principal * rate / (1 - (1 + rate) ** -months)
        )
        return {
            "monthly_payment": _money(payment),
            "total_paid": _money(payment * months),
            "total_interest": _money(payment * months - principal),
        }


# Conversion factors to a base unit per dimension (temperature is handled separately).
UNIT_TABLES: dict[str, dict[str, float]] = {
    "length": {
        "mm": 0.001,
        "cm": 0.01,
        "m": 1.0,
        "km": 1000.0,
        "in": 0.0254,
        "ft": 0.3048,
        "yd": 0.9144,
        "mi": 1609.344,
        "nmi": 1852.0,
    },
    "mass": {
        "mg": 1e-6,
        "g": 0.001,
        "kg": 1.0,
        "t": 1000.0,
        "oz": 0.028349523125,
        "lb": 0.45359237,
        "st": 6.35029318,
    },
    "volume": {
        "ml": 0.001,
        "l": 1.0,
        "m3": 1000.0,
        "tsp": 0.00492892,
        "tbsp": 0.0147868,
        "cup": 0.2365882,
        "fl_oz": 0.0295735,
        "pint": 0.4731765,
        "quart": 0.9463529,
        "gallon": 3.7854118,
    },
    "speed": {"m_s": 1.0, "km_h": 1 / 3.6, "mph": 0.44704, "knot": 0.514444, "ft_s": 0.3048},
    "area": {
        "mm2": 1e-6,
        "cm2": 1e-4,
        "m2": 1.0,
        "km2": 1e6,
        "ha": 1e4,
        "acre": 4046.8564224,
        "sq_ft": 0.09290304,
        "sq_in": 0.00064516,
        "sq_mi": 2589988.110336,
    },
    "data_size": {
        "B": 1.0,
        "KB": 1e3,
        "MB": 1e6,
        "GB": 1e9,
        "TB": 1e12,
        "KiB": 1024.0,
        "MiB": 1024.0**2,
        "GiB": 1024.0**3,
        "TiB": 1024.0**4,
    },
    "energy": {
        "J": 1.0,
        "kJ": 1000.0,
        "cal": 4.184,
        "kcal": 4184.0,
        "Wh": 3600.0,
        "kWh": 3.6e6,
        "BTU": 1055.06,
    },
    "pressure": {
        "Pa": 1.0,
        "kPa": 1000.0,
        "bar": 1e5,
        "psi": 6894.757,
        "atm": 101325.0,
        "mmHg": 133.322,
    },
}

TEMPERATURE_UNITS = ("C", "F", "K")


def _to_kelvin(value: float, unit: str) -> float:
    return (
        value + 273.15 if unit == "C" else (value - 32) * 5 / 9 + 273.15 if unit == "F" else value
    )


def _from_kelvin(kelvin: float, unit: str) -> float:
    return (
        kelvin - 273.15
        if unit == "C"
        else (kelvin - 273.15) * 9 / 5 + 32
        if unit == "F"
        else kelvin
    )


def _units(tool: _Domain, world: _World) -> None:
    def converter(factors: dict[str, float]) -> Fn:
        def convert(value: float, from_unit: str, to_unit: str) -> J:
            result = value * factors[from_unit] / factors[to_unit]
            return {
                "value": value,
                "from_unit": from_unit,
                "to_unit": to_unit,
                "result": round(result, 10),
            }

        return convert

    for dimension, factors in UNIT_TABLES.items():
        tool.add(f"convert_{dimension}", converter(factors))

    @tool
    def convert_temperature(value: float, from_unit: str, to_unit: str) -> J:
        kelvin = _to_kelvin(value, from_unit)
        if kelvin < 0:
            raise ValueError(f"{value} {from_unit} is below absolute zero")
        return {
            "value": value,
            "from_unit": from_unit,
            "to_unit": to_unit,
            "result": round(_from_kelvin(kelvin, to_unit), 4),
        }

    @tool
    def convert_units(value: float, from_unit: str, to_unit: str) -> J:
        if from_unit in TEMPERATURE_UNITS and to_unit in TEMPERATURE_UNITS:
            return {"dimension": "temperature", **convert_temperature(value, from_unit, to_unit)}
        for dimension, factors in UNIT_TABLES.items():
            if from_unit in factors and to_unit in factors:
                return {"dimension": dimension, **converter(factors)(value, from_unit, to_unit)}
        known = {u for f in UNIT_TABLES.values() for u in f} | set(TEMPERATURE_UNITS)
        bad = [u for u in (from_unit, to_unit) if u not in known]
        if bad:
            raise ValueError(f"unknown unit {bad[0]!r}; known units: {', '.join(sorted(known))}")
        raise ValueError(f"cannot convert {from_unit} to {to_unit}: they measure different things")


_DURATION_UNITS = {
    "w": 604800,
    "week": 604800,
    "weeks": 604800,
    "d": 86400,
    "day": 86400,
    "days": 86400,
    "h": 3600,
    "hr": 3600,
    "hrs": 3600,
    "hour": 3600,
    "hours": 3600,
    "m": 60,
    "min": 60,
    "mins": 60,
    "minute": 60,
    "minutes": 60,
    "s": 1,
    "sec": 1,
    "secs": 1,
    "second": 1,
    "seconds": 1,
}


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


AIRLINES = (
    ("AF", "Air France"),
    ("BA", "British Airways"),
    ("LH", "Lufthansa"),
    ("NH", "ANA"),
    ("UA", "United Airlines"),
    ("EK", "Emirates"),
    ("SQ", "Singapore Airlines"),
    ("QF", "Qantas"),
    ("DL", "Delta Air Lines"),
    ("KL", "KLM"),
)
CABINS = {"economy": 1.0, "premium_economy": 1.6, "business": 3.5, "first": 6.0}
HOTEL_NAMES = (
    "Grand Hotel",
    "Riverside Inn",
    "Central Suites",
    "Harbour View",
    "Park Residence",
    "Old Town Lodge",
)
CAR_CLASSES = {"economy": 35.0, "compact": 42.0, "midsize": 55.0, "suv": 78.0, "luxury": 140.0}


def _travel(tool: _Domain, world: _World) -> None:
    def flights(origin: _City, destination: _City, day: date, cabin: str) -> list[J]:
        if origin == destination:
            raise ValueError("origin and destination must be different cities")
        km = _between(origin, destination)
        minutes = round(km / 820 * 60 + 40)
        out = []
        for i in range(3 + _hash("nflights", origin.iata, destination.iata) % 3):
            code, airline = _pick(AIRLINES, "airline", origin.iata, destination.iata, i)
            number = f"{code}{100 + _hash('fno', origin.iata, destination.iata, i) % 900}"
            depart = 6 * 60 + (_hash("dep", origin.iata, destination.iata, i) % 64) * 15
            stops = 0 if km < 9000 or i % 2 == 0 else 1
            price = (60 + km * 0.09) * CABINS[cabin] * (
                0.8 + 0.5 * _unit("fare", number, day)
            ) + 90 * stops
            out.append(
                {
                    "flight_id": f"{origin.iata}-{destination.iata}-{day.isoformat()}-{number}",
                    "airline": airline,
                    "flight_number": number,
                    "from": origin.iata,
                    "to": destination.iata,
                    "departure_local": _hhmm(depart),
                    "duration": _span(minutes + 90 * stops),
                    "stops": stops,
                    "cabin": cabin,
                    "price_usd": _money(price),
                }
            )
        return sorted(out, key=lambda f: f["departure_local"])

    def hotel(hotel_id: str) -> J:
        match = re.fullmatch(r"htl_([a-z]{3})_(\d)", hotel_id.strip().lower())
        city = _AIRPORTS.get(match[1].upper()) if match else None
        if not match or city is None or int(match[2]) >= len(HOTEL_NAMES):
            raise ValueError(
                f"unknown hotel id {hotel_id!r}: expected e.g. htl_cdg_2 (from search_hotels)"
            )
        n = int(match[2])
        return {
            "hotel_id": hotel_id.strip().lower(),
            "name": f"{city.name} {HOTEL_NAMES[n]}",
            "city": city.name,
            "stars": 3 + _hash("stars", city.name, n) % 3,
            "rating": round(7 + 3 * _unit("rate", city.name, n), 1),
            "price_per_night_usd": _money(70 + _hash("night", city.name, n) % 260),
            "amenities": [
                a
                for a in ("wifi", "breakfast", "gym", "pool", "parking", "spa")
                if _hash("amenity", city.name, n, a) % 2
            ],
        }

    def stay(check_in: str, check_out: str) -> tuple[date, date, int]:
        start, end = _date(check_in, "check_in"), _date(check_out, "check_out")
        nights = (end - start).days
        if not 1 <= nights <= 60:
            raise ValueError("check_out must be 1 to 60 nights after check_in")
        return start, end, nights

    def book(kind: str, details: J, guest: str, total: float) -> J:
        if not guest.strip():
            raise ValueError("a guest or passenger name is required")
        bid = world.new_id("bk", 4000)
        world.bookings[bid] = {
            "booking_id": bid,
            "type": kind,
            "status": "confirmed",
            "name": guest.strip(),
            "total_usd": _money(total),
            **details,
            "confirmation_code": f"{_hash('pnr', bid, guest):X}"[:6],
        }
        return world.bookings[bid]

    @tool
    def search_flights(
        origin_city: str, destination_city: str, date: str, cabin: str = "economy"
    ) -> J:
        return {"flights": flights(_city(origin_city), _city(destination_city), _date(date), cabin)}

    @tool
    def get_flight_status(flight_number: str, date: str) -> J:
        number = flight_number.strip().upper().replace(" ", "")
        if not re.fullmatch(r"[A-Z0-9]{2}\d{1,4}", number):
            raise ValueError(f"invalid flight number {flight_number!r}, expected e.g. AF276")
        delay = max(0, _hash("delay", number, date) % 90 - 45)
        return {
            "flight_number": number,
            "date": _date(date).isoformat(),
            "status": "cancelled"
            if _hash("cx", number, date) % 50 == 0
            else "delayed"
            if delay
            else "on time",
            "delay_minutes": delay,
            "terminal": str(1 + _hash("term", number) % 3),
            "gate": _pick("ABCD", "gate", number, date) + str(1 + _hash("gno", number, date) % 40),
        }

    @tool
    def book_flight(flight_id: str, passenger_name: str, cabin: str = "economy") -> J:
        key = flight_id.strip().upper()
        match = re.fullmatch(r"([A-Z]{3})-([A-Z]{3})-(\d{4}-\d{2}-\d{2})-([A-Z0-9]{2}\d+)", key)
        if not match:
            raise ValueError(
                f"invalid flight id {flight_id!r}; use a flight_id from search_flights"
            )
        found = flights(_city(match[1]), _city(match[2]), _date(match[3]), cabin)
        hit = next((f for f in found if f["flight_id"] == key), None)
        if hit is None:
            raise ValueError(f"no flight {flight_id!r} on that route and date")
        return book("flight", {"flight": hit}, passenger_name, hit["price_usd"])

    @tool
    def search_hotels(
        city: str,
        check_in: str,
        check_out: str,
        guests: int = 2,
        max_price_per_night: float | None = None,
    ) -> J:
        place, (_, _, nights) = _city(city), stay(check_in, check_out)
        found = [hotel(f"htl_{place.iata.lower()}_{n}") for n in range(len(HOTEL_NAMES))]
        found = [
            dict(h, total_usd=_money(h["price_per_night_usd"] * nights * (1 + 0.15 * (guests > 2))))
            for h in found
            if max_price_per_night is None or h["price_per_night_usd"] <= max_price_per_night
        ]
        return {
            "city": place.name,
            "nights": nights,
            "hotels": sorted(found, key=lambda h: -h["rating"]),
        }

    @tool
    def get_hotel_details(hotel_id: str) -> J:
        return hotel(hotel_id)

    @tool
    def book_hotel(hotel_id: str, check_in: str, check_out: str, guest_name: str) -> J:
        h, (start, end, nights) = hotel(hotel_id), stay(check_in, check_out)
        details = {
            "hotel": h["name"],
            "hotel_id": h["hotel_id"],
            "check_in": start.isoformat(),
            "check_out": end.isoformat(),
            "nights": nights,
        }
        return book("hotel", details, guest_name, h["price_per_night_usd"] * nights)

    @tool
    def search_car_rentals(
        city: str, pickup_date: str, dropoff_date: str, car_class: str = "compact"
    ) -> J:
        place, (_, _, days) = _city(city), stay(pickup_date, dropoff_date)
        offers: list[J] = [
            {
                "company": company,
                "car_class": car_class,
                "daily_rate_usd": _money(
                    CAR_CLASSES[car_class] * (0.85 + 0.4 * _unit(company, place.name))
                ),
                "pickup": f"{place.iata} airport",
            }
            for company in ("Hertz", "Avis", "Sixt", "Europcar")
        ]
        for offer in offers:
            offer["total_usd"] = _money(offer["daily_rate_usd"] * days)
        return {
            "city": place.name,
            "days": days,
            "offers": sorted(offers, key=lambda o: o["total_usd"]),
        }

    @tool
    def get_booking(booking_id: str) -> J:
        return world.lookup(world.bookings, "booking", booking_id)

    @tool
    def list_bookings() -> J:
        return {"bookings": list(world.bookings.values())}

    @tool
    def cancel_booking(booking_id: str) -> J:
        booking = world.lookup(world.bookings, "booking", booking_id)
        if booking["status"] == "cancelled":
            raise ValueError(f"booking {booking_id} is already cancelled")
        booking["status"] = "cancelled"
        return booking

    @tool
    def get_airport_info(airport: str) -> J:
        place = _city(airport)
        return {
            "iata": place.iata,
            "city": place.name,
            "country": place.country,
            "timezone": place.tz,
            "latitude": place.lat,
            "longitude": place.lon,
        }


PRIORITIES = ("low", "normal", "high", "urgent")
TICKET_STATUSES = ("open", "pending", "resolved", "closed")
SLA_HOURS = {"low": (24, 120), "normal": (8, 72), "high": (4, 24), "urgent": (1, 8)}


def _support(tool: _Domain, world: _World) -> None:
    def brief(t: J) -> J:
        return {
            k: t[k]
            for k in ("ticket_id", "customer_id", "subject", "priority", "status", "created_at")
        }

    @tool
    def create_support_ticket(
        customer_id: str, subject: str, description: str, created_at: str, priority: str = "normal"
    ) -> J:
        cid = world.customer(customer_id)["customer_id"]
        tickets = world.tickets
        tid = world.new_id("tkt")
        tickets[tid] = {
            "ticket_id": tid,
            "customer_id": cid,
            "subject": subject.strip(),
            "description": description,
            "priority": priority,
            "status": "open",
            "assignee_id": None,
            "created_at": _datetime(created_at, "created_at").isoformat(timespec="minutes"),
            "comments": [],
            "escalation_level": 0,
        }
        return tickets[tid]

    @tool
    def get_support_ticket(ticket_id: str) -> J:
        return world.ticket(ticket_id)

    @tool
    def list_support_tickets(status: str | None = None, priority: str | None = None) -> J:
        hits = [
            brief(t)
            for t in world.tickets.values()
            if status in (None, t["status"]) and priority in (None, t["priority"])
        ]
        return {"count": len(hits), "tickets": hits}

    @tool
    def search_support_tickets(query: str) -> J:
        ranked = sorted(
            (
                -_match_score(
                    query, t["subject"], t["description"], *(c["text"] for c in t["comments"])
                ),
                tid,
            )
            for tid, t in world.tickets.items()
        )
        return {
            "query": query,
            "tickets": [brief(world.tickets[tid]) for s, tid in ranked if s < 0],
        }

    @tool
    def update_ticket_status(ticket_id: str, status: str) -> J:
        ticket = world.ticket(ticket_id)
        if ticket["status"] == "closed" and status != "closed":
            raise ValueError(f"ticket {ticket['ticket_id']} is closed; create a new ticket instead")
        ticket["status"] = status
        return brief(ticket)

    @tool
    def assign_ticket(ticket_id: str, agent_id: str) -> J:
        ticket, agent = world.ticket(ticket_id), world.employee(agent_id)
        if agent["department"] != "Support":
            raise ValueError(
                f"{agent['employee_id']} ({agent['name']}) is in {agent['department']}, not Support"
            )
        ticket["assignee_id"] = agent["employee_id"]
        return {**brief(ticket), "assignee": agent["name"]}

    @tool
    def add_ticket_comment(ticket_id: str, comment: str, internal: bool = False) -> J:
        ticket = world.ticket(ticket_id)
        ticket["comments"].append({"text": comment, "internal": internal})
        return {"ticket_id": ticket["ticket_id"], "comments": len(ticket["comments"])}

    @tool
    def escalate_ticket(ticket_id: str, reason: str) -> J:
        ticket = world.ticket(ticket_id)
        if ticket["status"] in ("resolved", "closed"):
            raise ValueError(f"ticket {ticket['ticket_id']} is {ticket['status']}; reopen it first")
        ticket["priority"] = PRIORITIES[min(PRIORITIES.index(ticket["priority"]) + 1, 3)]
        ticket["escalation_level"] += 1
        ticket["comments"].append({"text": f"Escalated: {reason}", "internal": True})
        return brief(ticket) | {"escalation_level": ticket["escalation_level"]}

    @tool
    def get_ticket_sla(ticket_id: str, as_of: str) -> J:
        ticket = world.ticket(ticket_id)
        created, now = datetime.fromisoformat(ticket["created_at"]), _datetime(as_of, "as_of")
        respond, resolve = SLA_HOURS[ticket["priority"]]
        respond_by, resolve_by = (
            created + timedelta(hours=respond),
            created + timedelta(hours=resolve),
        )
        done = ticket["status"] in ("resolved", "closed")
        return {
            "ticket_id": ticket["ticket_id"],
            "priority": ticket["priority"],
            "respond_by": respond_by.isoformat(timespec="minutes"),
            "resolve_by": resolve_by.isoformat(timespec="minutes"),
            "response_breached": not ticket["comments"] and now > respond_by and not done,
            "resolution_breached": not done and now > resolve_by,
            "hours_left": round((resolve_by - now).total_seconds() / 3600, 1),
        }

    @tool
    def list_customer_tickets(customer_id: str) -> J:
        cid = world.customer(customer_id)["customer_id"]
        return {
            "customer_id": cid,
            "tickets": [brief(t) for t in world.tickets.values() if t["customer_id"] == cid],
        }

    @tool
    def suggest_help_articles(ticket_id: str) -> J:
        ticket = world.ticket(ticket_id)
        hits = _kb_search(ticket["subject"], 3)
        return {
            "ticket_id": ticket["ticket_id"],
            "articles": [{"article_id": a, "title": KB[a][0]} for a in hits],
        }


LEAVE_TYPES = {"vacation": 25, "sick": 10, "parental": 90, "unpaid": 30}
SALARY_BANDS = {f"L{n}": (38000 + 16000 * (n - 1), 52000 + 22000 * (n - 1)) for n in range(1, 8)}
OPEN_POSITIONS = (
    ("job_101", "Senior Backend Engineer", "Engineering", "L5", "Paris"),
    ("job_102", "Site Reliability Engineer", "Engineering", "L4", "Berlin"),
    ("job_103", "Account Executive, DACH", "Sales", "L3", "Berlin"),
    ("job_104", "Support Agent (Japanese speaking)", "Support", "L2", "Singapore"),
    ("job_105", "Financial Analyst", "Finance", "L3", "London"),
    ("job_106", "Product Marketing Manager", "Marketing", "L4", "New York"),
)


def _hr(tool: _Domain, world: _World) -> None:
    def brief(e: J) -> J:
        return {k: e[k] for k in ("employee_id", "name", "role", "department", "email")}

    def balance(employee_id: str, year: int) -> J:
        emp = world.employee(employee_id)
        used = {
            kind: _hash("leave", emp["employee_id"], year, kind) % (days // 3 + 1)
            for kind, days in LEAVE_TYPES.items()
        }
        for req in world.time_off.values():
            if req["employee_id"] == emp["employee_id"] and req["start_date"][:4] == str(year):
                used[req["leave_type"]] += req["business_days"]
        return {
            kind: {
                "allowance": LEAVE_TYPES[kind],
                "used": used[kind],
                "remaining": LEAVE_TYPES[kind] - used[kind],
            }
            for kind in LEAVE_TYPES
        }

    @tool
    def lookup_employee(employee_id: str) -> J:
        return dict(world.employee(employee_id))

    @tool
    def search_employees(query: str, department: str | None = None) -> J:
        ranked = sorted(
            (-_match_score(query, e["name"], e["role"], e["office"], e["department"]), eid)
            for eid, e in world.employees.items()
            if department in (None, e["department"])
        )
        return {
            "query": query,
            "employees": [brief(world.employees[eid]) for s, eid in ranked if s < 0][:20],
        }

    @tool
    def list_departments() -> J:
        out = []
        for dept in ("Executive", *DEPARTMENTS):
            members = [e for e in world.employees.values() if e["department"] == dept]
            head = next(e for e in members if e["level"] in ("L6", "L7"))
            out.append(
                {
                    "department": dept,
                    "head": head["name"],
                    "head_id": head["employee_id"],
                    "headcount": len(members),
                }
            )
        return {"departments": out}

    @tool
    def get_direct_reports(employee_id: str) -> J:
        boss = world.employee(employee_id)
        reports = [
            brief(e) for e in world.employees.values() if e["manager_id"] == boss["employee_id"]
        ]
        return {"manager": brief(boss), "direct_reports": reports}

    @tool
    def get_manager_chain(employee_id: str) -> J:
        chain, current = [], world.employee(employee_id)
        while current["manager_id"]:
            current = world.employee(current["manager_id"])
            chain.append(brief(current))
        return {"employee_id": employee_id.strip().lower(), "managers": chain}

    @tool
    def get_leave_balance(employee_id: str, year: int = 2025) -> J:
        return {
            "employee_id": world.employee(employee_id)["employee_id"],
            "year": year,
            "balance": balance(employee_id, year),
        }

    @tool
    def request_time_off(
        employee_id: str, start_date: str, end_date: str, leave_type: str = "vacation"
    ) -> J:
        emp = world.employee(employee_id)
        start, end = _date(start_date, "start_date"), _date(end_date, "end_date")
        if end < start:
            raise ValueError("end_date must not be before start_date")
        days = _business_days(start, end + timedelta(days=1))
        if days == 0:
            raise ValueError("the request covers no working days")
        left = balance(employee_id, start.year)[leave_type]["remaining"]
        if days > left:
            raise ValueError(
                f"{days} working days requested but only {left} {leave_type} days remain"
            )
        rid = world.new_id("pto", 800)
        world.time_off[rid] = {
            "request_id": rid,
            "employee_id": emp["employee_id"],
            "leave_type": leave_type,
            "start_date": start.isoformat(),
            "end_date": end.isoformat(),
            "business_days": days,
            "status": "pending_approval",
            "approver_id": emp["manager_id"],
        }
        return world.time_off[rid]

    @tool
    def list_time_off_requests(employee_id: str) -> J:
        eid = world.employee(employee_id)["employee_id"]
        return {
            "employee_id": eid,
            "requests": [r for r in world.time_off.values() if r["employee_id"] == eid],
        }

    @tool
    def get_salary_band(level: str) -> J:
        low, high = SALARY_BANDS[level]
        return {
            "level": level,
            "currency": "USD",
            "min": low,
            "mid": (low + high) // 2,
            "max": high,
        }

    @tool
    def list_open_positions(department: str | None = None) -> J:
        keys = ("job_id", "title", "department", "level", "location")
        return {
            "positions": [
                dict(zip(keys, p, strict=True))
                for p in OPEN_POSITIONS
                if department in (None, p[2])
            ]
        }

    @tool
    def list_public_holidays(country: str, year: int) -> J:
        days = _holidays(country, year)
        return {
            "country": _holiday_country(country),
            "year": year,
            "holidays": [
                {"date": d.isoformat(), "name": n, "weekday": DAY_NAMES[d.weekday()]}
                for d, n in days.items()
            ],
        }


STOCK_REASONS = ("received", "sold", "damaged", "returned", "count_correction")


def _inventory(tool: _Domain, world: _World) -> None:
    def info(p: _Product) -> J:
        return {
            "sku": p.sku,
            "name": p.name,
            "category": p.category,
            "price_usd": p.price_usd,
            "weight_kg": p.weight_kg,
            "reorder_point": p.reorder_point,
            "supplier": p.supplier,
        }

    def reserved(sku: str, warehouse: str) -> int:
        return sum(
            r["quantity"]
            for r in world.reservations.values()
            if (r["sku"], r["warehouse"]) == (sku, warehouse)
        )

    def levels(p: _Product) -> J:
        return {
            wh: {
                "on_hand": world.stock[p.sku, wh],
                "reserved": reserved(p.sku, wh),
                "available": world.stock[p.sku, wh] - reserved(p.sku, wh),
            }
            for wh in WAREHOUSES
        }

    @tool
    def get_product(sku: str) -> J:
        return info(_product(sku))

    @tool
    def search_products(query: str, category: str | None = None) -> J:
        hits = sorted(
            (-_match_score(query, p.name, p.supplier, p.category), p.sku)
            for p in PRODUCTS
            if category in (None, p.category)
        )
        return {
            "query": query,
            "products": [info(_PRODUCT_INDEX[s]) for score, s in hits if score < 0],
        }

    @tool
    def list_product_categories() -> J:
        return {"categories": {c: sum(p.category == c for p in PRODUCTS) for c in CATEGORIES}}

    @tool
    def check_stock(sku: str, warehouse: str | None = None) -> J:
        p = _product(sku)
        stock = levels(p)
        if warehouse:
            stock = {warehouse: stock[_warehouse(warehouse)]}
        return {
            "sku": p.sku,
            "name": p.name,
            "stock": stock,
            "total_available": sum(s["available"] for s in stock.values()),
        }

    @tool
    def list_warehouses() -> J:
        return {
            "warehouses": [
                {
                    "code": wh,
                    "name": name,
                    "city": city,
                    "units_on_hand": sum(world.stock[p.sku, wh] for p in PRODUCTS),
                }
                for wh, (name, city) in WAREHOUSES.items()
            ]
        }

    @tool
    def list_low_stock_items(warehouse: str | None = None) -> J:
        rows = [
            {
                "sku": p.sku,
                "name": p.name,
                "warehouse": wh,
                "available": s["available"],
                "reorder_point": p.reorder_point,
            }
            for p in PRODUCTS
            for wh, s in levels(p).items()
            if warehouse in (None, wh) and s["available"] <= p.reorder_point
        ]
        return {"count": len(rows), "items": rows}

    @tool
    def adjust_stock(sku: str, warehouse: str, quantity_change: int, reason: str) -> J:
        p, wh = _product(sku), _warehouse(warehouse)
        if quantity_change == 0:
            raise ValueError("quantity_change must not be 0")
        new = world.stock[p.sku, wh] + quantity_change
        if new < reserved(p.sku, wh):
            raise ValueError(
                f"only {world.stock[p.sku, wh]} on hand ({reserved(p.sku, wh)} reserved) at {wh}"
            )
        world.stock[p.sku, wh] = new
        return {"sku": p.sku, "warehouse": wh, "on_hand": new, "reason": reason}

    @tool
    def transfer_stock(sku: str, from_warehouse: str, to_warehouse: str, quantity: int) -> J:
        p, src, dst = _product(sku), _warehouse(from_warehouse), _warehouse(to_warehouse)
        if src == dst:
            raise ValueError("from_warehouse and to_warehouse must differ")
        available = world.stock[p.sku, src] - reserved(p.sku, src)
        if not 0 < quantity <= available:
            raise ValueError(f"can move 1 to {available} units of {p.sku} from {src}")
        world.stock[p.sku, src] -= quantity
        world.stock[p.sku, dst] += quantity
        return {
            "sku": p.sku,
            "moved": quantity,
            src: world.stock[p.sku, src],
            dst: world.stock[p.sku, dst],
        }

    @tool
    def reserve_stock(sku: str, warehouse: str, quantity: int, order_id: str) -> J:
        p, wh = _product(sku), _warehouse(warehouse)
        available = world.stock[p.sku, wh] - reserved(p.sku, wh)
        if not 0 < quantity <= available:
            raise ValueError(f"only {available} units of {p.sku} available at {wh}")
        rid = world.new_id("res", 900)
        world.reservations[rid] = {
            "reservation_id": rid,
            "sku": p.sku,
            "warehouse": wh,
            "quantity": quantity,
            "order_id": order_id,
        }
        return world.reservations[rid]

    @tool
    def get_reorder_suggestion(sku: str) -> J:
        p = _product(sku)
        target = 3 * p.reorder_point
        rows = {
            wh: max(0, target - s["available"])
            for wh, s in levels(p).items()
            if s["available"] <= p.reorder_point
        }
        total = sum(rows.values())
        return {
            "sku": p.sku,
            "supplier": p.supplier,
            "reorder": rows,
            "total_units": total,
            "estimated_cost_usd": _money(total * p.price_usd * 0.55),
        }

    @tool
    def get_product_price(sku: str, quantity: int = 1, currency: str = "USD") -> J:
        p = _product(sku)
        discount = 15 if quantity >= 100 else 10 if quantity >= 50 else 5 if quantity >= 10 else 0
        unit = _convert(p.price_usd, "USD", currency) * (1 - discount / 100)
        return {
            "sku": p.sku,
            "quantity": quantity,
            "currency": currency,
            "unit_price": round(unit, 2),
            "volume_discount_percent": discount,
            "total": round(unit * quantity, 2),
        }


KB: dict[str, tuple[str, str, str]] = {
    "kb_001": (
        "Return policy",
        "orders",
        "Items can be returned within 30 days of delivery. Open a return (RMA) from the order "
        "page; we email a prepaid return label. Refunds are issued within 5 business days "
        "after the return arrives at the warehouse.",
    ),
    "kb_002": (
        "Shipping times and carriers",
        "orders",
        "Economy shipping takes about 6 days, standard 4, express 2 and overnight 1 business "
        "day, plus extra days for long distances. International economy parcels may take "
        "two more days for customs.",
    ),
    "kb_003": (
        "Tracking a package",
        "orders",
        "Every shipped order has a tracking number. Use the carrier prefix (1Z for UPS, FX "
        "for FedEx, JD for DHL, 94 for USPS) to find the carrier and follow the scan events.",
    ),
    "kb_004": (
        "Resetting your password",
        "account",
        "Use the 'Forgot password' link on the sign-in page. The reset link is valid for 60 "
        "minutes. If the email does not arrive, check spam or contact support.",
    ),
    "kb_005": (
        "Invoice payment terms",
        "billing",
        "Invoices are payable within 30 days; enterprise customers have 60-day terms. Late "
        "invoices receive a reminder after 7 days. Pay by bank transfer, card or direct debit.",
    ),
    "kb_006": (
        "Refunds and chargebacks",
        "billing",
        "Refunds go back to the original payment method within 5 to 10 business days. "
        "Partial refunds are possible for damaged items. Duplicate charges are reversed "
        "automatically within 48 hours.",
    ),
    "kb_007": (
        "Vacation and time-off policy",
        "hr",
        "Employees get 25 vacation days and 10 sick days per year. Submit requests at least "
        "two weeks ahead; your manager approves them. Unused vacation days expire on 31 March.",
    ),
    "kb_008": (
        "Expense reimbursement",
        "hr",
        "Submit receipts within 30 days. Travel must be booked through the travel tools; "
        "economy class for flights under 6 hours. Meals are reimbursed up to 60 USD per day.",
    ),
    "kb_009": (
        "Support priorities and SLAs",
        "support",
        "Urgent tickets get a first response within 1 hour and a resolution within 8 hours; "
        "high within 4 and 24 hours; normal within 8 and 72 hours; low within 24 and 120 "
        "hours.",
    ),
    "kb_010": (
        "Damaged or wrong items",
        "orders",
        "If an item arrives damaged (a cracked screen, a broken part) or is not what you "
        "ordered, open a return with the reason 'damaged' or 'wrong_item' and attach photos; a "
        "replacement ships for free.",
    ),
    "kb_011": (
        "Data retention and privacy",
        "security",
        "Customer data is kept for 7 years for accounting. Customers can request an export "
        "or deletion of personal data; requests are handled within 30 days.",
    ),
    "kb_012": (
        "Reporting a security incident",
        "security",
        "Report suspected phishing or lost devices to the security team immediately. Do not "
        "forward suspicious emails; use the report button instead.",
    ),
    "kb_013": (
        "Remote work guidelines",
        "hr",
        "Employees may work remotely up to three days a week. Core hours are 10:00 to 16:00 "
        "local time. Company laptops must use the VPN on public networks.",
    ),
    "kb_014": (
        "Bulk and volume discounts",
        "billing",
        "Orders of 10 or more units of one product get 5% off, 50 or more 10%, and 100 or "
        "more 15%. Larger deals are quoted by your account manager.",
    ),
}
GLOSSARY = {
    "ETA": "Estimated time of arrival: the date a shipment is expected to be delivered.",
    "SLA": "Service-level agreement: the response and resolution times promised to customers.",
    "RMA": "Return merchandise authorisation: the id of an approved product return.",
    "SKU": "Stock keeping unit: a unique code identifying a product in inventory.",
    "MRR": "Monthly recurring revenue: subscription revenue normalised to one month.",
    "ARR": "Annual recurring revenue: twelve times the monthly recurring revenue.",
    "Churn": "The share of customers who stop buying or cancel in a period.",
    "NPS": "Net promoter score: % promoters minus % detractors, from -100 to 100.",
    "PTO": "Paid time off: vacation and other paid leave days.",
    "CRM": "Customer relationship management: the system holding customer records.",
    "AQI": "Air quality index: a 0-500 scale where lower means cleaner air.",
    "VAT": "Value-added tax: a consumption tax charged as a percentage of the price.",
}


def _kb_search(query: str, limit: int) -> list[str]:
    ranked = sorted(
        (-(2 * _match_score(query, title) + _match_score(query, body, category)), aid)
        for aid, (title, category, body) in KB.items()
    )
    best = -ranked[0][0]
    # title words count double; weak matches (under half the best score) are dropped
    return [aid for score, aid in ranked if score < 0 and -2 * score >= best][:limit]


def _knowledge(tool: _Domain, world: _World) -> None:
    def article(aid: str) -> J:
        key = aid.strip().lower()
        if key not in KB:
            raise ValueError(f"unknown article {aid!r}; ids run from kb_001 to kb_{len(KB):03d}")
        title, category, body = KB[key]
        return {"article_id": key, "title": title, "category": category, "body": body}

    @tool
    def search_knowledge_base(query: str, limit: int = 3) -> J:
        hits = [article(a) for a in _kb_search(query, limit)]
        return {"query": query, "results": [{**a, "body": a["body"][:160]} for a in hits]}

    @tool
    def get_kb_article(article_id: str) -> J:
        return article(article_id)

    @tool
    def list_kb_articles(category: str | None = None) -> J:
        return {
            "articles": [
                {"article_id": a, "title": t, "category": c}
                for a, (t, c, _) in KB.items()
                if category in (None, c)
            ]
        }

    @tool
    def answer_policy_question(question: str) -> J:
        hits = _kb_search(question, 1)
        if not hits:
            return {"question": question, "answer": None, "note": "no matching article"}
        title, _, body = KB[hits[0]]
        sentences = re.split(r"(?<=\.)\s+", body)
        best = max(sentences, key=lambda s: _match_score(question, s))
        return {
            "question": question,
            "answer": best,
            "source": {"article_id": hits[0], "title": title},
        }

    @tool
    def get_related_articles(article_id: str) -> J:
        base = article(article_id)
        ranked = sorted(
            (
                KB[a][1] != base["category"],
                -_match_score(base["title"] + " " + base["body"], KB[a][2]),
                a,
            )
            for a in KB
            if a != base["article_id"]
        )
        hits = [a for *_, a in ranked]
        return {
            "article_id": base["article_id"],
            "related": [{"article_id": a, "title": KB[a][0]} for a in hits[:3]],
        }

    @tool
    def define_glossary_term(term: str) -> J:
        for key, meaning in GLOSSARY.items():
            if key.lower() == term.strip().lower():
                return {"term": key, "definition": meaning}
        raise ValueError(f"{term!r} is not in the glossary; known terms: {', '.join(GLOSSARY)}")


CASES = ("upper", "lower", "title", "sentence", "snake", "kebab", "camel", "pascal", "constant")


def _case_words(text: str) -> list[str]:
    spaced = re.sub(r"(?<=[a-z0-9])(?=[A-Z])", " ", text)
    return [w.lower() for w in re.findall(r"[A-Za-z0-9]+", spaced)]


def _text(tool: _Domain, world: _World) -> None:
    @tool
    def count_words(text: str) -> J:
        return {
            "words": len(text.split()),
            "characters": len(text),
            "characters_without_spaces": len(re.sub(r"\s", "", text)),
            "sentences": len(re.findall(r"[^.!?]+[.!?]+", text)) or (1 if text.strip() else 0),
            "lines": len(text.splitlines()),
            "paragraphs": len([p for p in re.split(r"\n\s*\n", text) if p.strip()]),
        }

    @tool
    def slugify(text: str, separator: str = "-") -> J:
        slug = separator.join(_words(text))
        if not slug:
            raise ValueError("the text has no letters or digits to build a slug from")
        return {"slug": slug}

    @tool
    def convert_case(text: str, case: str) -> J:
        words = _case_words(text)
        out = {
            "upper": text.upper(),
            "lower": text.lower(),
            "title": text.title(),
            "sentence": text[:1].upper() + text[1:].lower(),
            "snake": "_".join(words),
            "kebab": "-".join(words),
            "camel": words[0] + "".join(w.title() for w in words[1:]) if words else "",
            "pascal": "".join(w.title() for w in words),
            "constant": "_".join(words).upper(),
        }[case]
        return {"result": out}

    @tool
    def truncate_text(text: str, max_length: int, ellipsis: str = "…") -> J:
        if len(text) <= max_length:
            return {"result": text, "truncated": False}
        if len(ellipsis) >= max_length:
            raise ValueError("max_length must be longer than the ellipsis")
        cut = text[: max_length - len(ellipsis)]
        if " " in cut.strip():
            cut = cut[: cut.rstrip().rfind(" ")]
        return {"result": cut.rstrip() + ellipsis, "truncated": True}

    @tool
    def extract_emails(text: str) -> J:
        found = re.findall(r"[\w.+-]+@[\w-]+(?:\.[\w-]+)*\.[A-Za-z]{2,}", text)
        return {"emails": list(dict.fromkeys(found))}

    @tool
    def extract_urls(text: str) -> J:
        found = [u.rstrip(".,;:!?)") for u in re.findall(r"https?://[^\s<>\"']+", text)]
        return {"urls": list(dict.fromkeys(found))}

    @tool
    def word_frequency(text: str, top_n: int = 10, skip_stopwords: bool = True) -> J:
        counts: dict[str, int] = {}
        for w in _words(text):
            if not (skip_stopwords and w in STOPWORDS):
                counts[w] = counts.get(w, 0) + 1
        ranked = sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))
        return {"words": [{"word": w, "count": c} for w, c in ranked[:top_n]]}

    @tool
    def normalize_whitespace(text: str) -> J:
        lines = [" ".join(line.split()) for line in text.splitlines()]
        return {"result": re.sub(r"\n{3,}", "\n\n", "\n".join(lines)).strip()}

    @tool
    def text_similarity(text_a: str, text_b: str) -> J:
        a, b = text_a.split(), text_b.split()
        matcher = difflib.SequenceMatcher(None, a, b)
        changes = [
            {"op": op, "from": " ".join(a[i1:i2]), "to": " ".join(b[j1:j2])}
            for op, i1, i2, j1, j2 in matcher.get_opcodes()
            if op != "equal"
        ]
        return {
            "similarity": round(difflib.SequenceMatcher(None, text_a, text_b).ratio(), 4),
            "word_changes": changes[:50],
        }

    @tool
    def base64_encode(text: str) -> J:
        return {"base64": base64.b64encode(text.encode()).decode()}

    @tool
    def base64_decode(data: str) -> J:
        try:
            return {"text": base64.b64decode(data.strip(), validate=True).decode()}
        except (ValueError, UnicodeDecodeError):
            raise ValueError("data is not valid Base64-encoded UTF-8 text") from None

    @tool
    def hash_text(text: str, algorithm: str = "sha256") -> J:
        return {"algorithm": algorithm, "hex": hashlib.new(algorithm, text.encode()).hexdigest()}


def _load_json(text: str, what: str = "json_text") -> Any:
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise ValueError(
            f"{what} is not valid JSON: {exc.msg} at line {exc.lineno} column {exc.colno}"
        ) from None


def _load_csv(text: str, delimiter: str = ",") -> list[dict[str, str]]:
    rows = list(csv.DictReader(io.StringIO(text.strip()), delimiter=delimiter))
    if not rows:
        raise ValueError("the CSV needs a header row and at least one data row")
    return rows


def _dump_csv(rows: list[dict[str, Any]], columns: list[str]) -> str:
    out = io.StringIO()
    writer = csv.DictWriter(out, fieldnames=columns, lineterminator="\n", extrasaction="ignore")
    writer.writeheader()
    writer.writerows(rows)
    return out.getvalue()


def _number(value: Any) -> float | None:
    try:
        return float(value)
    except (TypeError, ValueError):
        return None


def _merge(base: Any, override: Any) -> Any:
    if isinstance(base, dict) and isinstance(override, dict):
        return {**base, **{k: _merge(base.get(k), v) for k, v in override.items()}}
    return override


def _data(tool: _Domain, world: _World) -> None:
    @tool
    def validate_json(json_text: str) -> J:
        try:
            value = json.loads(json_text)
        except json.JSONDecodeError as exc:
            return {"valid": False, "error": exc.msg, "line": exc.lineno, "column": exc.colno}
        return {"valid": True, "type": type(value).__name__}

    @tool
    def pretty_print_json(json_text: str, indent: int = 2, sort_keys: bool = False) -> str:
        return json.dumps(
            _load_json(json_text), indent=indent, sort_keys=sort_keys, ensure_ascii=False
        )

    @tool
    def minify_json(json_text: str) -> str:
        return json.dumps(_load_json(json_text), separators=(",", ":"), ensure_ascii=False)

    @tool
    def get_json_value(json_text: str, path: str) -> J:
        value = _load_json(json_text)
        for step in [s for s in path.split(".") if s]:
            if isinstance(value, dict) and step in value:
                value = value[step]
            elif (
                isinstance(value, list)
                and re.fullmatch(r"-?\d+", step)
                and -len(value) <= int(step) < len(value)
            ):
                value = value[int(step)]
            else:
                raise ValueError(f"path {path!r}: no {step!r} at this level")
        return {"path": path, "value": value}

    @tool
    def merge_json_objects(base_json: str, override_json: str) -> J:
        base, override = (
            _load_json(base_json, "base_json"),
            _load_json(override_json, "override_json"),
        )
        if not isinstance(base, dict) or not isinstance(override, dict):
            raise ValueError("both documents must be JSON objects")
        return {"merged": _merge(base, override)}

    @tool
    def csv_to_json(csv_text: str, delimiter: str = ",") -> J:
        rows = _load_csv(csv_text, delimiter)
        return {"rows": rows, "count": len(rows)}

    @tool
    def json_to_csv(json_text: str) -> str:
        rows = _load_json(json_text)
        if not isinstance(rows, list) or not rows or not all(isinstance(r, dict) for r in rows):
            raise ValueError("json_text must be a non-empty array of objects")
        columns = list(dict.fromkeys(k for r in rows for k in r))
        flat = [
            {k: json.dumps(v) if isinstance(v, dict | list) else v for k, v in r.items()}
            for r in rows
        ]
        return _dump_csv(flat, columns)

    @tool
    def summarize_csv(csv_text: str) -> J:
        rows = _load_csv(csv_text)
        columns: J = {}
        for name in rows[0]:
            values = [r[name] for r in rows]
            numbers = [n for n in map(_number, values) if n is not None]
            if numbers and len(numbers) == len(values):
                columns[name] = {
                    "type": "number",
                    "min": min(numbers),
                    "max": max(numbers),
                    "mean": round(statistics.fmean(numbers), 4),
                    "sum": math.fsum(numbers),
                }
            else:
                columns[name] = {"type": "text", "distinct": len(set(values))}
        return {"rows": len(rows), "columns": columns}

    @tool
    def filter_csv_rows(csv_text: str, column: str, operator: str, value: str) -> str:
        rows = _load_csv(csv_text)
        if column not in rows[0]:
            raise ValueError(f"no column {column!r}; columns: {', '.join(rows[0])}")

        def keep(cell: str) -> bool:
            a, b = _number(cell), _number(value)
            if operator in ("greater_than", "less_than"):
                if a is None or b is None:
                    raise ValueError(f"{operator} needs numbers; got {cell!r} and {value!r}")
                return a > b if operator == "greater_than" else a < b
            if operator == "contains":
                return value.lower() in cell.lower()
            same = a == b if a is not None and b is not None else cell == value
            return same if operator == "equals" else not same

        return _dump_csv([r for r in rows if keep(r[column])], list(rows[0]))

    @tool
    def sort_csv_rows(csv_text: str, column: str, descending: bool = False) -> str:
        rows = _load_csv(csv_text)
        if column not in rows[0]:
            raise ValueError(f"no column {column!r}; columns: {', '.join(rows[0])}")
        numeric = all(_number(r[column]) is not None for r in rows)
        if numeric:
            rows.sort(key=lambda r: float(r[column]), reverse=descending)
        else:
            rows.sort(key=lambda r: r[column], reverse=descending)
        return _dump_csv(rows, list(rows[0]))

    @tool
    def validate_json_schema(json_text: str, schema_json: str) -> J:
        document, schema = _load_json(json_text), _load_json(schema_json, "schema_json")
        try:
            Draft202012Validator.check_schema(schema)
        except SchemaError as exc:
            raise ValueError(f"schema_json is not a valid JSON Schema: {exc.message}") from None
        errors = [
            {"path": "/".join(map(str, e.absolute_path)) or "<root>", "message": e.message}
            for e in Draft202012Validator(schema).iter_errors(document)
        ]
        return {"valid": not errors, "errors": errors[:50]}


# == the catalog =============================================================================

_BUILDERS: tuple[tuple[str, Callable[[_Domain, _World], None]], ...] = (
    ("weather", _weather),
    ("shipping", _shipping),
    ("crm", _crm),
    ("billing", _billing),
    ("files", _files),
    ("calendar", _calendar),
    ("maths", _maths),
    ("units", _units),
    ("time", _time),
    ("currency", _currency_domain),
    ("travel", _travel),
    ("support", _support),
    ("hr", _hr),
    ("inventory", _inventory),
    ("email", _email),
    ("notes", _notes),
    ("knowledge", _knowledge),
    ("geography", _geography),
    ("text", _text),
    ("data", _data),
)


def implementations() -> dict[str, tuple[str, Fn]]:
    """Every tool implementation by name, as (namespace, function), bound to a fresh world."""
    world = _World()
    out: dict[str, tuple[str, Fn]] = {}
    for namespace, build in _BUILDERS:
        build(_Domain(namespace, out), world)
    return out


__all__ = ["implementations"]
