"""How fast embed=multilingual (USE multilingual v3, NumPy) embeds against MiniLM (torch).

Texts per second of each model on the same chunks (the bundled corpus cut into
256-token chunks by default), with 1 and 2 CPU threads; cache off, model loaded and
warmed beforehand; each measurement in a fresh process, the models taking turns round
by round; medians of --repeats. The report starts with the CPU and its instruction sets.

    python bench/multilingual_speed.py [--repeats 3] [--size 256] [--limit 200] [--out FILE.md]

The machine may be shared: compare the two models measured in the same run, not
absolute numbers across runs.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))
sys.path.insert(0, str(ROOT / "bench"))

from embed_speed import cpu_line  # noqa: E402

from sweep.chunking import build_chunker  # noqa: E402
from sweep.datasets.loading import load_dataset  # noqa: E402

MODELS = ("minilm", "multilingual")


def _texts(dataset: str, size: int, limit: int | None) -> list[str]:
    docs = load_dataset(dataset).documents
    texts = [
        c.text for c in build_chunker(strategy="token", size=size, overlap=0).chunk_documents(docs)
    ]
    if limit and len(texts) > limit:  # an even sample keeps the mix of lengths
        texts = texts[:: -(-len(texts) // limit)]
    return texts


def measure(model: str, threads: int, dataset: str, size: int, limit: int | None) -> dict:
    """Texts per second of one model with ``threads`` threads (run in a process of its own)."""
    texts = _texts(dataset, size, limit)
    if model == "minilm":
        from sweep.embedding.embedder import SentenceTransformerEmbedder

        e = SentenceTransformerEmbedder(cache_dir="off", show_progress=False, threads=threads)
    else:
        from sweep.embedding.multilingual import UseEmbedder

        e = UseEmbedder(cache_dir="off", show_progress=False, threads=threads)
    e.load()
    e.embed_documents(["warm up the runtime"] * 8)
    tokens = float(e.count_model_tokens(texts).mean())
    t0 = time.perf_counter()
    e.embed_documents(texts, what="chunks")
    seconds = time.perf_counter() - t0
    return {"texts": len(texts), "per_s": len(texts) / seconds, "model_tokens": tokens}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--dataset", default=str(ROOT / "corpora" / "kestrel"))
    ap.add_argument("--size", type=int, default=256, help="chunk size in cl100k tokens")
    ap.add_argument("--threads", default="1,2")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--limit", type=int, default=200, help="time at most about this many chunks")
    ap.add_argument("--out", help="also write the report (markdown) to this file")
    ap.add_argument("--measure", choices=MODELS, help=argparse.SUPPRESS)
    ap.add_argument("--measure-threads", type=int, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.measure:
        print(
            json.dumps(
                measure(args.measure, args.measure_threads, args.dataset, args.size, args.limit)
            )
        )
        return 0
    threads = [int(t) for t in args.threads.split(",")]
    load = os.getloadavg()[0]
    report = [cpu_line(), ""]
    print(report[0], flush=True)
    rates: dict[tuple[str, int], list[float]] = {(m, t): [] for m in MODELS for t in threads}
    info: dict[str, dict] = {}
    for rep in range(args.repeats):
        for t in threads:
            for model in MODELS:
                proc = subprocess.run(
                    [
                        sys.executable,
                        __file__,
                        "--measure",
                        model,
                        "--measure-threads",
                        str(t),
                        "--dataset",
                        args.dataset,
                        "--size",
                        str(args.size),
                        "--limit",
                        str(args.limit or 0),
                    ],
                    cwd=ROOT,
                    env=dict(os.environ, HF_HUB_OFFLINE="1"),
                    check=True,
                    capture_output=True,
                    text=True,
                )
                out = json.loads(proc.stdout.strip().splitlines()[-1])
                rates[(model, t)].append(out["per_s"])
                info[model] = out
                print(f"  round {rep + 1}: {model}, {t} thread(s): {out['per_s']:.1f} texts/s")
    n = next(iter(info.values()))["texts"]
    report += [
        f"### Texts per second on {n} chunks of {args.size} cl100k tokens "
        f"({Path(args.dataset).name}; medians of {args.repeats})",
        "",
        "| threads | MiniLM (torch) | USE multilingual v3 (NumPy) | USE / MiniLM |",
        "|---|---|---|---|",
    ]
    for t in threads:
        mini = statistics.median(rates[("minilm", t)])
        use = statistics.median(rates[("multilingual", t)])
        report.append(f"| {t} | {mini:.1f} | {use:.1f} | {use / mini:.2f}× |")
    report.append(
        "\nmean model tokens per chunk: "
        + ", ".join(f"{m} {info[m]['model_tokens']:.0f}" for m in MODELS)
        + " (MiniLM truncates at 256; USE reads every token)"
    )
    report.append(
        f"load average (1 min) at the start {load:.1f}, at the end {os.getloadavg()[0]:.1f}, "
        f"on {os.cpu_count()} CPUs"
    )
    report.append(
        "all runs: "
        + "; ".join(f"{m} x{t}: " + "/".join(f"{x:.1f}" for x in v) for (m, t), v in rates.items())
    )
    text = "\n".join(report)
    print("\n" + text)
    if args.out:
        Path(args.out).write_text(text + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
