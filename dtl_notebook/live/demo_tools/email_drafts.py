"""The email namespace: drafts, recipients and templates (nothing is sent)."""

from __future__ import annotations

from dtl_notebook.live.demo_tools.billing import _check_email
from dtl_notebook.live.demo_tools.fakes import _match_score
from dtl_notebook.live.demo_tools.registry import J, _Domain
from dtl_notebook.live.demo_tools.tables import demo_data
from dtl_notebook.live.demo_tools.world import _World

DATA = demo_data()
TEMPLATES = DATA.email_templates


def _email(tool: _Domain, world: _World) -> None:
    drafts = world.drafts

    @tool
    def create_email_draft(
        to: list[str], subject: str, body: str, cc: list[str] | None = None
    ) -> J:
        did = world.new_id("draft")
        drafts[did] = {
            "draft_id": did,
            "to": [_check_email(a) for a in to],
            "cc": [_check_email(a) for a in cc or []],
            "bcc": [],
            "subject": subject,
            "body": body,
            "status": "draft",
        }
        return drafts[did]

    @tool
    def list_email_drafts() -> J:
        return {
            "drafts": [
                {k: d[k] for k in ("draft_id", "to", "subject", "status")} for d in drafts.values()
            ]
        }

    @tool
    def get_email_draft(draft_id: str) -> J:
        return world.lookup(drafts, "draft", draft_id)

    @tool
    def update_email_draft(draft_id: str, subject: str | None = None, body: str | None = None) -> J:
        draft = world.lookup(drafts, "draft", draft_id)
        draft.update({k: v for k, v in (("subject", subject), ("body", body)) if v is not None})
        return draft

    @tool
    def delete_email_draft(draft_id: str) -> J:
        world.lookup(drafts, "draft", draft_id)
        del drafts[draft_id]
        return {"draft_id": draft_id, "deleted": True}

    @tool
    def add_draft_recipient(draft_id: str, email: str, field: str = "to") -> J:
        draft = world.lookup(drafts, "draft", draft_id)
        address = _check_email(email)
        if address not in draft[field]:
            draft[field].append(address)
        return draft

    @tool
    def validate_email_address(email: str) -> J:
        try:
            return {"email": _check_email(email), "valid": True}
        except ValueError as exc:
            return {"email": email, "valid": False, "reason": str(exc)}

    @tool
    def render_email_template(
        template: str, recipient_name: str, reference: str, sender_name: str = "The Northwind team"
    ) -> J:
        subject, body = TEMPLATES[template]
        values = {"name": recipient_name, "reference": reference, "sender": sender_name}
        return {"subject": subject.format(**values), "body": body.format(**values)}

    @tool
    def search_email_drafts(query: str) -> J:
        hits = [
            d
            for d in drafts.values()
            if _match_score(query, d["subject"], d["body"], " ".join(d["to"] + d["cc"]))
        ]
        return {"query": query, "drafts": hits}
