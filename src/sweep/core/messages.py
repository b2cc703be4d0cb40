"""Error messages on one line: what a terminal, a log line and a CSV cell can hold."""

from __future__ import annotations

import re

__all__ = ["first_line", "one_line", "visible"]

# Control characters (C0, DEL, C1), the bidi controls (embeddings, overrides, isolates,
# marks), the Unicode line and paragraph separators, and lone surrogates (which cannot
# even be encoded to a terminal).
_UNSAFE = re.compile("[\x00-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e"
                     "\u2066-\u2069\ud800-\udfff]")
_SHORT = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}


def _escape(match: re.Match) -> str:
    char = match.group()
    code = ord(char)
    return _SHORT.get(char) or (f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}")


def visible(text: object) -> str:
    """``text`` (a file name, a doc_id) with every control, bidi and separator character
    escaped: a line break shows as ``\\n``, an ANSI escape as ``\\x1b``, U+202E as
    ``\\u202e``. Printable text, accents and scripts included, is unchanged."""
    return _UNSAFE.sub(_escape, str(text))


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
