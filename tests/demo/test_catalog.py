"""The demo catalog: shape of every tool, search over it, and the hand-written tools at work."""

from __future__ import annotations

import json
import re
from collections import Counter
from typing import Any

import pytest

from dtl_notebook import Session, Tool, ToolCall
from dtl_notebook.agent import ToolResultMessage
from dtl_notebook.demo import core_tool_names, demo_catalog
from dtl_notebook.demo import namespaces as demo_namespaces
from tests.support.reuse_marks import shares

NAME = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")

CSV = "month,region,units\n2025-01,EMEA,120\n2025-01,AMER,210\n2025-02,EMEA,135\n"
LINES = [{"description": "Consulting hours", "quantity": 10, "unit_price": 120.0}]
DRAFT = ("create_email_draft", {"to": ["ana@example.com"], "subject": "Hi", "body": "Hello"})
LEAD = ("create_lead", {"name": "Ana Lima", "company": "Lima Ltd", "email": "ana@lima.example"})
FLIGHT_ID = "CDG-HND-2025-07-01-AF504"
STAY = {"check_in": "2025-07-01", "check_out": "2025-07-03", "guest_name": "Ana Lima"}
BOOKING = ("book_hotel", {"hotel_id": "htl_cdg_0", **STAY})

# One realistic call per tool: (arguments, calls to make first in the same session).
EXAMPLES: dict[str, dict[str, Any]] = {
    "get_current_weather": {"city": "Paris"},
    "get_weather_forecast": {"city": "Tokyo", "days": 5, "start_date": "2025-07-01"},
    "get_hourly_forecast": {"city": "New York", "date": "2025-01-15", "hours": 6},
    "get_historical_weather": {"city": "London", "date": "2024-12-25", "units": "imperial"},
    "get_air_quality": {"city": "Delhi"},
    "get_uv_index": {"city": "Sydney", "date": "2025-01-10"},
    "get_sunrise_sunset": {"city": "Stockholm", "date": "2025-06-21"},
    "get_weather_alerts": {"city": "Dubai", "date": "2025-07-20"},
    "compare_weather": {"city_a": "Paris", "city_b": "Tokyo", "date": "2025-08-01"},
    "get_weather_by_coordinates": {"latitude": 48.85, "longitude": 2.35},
    "get_shipping_eta": {"order_id": "order_42"},
    "get_order_status": {"order_id": "order_42"},
    "list_order_items": {"order_id": "order_42"},
    "track_package": {"tracking_number": "JD0000000042"},
    "list_customer_orders": {"customer_id": "cust_1001", "limit": 3},
    "get_shipping_rates": {"origin_city": "Berlin", "destination_city": "Madrid", "weight_kg": 2.5},
    "estimate_delivery_date": {
        "origin_city": "Chicago",
        "destination_city": "Toronto",
        "ship_date": "2025-06-02",
        "service_level": "express",
    },
    "validate_address": {
        "street": "12 Rue de Rivoli",
        "city": "Paris",
        "postal_code": "75004",
        "country": "France",
    },
    "cancel_order": {"order_id": "order_1", "reason": "ordered twice"},
    "update_shipping_address": {
        "order_id": "order_42",
        "street": "1 Nanjing Road",
        "city": "Shanghai",
        "postal_code": "200001",
    },
    "request_return": {"order_id": "order_4", "reason": "damaged"},
    "lookup_customer": {"customer_id": "cust_1001"},
    "search_customers": {"query": "Acme"},
    "find_customer_by_email": {"email": "grace.brown@acme.example"},
    "list_customers_by_segment": {"segment": "enterprise", "limit": 5},
    "get_customer_lifetime_value": {"customer_id": "cust_1001"},
    "get_customer_health_score": {"customer_id": "cust_1001"},
    "add_customer_note": {"customer_id": "cust_1001", "note": "Prefers email contact."},
    "list_customer_notes": {"customer_id": "cust_1001"},
    "log_customer_interaction": {
        "customer_id": "cust_1001",
        "channel": "phone",
        "summary": "Discussed the late parcel.",
        "date": "2025-06-14",
    },
    "update_customer_contact": {"customer_id": "cust_1001", "phone": "+86 21 5555 0101"},
    "create_lead": LEAD[1],
    "convert_lead_to_customer": {"lead_id": "lead_1", "segment": "smb", "city": "Lisbon"},
    "get_account_manager": {"customer_id": "cust_1001"},
    "get_invoice": {"invoice_id": "inv_5004"},
    "list_customer_invoices": {"customer_id": "cust_1001", "status": "open"},
    "create_invoice": {
        "customer_id": "cust_1001",
        "line_items": LINES,
        "issue_date": "2025-06-01",
        "due_date": "2025-07-01",
        "tax_rate_percent": 20,
    },
    "calculate_invoice_total": {"line_items": LINES, "discount_percent": 10},
    "mark_invoice_paid": {"invoice_id": "inv_5006", "payment_date": "2025-06-14"},
    "get_outstanding_balance": {"customer_id": "cust_1001"},
    "list_overdue_invoices": {"as_of_date": "2025-06-14", "limit": 5},
    "issue_refund": {"invoice_id": "inv_5004", "amount": 50, "reason": "damaged lamp"},
    "apply_discount_code": {"amount": 150, "code": "SPRING25"},
    "calculate_sales_tax": {"amount": 100, "region": "US-CA"},
    "generate_payment_link": {"invoice_id": "inv_5006"},
    "list_files": {"directory": "notes"},
    "read_file": {"path": "notes/todo.txt"},
    "read_file_lines": {"path": "data/sales.csv", "start_line": 2, "end_line": 3},
    "write_file": {"path": "reports/q2.md", "content": "# Q2 report\n"},
    "append_to_file": {"path": "notes/todo.txt", "content": "Call the bank\n"},
    "delete_file": {"path": "README.md"},
    "move_file": {"source_path": "notes/todo.txt", "destination_path": "archive/todo.txt"},
    "copy_file": {"source_path": "docs/handbook.md", "destination_path": "docs/handbook-v2.md"},
    "get_file_info": {"path": "data/sales.csv"},
    "search_file_contents": {"pattern": "order_\\d+"},
    "find_files": {"name_pattern": "*.csv"},
    "diff_files": {"path_a": "README.md", "path_b": "docs/handbook.md"},
    "create_event": {
        "title": "1:1 with Grace",
        "date": "2025-06-16",
        "start_time": "15:00",
        "duration_minutes": 30,
        "attendees": ["grace.brown@acme.example"],
    },
    "list_events": {"start_date": "2025-06-16", "end_date": "2025-06-20"},
    "get_event": {"event_id": "evt_1"},
    "reschedule_event": {"event_id": "evt_2", "new_date": "2025-06-19", "new_start_time": "10:00"},
    "update_event_details": {"event_id": "evt_3", "location": "Room 4B"},
    "cancel_event": {"event_id": "evt_1"},
    "add_event_attendee": {"event_id": "evt_2", "email": "cfo@northwind.example"},
    "check_availability": {"date": "2025-06-16", "start_time": "09:15"},
    "find_free_slots": {"date": "2025-06-17", "duration_minutes": 60},
    "count_meeting_hours": {"start_date": "2025-06-16", "end_date": "2025-06-20"},
    "add": {"a": 2, "b": 3.5},
    "subtract": {"a": 10, "b": 4},
    "multiply": {"a": 6, "b": 7},
    "divide": {"dividend": 22, "divisor": 7},
    "power": {"base": 2, "exponent": 10},
    "evaluate_expression": {"expression": "(3 + 4) * 2 ** 3 / sqrt(16)"},
    "statistics_summary": {"values": [3, 1, 4, 1, 5, 9, 2, 6]},
    "linear_regression": {"x_values": [1, 2, 3, 4], "y_values": [2.1, 3.9, 6.2, 7.8]},
    "solve_quadratic": {"a": 1, "b": -3, "c": 2},
    "prime_factors": {"n": 360},
    "factorial": {"n": 20},
    "percent_change": {"old_value": 80, "new_value": 100},
    "percentage_of": {"percent": 15, "value": 80},
    "compound_interest": {"principal": 1000, "annual_rate_percent": 5, "years": 10},
    "loan_payment": {"principal": 300000, "annual_rate_percent": 4.5, "years": 30},
    "convert_length": {"value": 10, "from_unit": "km", "to_unit": "mi"},
    "convert_mass": {"value": 150, "from_unit": "lb", "to_unit": "kg"},
    "convert_volume": {"value": 2, "from_unit": "gallon", "to_unit": "l"},
    "convert_speed": {"value": 100, "from_unit": "km_h", "to_unit": "mph"},
    "convert_area": {"value": 1, "from_unit": "acre", "to_unit": "m2"},
    "convert_data_size": {"value": 1, "from_unit": "GiB", "to_unit": "MB"},
    "convert_energy": {"value": 1, "from_unit": "kWh", "to_unit": "kcal"},
    "convert_pressure": {"value": 32, "from_unit": "psi", "to_unit": "bar"},
    "convert_temperature": {"value": 98.6, "from_unit": "F", "to_unit": "C"},
    "convert_units": {"value": 5, "from_unit": "mi", "to_unit": "km"},
    "convert_timezone": {
        "datetime": "2025-07-01T09:00",
        "from_timezone": "America/New_York",
        "to_timezone": "Tokyo",
    },
    "get_utc_offset": {"timezone": "Europe/Paris", "date": "2025-07-01"},
    "list_time_zones": {},
    "days_between_dates": {"start_date": "2025-01-01", "end_date": "2025-12-25"},
    "add_days_to_date": {"date": "2025-02-20", "days": 10},
    "get_day_of_week": {"date": "2025-07-04"},
    "business_days_between": {
        "start_date": "2025-12-22",
        "end_date": "2026-01-05",
        "country": "France",
    },
    "add_business_days": {"date": "2025-12-23", "days": 3, "country": "UK"},
    "is_leap_year": {"year": 2024},
    "get_iso_week_number": {"date": "2025-12-29"},
    "format_date": {"date": "2025-07-04", "style": "long"},
    "parse_duration": {"duration": "1h 30m"},
    "convert_currency": {"amount": 100, "from_currency": "EUR", "to_currency": "JPY"},
    "get_exchange_rate": {"base_currency": "GBP", "quote_currency": "USD"},
    "list_supported_currencies": {},
    "format_money": {"amount": 1234.5, "currency": "EUR"},
    "convert_to_many_currencies": {
        "amount": 50,
        "from_currency": "USD",
        "to_currencies": ["EUR", "GBP", "JPY"],
    },
    "get_currency_for_country": {"country": "Japan"},
    "estimate_card_fx_cost": {"amount": 80, "foreign_currency": "GBP", "home_currency": "USD"},
    "search_flights": {
        "origin_city": "Paris",
        "destination_city": "Tokyo",
        "date": "2025-07-01",
    },
    "get_flight_status": {"flight_number": "AF276", "date": "2025-07-01"},
    "book_flight": {"flight_id": FLIGHT_ID, "passenger_name": "Ana Lima"},
    "search_hotels": {"city": "Rome", "check_in": "2025-09-01", "check_out": "2025-09-04"},
    "get_hotel_details": {"hotel_id": "htl_fco_2"},
    "book_hotel": BOOKING[1],
    "search_car_rentals": {
        "city": "Los Angeles",
        "pickup_date": "2025-08-01",
        "dropoff_date": "2025-08-05",
        "car_class": "suv",
    },
    "get_booking": {"booking_id": "bk_4001"},
    "list_bookings": {},
    "cancel_booking": {"booking_id": "bk_4001"},
    "get_airport_info": {"airport": "SFO"},
    "create_support_ticket": {
        "customer_id": "cust_1001",
        "subject": "Wrong colour delivered",
        "description": "The lamp is black, I ordered white.",
        "created_at": "2025-06-14T10:30",
        "priority": "high",
    },
    "get_support_ticket": {"ticket_id": "tkt_1001"},
    "list_support_tickets": {"status": "open"},
    "search_support_tickets": {"query": "invoice charged twice"},
    "update_ticket_status": {"ticket_id": "tkt_1002", "status": "resolved"},
    "assign_ticket": {"ticket_id": "tkt_1004", "agent_id": "emp_011"},
    "add_ticket_comment": {"ticket_id": "tkt_1001", "comment": "Carrier contacted."},
    "escalate_ticket": {"ticket_id": "tkt_1005", "reason": "Customer is a key account"},
    "get_ticket_sla": {"ticket_id": "tkt_1001", "as_of": "2025-06-14T12:00"},
    "list_customer_tickets": {"customer_id": "cust_1001"},
    "suggest_help_articles": {"ticket_id": "tkt_1003"},
    "lookup_employee": {"employee_id": "emp_012"},
    "search_employees": {"query": "support agent"},
    "list_departments": {},
    "get_direct_reports": {"employee_id": "emp_005"},
    "get_manager_chain": {"employee_id": "emp_012"},
    "get_leave_balance": {"employee_id": "emp_012", "year": 2025},
    "request_time_off": {
        "employee_id": "emp_012",
        "start_date": "2025-08-04",
        "end_date": "2025-08-08",
    },
    "list_time_off_requests": {"employee_id": "emp_012"},
    "get_salary_band": {"level": "L4"},
    "list_open_positions": {"department": "Engineering"},
    "list_public_holidays": {"country": "Germany", "year": 2025},
    "get_product": {"sku": "SKU-1001"},
    "search_products": {"query": "keyboard"},
    "list_product_categories": {},
    "check_stock": {"sku": "SKU-1003"},
    "list_warehouses": {},
    "list_low_stock_items": {"warehouse": "WH-EU"},
    "adjust_stock": {
        "sku": "SKU-1003",
        "warehouse": "WH-EU",
        "quantity_change": 25,
        "reason": "received",
    },
    "transfer_stock": {
        "sku": "SKU-1009",
        "from_warehouse": "WH-EAST",
        "to_warehouse": "WH-WEST",
        "quantity": 1,
    },
    "reserve_stock": {
        "sku": "SKU-1009",
        "warehouse": "WH-EAST",
        "quantity": 1,
        "order_id": "order_1",
    },
    "get_reorder_suggestion": {"sku": "SKU-1003"},
    "get_product_price": {"sku": "SKU-1010", "quantity": 60, "currency": "EUR"},
    "create_email_draft": DRAFT[1],
    "list_email_drafts": {},
    "get_email_draft": {"draft_id": "draft_1"},
    "update_email_draft": {"draft_id": "draft_1", "body": "Hello again"},
    "delete_email_draft": {"draft_id": "draft_1"},
    "add_draft_recipient": {"draft_id": "draft_1", "email": "boss@example.com", "field": "cc"},
    "validate_email_address": {"email": "Grace.Brown@Acme.example"},
    "render_email_template": {
        "template": "order_shipped",
        "recipient_name": "Grace",
        "reference": "order_42",
    },
    "search_email_drafts": {"query": "hello"},
    "create_note": {"title": "Ideas", "body": "Offer free returns", "tags": ["q3"]},
    "get_note": {"note_id": "note_1"},
    "list_notes": {"tag": "q3"},
    "search_notes": {"query": "shipping delays"},
    "update_note": {"note_id": "note_2", "title": "Q3 objectives"},
    "append_to_note": {"note_id": "note_2", "text": "Hire two support agents."},
    "delete_note": {"note_id": "note_1"},
    "tag_note": {"note_id": "note_1", "tag": "Onboarding"},
    "list_note_tags": {},
    "search_knowledge_base": {"query": "return policy refund"},
    "get_kb_article": {"article_id": "kb_001"},
    "list_kb_articles": {"category": "hr"},
    "answer_policy_question": {"question": "How many vacation days do employees get?"},
    "get_related_articles": {"article_id": "kb_001"},
    "define_glossary_term": {"term": "eta"},
    "get_city_info": {"city": "São Paulo"},
    "get_city_coordinates": {"city": "Tokyo"},
    "distance_between_cities": {"city_a": "London", "city_b": "New York", "unit": "mi"},
    "bearing_between_cities": {"from_city": "Paris", "to_city": "Berlin"},
    "list_cities": {"country": "US"},
    "get_country_info": {"country": "FR"},
    "find_nearest_cities": {"city": "Amsterdam", "limit": 3},
    "find_city_near_coordinates": {"latitude": 35.0, "longitude": 139.0},
    "count_words": {"text": "Hello world. This is a test!"},
    "slugify": {"text": "Crème brûlée: the Recipe!"},
    "convert_case": {"text": "shipping ETA lookup", "case": "camel"},
    "truncate_text": {"text": "The quick brown fox jumps over the lazy dog", "max_length": 20},
    "extract_emails": {"text": "Write to ana@example.com or bo@corp.example.org."},
    "extract_urls": {"text": "See https://example.com/docs, and http://x.org."},
    "word_frequency": {"text": "the cat and the hat and the bat", "top_n": 2},
    "normalize_whitespace": {"text": "  a   b \n\n\n\n c  "},
    "text_similarity": {"text_a": "ship the order today", "text_b": "ship the parcel today"},
    "base64_encode": {"text": "hello"},
    "base64_decode": {"data": "aGVsbG8="},
    "hash_text": {"text": "hello", "algorithm": "sha256"},
    "validate_json": {"json_text": '{"a": 1'},
    "pretty_print_json": {"json_text": '{"b": 1, "a": [1, 2]}', "sort_keys": True},
    "minify_json": {"json_text": '{ "a" : [1, 2] }'},
    "get_json_value": {"json_text": '{"orders": [{"id": "order_42"}]}', "path": "orders.0.id"},
    "merge_json_objects": {"base_json": '{"a": {"x": 1}}', "override_json": '{"a": {"y": 2}}'},
    "csv_to_json": {"csv_text": CSV},
    "json_to_csv": {"json_text": '[{"a": 1, "b": 2}, {"a": 3}]'},
    "summarize_csv": {"csv_text": CSV},
    "filter_csv_rows": {
        "csv_text": CSV,
        "column": "units",
        "operator": "greater_than",
        "value": "125",
    },
    "sort_csv_rows": {"csv_text": CSV, "column": "units", "descending": True},
    "validate_json_schema": {
        "json_text": '{"age": "ten"}',
        "schema_json": '{"type": "object", "properties": {"age": {"type": "integer"}}}',
    },
}
SETUP: dict[str, list[tuple[str, dict[str, Any]]]] = {
    "convert_lead_to_customer": [LEAD],
    "get_email_draft": [DRAFT],
    "update_email_draft": [DRAFT],
    "delete_email_draft": [DRAFT],
    "add_draft_recipient": [DRAFT],
    "search_email_drafts": [DRAFT],
    "get_booking": [BOOKING],
    "cancel_booking": [BOOKING],
}


def run(session: Session, name: str, arguments: dict[str, Any], cid: str) -> ToolResultMessage:
    """Make the assistant call a tool and execute it through the session's wrapper."""
    call = ToolCall(id=cid, name=name, arguments=arguments)
    session.assistant(tool_calls=[call])
    return session.execute(call)


def value(result: ToolResultMessage) -> Any:
    try:
        return json.loads(result.text)
    except json.JSONDecodeError:
        return result.text


def open_session(*names: str) -> Session:
    session = Session(tools=demo_catalog(), active=["tool_search", *names])
    session.user("Please help.")
    return session


# -- shape ----------------------------------------------------------------------------------


def test_catalog_size_names_and_namespaces() -> None:
    tools = demo_catalog()
    assert 190 <= len(tools) <= 220
    names = [t.name for t in tools]
    assert len(set(names)) == len(names)
    assert all(NAME.match(n) for n in names)
    namespaces = Counter(t.namespace for t in tools)
    assert set(namespaces) == set(demo_namespaces())
    assert all(NAME.match(ns) for ns in demo_namespaces())
    assert min(namespaces.values()) >= 5, namespaces


def test_every_schema_is_closed_and_every_argument_described() -> None:
    for tool in demo_catalog():
        schema = tool.parameters
        assert schema["type"] == "object", tool.name
        assert schema["additionalProperties"] is False, tool.name
        assert set(schema["required"]) <= set(schema["properties"]), tool.name
        for arg, spec in schema["properties"].items():
            assert spec.get("type") in ("string", "integer", "number", "boolean", "array"), (
                tool.name,
                arg,
            )
            assert len(spec.get("description", "")) >= 3, (tool.name, arg)
            if "enum" in spec and "default" in spec:
                assert spec["default"] in spec["enum"], (tool.name, arg)


def test_descriptions_are_one_plain_sentence_and_no_prompt_contributions() -> None:
    for tool in demo_catalog():
        assert tool.description.endswith("."), tool.name
        assert "\n" not in tool.description, tool.name
        assert 20 <= len(tool.description) <= 200, tool.name
        assert tool.prompt_snippet is None and tool.prompt_guidelines is None, tool.name


def test_core_tools_exist_and_every_tool_has_an_example() -> None:
    names = {t.name for t in demo_catalog()}
    assert set(core_tool_names()) <= names
    assert {"read_file", "list_files"} <= set(core_tool_names())
    assert set(EXAMPLES) == names


@shares
def test_a_rebuilt_catalog_checks_no_schema_again(monkeypatch: pytest.MonkeyPatch) -> None:
    """What keeps a rebuild cheap, counted rather than timed: the data file is read and each
    schema checked once per process, and a fresh catalog only builds its tools."""
    from dtl_notebook.agent import tools

    demo_catalog()  # the first build reads the data and checks each schema
    checked: list[object] = []
    real = tools._meta()

    class Counting:
        def iter_errors(self, schema: object) -> object:
            checked.append(schema)
            return real.iter_errors(schema)

    monkeypatch.setattr(tools, "_meta", Counting)
    rebuilt = [demo_catalog() for _ in range(3)]
    assert checked == [] and all(len(r) == len(rebuilt[0]) > 100 for r in rebuilt)


# -- search, then call what was found ------------------------------------------------------

DEMOS = [
    ("shipping eta order", "get_shipping_eta", {"order_id": "order_42"}, "estimated_delivery"),
    ("weather forecast city", "get_weather_forecast", {"city": "Paris"}, "forecast"),
    ("crm customer lookup", "lookup_customer", {"customer_id": "cust_1001"}, "company"),
]


@pytest.mark.parametrize(("query", "expected", "arguments", "key"), DEMOS)
def test_tool_search_finds_the_demo_tool_and_it_runs(
    query: str, expected: str, arguments: dict[str, Any], key: str
) -> None:
    outputs = []
    for _ in range(2):  # two fresh catalogs answer the same way
        session = open_session()
        found = run(session, "tool_search", {"query": query}, "s1")
        assert not found.is_error
        hits = [t["name"] for t in value(found)["tools"]]
        assert hits[0] == expected, hits
        assert expected in session.active_tools
        result = run(session, expected, arguments, "c1")
        assert not result.is_error, result.text
        assert key in value(result)
        outputs.append(result.text)
    assert outputs[0] == outputs[1]


def test_well_known_ids_give_meaningful_answers() -> None:
    session = open_session("get_shipping_eta", "get_current_weather", "lookup_customer")
    eta = value(run(session, "get_shipping_eta", {"order_id": "order_42"}, "c1"))
    assert eta["order_id"] == "order_42" and eta["status"] == "in_transit"
    assert re.fullmatch(r"\d{4}-\d{2}-\d{2}", eta["estimated_delivery"])
    customer = value(run(session, "lookup_customer", {"customer_id": "cust_1001"}, "c2"))
    assert customer["customer_id"] == "cust_1001" and customer["name"]
    for n, city in enumerate(["Paris", "Tokyo", "New York"]):
        weather = value(run(session, "get_current_weather", {"city": city}, f"w{n}"))
        assert weather["city"] == city and isinstance(weather["temperature"], float)


# -- every tool works ----------------------------------------------------------------------


@pytest.mark.parametrize("name", sorted(EXAMPLES))
def test_every_tool_runs_on_a_realistic_call(name: str) -> None:
    setup = SETUP.get(name, [])
    session = open_session(name, *(n for n, _ in setup))
    for n, (tool, arguments) in enumerate(setup):
        assert not run(session, tool, arguments, f"setup{n}").is_error
    result = run(session, name, EXAMPLES[name], "c1")
    assert not result.is_error, result.text
    assert result.text.strip()


def test_pure_tools_are_deterministic_across_catalogs() -> None:
    stateless = [n for n in sorted(EXAMPLES) if n not in SETUP]
    first, second = open_session(*stateless), open_session(*stateless)
    for n, name in enumerate(stateless):
        a = run(first, name, EXAMPLES[name], f"c{n}")
        b = run(second, name, EXAMPLES[name], f"c{n}")
        assert a.text == b.text, name


def test_spot_check_values() -> None:
    tools = {t.name: t for t in demo_catalog()}

    def call(name: str, **arguments: Any) -> Any:
        tool: Tool = tools[name]
        assert tool.execute is not None
        return tool.execute(**arguments)

    assert call("convert_length", value=1, from_unit="mi", to_unit="km")["result"] == 1.609344
    assert call("convert_currency", amount=92, from_currency="EUR", to_currency="USD")[
        "converted"
    ] == pytest.approx(100)
    assert call("count_words", text="Hello world. This is a test!")["sentences"] == 2
    summer = call(
        "convert_timezone",
        datetime="2025-07-01T09:00",
        from_timezone="New York",
        to_timezone="Europe/Paris",
    )
    assert summer["to"]["datetime"] == "2025-07-01T15:00"  # both on daylight saving time
    winter = call(
        "convert_timezone",
        datetime="2025-01-15T09:00",
        from_timezone="America/New_York",
        to_timezone="Asia/Tokyo",
    )
    assert winter["to"]["datetime"] == "2025-01-15T23:00"
    eta = call("get_shipping_eta", order_id="order_42")
    assert eta["status"] == "in_transit" and eta["estimated_delivery"] > eta["ship_date"]
    forecast = call("get_weather_forecast", city="Paris", days=2)["forecast"]
    assert [d["date"] for d in forecast] == ["2025-06-15", "2025-06-16"]
    assert all(d["low"] < d["high"] for d in forecast)
    stock = call("check_stock", sku="SKU-1001")
    assert stock["total_available"] == sum(s["available"] for s in stock["stock"].values())
    assert call("read_file", path="notes/todo.txt").startswith("Follow up with cust_1001")


# -- errors -------------------------------------------------------------------------------

BAD_CALLS = [
    ("get_shipping_eta", {"order_id": "ORD-42"}, "unknown order id format"),
    ("get_current_weather", {"city": "Atlantis"}, "unknown city 'Atlantis'"),
    ("lookup_customer", {"customer_id": "cust_9999"}, "unknown customer"),
    ("read_file", {"path": "nope.txt"}, "no such file"),
    ("read_file", {"path": "../etc/passwd"}, "may not contain '..'"),
    ("get_weather_forecast", {"city": "Paris", "start_date": "tomorrow"}, "YYYY-MM-DD"),
    ("cancel_order", {"order_id": "order_42"}, "only processing orders"),
    ("get_invoice", {"invoice_id": "inv_1"}, "unknown invoice"),
    ("check_stock", {"sku": "SKU-1001", "warehouse": "WH-MARS"}, "is not one of"),
    ("convert_currency", {"amount": 1, "from_currency": "XXX", "to_currency": "EUR"}, "XXX"),
    ("get_current_weather", {"city": "Paris", "units": "kelvin"}, "invalid arguments"),
    ("lookup_customer", {"customer_id": "cust_1001", "extra": 1}, "invalid arguments"),
]


@pytest.mark.parametrize(("name", "arguments", "message"), BAD_CALLS)
def test_bad_input_is_an_error_result(name: str, arguments: dict[str, Any], message: str) -> None:
    session = open_session(name)
    result = run(session, name, arguments, "c1")
    assert result.is_error
    assert message in result.text


# -- state ---------------------------------------------------------------------------------


def test_state_is_per_catalog() -> None:
    names = "write_file read_file list_files cancel_order get_shipping_eta".split()
    a, b = open_session(*names), open_session(*names)
    listing = run(b, "list_files", {}, "b0").text

    run(a, "write_file", {"path": "scratch.txt", "content": "only in A"}, "a1")
    assert run(a, "read_file", {"path": "scratch.txt"}, "a2").text == "only in A"
    assert run(b, "read_file", {"path": "scratch.txt"}, "b1").is_error
    assert run(b, "list_files", {}, "b2").text == listing

    assert not run(a, "cancel_order", {"order_id": "order_1"}, "a3").is_error
    assert value(run(b, "get_shipping_eta", {"order_id": "order_1"}, "b3"))["status"] == (
        "processing"
    )


def test_state_changes_are_visible_to_related_tools() -> None:
    names = "cancel_order get_shipping_eta update_shipping_address get_order_status".split()
    session = open_session(*names)
    assert not run(session, "cancel_order", {"order_id": "order_1"}, "c1").is_error
    assert value(run(session, "get_shipping_eta", {"order_id": "order_1"}, "c2"))["status"] == (
        "cancelled"
    )
    assert run(session, "cancel_order", {"order_id": "order_1"}, "c3").is_error
    moved = value(
        run(session, "update_shipping_address", EXAMPLES["update_shipping_address"], "c4")
    )
    assert moved["destination_city"] == "Shanghai"
    order = value(run(session, "get_order_status", {"order_id": "order_42"}, "c5"))
    assert order["delivery_address"]["city"] == "Shanghai"
    assert order["destination_country"] == "China"
