"""The billing namespace: invoices, payments, refunds, discounts and sales tax."""

from __future__ import annotations

import re
from datetime import date

from dtl_notebook.live.demo_tools.business import COMPANY_DOMAIN
from dtl_notebook.live.demo_tools.fakes import _hash, _money
from dtl_notebook.live.demo_tools.money import _convert, _currency
from dtl_notebook.live.demo_tools.registry import J, _Domain
from dtl_notebook.live.demo_tools.tables import demo_data
from dtl_notebook.live.demo_tools.timekeeping import _date
from dtl_notebook.live.demo_tools.world import _totals, _World

DATA = demo_data()


def _check_email(email: str) -> str:
    value = email.strip().lower()
    if not re.fullmatch(r"[a-z0-9._%+-]+@[a-z0-9-]+(\.[a-z0-9-]+)*\.[a-z]{2,}", value):
        raise ValueError(f"invalid email address {email!r}")
    return value


DISCOUNT_CODES = DATA.discount_codes
TAX_RATES = DATA.tax_rates


def _billing(tool: _Domain, world: _World) -> None:
    def brief(i: J) -> J:
        return {
            k: i[k] for k in ("invoice_id", "issue_date", "due_date", "status", "total", "currency")
        }

    @tool
    def get_invoice(invoice_id: str) -> J:
        return dict(world.invoice(invoice_id))

    @tool
    def list_customer_invoices(customer_id: str, status: str = "all") -> J:
        cid = world.customer(customer_id)["customer_id"]
        hits = [
            brief(i)
            for i in world.invoices.values()
            if i["customer_id"] == cid and status in ("all", i["status"])
        ]
        return {"customer_id": cid, "invoices": hits}

    @tool
    def create_invoice(
        customer_id: str,
        line_items: list[J],
        issue_date: str,
        due_date: str,
        currency: str = "USD",
        tax_rate_percent: float = 0.0,
        discount_percent: float = 0.0,
    ) -> J:
        cid = world.customer(customer_id)["customer_id"]
        issued, due = _date(issue_date, "issue_date"), _date(due_date, "due_date")
        if due < issued:
            raise ValueError("due_date must not be before issue_date")
        number = max(int(k[4:]) for k in world.invoices) + 1
        invoice = {
            "invoice_id": f"inv_{number}",
            "customer_id": cid,
            "currency": _currency(currency),
            "issue_date": issued.isoformat(),
            "due_date": due.isoformat(),
            "status": "open",
            "paid_on": None,
            **_totals(line_items, tax_rate_percent, discount_percent),
        }
        world.invoices[invoice["invoice_id"]] = invoice
        return invoice

    @tool
    def calculate_invoice_total(
        line_items: list[J], tax_rate_percent: float = 0.0, discount_percent: float = 0.0
    ) -> J:
        return _totals(line_items, tax_rate_percent, discount_percent)

    @tool
    def mark_invoice_paid(invoice_id: str, payment_date: str, method: str = "bank_transfer") -> J:
        invoice = world.invoice(invoice_id)
        if invoice["status"] == "paid":
            raise ValueError(
                f"invoice {invoice['invoice_id']} is already paid (on {invoice['paid_on']})"
            )
        invoice.update(
            status="paid",
            paid_on=_date(payment_date, "payment_date").isoformat(),
            payment_method=method,
        )
        return brief(invoice)

    @tool
    def get_outstanding_balance(customer_id: str) -> J:
        cid = world.customer(customer_id)["customer_id"]
        open_ = [
            i for i in world.invoices.values() if i["customer_id"] == cid and i["status"] == "open"
        ]
        return {
            "customer_id": cid,
            "open_invoices": [i["invoice_id"] for i in open_],
            "outstanding_usd": _money(
                sum(_convert(i["total"], i["currency"], "USD") for i in open_)
            ),
        }

    @tool
    def list_overdue_invoices(as_of_date: str, limit: int = 20) -> J:
        today = _date(as_of_date, "as_of_date")
        late = sorted(
            (
                {
                    **brief(i),
                    "customer_id": i["customer_id"],
                    "days_overdue": (today - date.fromisoformat(i["due_date"])).days,
                }
                for i in world.invoices.values()
                if i["status"] == "open" and date.fromisoformat(i["due_date"]) < today
            ),
            key=lambda i: -i["days_overdue"],
        )
        return {"as_of": today.isoformat(), "count": len(late), "invoices": late[:limit]}

    @tool
    def issue_refund(invoice_id: str, amount: float, reason: str) -> J:
        invoice = world.invoice(invoice_id)
        if invoice["status"] != "paid":
            raise ValueError(f"invoice {invoice['invoice_id']} is not paid; nothing to refund")
        done = sum(
            r["amount"] for r in world.refunds.values() if r["invoice_id"] == invoice["invoice_id"]
        )
        if amount <= 0 or amount > invoice["total"] - done + 1e-9:
            raise ValueError(
                f"refund must be above 0 and at most {_money(invoice['total'] - done)}"
            )
        rid = world.new_id("rfd", 300)
        world.refunds[rid] = {
            "refund_id": rid,
            "invoice_id": invoice["invoice_id"],
            "amount": _money(amount),
            "currency": invoice["currency"],
            "reason": reason,
        }
        return world.refunds[rid]

    @tool
    def apply_discount_code(amount: float, code: str) -> J:
        key = code.strip().upper()
        if key not in DISCOUNT_CODES:
            raise ValueError(f"discount code {code!r} is not valid")
        percent, minimum, label = DISCOUNT_CODES[key]
        if amount < minimum:
            raise ValueError(f"code {key} needs an order of at least {minimum:g}")
        off = amount * percent / 100
        return {
            "code": key,
            "description": label,
            "discount": _money(off),
            "total": _money(amount - off),
        }

    @tool
    def calculate_sales_tax(amount: float, region: str) -> J:
        rate = TAX_RATES[region]
        return {
            "region": region,
            "rate_percent": rate,
            "tax": _money(amount * rate / 100),
            "total_with_tax": _money(amount * (1 + rate / 100)),
        }

    @tool
    def generate_payment_link(invoice_id: str) -> J:
        invoice = world.invoice(invoice_id)
        if invoice["status"] == "paid":
            raise ValueError(f"invoice {invoice['invoice_id']} is already paid")
        token = f"{_hash('pay', invoice['invoice_id']):016x}"
        return {
            "invoice_id": invoice["invoice_id"],
            "amount": invoice["total"],
            "currency": invoice["currency"],
            "url": f"https://pay.{COMPANY_DOMAIN}/i/{invoice['invoice_id']}?t={token}",
        }
