"""The travel namespace: flights, hotels, car rentals and bookings."""

from __future__ import annotations

import re
from datetime import date

from dtl_notebook.live.demo_tools.fakes import _hash, _money, _pick, _unit
from dtl_notebook.live.demo_tools.places import _AIRPORTS, _between, _city
from dtl_notebook.live.demo_tools.registry import J, _Domain
from dtl_notebook.live.demo_tools.tables import _City, demo_data
from dtl_notebook.live.demo_tools.timekeeping import _date, _hhmm, _span
from dtl_notebook.live.demo_tools.world import _World

DATA = demo_data()
AIRLINES = DATA.airlines
CABINS = DATA.cabins
HOTEL_NAMES = DATA.hotel_names
CAR_CLASSES = DATA.car_classes


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
