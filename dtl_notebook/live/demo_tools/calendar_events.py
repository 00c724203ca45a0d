"""The calendar namespace: events, availability and free slots."""

from __future__ import annotations

from datetime import date

from dtl_notebook.live.demo_tools.billing import _check_email
from dtl_notebook.live.demo_tools.registry import J, _Domain
from dtl_notebook.live.demo_tools.timekeeping import _clock, _date, _hhmm
from dtl_notebook.live.demo_tools.world import _World


def _calendar(tool: _Domain, world: _World) -> None:
    events = world.events

    def make(
        title: str, day: str, start: str, minutes: int, location: str, attendees: list[str]
    ) -> J:
        begin = _clock(start, "start_time")
        if not 5 <= minutes <= 12 * 60:
            raise ValueError("duration_minutes must be between 5 and 720")
        if begin + minutes > 24 * 60:
            raise ValueError("the event must end on the same day")
        if not title.strip():
            raise ValueError("title must not be empty")
        eid = world.new_id("evt")
        events[eid] = {
            "event_id": eid,
            "title": title.strip(),
            "date": _date(day).isoformat(),
            "start_time": _hhmm(begin),
            "end_time": _hhmm(begin + minutes),
            "duration_minutes": minutes,
            "location": location,
            "attendees": [_check_email(a) for a in attendees],
        }
        return events[eid]

    for seed in (
        ("Team standup", "2025-06-16", "09:00", 30, "Room 2A", ["alice.martin@northwind.example"]),
        ("Quarterly planning", "2025-06-17", "14:00", 90, "Board room", []),
        (
            "Customer call: Acme Corp",
            "2025-06-18",
            "11:00",
            60,
            "Video call",
            ["buyer@acme.example"],
        ),
    ):
        make(*seed)

    def span(e: J) -> tuple[str, int, int]:
        begin = _clock(e["start_time"])
        return e["date"], begin, begin + e["duration_minutes"]

    def clashes(day: str, begin: int, end: int, skip: str = "") -> list[J]:
        return [
            e
            for e in events.values()
            if e["event_id"] != skip
            and span(e)[0] == day
            and span(e)[1] < end
            and begin < span(e)[2]
        ]

    @tool
    def create_event(
        title: str,
        date: str,
        start_time: str,
        duration_minutes: int = 60,
        location: str = "",
        attendees: list[str] | None = None,
    ) -> J:
        event = make(title, date, start_time, duration_minutes, location, attendees or [])
        conflicts = [
            e["event_id"] for e in clashes(event["date"], *span(event)[1:], skip=event["event_id"])
        ]
        return {**event, "conflicts_with": conflicts}

    @tool
    def list_events(start_date: str, end_date: str | None = None) -> J:
        lo = _date(start_date, "start_date")
        hi = _date(end_date, "end_date") if end_date else lo
        hits = sorted(
            (e for e in events.values() if lo <= date.fromisoformat(e["date"]) <= hi),
            key=lambda e: (e["date"], e["start_time"]),
        )
        return {"from": lo.isoformat(), "to": hi.isoformat(), "events": hits}

    @tool
    def get_event(event_id: str) -> J:
        return world.lookup(events, "event", event_id)

    @tool
    def reschedule_event(event_id: str, new_date: str, new_start_time: str) -> J:
        event = world.lookup(events, "event", event_id)
        begin = _clock(new_start_time, "new_start_time")
        if begin + event["duration_minutes"] > 24 * 60:
            raise ValueError("the event must end on the same day")
        event.update(
            date=_date(new_date, "new_date").isoformat(),
            start_time=_hhmm(begin),
            end_time=_hhmm(begin + event["duration_minutes"]),
        )
        conflicts = [e["event_id"] for e in clashes(event["date"], *span(event)[1:], skip=event_id)]
        return {**event, "conflicts_with": conflicts}

    @tool
    def update_event_details(
        event_id: str, title: str | None = None, location: str | None = None
    ) -> J:
        event = world.lookup(events, "event", event_id)
        event.update({k: v for k, v in (("title", title), ("location", location)) if v is not None})
        return event

    @tool
    def cancel_event(event_id: str) -> J:
        event = world.lookup(events, "event", event_id)
        del events[event_id]
        return {"event_id": event_id, "title": event["title"], "cancelled": True}

    @tool
    def add_event_attendee(event_id: str, email: str) -> J:
        event = world.lookup(events, "event", event_id)
        address = _check_email(email)
        if address not in event["attendees"]:
            event["attendees"].append(address)
        return event

    @tool
    def check_availability(date: str, start_time: str, duration_minutes: int = 30) -> J:
        day, begin = _date(date).isoformat(), _clock(start_time, "start_time")
        conflicts = clashes(day, begin, begin + duration_minutes)
        return {
            "date": day,
            "start_time": _hhmm(begin),
            "end_time": _hhmm(begin + duration_minutes),
            "available": not conflicts,
            "conflicts": [e["title"] for e in conflicts],
        }

    @tool
    def find_free_slots(
        date: str, duration_minutes: int = 30, day_start: str = "09:00", day_end: str = "17:00"
    ) -> J:
        day = _date(date).isoformat()
        cursor, stop = _clock(day_start, "day_start"), _clock(day_end, "day_end")
        if stop <= cursor:
            raise ValueError("day_end must be after day_start")
        busy = sorted(span(e)[1:] for e in events.values() if e["date"] == day)
        slots = []
        for begin, end in [*busy, (stop, stop)]:
            if min(begin, stop) - cursor >= duration_minutes:
                slots.append({"start": _hhmm(cursor), "end": _hhmm(min(begin, stop))})
            cursor = max(cursor, end)
        return {"date": day, "free_slots": slots}

    @tool
    def count_meeting_hours(start_date: str, end_date: str) -> J:
        lo, hi = _date(start_date, "start_date"), _date(end_date, "end_date")
        per_day: dict[str, float] = {}
        for e in events.values():
            if lo <= date.fromisoformat(e["date"]) <= hi:
                per_day[e["date"]] = per_day.get(e["date"], 0) + e["duration_minutes"] / 60
        return {
            "total_hours": round(sum(per_day.values()), 2),
            "per_day": {d: round(h, 2) for d, h in sorted(per_day.items())},
        }
