"""Judges you can check: a sample of verdicts for a person to label, and the agreement.

``judge.export=N`` writes ``answers/judge_sample.csv``: N verdicts drawn at
random (seeded), each with what the judge saw but without its verdict, and an
empty ``label`` column. A person fills ``label`` with yes/no; then
``judge.agreement=labels.csv`` reports, per judge, Cohen's κ between the
person and the judge and the confusion matrix. A judge that disagrees with
you is measuring something else: fix its prompt before trusting its rates.
"""

from __future__ import annotations

import csv
import io
import math
import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from sweep.answers.records import AnswerTrace
from sweep.core.csvcells import restore_row, write_rows
from sweep.core.errors import BadInput
from sweep.core.files import write_text_atomic

__all__ = [
    "JudgeAgreement",
    "LabelError",
    "cohen_kappa",
    "export_sample",
    "judge_agreement",
    "read_labels",
]

COLUMNS = (
    "sample",
    "judge",
    "job",
    "setting",
    "query_id",
    "question",
    "reference",
    "context",
    "answer",
    "label",
)
_YES = ("yes", "y", "true", "1", "pass", "passed")
_NO = ("no", "n", "false", "0", "fail", "failed")


class LabelError(ValueError, BadInput):
    """A labels file that cannot be read; ``str()`` names the file, line and problem."""


def export_sample(path: Path, traces: Sequence[AnswerTrace], n: int, seed: int = 0) -> int:
    """Write ``n`` random verdicts (fewer if there are fewer) for a person to label."""
    pool = [
        (t, judge)
        for t in traces
        for judge in sorted(t.verdicts)
        if not t.verdicts[judge].reason.startswith("declined")
    ]
    picked = random.Random(seed).sample(pool, min(n, len(pool)))
    rows: list[Sequence[object]] = [COLUMNS]
    for i, (t, judge) in enumerate(picked, 1):
        context = (
            "\n\n".join(f"[{h.rank}] {h.text}" for h in t.context) if judge == "faithful" else ""
        )
        rows.append(
            [
                i,
                judge,
                t.job,
                t.setting,
                t.query_id,
                t.query,
                t.reference or "" if judge == "correct" else "",
                context,
                t.answer or "",
                "",
            ]
        )
    buf = io.StringIO()
    # An answer such as =HYPERLINK(...) must not run when the file is opened to label it.
    write_rows(buf, rows)
    write_text_atomic(path, buf.getvalue())
    return len(picked)


def read_labels(path: Path) -> list[tuple[str, int, str, bool]]:
    """``(judge, job, query_id, label)`` of every labelled line; blank labels are skipped."""
    try:
        f = open(path, newline="", encoding="utf-8")
    except OSError as e:
        raise LabelError(f"{path}: cannot read ({e.strerror})") from None
    with f:
        reader = csv.DictReader(f)
        need = {"judge", "job", "query_id", "label"}
        if reader.fieldnames is None or not need <= set(reader.fieldnames):
            # The columns missing, not the line read: a file that is not a sample can hold
            # anything (a key), and an error is shown and logged.
            raise LabelError(
                f"{path}:1: expected the columns of judge_sample.csv (at least "
                f"{', '.join(sorted(need))}); no "
                f"{', '.join(sorted(need - set(reader.fieldnames or ())))} column"
            )
        out = []
        for line, row in enumerate(reader, 2):
            row = restore_row(row)
            raw = (row.get("label") or "").strip().lower()
            if not raw:
                continue
            if raw not in _YES + _NO:
                raise LabelError(f"{path}:{line}: label {row['label']!r} is not yes or no")
            try:
                job = int(row["job"])
            except (TypeError, ValueError):
                raise LabelError(f"{path}:{line}: job {row['job']!r} is not a number") from None
            out.append((row["judge"], job, row["query_id"], raw in _YES))
    return out


def cohen_kappa(pairs: Sequence[tuple[bool, bool]]) -> float:
    """κ of two raters' yes/no labels; NaN when chance agreement is total (one constant label)."""
    n = len(pairs)
    if n == 0:
        return math.nan
    po = sum(a == b for a, b in pairs) / n
    pa = sum(a for a, _ in pairs) / n
    pb = sum(b for _, b in pairs) / n
    pe = pa * pb + (1 - pa) * (1 - pb)
    return math.nan if pe >= 1 else (po - pe) / (1 - pe)


@dataclass(frozen=True)
class JudgeAgreement:
    judge: str
    n: int
    kappa: float
    confusion: Mapping[tuple[bool, bool], int]  # (person, judge) -> count

    @property
    def raw_agreement(self) -> float:
        return (
            sum(c for (a, b), c in self.confusion.items() if a == b) / self.n
            if self.n
            else math.nan
        )


def judge_agreement(path: Path, traces: Sequence[AnswerTrace]) -> list[JudgeAgreement]:
    """Per judge, the person's labels against the judge's verdicts."""
    verdicts = {
        (judge, t.job, t.query_id): v.passed for t in traces for judge, v in t.verdicts.items()
    }
    pairs: dict[str, list[tuple[bool, bool]]] = {}
    for judge, job, qid, label in read_labels(path):
        if (judge, job, qid) not in verdicts:
            raise LabelError(
                f"{path}: no {judge} verdict for query {qid!r} of job {job} in the "
                "answers (was the sample exported from another run?)"
            )
        pairs.setdefault(judge, []).append((label, verdicts[(judge, job, qid)]))
    if not pairs:
        raise LabelError(f"{path}: no labelled line (fill the label column with yes or no)")
    return [
        JudgeAgreement(
            j,
            len(p),
            cohen_kappa(p),
            {
                (a, b): sum(1 for x in p if x == (a, b))
                for a in (True, False)
                for b in (True, False)
            },
        )
        for j, p in sorted(pairs.items())
    ]


def agreement_text(results: Sequence[JudgeAgreement]) -> str:
    lines = ["judge agreement (you vs the judge):"]
    for r in results:
        kappa = (
            "undefined (one of you gave a single label)"
            if math.isnan(r.kappa)
            else f"{r.kappa:.2f}"
        )
        c = r.confusion
        lines.append(
            f"  {r.judge}: n={r.n}, Cohen's kappa {kappa}, raw agreement "
            f"{r.raw_agreement:.0%}; you yes/judge yes {c[(True, True)]}, you yes/judge no "
            f"{c[(True, False)]}, you no/judge yes {c[(False, True)]}, you no/judge no "
            f"{c[(False, False)]}"
        )
    return "\n".join(lines)
