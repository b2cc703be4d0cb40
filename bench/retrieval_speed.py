"""BM25 against dense retrieval: index and search time on the bundled corpus's chunks.

    python bench/retrieval_speed.py [--dataset DIR] [--sizes 128,256,512] [--repeats 3]
                                    [--cache-dir DIR]

For each chunk size (token chunks, no overlap): build a BM25 index
(``sweep.retrieval.lexical.BM25Retriever``, stemming and stopwords as in conf/retrieve/bm25.yaml)
and a FAISS flat index (``DenseRetriever`` over ``FlatIPIndex``), then rank every
evaluation query (k=10) with each, and the hybrid (RRF, 100 candidates a side).
Chunk and query vectors come from the embedding cache (embedded once when
missing, not timed here: that is the dense side's real cost, and the sweep's
cache pays it once). Prints medians of the repeats and the ratios BM25 / dense.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

from sweep.chunking import build_chunker
from sweep.datasets.loading import load_dataset
from sweep.embedding.embedder import SentenceTransformerEmbedder
from sweep.retrieval.dense import DenseRetriever
from sweep.retrieval.fusion import HybridRetriever
from sweep.retrieval.index import FlatIPIndex
from sweep.retrieval.lexical import BM25Retriever

ROOT = Path(__file__).resolve().parents[1]


def median_time(fn, repeats: int) -> float:
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dataset", default=str(ROOT / "corpora" / "kestrel"))
    parser.add_argument("--sizes", default="128,256,512")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--cache-dir", default=None, help="embedding cache (default: the user's)")
    args = parser.parse_args()
    ds = load_dataset(args.dataset)
    queries = [q.query for q in ds.queries]
    emb = SentenceTransformerEmbedder(cache_dir=args.cache_dir, show_progress=False)
    query_vecs = emb.embed_queries(queries)
    print(
        f"{ds.name}: {len(ds.documents)} documents, {len(queries)} queries; "
        f"medians of {args.repeats}; k=10"
    )
    header = (
        f"{'size':>5} {'chunks':>7} {'bm25 index':>11} {'flat index':>11} {'ratio':>6} "
        f"{'bm25 search':>12} {'flat search':>12} {'ratio':>6} {'hybrid search':>14}"
    )
    print(header)
    print("-" * len(header))
    for size in (int(s) for s in args.sizes.split(",")):
        chunks = build_chunker("token", size=size, overlap=0).chunk_documents(ds.documents)
        vecs = emb.embed_documents([c.embedding_input for c in chunks])
        bm25, dense = BM25Retriever(), DenseRetriever(FlatIPIndex())
        hybrid = HybridRetriever(FlatIPIndex())
        t_bi = median_time(lambda: bm25.index(chunks), args.repeats)
        t_di = median_time(lambda: dense.index(chunks, vecs), args.repeats)
        hybrid.index(chunks, vecs)
        t_bs = median_time(lambda: bm25.retrieve(queries, None, 10), args.repeats)
        t_ds = median_time(lambda: dense.retrieve(queries, query_vecs, 10), args.repeats)
        t_hs = median_time(lambda: hybrid.retrieve(queries, query_vecs, 10), args.repeats)
        print(
            f"{size:>5} {len(chunks):>7} {t_bi * 1e3:>9.1f}ms {t_di * 1e3:>9.1f}ms "
            f"{t_bi / t_di:>6.1f} {t_bs * 1e3:>10.1f}ms {t_ds * 1e3:>10.1f}ms "
            f"{t_bs / t_ds:>6.1f} {t_hs * 1e3:>12.1f}ms"
        )
    st = emb.stats
    print(
        f"(embedding, not timed above: {st.embedded} texts embedded now, {st.cache_hits} from "
        f"the cache; model time {st.seconds:.1f}s)"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
