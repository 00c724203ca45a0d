"""The support namespace: tickets, SLAs, assignment and help articles."""

from __future__ import annotations

from datetime import datetime, timedelta

from dtl_notebook.live.demo_tools.fakes import _match_score
from dtl_notebook.live.demo_tools.knowledge import KB, _kb_search
from dtl_notebook.live.demo_tools.registry import J, _Domain
from dtl_notebook.live.demo_tools.tables import demo_data
from dtl_notebook.live.demo_tools.timekeeping import _datetime
from dtl_notebook.live.demo_tools.world import _World

DATA = demo_data()
PRIORITIES = ("low", "normal", "high", "urgent")
TICKET_STATUSES = ("open", "pending", "resolved", "closed")
SLA_HOURS = DATA.sla_hours


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
