"""``python -m sweep.extract DATASET OUT``: write the text each document was read as.

Offsets and quotes index this text, not the PDF or web page itself: label
against it, and see what the parser did. One ``OUT/<doc_id>.txt`` per document
and ``OUT/extracted.jsonl`` (reader, title, page ranges). Unreadable files are
listed, one line each (exit 2).
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from pathlib import Path

from sweep.cli.argtypes import add_reading_options, reading_options
from sweep.cli.commands import CommandParser
from sweep.cli.exits import BAD_INPUT, log_warnings, report_error, run_with_exits
from sweep.core.messages import visible
from sweep.datasets.loading import DatasetError, load_corpus
from sweep.datasets.texts import INDEX_FILE, write_texts


def main(argv: Sequence[str] | None = None) -> int:
    parser = CommandParser("sweep.extract")
    parser.add_argument("dataset", type=Path, help="dataset directory, or a folder of documents")
    parser.add_argument(
        "out",
        type=Path,
        help="folder to write the texts into (new, empty, or written by sweep.extract before)",
    )
    add_reading_options(parser, quotes=False)
    args = parser.parse_args(argv)
    options = reading_options(args)
    log_warnings("sweep.extract")

    def call() -> int:
        try:
            documents = load_corpus(args.dataset, **options)
        except DatasetError as e:
            for problem in e.problems:  # every unreadable file, not only the first
                report_error("sweep.extract", str(problem))
            return BAD_INPUT
        written = write_texts(documents, args.out)
        print(
            f"{len(written.files)} texts written to {visible(written.folder)} "
            f"(index: {visible(written.folder / INDEX_FILE)})"
        )
        return 0

    return run_with_exits("sweep.extract", call, {OSError: BAD_INPUT})


if __name__ == "__main__":
    sys.exit(main())
