"""Would running the rest of a sweep beside the embedder pay on this machine?

A cold sweep spends most of its time in the model; the rest (composing configs,
chunking, scoring, tables) is single-threaded Python. Overlapping the two only
pays if the model leaves CPU time unused and the Python work does not slow the
model down. This probe measures exactly that, on the bundled corpus:

  A. the model embeds N of the corpus's 256-token chunks (cache off), alone;
  B. the Python side alone: Hydra composes every job of the default grid and
     sweep's chunker chunks the corpus for each of them, R times;
  C. A in the main thread while B runs in a second thread.

It prints the medians of --repeats rounds and the share of B's time that
overlapping recovered: (A + B - C) / B. 1.0 would be a free second worker;
0 means the overlap buys nothing.

    python bench/overlap_probe.py [--texts 300] [--rounds-of-work 3] [--repeats 3]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))

from hydra import compose, initialize_config_dir  # noqa: E402

from sweep.chunking import build_chunker  # noqa: E402
from sweep.datasets.loading import load_dataset  # noqa: E402
from sweep.embedding.embedder import SentenceTransformerEmbedder  # noqa: E402
from sweep.hydrakit.config import register  # noqa: E402

GRID = [(size, overlap) for size in (128, 256, 512) for overlap in (0, 64)]


def python_work(documents, rounds: int) -> None:
    with initialize_config_dir(str(ROOT / "src" / "sweep" / "conf"), version_base="1.3"):
        for _ in range(rounds):
            for size, overlap in GRID:
                compose(
                    config_name="config",
                    overrides=[f"chunk.size={size}", f"chunk.overlap={overlap}"],
                )
                build_chunker(strategy="token", size=size, overlap=overlap).chunk_documents(
                    documents
                )


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--dataset", default=str(ROOT / "corpora" / "kestrel"))
    ap.add_argument("--texts", type=int, default=300)
    ap.add_argument("--rounds-of-work", type=int, default=3)
    ap.add_argument("--repeats", type=int, default=3)
    args = ap.parse_args()
    register()
    dataset = load_dataset(args.dataset)
    chunks = build_chunker(strategy="token", size=256, overlap=0).chunk_documents(dataset.documents)
    texts = [c.text for c in chunks][: args.texts]
    embedder = SentenceTransformerEmbedder(cache_dir="off", show_progress=False)
    embedder.load()
    embedder.embed_documents(texts[:8])  # warm the model's first call
    python_work(dataset.documents, 1)  # and Hydra's config repository

    def embed() -> None:
        embedder.embed_documents(texts)

    a, b, c = [], [], []
    for _ in range(args.repeats):
        t = time.perf_counter()
        embed()
        a.append(time.perf_counter() - t)
        t = time.perf_counter()
        python_work(dataset.documents, args.rounds_of_work)
        b.append(time.perf_counter() - t)
        t = time.perf_counter()
        side = threading.Thread(target=python_work, args=(dataset.documents, args.rounds_of_work))
        side.start()
        embed()
        side.join()
        c.append(time.perf_counter() - t)
    ma, mb, mc = (statistics.median(x) for x in (a, b, c))
    print(f"A model alone ({len(texts)} chunks of 256 tokens): {ma:.2f} s  (runs {a})")
    print(
        f"B Python work alone ({args.rounds_of_work} x {len(GRID)} composes + chunkings): "
        f"{mb:.2f} s  (runs {b})"
    )
    print(f"C both at once: {mc:.2f} s  (runs {c}); one after the other: {ma + mb:.2f} s")
    print(f"share of B recovered by overlapping: {(ma + mb - mc) / mb:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
