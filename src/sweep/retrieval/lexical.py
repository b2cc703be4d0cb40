"""Lexical retrieval: BM25 over the chunks' text with ``bm25s``; no embedding model.

Text is lowercased and split into runs of word characters (``\\w+``, so "45"
and "v2" are terms); stopwords are dropped, then the rest stemmed. The same
tokenizer reads the queries, and each distinct query term counts once. Scores
are bm25s's Lucene variant::

    idf(t)     = ln(1 + (N - df(t) + 0.5) / (df(t) + 0.5))
    score(q,d) = sum over distinct t in q of idf(t) * tf / (tf + k1 * (1 - b + b * |d| / avgdl))
"""

from __future__ import annotations

import logging
import re
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from sweep.core.types import Chunk, Ranking
from sweep.retrieval.dense import check_depth, check_k

__all__ = ["BM25Retriever", "Tokenizer", "top_by_score"]

_WORD = re.compile(r"\w+")


def _stopword_list(stopwords: Any) -> frozenset[str]:
    if stopwords is None or (isinstance(stopwords, str) and stopwords.lower() in ("none", "")):
        return frozenset()
    if isinstance(stopwords, str):
        if stopwords.lower() != "en":
            raise ValueError(
                f"retrieve.stopwords must be en, none or a list of words, got {stopwords!r}"
            )
        from bm25s.stopwords import STOPWORDS_EN

        return frozenset(STOPWORDS_EN)
    words = list(stopwords)
    if not all(isinstance(w, str) for w in words):
        raise ValueError(
            f"retrieve.stopwords must be en, none or a list of words, got {stopwords!r}"
        )
    return frozenset(w.lower() for w in words)


def _stemmer(name: str | None) -> Callable[[list[str]], list[str]] | None:
    if name is None or str(name).lower() in ("none", ""):
        return None
    try:
        import Stemmer
    except ImportError:
        raise ImportError(
            "retrieve.stemmer needs PyStemmer: pip install PyStemmer (or set retrieve.stemmer=none)"
        ) from None
    if name not in Stemmer.algorithms():
        raise ValueError(
            f"retrieve.stemmer must be none or one of "
            f"{', '.join(Stemmer.algorithms())}, got {name!r}"
        )
    return Stemmer.Stemmer(name).stemWords


class Tokenizer:
    """Text -> BM25 terms: lowercase, ``\\w+`` runs, stopwords out, then stems."""

    def __init__(self, stemmer: str | None = "english", stopwords: Any = "en") -> None:
        self.stopwords = _stopword_list(stopwords)
        self._stem = _stemmer(stemmer)

    def __call__(self, text: str) -> list[str]:
        words = [w for w in _WORD.findall(text.lower()) if w not in self.stopwords]
        return self._stem(words) if self._stem is not None and words else words


def top_by_score(scores: np.ndarray, n: int) -> Ranking:
    """Each row's ``n`` highest scores, ties broken by position (the earlier chunk first)."""
    nq, total = scores.shape
    n = min(n, total)
    ids = np.empty((nq, n), dtype=np.int64)
    out = np.empty((nq, n), dtype=np.float32)
    positions = np.arange(total)
    for i, row in enumerate(scores):
        order = np.lexsort((positions, -row.astype(np.float64)))[:n]
        ids[i], out[i] = order, row[order]
    return Ranking(ids, out)


class BM25Retriever:
    """BM25 (``k1``, ``b``) over the chunk text; needs no vectors, so no embedding model.

    ``stemmer``: a Snowball algorithm name (``english``) or ``none``;
    ``stopwords``: ``en``, ``none`` or a list of words. ``depth`` as for dense
    retrieval. ``index`` (the search-index config group) is accepted and ignored:
    BM25 keeps its own inverted index.
    """

    needs_vectors = False

    def __init__(
        self,
        k1: float = 1.5,
        b: float = 0.75,
        stemmer: str | None = "english",
        stopwords: Any = "en",
        depth: int | None = None,
        index: Any = None,
    ) -> None:
        for name, value, high in (("k1", k1, None), ("b", b, 1.0)):
            if (
                isinstance(value, bool)
                or not isinstance(value, (int, float))
                or value < 0
                or (high is not None and value > high)
            ):
                bounds = "in [0, 1]" if high is not None else "≥ 0"
                raise ValueError(f"retrieve.{name} must be a number {bounds}, got {value!r}")
        self.k1, self.b = float(k1), float(b)
        self.depth = check_depth(depth)
        self.tokenize = Tokenizer(stemmer, stopwords)
        self._bm25: Any = None
        self._n = 0

    def index(self, chunks: Sequence[Chunk], vectors: np.ndarray | None = None) -> None:
        """Index each chunk as a model would read it (its heading prefix included when
        ``chunk.prefix`` adds one)."""
        import bm25s

        # bm25s sets its own logger to DEBUG, which would print a line per setting.
        logging.getLogger("bm25s").setLevel(logging.WARNING)
        tokens = [self.tokenize(c.embedding_input) for c in chunks]
        self._n = len(chunks)
        self._bm25 = None
        if any(tokens):  # bm25s cannot index a corpus without a single term
            bm25 = bm25s.BM25(k1=self.k1, b=self.b, method="lucene")
            bm25.index(tokens, show_progress=False)
            self._bm25 = bm25

    @property
    def ntotal(self) -> int:
        return self._n

    @property
    def nbytes(self) -> int:
        """The inverted index's arrays (bm25s keeps precomputed scores as a sparse matrix)."""
        stored = getattr(self._bm25, "scores", None) or {}
        return int(sum(v.nbytes for v in stored.values() if isinstance(v, np.ndarray)))

    def scores(self, queries: Sequence[str]) -> np.ndarray:
        """float32 ``(n_queries, n_chunks)``: every chunk's BM25 score for every query."""
        out = np.zeros((len(queries), self._n), dtype=np.float32)
        if self._bm25 is None:
            return out
        vocab = self._bm25.vocab_dict
        for i, q in enumerate(queries):
            ids = [vocab[t] for t in dict.fromkeys(self.tokenize(q)) if t in vocab and t != ""]
            if ids:
                out[i] = self._bm25.get_scores_from_ids(ids)
        return out

    def retrieve(self, queries: Sequence[str], query_vectors: np.ndarray | None, k: int) -> Ranking:
        """Per query, the ``min(max(k, depth), n_chunks)`` best chunks; chunks sharing no term
        with the query score 0 and follow in position order."""
        k = check_k(k)
        if isinstance(queries, str):
            raise ValueError("retrieve: expected a sequence of query texts, got a single string")
        return top_by_score(self.scores(queries), max(k, self.depth or 0))
