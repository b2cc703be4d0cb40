"""argparse types shared by the commands: each rejects bad input with the range it expects."""

from __future__ import annotations

import argparse
from collections.abc import Callable

__all__ = [
    "MAX_INT",
    "add_reading_options",
    "fraction",
    "int_in",
    "int_list",
    "positive_number",
    "reader_choice",
    "reading_options",
]

#: Bound for counts and cut-offs read from the command line: beyond it NumPy's int64
#: sums could wrap around.
MAX_INT = 2**31 - 1


def int_list(text: str) -> list[int]:
    try:
        values = [int(part) for part in text.split(",") if part.strip()]
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"expected comma-separated positive integers, got {text!r}"
        ) from None
    if not values or any(not 1 <= v <= MAX_INT for v in values):
        raise argparse.ArgumentTypeError(
            f"expected comma-separated positive integers, got {text!r}"
        )
    return values


def int_in(low: int, high: int = MAX_INT) -> Callable[[str], int]:
    """An argparse type: an integer from low to high."""

    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            value = low - 1
        if not low <= value <= high:
            raise argparse.ArgumentTypeError(
                f"expected an integer from {low} to {high}, got {text!r}"
            )
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


def reader_choice(text: str) -> tuple[str, str]:
    """``--reader pdf=pdfplumber``: a document format and the reader to read it with."""
    fmt, sep, name = text.partition("=")
    if not sep or not fmt.strip() or not name.strip():
        raise argparse.ArgumentTypeError(
            f"expected FORMAT=READER (e.g. pdf=pdfplumber), got {text!r}"
        )
    return fmt.strip().lower(), name.strip()


def add_reading_options(parser: argparse.ArgumentParser, *, quotes: bool = True) -> None:
    """The options that say how a dataset's documents are read, as ``dataset.*`` does in a
    sweep; ``quotes``: also how its quotes are located (``--fuzzy``)."""
    parser.add_argument(
        "--reader",
        type=reader_choice,
        action="append",
        default=[],
        metavar="FORMAT=READER",
        help="reader of a document format, e.g. pdf=pdfplumber (repeatable; "
        "the same choice as dataset.reader.pdf=pdfplumber in a sweep)",
    )
    parser.add_argument(
        "--skip-unreadable",
        action="store_true",
        help="leave out files no reader can read, instead of stopping",
    )
    parser.add_argument(
        "--follow-links",
        action="store_true",
        help="also read links under the documents folder that lead outside the "
        "dataset folder (dataset.follow_links=true in a sweep)",
    )
    limits = parser.add_argument_group(
        "reading limits",
        "the most one document file may cost to "
        "read, as dataset.max_* in a sweep (defaults: docs/documents.md); "
        "a file beyond one is unreadable",
    )
    for option, metavar, kind, what in _LIMITS:
        limits.add_argument(option, type=kind, default=None, metavar=metavar, help=what)
    if not quotes:
        return
    parser.add_argument(
        "--fuzzy",
        type=fraction,
        default=None,
        metavar="SIMILARITY",
        help="accept a quote found only approximately from this similarity "
        "(e.g. 0.9; default: exact or normalised matches only)",
    )


def positive_number(text: str) -> float:
    """A number above 0 (a size in MB)."""
    try:
        value = float(text)
    except ValueError:
        value = -1.0
    if not 0 < value < float("inf"):
        raise argparse.ArgumentTypeError(f"expected a positive number, got {text!r}")
    return value


# (option, metavar, type, help) of each reading limit: dataset.max_file_mb is --max-file-mb.
_LIMITS = (
    ("--max-file-mb", "MB", positive_number, "refuse a file larger than this"),
    (
        "--max-expanded-mb",
        "MB",
        positive_number,
        "refuse a DOCX/PPTX/XLSX growing more than this when unpacked, a web page of more text, a PDF "
        "whose pages draw more page content (a PDF reader reads a share of it)",
    ),
    ("--max-pages", "N", int_in(1), "refuse a PDF or a deck with more pages or slides"),
    (
        "--max-blocks",
        "N",
        int_in(1),
        "refuse a Word file or a deck of more XML elements, a web page of "
        "more tags, a workbook spanning more cells",
    ),
)


def reading_options(args: argparse.Namespace) -> dict:
    """The keyword arguments of ``load_dataset`` that :func:`add_reading_options` parsed."""
    options = {
        "reader": dict(args.reader) or None,
        "skip_unreadable": args.skip_unreadable,
        "follow_links": args.follow_links,
    }
    for option, *_ in _LIMITS:
        key = option[2:].replace("-", "_")
        if getattr(args, key) is not None:
            options[key] = getattr(args, key)
    if hasattr(args, "fuzzy"):
        options["fuzzy"] = args.fuzzy
    return options
