"""``python -m sweep.validate DIR [--split test]``: check a dataset and describe it.

Every problem is printed as ``path:line: message`` (exit 1). A valid dataset
gets the files of ``docs/`` that were not read (hidden, other extensions), how
its quotes were located (``--quotes``: each one; ``--write-offsets FILE``: a
copy of the questions with their offsets), and the numbers that decide whether
chunking will matter on it: document and span lengths in tokens, and how many
evidence spans a fixed-size token chunker would cut in two.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from pathlib import Path

from sweep.cli.argtypes import add_reading_options, reading_options
from sweep.cli.commands import CommandParser
from sweep.cli.exits import BAD_INPUT, run_with_exits
from sweep.validate.validating import validate


def main(argv: Sequence[str] | None = None) -> int:
    parser = CommandParser("sweep.validate")
    parser.add_argument("dir", type=Path, help="dataset directory")
    parser.add_argument(
        "--split", default="test", help="BEIR qrels split: qrels/<split>.tsv (default: test)"
    )
    parser.add_argument(
        "--quotes", action="store_true", help="print where and how each quote was located"
    )
    parser.add_argument(
        "--write-offsets",
        type=Path,
        metavar="FILE",
        help="write a copy of queries.jsonl whose quotes carry their offsets (a new file)",
    )
    add_reading_options(parser)
    args = parser.parse_args(argv)
    if args.write_offsets is not None and args.write_offsets.exists():
        parser.error(f"--write-offsets {args.write_offsets}: file exists; name a new file")
    if args.write_offsets is not None and not args.write_offsets.parent.is_dir():
        parser.error(f"--write-offsets {args.write_offsets}: no folder {args.write_offsets.parent}")
    return run_with_exits(
        "sweep.validate",
        lambda: validate(
            args.dir,
            split=args.split,
            reading=reading_options(args),
            each_quote=args.quotes,
            offsets_to=args.write_offsets,
        ),
        {OSError: BAD_INPUT},
    )


if __name__ == "__main__":
    sys.exit(main())
