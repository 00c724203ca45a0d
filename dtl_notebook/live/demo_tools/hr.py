"""The hr namespace: employees, org chart, leave, salary bands and positions."""

from __future__ import annotations

from datetime import timedelta

from dtl_notebook.live.demo_tools.business import DEPARTMENTS
from dtl_notebook.live.demo_tools.fakes import _hash, _match_score
from dtl_notebook.live.demo_tools.registry import J, _Domain
from dtl_notebook.live.demo_tools.tables import demo_data
from dtl_notebook.live.demo_tools.timekeeping import (
    DAY_NAMES,
    _business_days,
    _date,
    _holiday_country,
    _holidays,
)
from dtl_notebook.live.demo_tools.world import _World

DATA = demo_data()
LEAVE_TYPES = DATA.leave_types
SALARY_BANDS = {f"L{n}": (38000 + 16000 * (n - 1), 52000 + 22000 * (n - 1)) for n in range(1, 8)}
OPEN_POSITIONS = DATA.open_positions


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
