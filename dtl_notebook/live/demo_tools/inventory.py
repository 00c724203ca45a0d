"""The inventory namespace: products, stock levels, transfers and pricing."""

from __future__ import annotations

from dtl_notebook.live.demo_tools.business import (
    _PRODUCT_INDEX,
    CATEGORIES,
    PRODUCTS,
    WAREHOUSES,
    _product,
    _warehouse,
)
from dtl_notebook.live.demo_tools.fakes import _match_score, _money
from dtl_notebook.live.demo_tools.money import _convert
from dtl_notebook.live.demo_tools.registry import J, _Domain
from dtl_notebook.live.demo_tools.tables import _Product
from dtl_notebook.live.demo_tools.world import _World

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
