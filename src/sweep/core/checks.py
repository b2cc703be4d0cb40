"""Range checks for config values, with the one-line message every config node uses:
``eval.n_boot must be an integer in [1, 1000000], got 0``."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

__all__ = ["integer", "is_int", "number", "positive_int"]


def is_int(value: Any) -> bool:
    """An integer, NumPy's included, and not a bool (``True`` is an ``int`` to Python)."""
    return isinstance(value, (int, np.integer)) and not isinstance(value, (bool, np.bool_))


def positive_int(
    key: str, value: Any, *, error: type[Exception] = ValueError, allow_null: bool = False
) -> Any:
    """``value`` as an ``int`` if it is a positive integer (or None with ``allow_null``);
    else ``key must be a positive integer, got ...``."""
    if allow_null and value is None:
        return None
    if not is_int(value) or value < 1:
        null = " or null" if allow_null else ""
        raise error(f"{key} must be a positive integer{null}, got {value!r}")
    return int(value)


def integer(
    key: str,
    value: Any,
    low: int,
    high: int,
    *,
    error: type[Exception] = ValueError,
    allow_null: bool = False,
) -> None:
    if allow_null and value is None:
        return
    if not is_int(value) or not low <= value <= high:
        null = " or null" if allow_null else ""
        raise error(f"{key} must be an integer in [{low}, {high}]{null}, got {value!r}")


def number(
    key: str,
    value: Any,
    low: float,
    high: float,
    *,
    error: type[Exception] = ValueError,
    open_low: bool = False,
) -> None:
    ok = isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)
    if not ok or value > high or (value <= low if open_low else value < low):
        bracket = "(" if open_low else "["
        raise error(f"{key} must be a number in {bracket}{low:g}, {high:g}], got {value!r}")
