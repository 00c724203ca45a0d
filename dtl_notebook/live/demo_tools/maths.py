"""The maths namespace: arithmetic, a safe expression evaluator, statistics, finance."""

from __future__ import annotations

import ast
import math
import operator
import statistics
from collections.abc import Callable
from typing import Any

from dtl_notebook.live.demo_tools.fakes import _finite, _money
from dtl_notebook.live.demo_tools.registry import J, _Domain
from dtl_notebook.live.demo_tools.world import _World

_BINARY: dict[type[ast.operator], Callable[[Any, Any], Any]] = {
    ast.Add: operator.add,
    ast.Sub: operator.sub,
    ast.Mult: operator.mul,
    ast.Div: operator.truediv,
    ast.FloorDiv: operator.floordiv,
    ast.Mod: operator.mod,
    ast.Pow: operator.pow,
}
_FUNCTIONS: dict[str, Callable[..., float]] = {
    "sqrt": math.sqrt,
    "sin": math.sin,
    "cos": math.cos,
    "tan": math.tan,
    "log": math.log,
    "log10": math.log10,
    "exp": math.exp,
    "abs": abs,
    "round": round,
    "floor": math.floor,
    "ceil": math.ceil,
    "min": min,
    "max": max,
}
_CONSTANTS = {"pi": math.pi, "e": math.e, "tau": math.tau}


def _evaluate(node: ast.AST) -> Any:
    """Evaluate a parsed arithmetic expression: numbers, operators and a few math functions."""
    if isinstance(node, ast.Expression):
        return _evaluate(node.body)
    if isinstance(node, ast.Constant) and type(node.value) in (int, float):
        return node.value
    if isinstance(node, ast.Name) and node.id in _CONSTANTS:
        return _CONSTANTS[node.id]
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub | ast.UAdd):
        value = _evaluate(node.operand)
        return -value if isinstance(node.op, ast.USub) else value
    if isinstance(node, ast.BinOp) and type(node.op) in _BINARY:
        left, right = _evaluate(node.left), _evaluate(node.right)
        if isinstance(node.op, ast.Pow) and abs(right) > 1000:
            raise ValueError("exponents are limited to 1000")
        if isinstance(node.op, ast.Div | ast.FloorDiv | ast.Mod) and right == 0:
            raise ValueError("division by zero")
        return _BINARY[type(node.op)](left, right)
    if (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Name)
        and node.func.id in _FUNCTIONS
        and not node.keywords
    ):
        return _FUNCTIONS[node.func.id](*(_evaluate(a) for a in node.args))
    raise ValueError(f"unsupported syntax in expression: {ast.dump(node)[:80]}")


def _maths(tool: _Domain, world: _World) -> None:

    @tool
    def add(a: float, b: float) -> J:
        return {"result": _finite(a + b)}

    @tool
    def subtract(a: float, b: float) -> J:
        return {"result": _finite(a - b)}

    @tool
    def multiply(a: float, b: float) -> J:
        return {"result": _finite(a * b)}

    @tool
    def divide(dividend: float, divisor: float) -> J:
        if divisor == 0:
            raise ValueError("division by zero: the divisor must not be 0")
        return {"result": _finite(dividend / divisor)}

    @tool
    def power(base: float, exponent: float) -> J:
        if abs(exponent) > 1000:
            raise ValueError("exponents are limited to +/-1000")
        if base == 0 and exponent < 0:
            raise ValueError("0 cannot be raised to a negative power")
        if base < 0 and not float(exponent).is_integer():
            raise ValueError("a negative base needs an integer exponent")
        return {"result": _finite(float(base) ** exponent)}

    @tool
    def evaluate_expression(expression: str) -> J:
        try:
            tree = ast.parse(expression.strip(), mode="eval")
        except SyntaxError:
            raise ValueError(f"cannot parse expression {expression!r}") from None
        try:
            value = _evaluate(tree)
        except (ArithmeticError, TypeError) as exc:
            raise ValueError(f"cannot evaluate {expression!r}: {exc}") from None
        return {"expression": expression, "result": _finite(value)}

    @tool
    def statistics_summary(values: list[float]) -> J:
        data = sorted(values)
        if not data:
            raise ValueError("values must not be empty")
        quartiles = statistics.quantiles(data, n=4) if len(data) > 1 else [data[0]] * 3
        return {
            "count": len(data),
            "sum": _finite(math.fsum(data)),
            "mean": statistics.fmean(data),
            "median": statistics.median(data),
            "mode": statistics.mode(data),
            "stdev": statistics.stdev(data) if len(data) > 1 else 0.0,
            "min": data[0],
            "max": data[-1],
            "q1": quartiles[0],
            "q3": quartiles[2],
        }

    @tool
    def linear_regression(x_values: list[float], y_values: list[float]) -> J:
        if len(x_values) != len(y_values):
            raise ValueError("x_values and y_values must have the same length")
        try:
            slope, intercept = statistics.linear_regression(x_values, y_values)
            r = statistics.correlation(x_values, y_values)
        except statistics.StatisticsError as exc:
            raise ValueError(str(exc)) from None
        return {"slope": slope, "intercept": intercept, "r": r, "r_squared": r * r}

    @tool
    def solve_quadratic(a: float, b: float, c: float) -> J:
        if a == 0:
            raise ValueError("a must not be 0 (that is a linear equation)")
        disc = b * b - 4 * a * c
        if disc >= 0:
            roots = sorted({(-b - math.sqrt(disc)) / (2 * a), (-b + math.sqrt(disc)) / (2 * a)})
            return {"discriminant": disc, "roots": roots, "complex": False}
        re_, im = -b / (2 * a), math.sqrt(-disc) / (2 * abs(a))
        return {
            "discriminant": disc,
            "roots": [f"{re_:g}-{im:g}i", f"{re_:g}+{im:g}i"],
            "complex": True,
        }

    @tool
    def prime_factors(n: int) -> J:
        if not 2 <= n <= 10**12:
            raise ValueError("n must be between 2 and 10^12")
        factors, rest, p = [], n, 2
        while p * p <= rest:
            while rest % p == 0:
                factors.append(p)
                rest //= p
            p += 1 if p == 2 else 2
        if rest > 1:
            factors.append(rest)
        return {"n": n, "is_prime": factors == [n], "prime_factors": factors}

    @tool
    def factorial(n: int) -> J:
        if not 0 <= n <= 500:
            raise ValueError("n must be between 0 and 500")
        return {"n": n, "factorial": str(math.factorial(n))}

    @tool
    def percent_change(old_value: float, new_value: float) -> J:
        if old_value == 0:
            raise ValueError("old_value must not be 0")
        change = (new_value - old_value) / abs(old_value) * 100
        return {
            "percent_change": round(change, 4),
            "direction": "up" if change > 0 else "down" if change < 0 else "flat",
        }

    @tool
    def percentage_of(percent: float, value: float) -> J:
        return {"result": _finite(value * percent / 100)}

    @tool
    def compound_interest(
        principal: float, annual_rate_percent: float, years: float, compounds_per_year: int = 12
    ) -> J:
        rate = annual_rate_percent / 100 / compounds_per_year
        future = _finite(principal * (1 + rate) ** (compounds_per_year * years))
        return {"future_value": _money(future), "interest_earned": _money(future - principal)}

    @tool
    def loan_payment(principal: float, annual_rate_percent: float, years: int) -> J:
        months = years * 12
        rate = annual_rate_percent / 100 / 12
        payment = (
            principal / months if rate == 0 else principal * rate / (1 - (1 + rate) ** -months)
        )
        return {
            "monthly_payment": _money(payment),
            "total_paid": _money(payment * months),
            "total_interest": _money(payment * months - principal),
        }
