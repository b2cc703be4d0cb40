"""Late chunking (Günther et al. 2024, arXiv 2409.04701): embed a whole document's
tokens once, then mean-pool each chunk's tokens, so a chunk's vector carries the
context around it ("it" knows which pump the previous paragraph named).

Pure NumPy helpers; ``SentenceTransformerEmbedder.embed_late`` runs the model.
A document longer than the model's window is read in overlapping windows of
tokens, and each token keeps the vector of the window that saw most context
around it.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

__all__ = ["assemble", "pool", "windows"]


def windows(n_tokens: int, width: int, overlap: int) -> list[tuple[int, int]]:
    """Token windows ``[a, b)`` covering ``0..n_tokens``, each at most ``width`` long,
    consecutive ones sharing exactly ``overlap`` tokens (the last may be shorter).

    The overlap is what gives the tokens near a cut context from both sides:
    :func:`assemble` takes each of them from the window it sits deeper in.
    """
    if n_tokens < 0:
        raise ValueError(f"n_tokens must be >= 0, got {n_tokens}")
    if width < 1:
        raise ValueError(f"width must be >= 1, got {width}")
    if not 0 <= overlap < width:
        raise ValueError(f"overlap must be in [0, width={width}), got {overlap}")
    step = width - overlap
    spans = []
    a = 0
    while a < n_tokens:
        b = min(a + width, n_tokens)
        spans.append((a, b))
        if b == n_tokens:
            break
        a += step
    return spans


def assemble(n_tokens: int, spans: Sequence[tuple[int, int]],
             window_vectors: Sequence[np.ndarray]) -> np.ndarray:
    """Per-token vectors (n_tokens, d) of a document from the vectors of its windows.

    A token seen by several windows takes its vector from the one where it is
    farthest from a cut: distance ``min(t - a, b - 1 - t)``, where an edge at the
    document's own start or end is no cut (nothing was hidden there). Ties go to
    the earlier window, so the result is deterministic. ``window_vectors[i]`` is
    ``(b - a, d)`` for ``spans[i] == (a, b)``; the spans must cover every token.
    """
    if len(spans) != len(window_vectors):
        raise ValueError(f"{len(spans)} spans but {len(window_vectors)} window arrays")
    d = int(window_vectors[0].shape[1]) if len(window_vectors) else 0
    out = np.zeros((n_tokens, d), dtype=np.float32)
    best = np.full(n_tokens, -1, dtype=np.int64)
    far = n_tokens + 1  # farther than any cut can be
    for (a, b), vecs in zip(spans, window_vectors):
        if not 0 <= a <= b <= n_tokens or vecs.shape != (b - a, d):
            raise ValueError(f"window ({a}, {b}) with vectors of shape {vecs.shape} does not fit "
                             f"{n_tokens} tokens of dim {d}")
        t = np.arange(a, b)
        left = t - a if a > 0 else np.full(b - a, far)
        right = b - 1 - t if b < n_tokens else np.full(b - a, far)
        score = np.minimum(left, right)
        better = score > best[a:b]
        out[a:b][better] = vecs[better]
        best[a:b][better] = score[better]
    if (best < 0).any():
        raise ValueError(f"the windows leave token {int(np.argmax(best < 0))} uncovered")
    return out


def pool(token_offsets: np.ndarray, token_vectors: np.ndarray,
         spans: Sequence[tuple[int, int]]) -> np.ndarray:
    """Mean vector (len(spans), d) of the tokens whose character span overlaps each
    ``[start, end)`` of ``spans``.

    ``token_offsets`` (n, 2) are the tokens' ``[start, end)`` character offsets in
    token order, as a tokenizer emits them. A span no token overlaps (whitespace
    only, or empty) gets the vector of the nearest token, the one before on a
    tie, rather than NaN, so every chunk stays searchable.
    """
    offsets = np.asarray(token_offsets, dtype=np.int64).reshape(-1, 2)
    vectors = np.asarray(token_vectors, dtype=np.float32)
    n = len(offsets)
    if vectors.ndim != 2 or len(vectors) != n:
        raise ValueError(f"{n} token offsets but token vectors of shape {vectors.shape}")
    bounds = np.asarray(spans, dtype=np.int64).reshape(-1, 2)
    if len(bounds) == 0:
        return np.zeros((0, vectors.shape[1]), dtype=np.float32)
    if n == 0:
        raise ValueError("no tokens to pool")
    # Running maxima keep the lookups valid should a tokenizer's offsets ever step
    # back; for offsets in order they change nothing.
    starts = np.maximum.accumulate(offsets[:, 0])
    ends = np.maximum.accumulate(offsets[:, 1])
    lo = np.searchsorted(ends, bounds[:, 0], side="right")  # first token ending after start
    hi = np.searchsorted(starts, bounds[:, 1], side="left")  # past the last starting before end
    empty = hi <= lo
    if empty.any():
        before = np.clip(lo - 1, 0, n - 1)
        after = np.clip(hi, 0, n - 1)
        gap_before = np.where(lo > 0, bounds[:, 0] - ends[before], np.iinfo(np.int64).max)
        gap_after = np.where(hi < n, starts[after] - bounds[:, 1], np.iinfo(np.int64).max)
        nearest = np.where(gap_before <= gap_after, before, after)
        lo = np.where(empty, nearest, lo)
        hi = np.where(empty, nearest + 1, hi)
    # reduceat sums [lo, hi - 1) in place, with no (n, d) copy or float64 cumulative
    # sum, which for a long document would be several times its token vectors; the
    # last token is added after (reduceat gives row lo itself when hi - 1 == lo).
    last = hi - 1
    sums = np.add.reduceat(vectors, np.stack([lo, last], axis=1).ravel(), axis=0)[::2]
    sums += np.where((last > lo)[:, None], vectors[last], 0)
    return (sums / (hi - lo)[:, None]).astype(np.float32)
