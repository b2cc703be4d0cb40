"""``python -m sweep.validate DIR [--split test]``: check a dataset and describe it.

Every problem is printed as ``path:line: message`` (exit 1). A valid dataset
gets the files of ``docs/`` that were not read (hidden, other extensions), how
its quotes were located (``--quotes``: each one; ``--write-offsets FILE``: a
copy of the questions with their offsets), and the numbers that decide whether
chunking will matter on it: document and span lengths in tokens, and how many
evidence spans a fixed-size token chunker would cut in two.
"""

from __future__ import annotations

import logging
import sys
from contextlib import contextmanager
from pathlib import Path
from typing import Sequence

from sweep.chunking import build_chunker
from sweep.cli.argtypes import add_reading_options, reading_options
from sweep.cli.commands import CommandParser
from sweep.datasets.located import quote_report, write_offsets
from sweep.datasets.loading import QUERIES_FILE, scan_dataset, skipped_files
from sweep.datasets.statistics import compute_statistics, format_statistics


@contextmanager
def _collected_warnings():
    """The loader's log lines, kept instead of logged."""
    lines: list[str] = []
    handler = logging.Handler()
    handler.emit = lambda record: lines.append(record.getMessage())
    loader_log = logging.getLogger("sweep.datasets.loading")
    level, propagate = loader_log.level, loader_log.propagate
    loader_log.setLevel(logging.WARNING)
    loader_log.propagate = False
    loader_log.addHandler(handler)
    try:
        yield lines
    finally:
        loader_log.removeHandler(handler)
        loader_log.setLevel(level)
        loader_log.propagate = propagate


def _token_chunker(size: int):
    return build_chunker(strategy="token", size=size, overlap=0)


def main(argv: Sequence[str] | None = None) -> int:
    parser = CommandParser("sweep.validate")
    parser.add_argument("dir", type=Path, help="dataset directory")
    parser.add_argument("--split", default="test", help="BEIR qrels split: qrels/<split>.tsv (default: test)")
    parser.add_argument("--quotes", action="store_true", help="print where and how each quote was located")
    parser.add_argument("--write-offsets", type=Path, metavar="FILE",
                        help="write a copy of queries.jsonl whose quotes carry their offsets (a new file)")
    add_reading_options(parser)
    args = parser.parse_args(argv)
    if args.write_offsets is not None and args.write_offsets.exists():
        parser.error(f"--write-offsets {args.write_offsets}: file exists; name a new file")

    # The loader's warnings are printed with the result instead; the files it skipped
    # by extension are said once, by skipped_files below.
    with _collected_warnings() as warnings:
        dataset, problems = scan_dataset(args.dir, split=args.split, **reading_options(args))
    if problems:
        for problem in problems:
            print(problem, file=sys.stderr)
        if len(problems) > 1:
            print(f"{len(problems)} problems", file=sys.stderr)
        return 1
    assert dataset is not None

    try:
        stats = compute_statistics(dataset, make_chunker=_token_chunker)
    except (ImportError, ValueError) as e:
        # Validation passed; only the statistics could not be computed.
        print(f"{args.dir}: valid, but statistics failed: {' '.join(str(e).splitlines())}", file=sys.stderr)
        return 1
    split = f", split {args.split}" if (args.dir.expanduser() / "qrels").is_dir() else ""
    print(f"{args.dir}: valid ({dataset.name}{split})")
    skipped = skipped_files(args.dir)
    if skipped:
        print(skipped.summary())
    for line in warnings:
        if not skipped or line != skipped.summary():
            print(line)
    queries_file = args.dir.expanduser() / QUERIES_FILE
    for line in quote_report(dataset, queries_file, each=args.quotes):
        print(line)
    if args.write_offsets is not None:
        added = write_offsets(dataset, queries_file, args.write_offsets)
        print(f"{args.write_offsets}: {added} quotes written with their offsets")
    print()
    print(format_statistics(stats))
    return 0


if __name__ == "__main__":
    sys.exit(main())
