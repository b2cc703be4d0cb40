"""``python -m sweep.evidence DATASET``: propose evidence passages for questions without labels.

Every question of ``DATASET/queries.jsonl`` (or ``--questions FILE``: JSON lines,
or one question per line) that has no ``relevant`` gets the ``--top`` passages of
the documents BM25 ranks best, in a draft file to confirm: see
:mod:`sweep.labelling.drafts`. Bad input is one line ``file:line: problem`` (exit 2).
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Sequence

from sweep.cli.argtypes import add_reading_options, int_in, reading_options
from sweep.cli.commands import CommandParser
from sweep.cli.exits import BAD_INPUT, FAILED, log_warnings, report_error, run_with_exits
from sweep.core.messages import one_line
from sweep.datasets.loading import DatasetError
from sweep.labelling.drafts import describe_draft, draft_evidence, draft_path

PROG = "sweep.evidence"


def main(argv: Sequence[str] | None = None) -> int:
    parser = CommandParser(PROG)
    parser.add_argument("dataset", type=Path, help="dataset folder: its documents are searched")
    parser.add_argument("--questions", type=Path, metavar="FILE",
                        help="questions: .jsonl rows {\"query_id\"?, \"query\", ...}, or a text "
                             "file with one per line (default: DATASET/queries.jsonl)")
    parser.add_argument("--top", type=int_in(1), default=3, metavar="N",
                        help="passages proposed per question (default 3)")
    parser.add_argument("--out", type=Path, metavar="FILE",
                        help="the draft to write (default: DATASET/queries.draft.jsonl)")
    parser.add_argument("--force", action="store_true", help="replace the draft if it exists")
    add_reading_options(parser, quotes=False)
    args = parser.parse_args(argv)
    options = reading_options(args)
    log_warnings(PROG)
    out = draft_path(args.dataset, args.out)
    if out.exists() and not args.force:
        report_error(PROG, f"{out}: file exists; --force replaces it, --out FILE writes another")
        return BAD_INPUT
    progress = ((lambda line: print(one_line(line, squeeze=False), file=sys.stderr))
                if sys.stderr.isatty() else None)

    def call() -> None:
        draft = draft_evidence(args.dataset, args.questions, out, top=args.top,
                               overwrite=args.force, progress=progress, **options)
        for line in describe_draft(draft, args.dataset):
            print(one_line(line, squeeze=False))  # question ids and file names are data
    return run_with_exits(PROG, call, {(DatasetError, FileExistsError): BAD_INPUT, OSError: FAILED})


if __name__ == "__main__":
    sys.exit(main())
