"""The shipping namespace: orders, parcels, carriers, rates and returns."""

from __future__ import annotations

import re
from datetime import date, timedelta
from typing import Any

from dtl_notebook.live.demo_tools.business import N_CUSTOMERS, PRODUCTS, WAREHOUSES
from dtl_notebook.live.demo_tools.fakes import _hash, _money, _pick, _sample
from dtl_notebook.live.demo_tools.places import _between, _city, _country
from dtl_notebook.live.demo_tools.registry import J, _Domain
from dtl_notebook.live.demo_tools.tables import _City, demo_data
from dtl_notebook.live.demo_tools.timekeeping import _date
from dtl_notebook.live.demo_tools.world import _World

DATA = demo_data()
CARRIERS = DATA.carriers
SERVICE_LEVELS = DATA.service_levels
ORDER_STAGES = ("processing", "shipped", "in_transit", "out_for_delivery", "delivered")
# Orders are generated as of this snapshot date (their status follows from it), never the clock.
DATA_AS_OF = date(2025, 6, 14)
# The demo order: cust_1001's parcel, still in transit (see support ticket tkt_1001).
PINNED_ORDERS = {42: ("cust_1001", 2)}
RETURN_REASONS = DATA.return_reasons


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
