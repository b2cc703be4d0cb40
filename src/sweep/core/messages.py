"""Error messages on one line: what a terminal, a log line and a CSV cell can hold.

A file name, a doc_id or a line of a dataset can hold anything: a line break that would
split one error into two, an ANSI escape that recolours or rewrites the terminal, a bidi
override (U+202E) that shows a name backwards. Every message is therefore rendered with
those characters escaped (``\\x1b``, ``\\u202e``), never raw.
"""

from __future__ import annotations

import logging
import re
from os import PathLike
from typing import Any

__all__ = ["VisibleFormatter", "first_line", "one_line", "visible"]

# Control characters (C0, DEL, C1), the bidi controls (embeddings, overrides, isolates,
# marks), the Unicode line and paragraph separators, and lone surrogates (which cannot
# even be encoded to a terminal).
_UNSAFE = re.compile(
    "[\x00-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069\ud800-\udfff]"
)
_UNSAFE_BUT_SPACE = re.compile(
    "[\x00-\x08\x0e-\x1f\x7f-\x84\x86-\x9f\u061c\u200e\u200f"
    "\u202a-\u202e\u2066-\u2069\ud800-\udfff]"
)
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


def one_line(text: object, *, squeeze: bool = True) -> str:
    """``text`` with every run of whitespace, line breaks included, as one space, and any
    other control or bidi character escaped (see :func:`visible`). ``squeeze=False`` keeps
    the spacing within a line (a message quoting ``'a  b'`` must not show ``'a b'``) and
    turns each line break into one space."""
    text = _UNSAFE_BUT_SPACE.sub(_escape, str(text))
    return " ".join(text.split()) if squeeze else " ".join(text.splitlines())


def first_line(exc: BaseException, *, with_type: bool = False) -> str:
    """The first non-empty line of an exception's message (its type's name when it has none),
    its control and bidi characters escaped.

    ``with_type`` puts the type in front (``OSError: disk full``), for logs that must say
    what kind of failure it was.
    """
    lines = [line.strip() for line in str(exc).splitlines() if line.strip()]
    text = one_line(lines[0], squeeze=False) if lines else ""
    if with_type:
        return f"{type(exc).__name__}: {text}".rstrip(": ")
    return text or type(exc).__name__


class VisibleFormatter(logging.Formatter):
    """A log formatter that shows data as :func:`visible` text.

    The values a message is formatted with (``log.warning("%s: ...", path)``) are data:
    a line break in them is shown as ``\\n``, so one event stays one line. The message
    template is code: its own line breaks are kept, its other control characters escaped.
    """

    def format(self, record: logging.LogRecord) -> str:
        shown = logging.makeLogRecord(record.__dict__)  # other handlers see the record unchanged
        shown.msg = _UNSAFE_BUT_SPACE.sub(_escape, str(record.msg))
        shown.args = _visible_args(record.args)
        return super().format(shown)


def _visible_args(args: Any) -> Any:
    if isinstance(args, tuple):
        return tuple(_visible_arg(a) for a in args)
    if isinstance(args, dict):
        return {k: _visible_arg(v) for k, v in args.items()}
    return args


def _visible_arg(value: Any) -> Any:
    # Numbers keep their type for %d and %.2f; everything else is shown as text.
    if value is None or isinstance(value, (bool, int, float)):
        return value
    if isinstance(value, (str, PathLike, BaseException)):
        return visible(value)
    return value
