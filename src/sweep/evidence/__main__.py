"""``python -m sweep.evidence DATASET``: propose evidence passages for questions without labels.

Every question of ``DATASET/queries.jsonl`` (or ``--questions FILE``: JSON lines,
or one question per line) that has no ``relevant`` gets the ``--top`` passages of
the documents BM25 ranks best, in a draft file to confirm: see
:mod:`sweep.evidence.drafts`. ``--accept [DRAFT]`` writes the proposals marked
``"keep": true`` as a questions file (``--out``, default ``DATASET/queries.jsonl``, never
over an existing file), each quote checked against its document: see
:mod:`sweep.evidence.confirmed`. Bad input is one line ``file:line: problem`` (exit 2).
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from pathlib import Path

from sweep.cli.argtypes import add_reading_options, int_in, reading_options
from sweep.cli.commands import CommandParser
from sweep.cli.exits import BAD_INPUT, FAILED, log_warnings, report_error, run_with_exits
from sweep.core.messages import one_line
from sweep.evidence.confirmed import accept_draft, describe_accepted
from sweep.evidence.drafts import describe_draft, draft_evidence, draft_path

PROG = "sweep.evidence"
#: ``--accept`` without a file: the draft this command writes by default.
_THE_DRAFT = Path("")
#: What an OSError means here: a draft or questions file already there is bad input; any
#: other (a full disk) means the work could not be done.
_OS_ERRORS = {FileExistsError: BAD_INPUT, OSError: FAILED}


def main(argv: Sequence[str] | None = None) -> int:
    parser = CommandParser(PROG)
    parser.add_argument("dataset", type=Path, help="dataset folder: its documents are searched")
    parser.add_argument(
        "--questions",
        type=Path,
        metavar="FILE",
        help='questions: .jsonl rows {"query_id"?, "query", ...}, or a text '
        "file with one per line (default: DATASET/queries.jsonl)",
    )
    parser.add_argument(
        "--top",
        type=int_in(1),
        default=3,
        metavar="N",
        help="passages proposed per question (default 3)",
    )
    parser.add_argument(
        "--out",
        type=Path,
        metavar="FILE",
        help="the draft to write (default: DATASET/queries.draft.jsonl); with "
        "--accept, the questions file (default: DATASET/queries.jsonl)",
    )
    parser.add_argument("--force", action="store_true", help="replace the draft if it exists")
    parser.add_argument(
        "--accept",
        type=Path,
        nargs="?",
        const=_THE_DRAFT,
        metavar="DRAFT",
        help="write the proposals of DRAFT (default: DATASET/queries.draft."
        'jsonl) marked "keep": true as a questions file, each quote '
        "checked against its document; never over an existing file",
    )
    add_reading_options(parser, quotes=False)
    args = parser.parse_args(argv)
    if args.accept is not None:
        given = [
            o
            for o, v in (
                ("--questions", args.questions),
                ("--top", args.top != 3),
                ("--force", args.force),
            )
            if v
        ]
        if given:
            parser.error(
                f"{given[0]} does not go with --accept: it writes the kept proposals "
                "of a draft, and never over an existing file"
            )
    options = reading_options(args)
    log_warnings(PROG)
    if args.accept is not None:
        return _accept(args, options)
    out = draft_path(args.dataset, args.out)
    if out.exists() and not args.force:
        report_error(PROG, f"{out}: file exists; --force replaces it, --out FILE writes another")
        return BAD_INPUT
    progress = (
        (lambda line: print(one_line(line, squeeze=False), file=sys.stderr))
        if sys.stderr.isatty()
        else None
    )

    def call() -> None:
        draft = draft_evidence(
            args.dataset,
            args.questions,
            out,
            top=args.top,
            overwrite=args.force,
            progress=progress,
            **options,
        )
        for line in describe_draft(draft, args.dataset):
            print(one_line(line, squeeze=False))  # question ids and file names are data

    return run_with_exits(PROG, call, _OS_ERRORS)


def _accept(args, options) -> int:
    draft = draft_path(args.dataset) if args.accept == _THE_DRAFT else args.accept

    def call() -> None:
        accepted = accept_draft(draft, args.dataset, args.out, **options)
        for line in describe_accepted(accepted, args.dataset):
            print(one_line(line, squeeze=False))

    return run_with_exits(PROG, call, _OS_ERRORS)


if __name__ == "__main__":
    sys.exit(main())
