"""``python -m sweep.check NEW_DIR --baseline OLD_DIR``: fail CI when retrieval got worse.

Compares NEW's recommended setting (or ``--job``) with the baseline's (or
``--baseline-job``) on the primary metric, paired over the shared questions. Exit 1
when NEW is significantly worse or worse by more than ``--max-drop``; exit 2 when the
evaluation sets differ (the documents or questions changed), the metric is missing, or
a folder cannot be read; exit 0 otherwise. The verdict is printed as Markdown (and
appended to ``$GITHUB_STEP_SUMMARY`` when set), or as JSON with ``--json``. Its p is
unadjusted (one planned comparison), and it says over how many comparisons the new sweep's
table adjusted its ``vs best`` p, so a tie there and a regression here do not read as a
contradiction.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Sequence
from pathlib import Path

from sweep.cli.commands import CommandParser
from sweep.cli.exits import BAD_INPUT, log_warnings, run_with_exits
from sweep.decision.decide import decide
from sweep.decision.regression import INCOMPARABLE, RegressionVerdict, compare_runs
from sweep.reporting.frames import per_query_tables
from sweep.reporting.selection import ChosenJob, ExportError, choose_job
from sweep.store.row import load_rows

#: what makes a metric and its test the same in two sweeps, besides its name
_SCORING = ("min_coverage", "gain", "alpha")


def _scores(chosen: ChosenJob, level: str, metric: str) -> dict[str, float] | None:
    try:
        # Refused: what is not a score (out of range, not finite, twice), by line, and
        # scores that are not the ones the row summarizes (rows deleted or edited).
        return chosen.row.per_query(level, metric)
    except ValueError as e:  # a damaged per_query.csv (or not a file), named
        raise ExportError(str(e)) from None


def _table_comparisons(chosen: ChosenJob) -> int | None:
    """How many comparisons with the best the sweep's ``vs best`` column adjusted over in the
    chosen job's group; None when the folder cannot say (a damaged row or per_query.csv of
    another job: the verdict itself does not depend on it)."""
    try:
        rows = load_rows(chosen.sweep_dir, warn=False)
        decision = decide(rows, per_query_tables(rows)).of(chosen.row.job)
    except (ValueError, OSError):
        return None
    if decision is None or not decision.comparisons:
        return None
    return len(decision.comparisons) - 1


def _label(chosen: ChosenJob) -> str:
    return f"job {chosen.row.job} of {chosen.sweep_dir}: {chosen.label}"


def verdict(
    new_dir: Path,
    baseline_dir: Path,
    new_job: int | None,
    baseline_job: int | None,
    max_drop: float | None,
) -> RegressionVerdict:
    new = choose_job(new_dir, new_job)
    old = choose_job(baseline_dir, baseline_job, option="--baseline-job")
    primary = new.row.eval.primary_metric
    metric = primary.label
    labels = dict(new_label=_label(new), baseline_label=_label(old))
    if old.row.eval.primary_metric != primary:
        return RegressionVerdict(
            INCOMPARABLE,
            f"The sweeps rank by different metrics (new: {metric}, "
            f"baseline: {old.row.eval.primary_metric.label}).",
            metric,
            labels["new_label"],
            labels["baseline_label"],
        )
    differ = [
        f"eval.{name}: new {getattr(new.row.eval, name)}, baseline {getattr(old.row.eval, name)}"
        for name in _SCORING
        if getattr(new.row.eval, name) != getattr(old.row.eval, name)
    ]
    if differ:
        return RegressionVerdict(
            INCOMPARABLE,
            (
                f"The sweeps score or test differently ({'; '.join(differ)}), so {metric} or its "
                "test is not the same. Rerun one of them with the other's settings."
            ),
            metric,
            labels["new_label"],
            labels["baseline_label"],
        )
    new_key = new.row.dataset.key if new.row.dataset else ""
    old_key = old.row.dataset.key if old.row.dataset else ""
    if new_key != old_key or not new_key:
        names = (
            new.row.dataset.name if new.row.dataset else "?",
            old.row.dataset.name if old.row.dataset else "?",
        )
        return RegressionVerdict(
            INCOMPARABLE,
            (
                f"The evaluation sets differ (new: {names[0]} {new_key[:12] or '?'}, baseline: "
                f"{names[1]} {old_key[:12] or '?'}): the documents or the questions changed, so "
                "the scores are not comparable. Rerun the baseline on the new set and commit it."
            ),
            metric,
            labels["new_label"],
            labels["baseline_label"],
        )
    a = _scores(new, primary.level, primary.measure)
    b = _scores(old, primary.level, primary.measure)
    if a is None or b is None:
        which = "new" if a is None else "baseline"
        return RegressionVerdict(
            INCOMPARABLE,
            f"The {which} sweep has no per-query {metric} "
            f"(per_query.csv of job {(new if a is None else old).row.job}).",
            metric,
            labels["new_label"],
            labels["baseline_label"],
        )
    if set(a) != set(b):  # the same questions, scored the same way: the same ones count
        only = sorted(set(a) ^ set(b))
        raise ExportError(
            f"the two settings were scored on different questions ({len(only)} in one only, "
            f"e.g. {only[0]!r}) although their evaluation set is the same: a per_query.csv "
            "is damaged"
        )
    return compare_runs(
        a,
        b,
        metric=metric,
        alpha=new.row.eval.alpha,
        max_drop=max_drop,
        n_perm=new.row.eval.n_perm,
        seed=new.row.eval.seed,
        table_comparisons=_table_comparisons(new),
        **labels,
    )


def check(args) -> int:
    result = verdict(args.new_dir, args.baseline, args.job, args.baseline_job, args.max_drop)
    markdown = result.markdown()
    print(
        json.dumps(result.to_dict(), indent=2) if args.json else markdown,
        end="\n" if args.json else "",
    )
    summary = os.environ.get("GITHUB_STEP_SUMMARY")
    if summary:
        try:
            with open(summary, "a", encoding="utf-8") as f:
                f.write(markdown + "\n")
        except OSError as e:  # the verdict stands; only its copy for the job page is lost
            print(
                f"sweep.check: warning: GITHUB_STEP_SUMMARY={summary}: "
                f"{e.strerror or e}; the verdict is not appended there",
                file=sys.stderr,
            )
    return result.status


def main(argv: Sequence[str] | None = None) -> int:
    parser = CommandParser("sweep.check")
    parser.add_argument("new_dir", type=Path, metavar="NEW_DIR", help="the new sweep's folder")
    parser.add_argument(
        "--baseline",
        type=Path,
        required=True,
        metavar="OLD_DIR",
        help="the baseline sweep's folder",
    )
    parser.add_argument(
        "--job",
        type=int,
        metavar="N",
        help="the new sweep's job to check (default: its recommended setting)",
    )
    parser.add_argument(
        "--baseline-job",
        type=int,
        metavar="N",
        help="the baseline's job (default: its recommended setting)",
    )
    parser.add_argument(
        "--max-drop",
        type=float,
        metavar="X",
        help="fail when the metric falls by more than X, significant or not",
    )
    parser.add_argument("--json", action="store_true", help="print the verdict as JSON")
    args = parser.parse_args(argv)
    if args.max_drop is not None and not args.max_drop >= 0:
        parser.error(f"--max-drop must be >= 0, got {args.max_drop}")
    log_warnings("sweep.check")
    return run_with_exits("sweep.check", lambda: check(args), {OSError: BAD_INPUT})


if __name__ == "__main__":
    sys.exit(main())
