"""Score any retriever's output: ``python -m sweep.score --corpus C --queries Q --run RUN.jsonl``.

``RUN.jsonl`` has one line per query, ``{"query_id": "...", "hits": [...]}``, hits
in rank order (the format: :mod:`sweep.datasets.runfiles`). Writes
``per_query.csv``, ``summary.json`` and ``summary.md`` into ``--out`` and prints
the summary table. Bad input stops with one line naming the file, the line and
the problem (exit 2); an empty run file, or one naming none of the queries, is
bad input too.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence

from sweep.cli.argtypes import fraction, int_in, int_list
from sweep.cli.commands import CommandParser
from sweep.cli.exits import BAD_INPUT, run_with_exits
from sweep.core.evalconfig import EvalConfig
from sweep.core.tokenization import DEFAULT_TOKENIZER
from sweep.scoring.credit import GAINS
from sweep.scoring.runs import score_run


def main(argv: Sequence[str] | None = None) -> int:
    ap = CommandParser("sweep.score")
    ap.add_argument(
        "--corpus",
        required=True,
        help="corpus.jsonl, a folder of documents (PDF, HTML, DOCX, Markdown, text), or a dataset directory",
    )
    ap.add_argument(
        "--queries",
        required=True,
        help="queries.jsonl (project or BEIR format) or a dataset directory",
    )
    ap.add_argument(
        "--run", required=True, help='run file: one {"query_id", "hits"} object per line'
    )
    ev = EvalConfig()  # the sweep's scoring defaults: one place for them
    ap.add_argument(
        "--k",
        type=int_list,
        default=list(ev.k),
        help=f"cut-offs (default {','.join(map(str, ev.k))})",
    )
    ap.add_argument(
        "--budgets", type=int_list, default=[], help="token budgets for @Bt measures, e.g. 512,1024"
    )
    ap.add_argument(
        "--gain", choices=GAINS, default=ev.gain, help="ndcg gain of a grade g: g or 2^g - 1"
    )
    ap.add_argument(
        "--min-coverage",
        type=fraction,
        default=ev.min_coverage,
        help="share of a span's characters the retrieved chunks must cover to credit it "
        f"(default {ev.min_coverage})",
    )
    ap.add_argument("--out", help="output directory (default: outputs/score/<run file name>)")
    ap.add_argument("--split", default="test", help="BEIR qrels split (default test)")
    ap.add_argument(
        "--tokenizer",
        default=DEFAULT_TOKENIZER,
        help="counts tokens of hits without n_tokens (budgets only)",
    )
    ap.add_argument(
        "--n-boot",
        type=int_in(1),
        default=ev.n_boot,
        help=f"bootstrap resamples (default {ev.n_boot})",
    )
    ap.add_argument(
        "--seed", type=int_in(0), default=ev.seed, help=f"bootstrap seed (default {ev.seed})"
    )
    a = ap.parse_args(argv)

    def call() -> None:
        score_run(
            a.corpus,
            a.queries,
            a.run,
            out=a.out,
            k=a.k,
            budgets=a.budgets,
            gain=a.gain,
            min_coverage=a.min_coverage,
            split=a.split,
            tokenizer=a.tokenizer,
            n_boot=a.n_boot,
            seed=a.seed,
        )

    return run_with_exits("sweep.score", call, {OSError: BAD_INPUT})


if __name__ == "__main__":
    sys.exit(main())
