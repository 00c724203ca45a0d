"""The units namespace: conversions of length, mass, volume, temperature and more."""

from __future__ import annotations

from dtl_notebook.live.demo_tools.registry import Fn, J, _Domain
from dtl_notebook.live.demo_tools.tables import demo_data
from dtl_notebook.live.demo_tools.world import _World

DATA = demo_data()
# Conversion factors to a base unit per dimension (temperature is handled separately).
UNIT_TABLES = DATA.unit_tables

TEMPERATURE_UNITS = ("C", "F", "K")


def _to_kelvin(value: float, unit: str) -> float:
    return (
        value + 273.15 if unit == "C" else (value - 32) * 5 / 9 + 273.15 if unit == "F" else value
    )


def _from_kelvin(kelvin: float, unit: str) -> float:
    return (
        kelvin - 273.15
        if unit == "C"
        else (kelvin - 273.15) * 9 / 5 + 32
        if unit == "F"
        else kelvin
    )


def _units(tool: _Domain, world: _World) -> None:
    def converter(factors: dict[str, float]) -> Fn:
        def convert(value: float, from_unit: str, to_unit: str) -> J:
            result = value * factors[from_unit] / factors[to_unit]
            return {
                "value": value,
                "from_unit": from_unit,
                "to_unit": to_unit,
                "result": round(result, 10),
            }

        return convert

    for dimension, factors in UNIT_TABLES.items():
        tool.add(f"convert_{dimension}", converter(factors))

    @tool
    def convert_temperature(value: float, from_unit: str, to_unit: str) -> J:
        kelvin = _to_kelvin(value, from_unit)
        if kelvin < 0:
            raise ValueError(f"{value} {from_unit} is below absolute zero")
        return {
            "value": value,
            "from_unit": from_unit,
            "to_unit": to_unit,
            "result": round(_from_kelvin(kelvin, to_unit), 4),
        }

    @tool
    def convert_units(value: float, from_unit: str, to_unit: str) -> J:
        if from_unit in TEMPERATURE_UNITS and to_unit in TEMPERATURE_UNITS:
            return {"dimension": "temperature", **convert_temperature(value, from_unit, to_unit)}
        for dimension, factors in UNIT_TABLES.items():
            if from_unit in factors and to_unit in factors:
                return {"dimension": dimension, **converter(factors)(value, from_unit, to_unit)}
        known = {u for f in UNIT_TABLES.values() for u in f} | set(TEMPERATURE_UNITS)
        bad = [u for u in (from_unit, to_unit) if u not in known]
        if bad:
            raise ValueError(f"unknown unit {bad[0]!r}; known units: {', '.join(sorted(known))}")
        raise ValueError(f"cannot convert {from_unit} to {to_unit}: they measure different things")
