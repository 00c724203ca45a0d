"""The notes namespace: tagged personal notes."""

from __future__ import annotations

from collections.abc import Iterable

from dtl_notebook.live.demo_tools.fakes import _match_score
from dtl_notebook.live.demo_tools.registry import J, _Domain
from dtl_notebook.live.demo_tools.world import _World


def _notes(tool: _Domain, world: _World) -> None:
    notes = world.notes

    def add(title: str, body: str, tags: Iterable[str]) -> J:
        if not title.strip():
            raise ValueError("title must not be empty")
        nid = world.new_id("note")
        notes[nid] = {
            "note_id": nid,
            "title": title.strip(),
            "body": body,
            "tags": sorted({t.strip().lower() for t in tags if t.strip()}),
        }
        return notes[nid]

    add("Welcome", "Use notes to keep meeting minutes and ideas.", ["getting-started"])
    add("Q3 goals", "Reduce shipping delays; launch the returns portal.", ["planning", "q3"])

    @tool
    def create_note(title: str, body: str, tags: list[str] | None = None) -> J:
        return add(title, body, tags or [])

    @tool
    def get_note(note_id: str) -> J:
        return world.lookup(notes, "note", note_id)

    @tool
    def list_notes(tag: str | None = None) -> J:
        wanted = tag.strip().lower() if tag else None
        return {
            "notes": [
                {"note_id": n["note_id"], "title": n["title"], "tags": n["tags"]}
                for n in notes.values()
                if wanted is None or wanted in n["tags"]
            ]
        }

    @tool
    def search_notes(query: str) -> J:
        ranked = sorted(
            (
                (-_match_score(query, n["title"], n["body"], " ".join(n["tags"])), nid)
                for nid, n in notes.items()
            )
        )
        return {"query": query, "notes": [notes[nid] for score, nid in ranked if score < 0]}

    @tool
    def update_note(note_id: str, title: str | None = None, body: str | None = None) -> J:
        note = world.lookup(notes, "note", note_id)
        if title is not None and not title.strip():
            raise ValueError("title must not be empty")
        note.update({k: v for k, v in (("title", title), ("body", body)) if v is not None})
        return note

    @tool
    def append_to_note(note_id: str, text: str) -> J:
        note = world.lookup(notes, "note", note_id)
        note["body"] = f"{note['body']}\n{text}" if note["body"] else text
        return note

    @tool
    def delete_note(note_id: str) -> J:
        world.lookup(notes, "note", note_id)
        del notes[note_id]
        return {"note_id": note_id, "deleted": True}

    @tool
    def tag_note(note_id: str, tag: str) -> J:
        note = world.lookup(notes, "note", note_id)
        if not tag.strip():
            raise ValueError("tag must not be empty")
        note["tags"] = sorted({*note["tags"], tag.strip().lower()})
        return note

    @tool
    def list_note_tags() -> J:
        counts: dict[str, int] = {}
        for n in notes.values():
            for t in n["tags"]:
                counts[t] = counts.get(t, 0) + 1
        return {"tags": dict(sorted(counts.items()))}
