"""A slow, obvious scorer written straight from the scoring rules: the reference the
vectorised scorer (``sweep.scoring.credit``) is checked against at every level."""

from __future__ import annotations

import math

from sweep.core.measures import COVERAGE_NAMES, Measure
from sweep.core.types import Hit, Query


def _units(query: Query, level: str):
    """``(doc_id, start, end, grade)`` of each unit: a document (no offsets), an evidence
    span, or a page (its range), the largest grade of the judgments naming it."""
    if level == "page":
        pages: dict[tuple[str, int], list[int]] = {}
        for j in query.relevant:
            if j.grade > 0:
                for n, s, e in j.pages:
                    unit = pages.setdefault((j.doc_id, n), [s, e, j.grade])
                    unit[2] = max(unit[2], j.grade)
        return [(d, s, e, g) for (d, _), (s, e, g) in pages.items()]
    if level == "doc":
        grades: dict[str, int] = {}
        for j in query.relevant:
            if j.grade > 0:
                grades[j.doc_id] = max(grades.get(j.doc_id, 0), j.grade)
        return [(d, None, None, g) for d, g in grades.items()]
    return [
        (j.doc_id, j.start, j.end, j.grade)
        for j in query.relevant
        if j.grade > 0 and j.start is not None
    ]


def _chars(hits):
    out = set()
    for h in hits:
        if h.start is not None:
            out.update((h.doc_id, c) for c in range(h.start, h.end))
    return out


def brute_force(
    query: Query,
    hits: list[Hit],
    measure: Measure,
    level: str,
    *,
    min_coverage: float = 0.5,
    gain: str = "linear",
) -> float | None:
    """One measure of one query at ``level`` (``doc``, ``span``, ``page``), computed the
    slow obvious way."""
    units = _units(query, level)
    if not units:
        return None
    if measure.k is not None:
        top, k = hits[: measure.k], measure.k
    else:
        top, total = [], 0
        for h in hits:
            if total + h.n_tokens > measure.budget:
                break
            total += h.n_tokens
            top.append(h)
        k = len(top)
    gold = {(d, c) for d, s, e, _ in units if s is not None for c in range(s, e)}
    if measure.name in COVERAGE_NAMES:
        inter = len(gold & _chars(top))
        total_len = sum(h.end - h.start for h in top if h.start is not None)
        if measure.name == "cov_recall":
            return inter / len(gold)
        if measure.name == "cov_precision":
            return inter / total_len if total_len else 0.0
        return inter / (total_len + len(gold) - inter)
    credit: dict[int, int] = {}
    for i in range(1, len(top) + 1):
        seen = _chars(top[:i])
        for u, (d, s, e, _) in enumerate(units):
            if u in credit:
                continue
            if level == "doc":
                ok = top[i - 1].doc_id == d
            elif level == "page":  # the hit shares a character with the page
                h = top[i - 1]
                ok = h.doc_id == d and h.start is not None and max(s, h.start) < min(e, h.end)
            else:
                ok = sum((d, c) in seen for c in range(s, e)) / (e - s) >= min_coverage
            if ok:
                credit[u] = i
    R = len(units)
    g = (lambda x: x) if gain == "linear" else (lambda x: 2**x - 1)
    events = sorted(set(credit.values()))
    if measure.name == "recall":
        return len(credit) / R
    if measure.name == "precision":
        return len(events) / k if k else 0.0
    if measure.name == "hit":
        return float(bool(credit))
    if measure.name == "complete":
        return float(len(credit) == R)
    if measure.name == "mrr":
        return 1 / events[0] if events else 0.0
    if measure.name == "ap":
        return sum((j + 1) / r for j, r in enumerate(events)) / R
    if measure.name == "ndcg":
        dcg = sum(
            max(g(units[u][3]) for u, r in credit.items() if r == i) / math.log2(i + 1)
            for i in events
        )
        ideal = sorted((g(u[3]) for u in units), reverse=True)
        if measure.k is not None:  # at a budget the ideal takes every judged unit
            ideal = ideal[:k]
        idcg = sum(x / math.log2(i + 2) for i, x in enumerate(ideal))
        return dcg / idcg if idcg else 0.0
    raise AssertionError(measure)
