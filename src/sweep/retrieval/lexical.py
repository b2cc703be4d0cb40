"""Lexical retrieval: BM25 over the chunks' text with ``bm25s``; no embedding model.

Text becomes terms by the analyzer (:mod:`sweep.core.text.analyzers`; ``auto`` reads
each text in its own language: Japanese by Sudachi, Chinese by jieba, Russian and
English by their Snowball stemmers, ...). The corpus's language (the language of most
of the indexed text) is the prior every chunk and query is read with, so a short
all-kanji Japanese question is read as Japanese. The same analyzer reads the queries,
and each distinct query term counts once. Scores are bm25s's Lucene variant::

    idf(t)     = ln(1 + (N - df(t) + 0.5) / (df(t) + 0.5))
    score(q,d) = sum over distinct t in q of idf(t) * tf / (tf + k1 * (1 - b + b * |d| / avgdl))

A question none of whose terms is in the corpus scores 0 everywhere; when that is a
fifth of the questions or more, the analyzer is likely wrong for the text (English
rules on Japanese make a whole clause one term), and the log says so once.
"""

from __future__ import annotations

import logging
from collections import Counter
from collections.abc import Sequence
from typing import Any

import numpy as np

from sweep.core.text.analyzers import Analyzer
from sweep.core.text.languages import detect_language
from sweep.core.types import Chunk, Ranking
from sweep.retrieval.dense import check_depth, check_k

__all__ = ["UNMATCHED_WARNING", "BM25Retriever", "Tokenizer", "top_by_score"]

log = logging.getLogger(__name__)

#: The share of questions without a term in the corpus at which the log warns.
UNMATCHED_WARNING = 0.2
# Fewer questions than this are too few to warn about (a latency probe asks one at a time).
_FEW_QUERIES = 5


class Tokenizer:
    """Text -> BM25 terms by an :class:`~sweep.core.text.analyzers.Analyzer` (``analyzer``;
    ``stemmer`` and ``stopwords`` are its rules for English words). ``prior``: the corpus's
    language, which decides a Han-only text between Japanese and Chinese."""

    def __init__(
        self, stemmer: str | None = "english", stopwords: Any = "en", analyzer: str = "auto"
    ) -> None:
        self.analyzer = Analyzer(analyzer, stemmer, stopwords)
        self.stopwords = self.analyzer.stopwords
        self.prior: str | None = None

    def __call__(self, text: str) -> list[str]:
        return self.analyzer(text, self.prior)


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

    ``analyzer``: one of :data:`~sweep.core.text.analyzers.ANALYZERS` (``auto``: each text
    by its language). ``stemmer``: a Snowball algorithm name (``english``) or ``none``,
    and ``stopwords``: ``en``, ``none`` or a list of words, are the rules for English
    words. ``depth`` as for dense retrieval. ``index`` (the search-index config group) is accepted and ignored:
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
        analyzer: str = "auto",
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
        self.tokenize = Tokenizer(stemmer, stopwords, analyzer)
        self._bm25: Any = None
        self._n = 0
        #: The analyzers that read the indexed chunks, the most chunks' first (``sudachi``,
        #: ``bigram (sudachipy missing)``, ``sudachi+english``); None before ``index``.
        self.analyzer_ran: str | None = None
        # Each query seen since ``index``: whether any of its terms is in the corpus.
        self._matched: dict[str, bool] = {}
        self._warned = False

    def index(self, chunks: Sequence[Chunk], vectors: np.ndarray | None = None) -> None:
        """Index each chunk as a model would read it (its heading prefix included when
        ``chunk.prefix`` adds one)."""
        import bm25s

        # bm25s sets its own logger to DEBUG, which would print a line per setting.
        logging.getLogger("bm25s").setLevel(logging.WARNING)
        texts = [c.embedding_input for c in chunks]
        languages = [detect_language(t) for t in texts]
        chars: Counter[str] = Counter()
        for text, language in zip(texts, languages):
            chars[language] += len(text)
        prior = self.tokenize.prior = next(iter(chars.most_common(1)), (None,))[0]
        analyzer = self.tokenize.analyzer
        # Han-only text is Chinese without a prior, Japanese in a Japanese corpus.
        ran = Counter(
            analyzer.for_language(detect_language(t, prior) if lang == "zh" else lang)
            for t, lang in zip(texts, languages)
        )
        tokens = [self.tokenize(text) for text in texts]
        self.analyzer_ran = "+".join(name for name, _ in ran.most_common()) or analyzer.name
        self._matched = {}
        self._warned = False
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
            self._matched[q] = bool(ids)
            if ids:
                out[i] = self._bm25.get_scores_from_ids(ids)
        self._warn_unmatched()
        return out

    @property
    def unmatched_share(self) -> float | None:
        """The share of the distinct queries seen since ``index`` none of whose terms is in
        the corpus (they score 0 for every chunk); None before any query."""
        if not self._matched:
            return None
        return sum(not m for m in self._matched.values()) / len(self._matched)

    def row_facts(self) -> dict[str, Any]:
        """What a row records of this retriever: the analyzer that ran and the share of
        questions without a term in the corpus."""
        share = self.unmatched_share
        return {
            "bm25_analyzer": self.analyzer_ran,
            "bm25_unmatched_share": None if share is None else round(share, 4),
        }

    def _warn_unmatched(self) -> None:
        share, n = self.unmatched_share, len(self._matched)
        if self._warned or share is None or n < _FEW_QUERIES or share < UNMATCHED_WARNING:
            return
        self._warned = True
        unmatched = sum(not m for m in self._matched.values())
        hint = (
            "retrieve.analyzer=auto reads each text in its own language"
            if self.tokenize.analyzer.name in ("english", "simple")
            else "are the questions in the documents' language?"
        )
        log.warning(
            "BM25 found no term of %d of %d questions in the corpus (analyzer %s): "
            "they score 0 for every chunk; %s",
            unmatched,
            n,
            self.analyzer_ran,
            hint,
        )

    def retrieve(self, queries: Sequence[str], query_vectors: np.ndarray | None, k: int) -> Ranking:
        """Per query, the ``min(max(k, depth), n_chunks)`` best chunks; chunks sharing no term
        with the query score 0 and follow in position order."""
        k = check_k(k)
        if isinstance(queries, str):
            raise ValueError("retrieve: expected a sequence of query texts, got a single string")
        return top_by_score(self.scores(queries), max(k, self.depth or 0))
