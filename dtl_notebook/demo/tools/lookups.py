"""Record lookups of the lessons: customers, invoices, tickets, employees, stock, flights and
the knowledge base."""

from __future__ import annotations

import re

from dtl_notebook.demo import records
from dtl_notebook.demo.clock import parse_date
from dtl_notebook.demo.derive import match_score, pick, stable_hash
from dtl_notebook.demo.records import WAREHOUSES, J, by_id, product
from dtl_notebook.demo.world_data import demo_data

KB = demo_data().kb_articles


def lookup_customer(customer_id: str) -> J:
    return records.customer(customer_id)


def get_invoice(invoice_id: str) -> J:
    return by_id(records.invoices(), "invoice", invoice_id, r"inv_\d+", "inv_5004")


def get_support_ticket(ticket_id: str) -> J:
    return by_id(records.tickets(), "ticket", ticket_id, r"tkt_\d+", "tkt_1001")


def lookup_employee(employee_id: str) -> J:
    return by_id(records.employees(), "employee", employee_id, r"emp_\d{3}", "emp_012")


def check_stock(sku: str, warehouse: str | None = None) -> J:
    item = product(sku)
    on_hand = records.stock()
    levels: J = {
        wh: {"on_hand": on_hand[item.sku, wh], "reserved": 0, "available": on_hand[item.sku, wh]}
        for wh in WAREHOUSES
    }
    if warehouse:
        code = warehouse.strip().upper()
        if code not in WAREHOUSES:
            raise ValueError(f"unknown warehouse {warehouse!r}; known: {', '.join(WAREHOUSES)}")
        levels = {warehouse: levels[code]}
    return {
        "sku": item.sku,
        "name": item.name,
        "stock": levels,
        "total_available": sum(s["available"] for s in levels.values()),
    }


def get_flight_status(flight_number: str, date: str) -> J:
    number = flight_number.strip().upper().replace(" ", "")
    if not re.fullmatch(r"[A-Z0-9]{2}\d{1,4}", number):
        raise ValueError(f"invalid flight number {flight_number!r}, expected e.g. AF276")
    delay = max(0, stable_hash("delay", number, date) % 90 - 45)
    cancelled = stable_hash("cx", number, date) % 50 == 0
    return {
        "flight_number": number,
        "date": parse_date(date).isoformat(),
        "status": "cancelled" if cancelled else "delayed" if delay else "on time",
        "delay_minutes": delay,
        "terminal": str(1 + stable_hash("term", number) % 3),
        "gate": pick("ABCD", "gate", number, date) + str(1 + stable_hash("gno", number, date) % 40),
    }


def search_knowledge_base(query: str, limit: int = 3) -> J:
    ranked = sorted(
        (-(2 * match_score(query, title) + match_score(query, body, category)), aid)
        for aid, (title, category, body) in KB.items()
    )
    best = -ranked[0][0]
    # title words count double; weak matches (under half the best score) are dropped
    hits = [aid for score, aid in ranked if score < 0 and -2 * score >= best][:limit]
    results = [
        {"article_id": aid, "title": KB[aid][0], "category": KB[aid][1], "body": KB[aid][2][:160]}
        for aid in hits
    ]
    return {"query": query, "results": results}


TOOLS = (
    lookup_customer,
    get_invoice,
    get_support_ticket,
    lookup_employee,
    check_stock,
    get_flight_status,
    search_knowledge_base,
)
