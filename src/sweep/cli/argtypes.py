"""argparse types shared by the commands: each rejects bad input with the range it expects."""

from __future__ import annotations

import argparse
from typing import Callable

__all__ = ["MAX_INT", "fraction", "int_in", "int_list"]

#: Bound for counts and cut-offs read from the command line: beyond it NumPy's int64
#: sums could wrap around.
MAX_INT = 2**31 - 1


def int_list(text: str) -> list[int]:
    try:
        values = [int(part) for part in text.split(",") if part.strip()]
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected comma-separated positive integers, got {text!r}") from None
    if not values or any(not 1 <= v <= MAX_INT for v in values):
        raise argparse.ArgumentTypeError(f"expected comma-separated positive integers, got {text!r}")
    return values


def int_in(low: int, high: int = MAX_INT) -> Callable[[str], int]:
    """An argparse type: an integer from low to high."""
    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            value = low - 1
        if not low <= value <= high:
            raise argparse.ArgumentTypeError(f"expected an integer from {low} to {high}, got {text!r}")
        return value
    return parse


def fraction(text: str) -> float:
    """A number in (0, 1]."""
    try:
        value = float(text)
    except ValueError:
        value = -1.0
    if not 0 < value <= 1:
        raise argparse.ArgumentTypeError(f"expected a number in (0, 1], got {text!r}")
    return value
