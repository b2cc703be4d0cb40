"""The retrieval designs against their plain arm, query by query: do parents, contexts or late
chunking complete the two-hop questions the plain setting misses?

A design row (``retrieve.parent=section``, ``chunk.context=llm``, ``embed.late=true``) is
paired with the row whose settings are the same but for that design switched off; the
two-hop class of every multi-hop question (``hits.jsonl``) is compared between them.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from typing import Any

import pandas as pd

from sweep.store.row import Row
from sweep.store.traces import TraceError, read_traces

__all__ = ["DESIGNS", "DESIGNS_NOTE", "design_pairs", "twohop_changes_frame"]

log = logging.getLogger(__name__)

#: setting key -> (its off value, keys that only matter when it is on)
DESIGNS: Mapping[str, tuple[Any, tuple[str, ...]]] = {
    "retrieve.parent": ("none", ("retrieve.parent_size",)),
    "chunk.context": ("none", ()),
    "embed.late": (False, ()),
}
_MISSED = ("hop1_missed", "hop2_missed", "both_missed")
DESIGNS_NOTE = (
    "Each design row against the row with the same settings and the design off, on "
    "the same multi-hop questions: how many the plain row misses (a span never "
    "retrieved: hop1_missed, hop2_missed, both_missed) the design makes complete "
    "(every span in the top k), how many ranked_out ones it completes, and how "
    "many complete ones it loses. Counts of questions; few questions decide little. A parent "
    "row hands the LLM more text per hit than its twin: read it with the token "
    "budgets of the comparison table."
)


def _off(value: Any, off: Any) -> bool:
    return value is None or value == off or (off is False and str(value).lower() == "false")


def design_pairs(rows: Sequence[Row]) -> list[tuple[str, Row, Row]]:
    """(design key, design row, plain row) for every ok design row that has a plain twin."""
    pairs = []
    for key, (off, extra) in DESIGNS.items():
        ignore = {key, *extra}
        plain = {}
        for r in rows:
            if r.ok and _off(r.settings.get(key), off):
                plain[
                    tuple(sorted((k, repr(v)) for k, v in r.settings.items() if k not in ignore))
                ] = r
        for r in rows:
            if not r.ok or _off(r.settings.get(key), off):
                continue
            twin = plain.get(
                tuple(sorted((k, repr(v)) for k, v in r.settings.items() if k not in ignore))
            )
            if twin is not None:
                pairs.append((key, r, twin))
    return pairs


def _classes(row: Row, k: int) -> dict[str, str] | None:
    path = row.file("hits.jsonl")
    if path is None:
        return None
    try:
        traces = read_traces(path)
    except (OSError, TraceError) as e:
        log.warning("two-hop changes: %s", e)
        return None
    return {q: t.twohop[k] for q, t in traces.items() if k in t.twohop}


def twohop_changes_frame(
    rows: Sequence[Row], labels: Mapping[int, str], k: int
) -> pd.DataFrame | None:
    records = []
    for key, design, plain in design_pairs(rows):
        after, before = _classes(design, k), _classes(plain, k)
        if not after or not before:
            continue
        shared = [q for q in before if q in after]
        moved = {
            c: sum(before[q] == c and after[q] == "complete" for q in shared)
            for c in (*_MISSED, "ranked_out")
        }
        missed = sum(before[q] in _MISSED for q in shared)
        records.append(
            {
                "design": f"{key}={design.settings.get(key)}",
                "setting": labels.get(design.job, str(design.job)),
                "against": labels.get(plain.job, str(plain.job)),
                "multi-hop": str(len(shared)),
                "complete": f"{sum(before[q] == 'complete' for q in shared)} → "
                f"{sum(after[q] == 'complete' for q in shared)}",
                "missed by plain": str(missed),
                **{f"{c} → complete": str(n) for c, n in moved.items()},
                "complete → not": str(
                    sum(before[q] == "complete" and after[q] != "complete" for q in shared)
                ),
            }
        )
    return pd.DataFrame(records) if records else None
