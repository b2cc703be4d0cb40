"""``python -m sweep.validate DIR [--split test]``: check a dataset and describe it.

Every problem is printed as ``path:line: message`` (exit 1). A valid dataset
gets the files of ``docs/`` that were not read (hidden, other extensions), and
the numbers that decide whether chunking will matter on it: document and span
lengths in tokens, and how many evidence spans a fixed-size token chunker
would cut in two.
"""

from __future__ import annotations

import logging
import sys
from pathlib import Path
from typing import Sequence

from sweep.chunking.chunkers import build_chunker
from sweep.cli.commands import CommandParser
from sweep.datasets.loading import scan_dataset, skipped_files
from sweep.datasets.statistics import compute_statistics, format_statistics


def _token_chunker(size: int):
    return build_chunker(strategy="token", size=size, overlap=0)


def main(argv: Sequence[str] | None = None) -> int:
    parser = CommandParser("sweep.validate")
    parser.add_argument("dir", type=Path, help="dataset directory")
    parser.add_argument("--split", default="test", help="BEIR qrels split: qrels/<split>.tsv (default: test)")
    args = parser.parse_args(argv)

    # The loader warns about skipped files; here they are printed with the statistics instead.
    loader_log = logging.getLogger("sweep.datasets.loading")
    level = loader_log.level
    loader_log.setLevel(logging.ERROR)
    try:
        dataset, problems = scan_dataset(args.dir, split=args.split)
    finally:
        loader_log.setLevel(level)
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
    print()
    print(format_statistics(stats))
    return 0


if __name__ == "__main__":
    sys.exit(main())
