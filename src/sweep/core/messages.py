"""Error messages on one line: what a terminal, a log line and a CSV cell can hold."""

from __future__ import annotations

__all__ = ["first_line", "one_line"]


def one_line(text: object) -> str:
    """``text`` with every run of whitespace, line breaks included, as one space."""
    return " ".join(str(text).split())


def first_line(exc: BaseException, *, with_type: bool = False) -> str:
    """The first non-empty line of an exception's message (its type's name when it has none).

    ``with_type`` puts the type in front (``OSError: disk full``), for logs that must say
    what kind of failure it was.
    """
    lines = [line.strip() for line in str(exc).splitlines() if line.strip()]
    text = lines[0] if lines else ""
    if with_type:
        return f"{type(exc).__name__}: {text}".rstrip(": ")
    return text or type(exc).__name__
