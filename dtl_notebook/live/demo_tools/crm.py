"""The crm namespace: customers, leads, notes and interactions."""

from __future__ import annotations

import re

from dtl_notebook.live.demo_tools.billing import _check_email
from dtl_notebook.live.demo_tools.business import TIERS
from dtl_notebook.live.demo_tools.fakes import _hash, _match_score, _money, _pick
from dtl_notebook.live.demo_tools.places import _city
from dtl_notebook.live.demo_tools.registry import J, _Domain
from dtl_notebook.live.demo_tools.timekeeping import _date
from dtl_notebook.live.demo_tools.world import _World

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
