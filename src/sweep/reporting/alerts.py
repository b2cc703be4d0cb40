"""Warnings a sweep's report shows beside its recommendation: a model that cannot read the
corpus's language, said before the first job and kept in the sweep folder
(``warnings.json``); a chunk in the top 5 of nearly every question (``hub.share``, per
row, kept in ``<job>/hub.json``); BM25 finding no term of many questions
(``bm25_unmatched_share``, when the row has that column).

A recommendation made from numbers near zero looks like any other: these lines say why
it should not be trusted.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from sweep.core.files import regular_file, write_text_atomic
from sweep.core.settings import setting_label
from sweep.pipeline.languages import HUB_SHARE
from sweep.retrieval.lexical import UNMATCHED_WARNING
from sweep.store.row import Row

__all__ = [
    "ALERTS_NAME",
    "HUB_NAME",
    "read_alerts",
    "read_hub",
    "row_alerts",
    "write_alerts",
    "write_hub",
]

#: The sweep folder's warnings said before the first job, one string each.
ALERTS_NAME = "warnings.json"
#: A job's largest share of questions whose top k hold one same chunk.
HUB_NAME = "hub.json"
#: A hub is a warning among at least this many chunks per place of the top k: chance puts a
#: chunk in at most 1 in 5 top ks there, never in 80% of them.
_CHUNKS_PER_K = 5
#: The column a BM25 retriever's row gives that share in (absent elsewhere).
_UNMATCHED = "bm25_unmatched_share"


def write_alerts(folder: Path, lines: Sequence[str]) -> None:
    """Keep the warnings said before the first job in the sweep folder (nothing when none)."""
    if lines:
        folder.mkdir(parents=True, exist_ok=True)
        write_text_atomic(folder / ALERTS_NAME, json.dumps(list(lines), ensure_ascii=False) + "\n")


def read_alerts(folder: Path) -> tuple[str, ...]:
    """The warnings :func:`write_alerts` kept; none when the file is missing or unreadable
    (a folder of an older sweep)."""
    try:
        path = regular_file(Path(folder) / ALERTS_NAME)
        data = json.loads(path.read_text(encoding="utf-8")) if path is not None else []
    except (OSError, ValueError):
        return ()
    return tuple(str(x) for x in data) if isinstance(data, list) else ()


def write_hub(job_dir: Path, share: float, chunk_id: str, k: int, chunks: int) -> None:
    """Keep a job's hub share: ``share`` of its questions hold ``chunk_id`` in their top ``k``,
    of ``chunks`` chunks ranked."""
    body = {"share": share, "chunk_id": chunk_id, "k": k, "chunks": chunks}
    write_text_atomic(job_dir / HUB_NAME, json.dumps(body, ensure_ascii=False) + "\n")


def read_hub(job_dir: Path | None) -> dict[str, Any] | None:
    """A job's :func:`write_hub` record; None when it has none (an older row, a failed job)."""
    if job_dir is None:
        return None
    try:
        path = regular_file(job_dir / HUB_NAME, inside=job_dir.parent)
        data = json.loads(path.read_text(encoding="utf-8")) if path is not None else None
    except (OSError, ValueError):
        return None
    if not isinstance(data, dict) or not isinstance(data.get("share"), (int, float)):
        return None
    return data


def _is_hub(hub: Mapping[str, Any]) -> bool:
    """Whether a job's hub record is a warning: one chunk in :data:`HUB_SHARE` of the top
    ``k``s, among enough chunks that chance would put it in few of them (in a corpus of 10
    chunks, any chunk is in half of the top 5s)."""
    chunks = hub.get("chunks")
    k = hub.get("k", 5)
    enough = isinstance(chunks, int) and isinstance(k, int) and chunks >= _CHUNKS_PER_K * k
    return enough and hub["share"] >= HUB_SHARE


def _share(value: Any) -> float | None:
    try:
        share = float(value)
    except (TypeError, ValueError):
        return None
    return None if math.isnan(share) else share


def row_alerts(
    rows: Sequence[Row], records: Mapping[int, Mapping[str, Any]], keys: Sequence[str]
) -> list[str]:
    """A warning per ok row whose top 5s share one chunk (its ``hub.json``), or whose BM25
    found no term for many questions (its ``bm25_unmatched_share``). ``records`` are
    the rows' results.csv records by job; ``keys`` the settings that vary."""
    lines = []
    for row in rows:
        if not row.ok:
            continue
        name = setting_label(row.settings, keys) if keys else f"job {row.job}"
        hub = read_hub(row.path)
        if hub is not None and _is_hub(hub):
            lines.append(
                f"warning: {name}: one chunk ({hub.get('chunk_id', '?')}) is in the top "
                f"{hub.get('k', 5)} of {100 * hub['share']:.0f}% of the questions: the model "
                "sees every chunk alike (a model that cannot read the corpus's language does "
                "this), so its numbers say nothing about chunking"
            )
        unmatched = _share(records.get(row.job, {}).get(_UNMATCHED))
        if unmatched is not None and unmatched >= UNMATCHED_WARNING:
            lines.append(
                f"warning: {name}: BM25 found no term of {100 * unmatched:.0f}% of the "
                "questions in the corpus: their rankings match nothing (a tokenizer that "
                "does not read the corpus's language does this)"
            )
    return lines
