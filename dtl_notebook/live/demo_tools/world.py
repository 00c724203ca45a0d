"""The demo world's state: generated records and everything stateful tools change."""

from __future__ import annotations

import re
from datetime import date, timedelta
from functools import cached_property
from typing import Any

from dtl_notebook.live.demo_tools.business import (
    COMPANY_DOMAIN,
    DEPARTMENTS,
    N_CUSTOMERS,
    N_EMPLOYEES,
    PRODUCTS,
    ROLES,
    SEED_FILES,
    SEGMENTS,
    TIERS,
    WAREHOUSES,
    _raise_unknown,
)
from dtl_notebook.live.demo_tools.fakes import (
    COMPANY_SUFFIXES,
    COMPANY_WORDS,
    _hash,
    _money,
    _person,
    _pick,
    _sample,
)
from dtl_notebook.live.demo_tools.places import CITIES, _country
from dtl_notebook.live.demo_tools.registry import J
from dtl_notebook.live.demo_tools.tables import demo_data


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
        return _by_id(
            self.employees, "employee", employee_id, r"emp_\d{3}", "emp_<3 digits>", "emp_012"
        )

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
        return _by_id(
            self.customers, "customer", customer_id, r"cust_\d+", "cust_<number>", "cust_1001"
        )

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
        return _by_id(self.invoices, "invoice", invoice_id, r"inv_\d+", "inv_<number>", "inv_5004")

    @cached_property
    def stock(self) -> dict[tuple[str, str], int]:
        return {
            (p.sku, wh): _hash("stock", p.sku, wh) % (3 * p.reorder_point + 1)
            for p in PRODUCTS
            for wh in WAREHOUSES
        }

    @cached_property
    def tickets(self) -> dict[str, J]:
        seeds = demo_data().seed_tickets
        agents = [e["employee_id"] for e in self.employees.values() if e["department"] == "Support"]
        out: dict[str, J] = {}
        for n, seed in enumerate(seeds):
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
        self.counters["tkt"] = 1000 + len(seeds)
        return out

    def ticket(self, ticket_id: str) -> J:
        return _by_id(self.tickets, "ticket", ticket_id, r"tkt_\d+", "tkt_<number>", "tkt_1001")

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


def _by_id(table: dict[str, J], kind: str, value: Any, pattern: str, shape: str, example: str) -> J:
    """A record by its id (case and spaces ignored); a malformed or unknown id is a clear error."""
    key = value.strip().lower() if isinstance(value, str) else ""
    if not re.fullmatch(pattern, key):
        raise ValueError(f"invalid {kind} id {value!r}: expected {shape}, e.g. {example}")
    return table.get(key) or _raise_unknown(kind, value, example)
