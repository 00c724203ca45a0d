"""Orders and their delivery: the shipping tools of the lessons (order_42 is the demo order)."""

from __future__ import annotations

import re
from datetime import date, timedelta

from dtl_notebook.demo import places
from dtl_notebook.demo.derive import money, pick, sample, stable_hash
from dtl_notebook.demo.records import N_CUSTOMERS, PRODUCTS, WAREHOUSES, J, World, customer
from dtl_notebook.demo.world_data import _City, demo_data

CARRIERS = demo_data().carriers
SERVICE_LEVELS = demo_data().service_levels
ORDER_STAGES = ("processing", "shipped", "in_transit", "out_for_delivery", "delivered")
# Orders are generated as of this snapshot date (their status follows from it), never the clock.
DATA_AS_OF = date(2025, 6, 14)
# The demo order: cust_1001's parcel, still in transit (see support ticket tkt_1001).
PINNED_ORDERS = {42: ("cust_1001", 2)}
ETA_FIELDS = (
    "order_id",
    "status",
    "carrier",
    "service_level",
    "ship_date",
    "estimated_delivery",
    "destination_city",
    "tracking_number",
)


def _transit_days(origin: _City, destination: _City, service: str) -> int:
    km = places.between(origin, destination)
    extra = 0 if km < 800 else 1 if km < 3000 else 3
    if service in ("express", "overnight"):  # air freight: distance matters less
        extra = min(extra, 1)
    international = origin.country != destination.country
    return SERVICE_LEVELS[service] + extra + (2 if international and service == "economy" else 0)


def _origin_for(place: _City) -> str:
    if place.lon < -100:
        return "WH-WEST"
    if place.lon < -30:
        return "WH-EAST"
    return "WH-EU" if place.lon < 60 else "WH-APAC"


def _order(world: World, order_id: str) -> J:
    """The order as of DATA_AS_OF, with this world's changes applied."""
    key = order_id.strip().lower() if isinstance(order_id, str) else ""
    match = re.fullmatch(r"order_(\d{1,7})", key)
    if not match or int(match[1]) == 0:
        raise ValueError(
            f"unknown order id format {order_id!r}: expected order_<number>, e.g. order_42"
        )
    n = int(match[1])
    key = f"order_{n}"
    pinned_customer, pinned_age = PINNED_ORDERS.get(n, (None, None))
    buyer = customer(
        pinned_customer or f"cust_{1000 + stable_hash('order-customer', n) % N_CUSTOMERS}"
    )
    chosen = sample(PRODUCTS, 1 + stable_hash("items", n) % 3, "order-item", n)
    items: list[J] = [
        {
            "sku": p.sku,
            "name": p.name,
            "quantity": 1 + stable_hash("order-qty", n, i) % 3,
            "unit_price_usd": p.price_usd,
        }
        for i, p in enumerate(chosen)
    ]
    age = pinned_age if pinned_age is not None else stable_hash("placed", n) % 14
    placed = DATA_AS_OF - timedelta(days=age)
    changes = world.order_changes.get(key, {})
    destination = places.city(changes.get("city") or buyer["city"])
    warehouse = _origin_for(destination)
    service = pick(tuple(SERVICE_LEVELS), "service", n)
    carrier = pick(tuple(CARRIERS), "carrier", n)
    shipped = placed + timedelta(days=1)
    origin = places.city(WAREHOUSES[warehouse][1])
    eta = shipped + timedelta(days=_transit_days(origin, destination, service))
    checkpoints = (shipped > DATA_AS_OF, shipped == DATA_AS_OF, eta > DATA_AS_OF, eta == DATA_AS_OF)
    stage = next((i for i, hit in enumerate(checkpoints) if hit), 4)
    record = {
        "order_id": key,
        "customer_id": buyer["customer_id"],
        "placed_on": placed.isoformat(),
        "status": ORDER_STAGES[stage],
        "items": items,
        "total_usd": money(sum(i["quantity"] * i["unit_price_usd"] for i in items)),
        "carrier": carrier,
        "service_level": service,
        "ships_from": warehouse,
        "destination_city": destination.name,
        "destination_country": destination.country,
        "ship_date": shipped.isoformat(),
        "estimated_delivery": eta.isoformat(),
        "tracking_number": f"{CARRIERS[carrier]['prefix']}{n:010d}",
    }
    record.update(changes.get("fields", {}))
    return record


def _change(world: World, order_id: str, **fields: object) -> None:
    key = _order(world, order_id)["order_id"]
    world.order_changes.setdefault(key, {}).setdefault("fields", {}).update(fields)


def get_shipping_eta(world: World, order_id: str) -> J:
    order = _order(world, order_id)
    return {k: order[k] for k in ETA_FIELDS}


def get_order_status(world: World, order_id: str) -> J:
    return _order(world, order_id)


def list_order_items(world: World, order_id: str) -> J:
    order = _order(world, order_id)
    return {"order_id": order["order_id"], "items": order["items"], "total_usd": order["total_usd"]}


def cancel_order(world: World, order_id: str, reason: str = "customer request") -> J:
    order = _order(world, order_id)
    if order["status"] != "processing":
        raise ValueError(
            f"order {order['order_id']} is {order['status']}; "
            "only processing orders can be cancelled"
        )
    _change(
        world, order_id, status="cancelled", cancellation_reason=reason, estimated_delivery=None
    )
    return {"order_id": order["order_id"], "status": "cancelled", "refund_usd": order["total_usd"]}


def update_shipping_address(
    world: World, order_id: str, street: str, city: str, postal_code: str
) -> J:
    order = _order(world, order_id)
    if order["status"] in ("delivered", "cancelled", "out_for_delivery"):
        raise ValueError(
            f"order {order['order_id']} is {order['status']}; the address can no longer change"
        )
    place = places.city(city)
    world.order_changes.setdefault(order["order_id"], {})["city"] = place.name
    address = {"street": street, "city": place.name, "postal_code": postal_code}
    _change(world, order_id, delivery_address=address)
    return get_shipping_eta(world, order_id)


TOOLS = (
    get_shipping_eta,
    get_order_status,
    list_order_items,
    cancel_order,
    update_shipping_address,
)
