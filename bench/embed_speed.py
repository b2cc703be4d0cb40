"""What the embedding backends buy and cost: torch fp32, ONNX fp32, ONNX int8, OpenVINO,
and ``auto`` (the default: the fastest of them that keeps torch's rankings here).

In one run:
  1. speed: texts per second of each backend on the bundled corpus's token
     chunks at 128, 256 and 512 tokens (cache off, model loaded beforehand;
     rounds interleave the backends; medians of --repeats), as a ratio to torch;
  2. accuracy: the default grid (chunk.size=128,256,512 chunk.overlap=0,64)
     swept once per backend, each with an empty embedding cache; span
     recall@5 and doc ndcg@5 per setting and backend, with the paired
     randomization test of each other backend against torch on the same queries;
     ``auto`` is swept too (it probes torch against OpenVINO first, in that
     sweep's time), and the report says what it chose;
  3. a cold default sweep per backend against bench/naive_sweep.py's
     re-embed-everything baseline (the sweeps of 2 are those cold sweeps; the
     one-time ONNX export is done before and timed on its own).

The report starts with the CPU and the instruction sets that decide these numbers
(int8 products need VNNI to pay off; OpenVINO computes in bfloat16 where the CPU
has AVX-512 BF16 or AMX, in float32 elsewhere).

    python bench/embed_speed.py [--repeats 3] [--skip-sweeps] [--out FILE.md]

The machine is shared: compare ratios measured in the same run, not absolute numbers.
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))

from sweep.chunking import build_chunker  # noqa: E402
from sweep.core.cpu import cpu_summary  # noqa: E402
from sweep.datasets.loading import load_dataset  # noqa: E402
from sweep.decision.significance import paired_randomization_test  # noqa: E402
from sweep.embedding.backends import BACKENDS  # noqa: E402
from sweep.embedding.embedder import SentenceTransformerEmbedder  # noqa: E402

SIZES, OVERLAPS = "128,256,512", "0,64"
METRICS = (("span", "recall@5"), ("doc", "ndcg@5"))


def _env() -> dict:
    return dict(os.environ, HF_HUB_OFFLINE="1")


def cpu_line() -> str:
    """The CPU and the instruction sets that decide which backend wins."""
    line = f"CPU: {cpu_summary()}"
    try:
        from sweep.embedding.encoders import openvino_precision

        line += f"; OpenVINO computes in {openvino_precision()}"
    except Exception:  # OpenVINO is not installed here
        pass
    return line


def prepare(onnx_dir: Path) -> dict[str, float]:
    """Export the models once; seconds per backend."""
    seconds = {}
    for backend in BACKENDS[1:]:
        t0 = time.perf_counter()
        SentenceTransformerEmbedder(
            backend=backend, cache_dir="off", onnx_dir=str(onnx_dir), show_progress=False
        ).load()
        seconds[backend] = time.perf_counter() - t0
    return seconds


def measure(
    backend: str, dataset: str, onnx_dir: Path, sizes: list[int], batch_size: int, limit: int | None
) -> dict[int, float]:
    """Texts per second of one backend at each chunk size (run in a process of its own)."""
    docs = load_dataset(dataset).documents
    e = SentenceTransformerEmbedder(
        backend=backend,
        cache_dir="off",
        onnx_dir=str(onnx_dir),
        show_progress=False,
        batch_size=batch_size,
    )
    e.load()
    e.embed_documents(["warm up the runtime"])
    out = {}
    for size in sizes:
        texts = [
            c.text
            for c in build_chunker(strategy="token", size=size, overlap=0).chunk_documents(docs)
        ]
        if limit and len(texts) > limit:  # an even sample keeps the mix of lengths
            texts = texts[:: -(-len(texts) // limit)]
        t0 = time.perf_counter()
        e.embed_documents(texts, what="chunks")
        out[size] = len(texts) / (time.perf_counter() - t0)
    return out


def speed(
    dataset: str, onnx_dir: Path, sizes: list[int], repeats: int, batch_size: int, limit: int | None
) -> dict[int, dict[str, list[float]]]:
    """Rounds of every backend in turn, each in a fresh process: runtimes that keep
    threads spinning after a call must not slow the next backend down."""
    out: dict[int, dict[str, list[float]]] = {s: {b: [] for b in BACKENDS} for s in sizes}
    for rep in range(repeats):
        for backend in BACKENDS:
            proc = subprocess.run(
                [
                    sys.executable,
                    __file__,
                    "--measure",
                    backend,
                    "--dataset",
                    dataset,
                    "--onnx-dir",
                    str(onnx_dir),
                    "--sizes",
                    ",".join(map(str, sizes)),
                    "--batch-size",
                    str(batch_size),
                    *(["--limit", str(limit)] if limit else []),
                ],
                cwd=ROOT,
                env=_env(),
                check=True,
                capture_output=True,
                text=True,
            )
            rates = json.loads(proc.stdout.strip().splitlines()[-1])
            for size in sizes:
                out[size][backend].append(rates[str(size)])
            print(
                f"  round {rep + 1}: {backend} "
                + ", ".join(f"{s} tokens {rates[str(s)]:.1f}/s" for s in sizes),
                flush=True,
            )
    return out


def sweep(backend: str, dataset: str, tmp: Path, onnx_dir: Path) -> dict:
    out = tmp / f"sweep-{backend}"
    cmd = [
        sys.executable,
        "-m",
        "sweep",
        f"dataset.path={dataset}",
        f"chunk.size={SIZES}",
        f"chunk.overlap={OVERLAPS}",
        f"embed.backend={backend}",
        f"runtime.cache_dir={tmp / f'cache-{backend}'}",
        f"embed.onnx_dir={onnx_dir}",
        f"hydra.sweep.dir={out}",
        "runtime.show_progress=false",
    ]
    t0 = time.perf_counter()
    subprocess.run(
        cmd, cwd=ROOT, env=_env(), check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    wall = time.perf_counter() - t0
    with open(out / "results.csv", newline="", encoding="utf-8") as f:
        rows = list(csv.DictReader(f))
    bad = [r for r in rows if r["status"] != "ok"]
    if bad:
        raise SystemExit(f"{backend} sweep row failed: {bad[0]['error']}")
    setting = {r["job"]: (int(r["chunk.size"]), int(r["chunk.overlap"])) for r in rows}
    means = {setting[r["job"]]: {m: float(r[f"{m[0]}.{m[1]}"]) for m in METRICS} for r in rows}
    per_query: dict[tuple, dict[tuple, dict[str, float]]] = defaultdict(lambda: defaultdict(dict))
    with open(out / "per_query.csv", newline="", encoding="utf-8") as f:
        for r in csv.DictReader(f):
            m = (r["level"], r["metric"])
            if m in METRICS and r["value"] not in ("", "nan"):
                per_query[setting[r["job"]]][m][r["query_id"]] = float(r["value"])
    return {
        "wall_s": wall,
        "means": means,
        "per_query": per_query,
        "embedded": sum(int(r["embedded"]) for r in rows),
        "model_s": sum(float(r["model_s"]) for r in rows),
        "ran": sorted({r.get("embed.backend") or backend for r in rows}),
    }


def naive(dataset: str) -> dict:
    t0 = time.perf_counter()
    proc = subprocess.run(
        [sys.executable, str(ROOT / "bench" / "naive_sweep.py"), dataset, SIZES, OVERLAPS],
        cwd=ROOT,
        env=_env(),
        check=True,
        capture_output=True,
        text=True,
    )
    out = json.loads(proc.stdout.strip().splitlines()[-1])
    out["wall_s"] = time.perf_counter() - t0
    return out


def speed_table(rates: dict[int, dict[str, list[float]]], repeats: int) -> list[str]:
    lines = [
        f"| chunk tokens | {' | '.join(f'{b} texts/s' for b in BACKENDS)} | "
        f"{' | '.join(f'{b} / torch' for b in BACKENDS[1:])} |",
        "|" + "---|" * (1 + 2 * len(BACKENDS) - 1),
    ]
    for size, by in rates.items():
        med = {b: statistics.median(v) for b, v in by.items()}
        rates_ = " | ".join(f"{med[b]:.1f}" for b in BACKENDS)
        ratios = " | ".join(f"{med[b] / med['torch']:.2f}×" for b in BACKENDS[1:])
        lines.append(f"| {size} | {rates_} | {ratios} |")
    lines.append(
        f"\n(medians of {repeats}; all runs: "
        + "; ".join(
            f"{s}: " + ", ".join(f"{b} " + "/".join(f"{x:.1f}" for x in v) for b, v in by.items())
            for s, by in rates.items()
        )
        + ")"
    )
    return lines


def accuracy_table(sweeps: dict[str, dict]) -> tuple[list[str], dict[str, float]]:
    base = sweeps["torch"]
    others = [b for b in ("auto", *BACKENDS[1:]) if b in sweeps]
    head = (
        "| size | overlap | "
        + " | ".join(
            f"{lvl} {met} {b}" + ("" if b == "torch" else " (Δ, p)")
            for lvl, met in METRICS
            for b in ["torch", *others]
        )
        + " |"
    )
    lines = [head, "|" + "---|" * (2 + len(METRICS) * (1 + len(others)))]
    worst = {b: 0.0 for b in others}
    for setting in sorted(base["means"]):
        cells = [str(setting[0]), str(setting[1])]
        for m in METRICS:
            cells.append(f"{base['means'][setting][m]:.3f}")
            for b in others:
                value = sweeps[b]["means"][setting][m]
                diff = value - base["means"][setting][m]
                a_q, b_q = base["per_query"][setting][m], sweeps[b]["per_query"][setting][m]
                ids = sorted(set(a_q) & set(b_q))
                p = paired_randomization_test(
                    np.array([b_q[i] for i in ids]), np.array([a_q[i] for i in ids])
                )
                cells.append(f"{value:.3f} ({diff:+.3f}, p={p:.2f})")
                if m == ("span", "recall@5"):
                    worst[b] = max(worst[b], abs(diff))
        lines.append("| " + " | ".join(cells) + " |")
    return lines, worst


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--dataset", default=str(ROOT / "corpora" / "kestrel"))
    ap.add_argument("--sizes", default=SIZES)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--batch-size", type=int, default=32)
    ap.add_argument("--limit", type=int, help="time at most about this many chunks per size")
    ap.add_argument(
        "--skip-sweeps", action="store_true", help="speed only (parts 2 and 3 take ~10 min)"
    )
    ap.add_argument("--out", help="also write the report (markdown) to this file")
    ap.add_argument("--measure", choices=BACKENDS, help=argparse.SUPPRESS)
    ap.add_argument("--onnx-dir", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.measure:
        rates = measure(
            args.measure,
            args.dataset,
            Path(args.onnx_dir),
            [int(s) for s in args.sizes.split(",")],
            args.batch_size,
            args.limit,
        )
        print(json.dumps(rates))
        return 0
    report: list[str] = [cpu_line(), ""]
    print(report[0], flush=True)
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        onnx_dir = tmp / "onnx"
        print("exporting the models (once per model and machine) ...", flush=True)
        export_s = prepare(onnx_dir)
        print("1. speed ...", flush=True)
        rates = speed(
            args.dataset,
            onnx_dir,
            [int(s) for s in args.sizes.split(",")],
            args.repeats,
            args.batch_size,
            args.limit,
        )
        sample = f", at most ~{args.limit} chunks per size" if args.limit else ""
        report += [
            "### Speed: texts per second (batch size "
            f"{args.batch_size}, {os.cpu_count()} CPUs{sample})",
            "",
        ] + speed_table(rates, args.repeats)
        report.append(
            "\none-time export: " + ", ".join(f"{b} {s:.0f} s" for b, s in export_s.items())
        )
        if not args.skip_sweeps:
            sweeps = {}
            for backend in ("auto", *BACKENDS):
                print(f"2. default grid, {backend}, cold cache ...", flush=True)
                sweeps[backend] = sweep(backend, args.dataset, tmp, onnx_dir)
            print("3. naive baseline ...", flush=True)
            base = naive(args.dataset)
            lines, worst = accuracy_table(sweeps)
            report += ["", "### Retrieval on the default grid (Δ and paired p against torch)", ""]
            report += lines
            report.append(
                "\nlargest |Δ span recall@5| against torch: "
                + ", ".join(
                    f"{b} {w:.3f}" + (" (within 0.01)" if w <= 0.01 else " (MISSES the 0.01 bound)")
                    for b, w in worst.items()
                )
            )
            report += [
                "",
                "### Cold default sweep against the naive baseline",
                "",
                "| run | wall s | strings embedded | model s | ratio to naive |",
                "|---|---|---|---|---|",
                f"| naive re-embed-everything (torch) | {base['wall_s']:.1f} | "
                f"{base['embedded']} | {base['embed_s']:.1f} | 1.00 |",
            ]
            for b, s in sweeps.items():
                ran = "" if b != "auto" else f" (ran {', '.join(s['ran'])})"
                report.append(
                    f"| sweep cold, embed.backend={b}{ran} | {s['wall_s']:.1f} | {s['embedded']} | "
                    f"{s['model_s']:.1f} | {s['wall_s'] / base['wall_s']:.2f} |"
                )
            report.append(
                f"\nauto against torch: {sweeps['auto']['wall_s'] / sweeps['torch']['wall_s']:.2f}× "
                "the wall time (the probe included; bench/sweep_speed.py repeats it)"
            )
            report.append("\n(one run each)")
    text = "\n".join(report)
    print("\n" + text)
    if args.out:
        Path(args.out).write_text(text + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
