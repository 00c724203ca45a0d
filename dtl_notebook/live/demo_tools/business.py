"""Products, warehouses and the company's organisation, shared by several domains."""

from __future__ import annotations

import re
from typing import Any

from dtl_notebook.live.demo_tools.tables import _Product, demo_data

DATA = demo_data()


PRODUCTS = DATA.products
_PRODUCT_INDEX = {p.sku: p for p in PRODUCTS}
CATEGORIES = tuple(dict.fromkeys(p.category for p in PRODUCTS))
WAREHOUSES = DATA.warehouses


def _product(sku: str) -> _Product:
    key = sku.strip().upper() if isinstance(sku, str) else ""
    if key not in _PRODUCT_INDEX:
        if not re.fullmatch(r"SKU-\d{4}", key):
            raise ValueError(
                f"invalid SKU {sku!r}: expected the format SKU-<4 digits>, e.g. SKU-1001"
            )
        raise ValueError(f"unknown SKU {sku!r}; known SKUs: SKU-1001 to SKU-{1000 + len(PRODUCTS)}")
    return _PRODUCT_INDEX[key]


def _warehouse(code: str) -> str:
    key = code.strip().upper() if isinstance(code, str) else ""
    if key not in WAREHOUSES:
        raise ValueError(f"unknown warehouse {code!r}; known: {', '.join(WAREHOUSES)}")
    return key


DEPARTMENTS = DATA.departments
ROLES = DATA.roles
N_EMPLOYEES = 40
N_CUSTOMERS = 50
SEGMENTS = ("enterprise", "mid-market", "smb")
TIERS = ("bronze", "silver", "gold", "platinum")
COMPANY_DOMAIN = "northwind.example"

SEED_FILES = DATA.seed_files


def _raise_unknown(kind: str, key: str, example: str) -> Any:
    raise ValueError(f"unknown {kind} {key!r} (example of a valid id: {example})")
