"""How much of a sweep's cost sweep avoids (issue 5).

On the bundled corpus and the grid chunk.size=128,256,512 chunk.overlap=0,64,
in one run:
  (a) naive: re-chunk and re-embed everything per cell, same model, no cache
  (b) cold:  `python -m sweep` with an empty embedding cache
  (c) warm:  the same sweep again
  (d) extended: the grid plus one new cell (chunk.size=384), warm cache
Prints wall times, strings embedded, the ratios b/a, c/a, d/a, and the share
of the cold run's wall time spent outside the model.

    python bench/sweep_speed.py [--dataset DIR] [--repeats N]
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
SIZES, OVERLAPS = "128,256,512", "0,64"


def _sweep(cache: Path, out: Path, dataset: str, *extra: str) -> dict:
    env = dict(os.environ, HF_HUB_OFFLINE="1")
    cmd = [sys.executable, "-m", "sweep", f"dataset.path={dataset}", f"runtime.cache_dir={cache}",
           f"hydra.sweep.dir={out}", "runtime.show_progress=false", *extra]
    t0 = time.perf_counter()
    subprocess.run(cmd, cwd=ROOT, env=env, check=True, stdout=subprocess.DEVNULL,
                   stderr=subprocess.DEVNULL)
    wall = time.perf_counter() - t0
    with open(out / "results.csv", newline="") as f:
        rows = list(csv.DictReader(f))
    bad = [r for r in rows if r["status"] != "ok"]
    if bad:
        raise SystemExit(f"sweep row failed: {bad[0]['error']}")
    return {"wall_s": wall, "embedded": sum(int(r["embedded"]) for r in rows),
            "model_s": sum(float(r["model_s"]) for r in rows),
            "load_s": sum(float(r.get("model_load_s") or 0) for r in rows), "cells": len(rows)}


def _naive(dataset: str) -> dict:
    env = dict(os.environ, HF_HUB_OFFLINE="1")
    t0 = time.perf_counter()
    proc = subprocess.run([sys.executable, str(ROOT / "bench" / "naive_sweep.py"), dataset, SIZES,
                           OVERLAPS], cwd=ROOT, env=env, check=True, capture_output=True, text=True)
    out = json.loads(proc.stdout.strip().splitlines()[-1])
    out["wall_s"] = time.perf_counter() - t0
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--dataset", default=str(ROOT / "corpora" / "kestrel"))
    ap.add_argument("--repeats", type=int, default=1,
                    help="repeat the whole comparison and quote medians (each repeat takes minutes)")
    args = ap.parse_args()
    results: dict[str, list[dict]] = {k: [] for k in "abcd"}
    for rep in range(args.repeats):
        with tempfile.TemporaryDirectory() as tmp:
            tmp = Path(tmp)
            print(f"[{rep + 1}/{args.repeats}] (a) naive baseline ...", flush=True)
            results["a"].append(_naive(args.dataset))
            print(f"[{rep + 1}/{args.repeats}] (b) sweep, cold cache ...", flush=True)
            grid = (f"chunk.size={SIZES}", f"chunk.overlap={OVERLAPS}")
            results["b"].append(_sweep(tmp / "cache", tmp / "b", args.dataset, *grid))
            print(f"[{rep + 1}/{args.repeats}] (c) sweep, warm cache ...", flush=True)
            results["c"].append(_sweep(tmp / "cache", tmp / "c", args.dataset, *grid))
            print(f"[{rep + 1}/{args.repeats}] (d) sweep + one new cell ...", flush=True)
            results["d"].append(_sweep(tmp / "cache", tmp / "d", args.dataset,
                                       f"chunk.size={SIZES},384", f"chunk.overlap={OVERLAPS}"))

    def med(key: str, field: str) -> float:
        return statistics.median(r[field] for r in results[key])

    names = {"a": "naive, no cache", "b": "sweep cold", "c": "sweep warm", "d": "sweep +1 size"}
    print(f"\n{'run':<18}{'wall s':>10}{'embedded':>10}{'model s':>10}{'ratio to a':>12}")
    for key in "abcd":
        model = med(key, "embed_s" if key == "a" else "model_s")
        print(f"{names[key]:<18}{med(key, 'wall_s'):>10.1f}{med(key, 'embedded'):>10.0f}"
              f"{model:>10.1f}{med(key, 'wall_s') / med('a', 'wall_s'):>12.3f}")
    # Loading the model (torch import included) is embedding cost too; the
    # naive baseline pays it as well.
    outside = 1 - (med("b", "model_s") + med("b", "load_s")) / med("b", "wall_s")
    print(f"\nb/a = {med('b', 'wall_s') / med('a', 'wall_s'):.3f} (target <= 0.8)")
    print(f"c/a = {med('c', 'wall_s') / med('a', 'wall_s'):.3f} (target <= 0.05)")
    print(f"d/a = {med('d', 'wall_s') / med('a', 'wall_s'):.3f}")
    print(f"cold wall time outside the model (running + loading it): {100 * outside:.1f}% "
          f"(target <= 10%); model load {med('b', 'load_s'):.1f}s")
    print(f"(medians over {args.repeats} repeat(s))")
    return 0


if __name__ == "__main__":
    sys.exit(main())
