"""How much of a sweep's cost sweep avoids, against the naive loop and the peer chunklab.

On the bundled corpus and the default grid chunk.size=128,256,512 chunk.overlap=0,64,
in one run:
  (a) naive: re-chunk and re-embed everything per cell, same model, no cache
      (bench/naive_sweep.py)
  (b) cold:  `python -m sweep` with an empty embedding cache, no backend named
      (embed.backend=auto: its probe and export in the time)
  (g) cold, embed.backend=torch: the same with torch forced, right before or after (b)
      (the order alternates by repeat), for auto's speed-up and its span recall@5
  (c) warm:  the same sweep again, in a new folder (latency columns included)
  (d) extended: the grid plus one new cell (chunk.size=384), warm cache
  (e) chunklab cold and (f) chunklab warm: the peer tool chunklab on the same data,
      model and grid (bench/peer_chunklab.py; skipped with --no-peer)
Warm runs are cheap, so each repeat runs (c) and (f) --warm-repeats times, alternated.
Prints the CPU and its instruction sets first, then wall times, strings embedded, whether
the warm sweep loaded a model, the ratios and the share of the cold sweep's wall time spent
outside the model. Medians throughout.

    python bench/sweep_speed.py [--dataset DIR] [--repeats N] [--warm-repeats N] [--no-peer]
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
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))
sys.path.insert(0, str(ROOT / "src"))

from sweep.core.cpu import cpu_summary  # noqa: E402

SIZES, OVERLAPS = "128,256,512", "0,64"
NO_MODEL = "no embedding model loaded"


def _sweep(cache: Path, out: Path, dataset: str, *extra: str) -> dict:
    env = dict(os.environ, HF_HUB_OFFLINE="1")
    cmd = [
        sys.executable,
        "-m",
        "sweep",
        f"dataset.path={dataset}",
        f"runtime.cache_dir={cache}",
        f"hydra.sweep.dir={out}",
        "runtime.show_progress=false",
        *extra,
    ]
    t0 = time.perf_counter()
    proc = subprocess.run(cmd, cwd=ROOT, env=env, check=True, capture_output=True, text=True)
    wall = time.perf_counter() - t0
    with open(out / "results.csv", newline="") as f:
        rows = list(csv.DictReader(f))
    bad = [r for r in rows if r["status"] != "ok"]
    if bad:
        raise SystemExit(f"sweep row failed: {bad[0]['error']}")
    return {
        "wall_s": wall,
        "ran": sorted({r.get("embed.backend", "?") for r in rows}),
        "recall": {(r["chunk.size"], r["chunk.overlap"]): float(r["span.recall@5"]) for r in rows},
        "embedded": sum(int(r["embedded"]) for r in rows),
        "model_s": sum(float(r["model_s"]) for r in rows),
        "load_s": sum(float(r.get("model_load_s") or 0) for r in rows),
        "cells": len(rows),
        "no_model": NO_MODEL in proc.stderr,
    }


def _naive(dataset: str) -> dict:
    env = dict(os.environ, HF_HUB_OFFLINE="1")
    t0 = time.perf_counter()
    proc = subprocess.run(
        [sys.executable, str(ROOT / "bench" / "naive_sweep.py"), dataset, SIZES, OVERLAPS],
        cwd=ROOT,
        env=env,
        check=True,
        capture_output=True,
        text=True,
    )
    out = json.loads(proc.stdout.strip().splitlines()[-1])
    out["wall_s"] = time.perf_counter() - t0
    out["model_s"] = out["embed_s"]
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--dataset", default=str(ROOT / "corpora" / "kestrel"))
    ap.add_argument(
        "--repeats",
        type=int,
        default=1,
        help="repeat the whole comparison and quote medians (each repeat takes minutes)",
    )
    ap.add_argument(
        "--warm-repeats",
        type=int,
        default=3,
        help="warm runs of sweep and chunklab per repeat, alternated",
    )
    ap.add_argument("--no-peer", action="store_true", help="leave chunklab out (e, f)")
    args = ap.parse_args()
    peer = None
    if not args.no_peer:
        import peer_chunklab as peer
    print(f"CPU: {cpu_summary()}", flush=True)
    runs: dict[str, list[dict]] = {k: [] for k in "abcdefg"}
    grid = (f"chunk.size={SIZES}", f"chunk.overlap={OVERLAPS}")
    for rep in range(args.repeats):
        tag = f"[{rep + 1}/{args.repeats}]"
        with tempfile.TemporaryDirectory() as tmp:
            tmp = Path(tmp)
            print(f"{tag} (a) naive baseline ...", flush=True)
            runs["a"].append(_naive(args.dataset))
            torch_first = rep % 2 == 1
            if torch_first:
                print(f"{tag} (g) sweep, cold cache, embed.backend=torch ...", flush=True)
                runs["g"].append(
                    _sweep(tmp / "cache-g", tmp / "g", args.dataset, *grid, "embed.backend=torch")
                )
            print(f"{tag} (b) sweep, cold cache ...", flush=True)
            runs["b"].append(_sweep(tmp / "cache", tmp / "b", args.dataset, *grid))
            if not torch_first:
                print(f"{tag} (g) sweep, cold cache, embed.backend=torch ...", flush=True)
                runs["g"].append(
                    _sweep(tmp / "cache-g", tmp / "g", args.dataset, *grid, "embed.backend=torch")
                )
            if peer is not None:
                print(f"{tag} (e) chunklab, cold cache ...", flush=True)
                peer.prepare(Path(args.dataset), tmp / "peer")
                runs["e"].append(peer.run(tmp / "peer", tmp / "peer-cache", tmp / "e"))
            for w in range(args.warm_repeats):
                print(f"{tag} (c) sweep, warm cache, {w + 1}/{args.warm_repeats} ...", flush=True)
                runs["c"].append(_sweep(tmp / "cache", tmp / f"c{w}", args.dataset, *grid))
                if peer is not None:
                    print(
                        f"{tag} (f) chunklab, warm cache, {w + 1}/{args.warm_repeats} ...",
                        flush=True,
                    )
                    runs["f"].append(peer.run(tmp / "peer", tmp / "peer-cache", tmp / f"f{w}"))
            print(f"{tag} (d) sweep + one new cell ...", flush=True)
            runs["d"].append(
                _sweep(
                    tmp / "cache",
                    tmp / "d",
                    args.dataset,
                    f"chunk.size={SIZES},384",
                    f"chunk.overlap={OVERLAPS}",
                )
            )

    def med(key: str, field: str) -> float:
        return statistics.median(float(r.get(field) or 0) for r in runs[key])

    names = {
        "a": "naive, no cache",
        "b": "sweep cold",
        "c": "sweep warm",
        "d": "sweep +1 size",
        "e": "chunklab cold",
        "f": "chunklab warm",
        "g": "sweep cold torch",
    }
    print(
        f"\n{'run':<18}{'runs':>6}{'wall s':>10}{'embedded':>10}{'model s':>10}{'ratio to a':>12}"
    )
    for key in "abcdefg":
        if runs[key]:
            print(
                f"{names[key]:<18}{len(runs[key]):>6}{med(key, 'wall_s'):>10.1f}"
                f"{med(key, 'embedded'):>10.0f}{med(key, 'model_s'):>10.1f}"
                f"{med(key, 'wall_s') / med('a', 'wall_s'):>12.3f}"
            )
    print("  all warm sweep walls: " + ", ".join(f"{r['wall_s']:.1f}" for r in runs["c"]))
    if runs["f"]:
        print("  all warm chunklab walls: " + ", ".join(f"{r['wall_s']:.1f}" for r in runs["f"]))
    ratio = lambda x, y: med(x, "wall_s") / med(y, "wall_s")  # noqa: E731
    print(f"\nb/a = {ratio('b', 'a'):.3f} (cold against naive; target <= 0.6)")
    print(f"c/a = {ratio('c', 'a'):.3f} (warm against naive; target <= 0.1)")
    if runs["f"]:
        print(f"c/f = {ratio('c', 'f'):.3f} (warm sweep against warm chunklab; target <= 0.5)")
        print(f"b/e = {ratio('b', 'e'):.3f} (cold sweep against cold chunklab)")
    print(f"d/a = {ratio('d', 'a'):.3f}")
    ran = sorted({b for r in runs["b"] for b in r["ran"]})
    worst = max(
        abs(b["recall"][cell] - g["recall"][cell])
        for b, g in zip(runs["b"], runs["g"])
        for cell in g["recall"]
    )
    print(
        f"b/g = {ratio('b', 'g'):.3f} (default auto, which ran {', '.join(ran)}, against "
        "torch; target <= 0.6 where the CPU has BF16 or AMX, <= 1.0 elsewhere); "
        f"largest |Δ span recall@5| {worst:.3f} (target <= 0.01)"
    )
    print(
        "  all (b, g) pairs: "
        + ", ".join(f"({b['wall_s']:.1f}, {g['wall_s']:.1f})" for b, g in zip(runs["b"], runs["g"]))
    )
    loaded = sum(not r["no_model"] for r in runs["c"])
    print(f"warm sweeps that loaded a model: {loaded} of {len(runs['c'])}")
    # Loading the model (torch import included) is embedding cost too; the naive
    # baseline pays it as well.
    outside = 1 - (med("b", "model_s") + med("b", "load_s")) / med("b", "wall_s")
    print(
        f"cold sweep wall time outside the model (running + loading it): {100 * outside:.1f}%; "
        f"model load {med('b', 'load_s'):.1f}s"
    )
    print(f"(medians over {args.repeats} repeat(s), {args.warm_repeats} warm run(s) each)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
