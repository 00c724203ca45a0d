"""The demo world's generated records (people, customers, invoices, tickets, stock) and the
state one catalog's tools change.

Records are generated from the world data and stable hashes, once per process; lookups hand
out copies, so a caller's edits never reach another catalog. `World` holds what the stateful
tools change (the workspace files, order changes), one per `demo_catalog()`.
"""

from __future__ import annotations

import copy
import re
from dataclasses import dataclass, field
from datetime import date, timedelta
from functools import cache
from typing import Any

from dtl_notebook.demo.derive import money, pick, sample, stable_hash
from dtl_notebook.demo.places import CITIES, country
from dtl_notebook.demo.world_data import _Product, demo_data

J = dict[str, Any]
DATA = demo_data()
PRODUCTS = DATA.products
PRODUCT_INDEX = {p.sku: p for p in PRODUCTS}
WAREHOUSES = DATA.warehouses
DEPARTMENTS = DATA.departments
N_EMPLOYEES = 40
N_CUSTOMERS = 50
SEGMENTS = ("enterprise", "mid-market", "smb")
TIERS = ("bronze", "silver", "gold", "platinum")
COMPANY_DOMAIN = "northwind.example"


@dataclass
class World:
    """What one catalog's stateful tools change."""

    files: dict[str, str] = field(default_factory=lambda: dict(DATA.seed_files))
    order_changes: dict[str, J] = field(default_factory=dict)


def _person(*parts: object) -> tuple[str, str]:
    return pick(DATA.first_names, *parts, "first"), pick(DATA.last_names, *parts, "last")


@cache
def employees() -> dict[str, J]:
    out: dict[str, J] = {}
    emails: set[str] = set()
    for i in range(1, N_EMPLOYEES + 1):
        first, last = _person("emp", i)
        if i == 1:
            dept, role, level, manager = "Executive", "Chief Executive Officer", 7, None
        elif i <= 1 + len(DEPARTMENTS):
            dept = DEPARTMENTS[i - 2]
            role, level, manager = DATA.roles[dept][2], 6, "emp_001"
        else:
            dept = DEPARTMENTS[(i - 8) % len(DEPARTMENTS)]
            level = 2 + stable_hash("level", i) % 4
            role = DATA.roles[dept][0 if level <= 3 else 1]
            manager = f"emp_{2 + DEPARTMENTS.index(dept):03d}"
        email = f"{first}.{last}".lower()
        if email in emails:
            email += str(i)
        emails.add(email)
        offices = ("Paris", "London", "New York", "Berlin", "Singapore", "Toronto")
        hired = date(2015, 1, 5) + timedelta(days=stable_hash("hired", i) % 3600)
        out[f"emp_{i:03d}"] = {
            "employee_id": f"emp_{i:03d}",
            "name": f"{first} {last}",
            "email": f"{email}@{COMPANY_DOMAIN}",
            "department": dept,
            "role": role,
            "level": f"L{level}",
            "manager_id": manager,
            "office": pick(offices, "office", i),
            "hire_date": hired.isoformat(),
        }
    return out


@cache
def customers() -> dict[str, J]:
    sales = [e["employee_id"] for e in employees().values() if e["department"] == "Sales"]
    out: dict[str, J] = {}
    for k in range(N_CUSTOMERS):
        cid = f"cust_{1000 + k}"
        first, last = _person("cust", k)
        word = pick(DATA.company_words, "company", k)
        place = pick(CITIES, "city", k)
        calling_code = country(place.country).calling_code
        since = date(2019, 1, 1) + timedelta(days=stable_hash("since", k) % 2000)
        out[cid] = {
            "customer_id": cid,
            "name": f"{first} {last}",
            "company": f"{word} {pick(DATA.company_suffixes, 'suffix', k)}",
            "email": f"{first}.{last}@{word}.example".lower(),
            "phone": f"{calling_code} {stable_hash('phone', k) % 90_000_000 + 10_000_000}",
            "city": place.name,
            "country": place.country,
            "segment": pick(SEGMENTS, "segment", k),
            "tier": pick(TIERS, "tier", k),
            "status": "churned" if stable_hash("churn", k) % 10 == 0 else "active",
            "customer_since": since.isoformat(),
            "account_manager_id": pick(sales, "manager", k),
        }
    return out


def _totals(lines: list[J], tax_rate_percent: float) -> J:
    subtotal = sum(line["quantity"] * line["unit_price"] for line in lines)
    tax = subtotal * tax_rate_percent / 100
    return {
        "line_items": [
            {**line, "line_total": money(line["quantity"] * line["unit_price"])} for line in lines
        ],
        "subtotal": money(subtotal),
        "discount": money(0.0),
        "tax_rate_percent": tax_rate_percent,
        "tax": money(tax),
        "total": money(subtotal + tax),
    }


@cache
def invoices() -> dict[str, J]:
    out: dict[str, J] = {}
    for k, (cid, customer) in enumerate(customers().items()):
        terms = 60 if customer["segment"] == "enterprise" else 30
        for j in range(3):
            number = 5001 + 3 * k + j
            chosen = sample(PRODUCTS, 1 + stable_hash("lines", number) % 3, "line", number)
            lines = [
                {
                    "description": p.name,
                    "sku": p.sku,
                    "quantity": 1 + stable_hash("qty", number, n) % 5,
                    "unit_price": p.price_usd,
                }
                for n, p in enumerate(chosen)
            ]
            issued = date(2025, 1, 10) + timedelta(days=45 * j + stable_hash("issued", number) % 20)
            paid = j == 0 or (j == 1 and stable_hash("paid", number) % 10 < 7)
            paid_on = issued + timedelta(days=10 + stable_hash("payday", number) % 20)
            out[f"inv_{number}"] = {
                "invoice_id": f"inv_{number}",
                "customer_id": cid,
                "currency": "USD",
                "issue_date": issued.isoformat(),
                "due_date": (issued + timedelta(days=terms)).isoformat(),
                "status": "paid" if paid else "open",
                "paid_on": paid_on.isoformat() if paid else None,
                **_totals(lines, 8.0),
            }
    return out


@cache
def tickets() -> dict[str, J]:
    agents = [e["employee_id"] for e in employees().values() if e["department"] == "Support"]
    out: dict[str, J] = {}
    for n, seed in enumerate(DATA.seed_tickets):
        tid = f"tkt_{1001 + n}"
        out[tid] = {
            "ticket_id": tid,
            "customer_id": seed.customer_id,
            "subject": seed.subject,
            "description": seed.subject + ". Customer contacted us by email.",
            "priority": seed.priority,
            "status": seed.status,
            "assignee_id": agents[n % len(agents)],
            "created_at": seed.created_at,
            "comments": [],
            "escalation_level": 0,
        }
    return out


@cache
def stock() -> dict[tuple[str, str], int]:
    return {
        (p.sku, wh): stable_hash("stock", p.sku, wh) % (3 * p.reorder_point + 1)
        for p in PRODUCTS
        for wh in WAREHOUSES
    }


def by_id(table: dict[str, J], kind: str, value: Any, pattern: str, example: str) -> J:
    """A copy of a record by its id (case and spaces ignored), or a clear error."""
    key = value.strip().lower() if isinstance(value, str) else ""
    if not re.fullmatch(pattern, key):
        shape = pattern.replace(r"\d{3}", "<3 digits>").replace(r"\d+", "<number>")
        raise ValueError(f"invalid {kind} id {value!r}: expected {shape}, e.g. {example}")
    if key not in table:
        raise ValueError(f"unknown {kind} {value!r} (example of a valid id: {example})")
    return copy.deepcopy(table[key])


def customer(customer_id: str) -> J:
    return by_id(customers(), "customer", customer_id, r"cust_\d+", "cust_1001")


def product(sku: str) -> _Product:
    key = sku.strip().upper() if isinstance(sku, str) else ""
    if key not in PRODUCT_INDEX:
        if not re.fullmatch(r"SKU-\d{4}", key):
            raise ValueError(
                f"invalid SKU {sku!r}: expected the format SKU-<4 digits>, e.g. SKU-1001"
            )
        raise ValueError(f"unknown SKU {sku!r}; known SKUs: SKU-1001 to SKU-{1000 + len(PRODUCTS)}")
    return PRODUCT_INDEX[key]
