"""sweep's BM25 against an independent reference on the bundled Japanese example.

The reference is ``bm25s`` used directly: its own ``BM25(method="lucene")``, its own
vocabulary and its own top-k, over the terms of the same analyzer, on the same chunks
(token chunks of kestrel-ja). Both rankings are scored by sweep's scorer, so the only
thing compared is the retrieval. A difference above 0.02 in span recall@5 is a bug in
one of them. Also printed: the share of questions with no term in the corpus, and the
change when every question's Latin letters and digits are typed full-width (as a
Japanese input method writes them; NFKC should make that no change at all).

    python bench/bm25_reference.py [--sizes 128 256 512] [--analyzers auto bigram ...]
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))
sys.path.insert(0, str(ROOT / "bench"))

from embed_speed import cpu_line  # noqa: E402

import sweep  # noqa: E402
from sweep.core.text.analyzers import Analyzer  # noqa: E402
from sweep.core.text.languages import detect_language, language_mix  # noqa: E402
from sweep.core.types import Chunk, Query, Ranking  # noqa: E402
from sweep.retrieval.lexical import BM25Retriever  # noqa: E402

# Full-width forms of ASCII letters and digits are the ASCII code point + 0xFEE0.
_FULL_WIDTH = {c: chr(ord(c) + 0xFEE0) for c in map(chr, range(0x21, 0x7F)) if c.isalnum()}


class Bm25sReference:
    """bm25s by itself over ``analyzer``'s terms: what sweep's retriever should equal."""

    needs_vectors = False

    def __init__(self, analyzer: str) -> None:
        self.analyzer = Analyzer(analyzer)
        self.prior: str | None = None

    def index(self, chunks: Sequence[Chunk], vectors: np.ndarray | None = None) -> None:
        import bm25s

        texts = [c.embedding_input for c in chunks]
        self.prior = next(iter(language_mix(texts)), None)
        terms = [self.analyzer(t, self.prior) for t in texts]
        self.vocab: dict[str, int] = {}
        ids = [[self.vocab.setdefault(t, len(self.vocab)) for t in doc] for doc in terms]
        self.bm25 = bm25s.BM25(k1=1.5, b=0.75, method="lucene")
        self.bm25.index(
            bm25s.tokenization.Tokenized(ids=ids, vocab=self.vocab), show_progress=False
        )
        self.n = len(chunks)

    def retrieve(self, queries: Sequence[str], query_vectors, k: int) -> Ranking:
        ids = np.zeros((len(queries), k), dtype=np.int64)
        scores = np.zeros((len(queries), k), dtype=np.float32)
        for i, q in enumerate(queries):
            terms = [
                self.vocab[t]
                for t in dict.fromkeys(self.analyzer(q, self.prior))
                if t in self.vocab
            ]
            row = self.bm25.get_scores(terms) if terms else np.zeros(self.n)
            order = np.lexsort((np.arange(self.n), -row))[:k]
            ids[i], scores[i] = order, row[order]
        return Ranking(ids, scores)


def full_width(query: Query) -> Query:
    from dataclasses import replace

    return replace(query, query="".join(_FULL_WIDTH.get(c, c) for c in query.query))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[128, 256, 512])
    parser.add_argument("--analyzers", nargs="+", default=["auto", "sudachi", "mecab", "bigram"])
    args = parser.parse_args()
    print(cpu_line())
    data = sweep.load_dataset(sweep.bundled_corpus("kestrel-ja"))
    queries = list(data.queries)
    typed = [full_width(q) for q in queries]
    changed = sum(a.query != b.query for a, b in zip(queries, typed, strict=True))
    print(
        f"kestrel-ja: {len(data.documents)} documents, {len(queries)} questions "
        f"({changed} have Latin letters or digits to type full-width); "
        f"question languages {sorted({detect_language(q.query, 'ja') for q in queries})}"
    )
    config = sweep.EvalConfig()
    metric = "span recall@5"
    print(
        f"{'size':>4}  {'analyzer':<8}  {'sweep':>6}  {'bm25s':>6}  {'|diff|':>6}  "
        f"{'full-width':>10}  {'no term':>7}"
    )
    worst = 0.0
    for size in args.sizes:
        chunker = sweep.build_chunker("token", size=size, overlap=0)
        for name in args.analyzers:
            ours = BM25Retriever(analyzer=name)
            mean = {}
            for label, retriever, qs in (
                ("sweep", ours, queries),
                ("bm25s", Bm25sReference(name), queries),
                ("typed", BM25Retriever(analyzer=name), typed),
            ):
                result = sweep.evaluate_setting(
                    data.documents, qs, chunker, None, retriever, config
                )
                values = list(result.scores.values("span", "recall@5").values())
                mean[label] = float(np.nanmean(values))
            diff = abs(mean["sweep"] - mean["bm25s"])
            worst = max(worst, diff)
            print(
                f"{size:>4}  {name:<8}  {mean['sweep']:6.3f}  {mean['bm25s']:6.3f}  {diff:6.3f}  "
                f"{mean['typed'] - mean['sweep']:+10.3f}  {ours.unmatched_share:7.1%}"
            )
    print(f"largest |sweep - bm25s| on {metric}: {worst:.3f} (bound 0.02)")


if __name__ == "__main__":
    main()
