"""How each stage's cost grows with the corpus (issue 16).

Builds corpora of distinct text at 1x, 4x and 16x the bundled corpus and runs
the same small grid on each, in a fresh process per size with a fresh
embedding cache, then prints per stage (chunk, embed, index, retrieve, score,
report) the time, the peak memory and the fitted growth exponent (the slope
of log cost against log corpus size: 1 is linear, 2 quadratic).

Copy 0 of a corpus is the bundled corpus; copy j > 0 varies every proper
noun (a word the corpus never writes in lower case) and every digit, keeping
each word's length, so every evidence span keeps its offsets: the queries of
copy j are the bundled ones, with the same words varied, pointing at copy j's
documents. Queries grow with the corpus, as they would in a real evaluation.

Time comes from a first pass with a cold cache (the rows' own stage timings;
"report" is the end-of-sweep rebuild with pictures and report.html). Memory
comes from a second pass with the cache warm and tracemalloc on (it slows
Python down, so it is not timed): the peak of what Python and NumPy allocate
during each stage, plus the FAISS index's own bytes for the index stage; the
model's weights and activations (torch) are not in it, and are the same at
every size. The process's peak RSS is printed too.

    python bench/scale.py                       # 1x, 4x, 16x: about 20 minutes on 2 cores
    python bench/scale.py --sizes 1,2 --quick   # a smoke run
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import re
import resource
import shutil
import subprocess
import sys
import tempfile
import threading
import time
import tracemalloc
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
STAGES = ("chunk", "embed", "index", "retrieve", "score", "report")
#: The grid: two sizes on exact search, and the larger on both approximate indexes
#: (those reuse its vectors, so they cost index time, not embedding time).
GRID = (
    ("chunk.size=128", "index=flat"),
    ("chunk.size=256", "index=flat"),
    ("chunk.size=256", "index=ivf"),
    ("chunk.size=256", "index=hnsw"),
)
QUICK_GRID = (("chunk.size=256", "index=flat"), ("chunk.size=256", "index=ivf"))

_WORD = re.compile(r"[A-Za-z]+")
_DIGIT = re.compile(r"[0-9]")
_CONSONANTS = "bcdfghklmnprstvz"
_VOWELS = "aeiou"


# -- corpus ------------------------------------------------------------------------


def proper_nouns(texts: list[str]) -> set[str]:
    """Capitalized words the corpus never writes in lower case: names of people, places,
    products (sentence-initial common words also appear lower case elsewhere)."""
    words = [w for t in texts for w in _WORD.findall(t)]
    lower = {w for w in words if w.islower()}
    return {w for w in words if w[0].isupper() and w.lower() not in lower and len(w) > 2}


def _pseudo(word: str, copy: int) -> str:
    """A pronounceable stand-in of the same length and case pattern, fixed per copy."""
    digest = hashlib.sha256(f"{copy}:{word}".encode()).digest()
    out = []
    for i, ch in enumerate(word):
        pool = _CONSONANTS if i % 2 == 0 else _VOWELS
        c = pool[digest[i % len(digest)] % len(pool)]
        out.append(c.upper() if ch.isupper() else c)
    return "".join(out)


def vary(text: str, copy: int, names: set[str]) -> str:
    """``text`` as copy ``copy`` writes it: names and digits varied, every offset kept."""
    if copy == 0:
        return text
    text = _WORD.sub(lambda m: _pseudo(m.group(), copy) if m.group() in names else m.group(), text)
    shift = 1 + (copy - 1) % 9  # 1..9: every digit changes in every copy
    return _DIGIT.sub(lambda m: str((int(m.group()) + shift) % 10), text)


def build_corpus(source: Path, out: Path, copies: int) -> dict:
    """``copies`` copies of ``source`` (docs/ and queries.jsonl) into ``out``."""
    docs = sorted(p for p in (source / "docs").rglob("*") if p.suffix in (".md", ".txt"))
    texts = {
        p.relative_to(source / "docs").as_posix(): p.read_bytes().decode("utf-8") for p in docs
    }
    queries = [
        json.loads(line)
        for line in (source / "queries.jsonl").read_text().splitlines()
        if line.strip()
    ]
    names = proper_nouns(list(texts.values()) + [q["query"] for q in queries])
    if out.exists():
        shutil.rmtree(out)
    for copy in range(copies):
        varied = {}
        for doc_id, text in texts.items():
            varied[doc_id] = vary(text, copy, names)
            path = out / "docs" / f"copy{copy:02d}" / doc_id
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(varied[doc_id].encode("utf-8"))
        with open(out / "queries.jsonl", "a", encoding="utf-8") as f:
            for q in queries:
                q2 = dict(
                    q, query_id=f"{q['query_id']}~{copy}", query=vary(q["query"], copy, names)
                )
                rel = []
                for r in q.get("relevant", []):
                    r2 = dict(r, doc_id=f"copy{copy:02d}/{r['doc_id']}")
                    if "quote" in r:  # the same offsets, the varied words
                        r2["quote"] = varied[r["doc_id"]][r["start"] : r["end"]]
                    rel.append(r2)
                q2["relevant"] = rel
                f.write(json.dumps(q2, ensure_ascii=False) + "\n")
    chars = sum(len(t) for t in texts.values()) * copies
    return {
        "copies": copies,
        "documents": len(texts) * copies,
        "queries": len(queries) * copies,
        "chars": chars,
        "names": len(names),
    }


# -- measuring one size (in its own process) ------------------------------------------


class Meter:
    """Which stage is running, and per stage its peak traced memory and peak RSS."""

    def __init__(self) -> None:
        self.stage: str | None = None
        self.traced: dict[str, float] = {}
        self.rss: dict[str, float] = {}
        self._page = os.sysconf("SC_PAGE_SIZE")
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._sample, daemon=True)
        self._thread.start()

    def _rss(self) -> float:
        with open("/proc/self/statm") as f:
            return int(f.read().split()[1]) * self._page / 2**20

    def _sample(self) -> None:
        while not self._stop.wait(0.005):
            stage = self.stage
            if stage is not None:
                self.rss[stage] = max(self.rss.get(stage, 0.0), self._rss())

    def enter(self, stage: str | None) -> None:
        if self.stage is not None and tracemalloc.is_tracing():
            peak = tracemalloc.get_traced_memory()[1] / 2**20
            self.traced[self.stage] = max(self.traced.get(self.stage, 0.0), peak)
        if tracemalloc.is_tracing():
            tracemalloc.reset_peak()
        self.stage = stage

    def close(self) -> None:
        self.enter(None)
        self._stop.set()


class _Proxy:
    """A stage object whose named methods first tell the meter which stage is running."""

    def __init__(
        self, inner, meter: Meter, stages: dict[str, str], after: dict[str, str] | None = None
    ):
        self._inner, self._meter, self._stages, self._after = inner, meter, stages, after or {}

    def __getattr__(self, name):
        value = getattr(self._inner, name)
        if name not in self._stages:
            return value

        def call(*args, **kwargs):
            self._meter.enter(self._stages[name])
            out = value(*args, **kwargs)
            if name in self._after:
                self._meter.enter(self._after[name])
            return out

        return call


def _measure(corpus: Path, cache: Path, out_dir: Path, grid, traced: bool, meter: Meter) -> dict:
    from hydra import compose, initialize_config_dir

    import sweep.jobs.job as job
    from sweep.hydrakit.config import CONF_DIR, register
    from sweep.reporting.write import write_report

    register()
    build = job.build_stages

    def metered(cfg, device=None):
        s = build(cfg, device)
        return job.Stages(
            _Proxy(
                s.embedder,
                meter,
                {
                    "count_model_tokens": "embed",
                    "embed_documents": "embed",
                    "embed_queries": "embed",
                },
            ),
            _Proxy(s.chunker, meter, {"chunk_documents": "chunk"}),
            _Proxy(
                s.retriever,
                meter,
                {"index": "index", "retrieve": "retrieve"},
                {"retrieve": "score"},
            ),
            s.reranker,
        )

    job.build_stages = metered
    rows = []
    if traced:
        tracemalloc.start()
    with initialize_config_dir(str(CONF_DIR), version_base="1.3"):
        for num, overrides in enumerate(grid):
            overrides = [
                f"dataset.path={corpus}",
                f"runtime.cache_dir={cache}",
                "runtime.show_progress=false",
                "eval.n_boot=200",
                "chunk.overlap=0",
                *overrides,
            ]
            cfg = compose("config", overrides=overrides)
            choices = {"index": next(o.split("=")[1] for o in overrides if o.startswith("index="))}
            row = job.run_job(cfg, out_dir / str(num), num, overrides, choices)
            meter.enter(None)
            if not row.ok:
                raise SystemExit(f"setting {overrides} did not run: {row.error}")
            rows.append(row)
        meter.enter("report")
        t0 = time.perf_counter()
        write_report(out_dir, quiet=True, html=True)
        report_s = time.perf_counter() - t0
        meter.enter(None)
    if traced:
        tracemalloc.stop()
    job.build_stages = build
    stats = [r.stats for r in rows]
    return {
        "time": {
            "chunk": sum(s.chunk_s for s in stats),
            "embed": sum(s.embed_s for s in stats),
            "index": sum(s.index_s for s in stats),
            "retrieve": sum(s.retrieve_s for s in stats),
            "score": sum(s.score_s for s in stats),
            "report": report_s,
        },
        "model_s": sum(s.model_s for s in stats),
        "model_load_s": sum(s.model_load_s for s in stats),
        "embedded": sum(s.embedded for s in stats),
        "chunks": {" ".join(g): s.n_chunks for g, s in zip(grid, stats)},
        "index_mb": {" ".join(g): (s.index_bytes or 0) / 2**20 for g, s in zip(grid, stats)},
        "ann_recall": {
            " ".join(g): s.ann_recall for g, s in zip(grid, stats) if s.ann_recall is not None
        },
        "index_s": {" ".join(g): s.index_s for g, s in zip(grid, stats)},
    }


def measure_main(args: argparse.Namespace) -> int:
    import logging

    # Every 256-token chunk is truncated by MiniLM (256 of its own tokens); said once here.
    logging.getLogger("sweep").setLevel(logging.ERROR)
    grid = QUICK_GRID if args.quick else GRID
    work = Path(args.measure)
    # Load the model and import every stage's libraries on the tiny corpus first, so the
    # first size's stages are not charged seconds of one-off start-up.
    warmup = Meter()
    _measure(ROOT / "corpora" / "tiny", work / "warmup-cache", work / "warmup", grid, False, warmup)
    warmup.close()
    meter = Meter()
    cold = _measure(work / "corpus", work / "cache", work / "cold", grid, False, meter)
    rss = dict(meter.rss)
    meter.traced.clear()
    warm = _measure(work / "corpus", work / "cache", work / "warm", grid, True, meter)
    meter.close()
    traced = dict(meter.traced)
    # FAISS keeps the index outside Python's allocator: add its bytes.
    traced["index"] = traced.get("index", 0.0) + max(cold["index_mb"].values())
    cache_bytes = sum(p.stat().st_size for p in (work / "cache").rglob("*") if p.is_file())
    out = {
        **cold,
        "traced_mb": traced,
        "rss_mb": rss,
        "cache_mb": cache_bytes / 2**20,
        "warm_time": warm["time"],
        "max_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
    }
    (work / "result.json").write_text(json.dumps(out, indent=2))
    return 0


# -- driver ---------------------------------------------------------------------------


def slope(xs, ys) -> float:
    """Least-squares slope of log y against log x (nan when a cost is ~0)."""
    if min(ys) <= 1e-4:
        return float("nan")
    return float(np.polyfit(np.log(xs), np.log(ys), 1)[0])


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", default="1,4,16", help="corpus multiples (default: 1,4,16)")
    ap.add_argument("--source", default=str(ROOT / "corpora" / "kestrel"))
    ap.add_argument("--workdir", help="keep corpora, caches and sweeps here (default: a temp dir)")
    ap.add_argument("--quick", action="store_true", help="a smaller grid: one chunk size")
    ap.add_argument("--json", help="also write the numbers to this file")
    ap.add_argument("--measure", help=argparse.SUPPRESS)  # one size, in a child process
    args = ap.parse_args()
    if args.measure:
        return measure_main(args)
    sizes = [int(s) for s in args.sizes.split(",")]
    tmp = None
    if args.workdir:
        base = Path(args.workdir)
        base.mkdir(parents=True, exist_ok=True)
    else:
        tmp = tempfile.TemporaryDirectory(prefix="sweep-scale-")
        base = Path(tmp.name)
    grid = QUICK_GRID if args.quick else GRID
    print(
        f"grid per size: {', '.join(' '.join(g) for g in grid)} (overlap 0); "
        f"sizes {sizes}x of {args.source}; work in {base}",
        flush=True,
    )
    results = {}
    for m in sizes:
        work = base / f"{m}x"
        shutil.rmtree(work, ignore_errors=True)
        work.mkdir(parents=True)
        info = build_corpus(Path(args.source), work / "corpus", m)
        print(
            f"[{m}x] {info['documents']} documents, {info['queries']} queries, "
            f"{info['chars'] / 1e6:.1f} M characters; measuring ...",
            flush=True,
        )
        t0 = time.perf_counter()
        cmd = [sys.executable, __file__, "--measure", str(work)] + (
            ["--quick"] if args.quick else []
        )
        subprocess.run(
            cmd, check=True, env=dict(os.environ, HF_HUB_OFFLINE="1"), stdout=subprocess.DEVNULL
        )
        res = json.loads((work / "result.json").read_text())
        res.update(info, wall_s=time.perf_counter() - t0)
        results[m] = res
        print(
            f"[{m}x] done in {res['wall_s']:.0f}s: {res['embedded']} texts embedded, chunks "
            f"{res['chunks']}",
            flush=True,
        )
    if tmp is not None:
        tmp.cleanup()
    _print(results, sizes)
    if args.json:
        Path(args.json).write_text(json.dumps({str(k): v for k, v in results.items()}, indent=2))
    return 0


def _print(results: dict, sizes: list[int]) -> None:
    head = "".join(f"{f'{m}x':>10}" for m in sizes)
    print("\ntime per stage, seconds (cold cache; sum over the grid's settings)")
    print(f"{'stage':<10}{head}{'exponent':>10}")
    for stage in STAGES:
        ys = [results[m]["time"][stage] for m in sizes]
        print(f"{stage:<10}" + "".join(f"{y:>10.2f}" for y in ys) + f"{slope(sizes, ys):>10.2f}")
    ys = [results[m]["model_s"] for m in sizes]
    print(
        f"{'  model':<10}" + "".join(f"{y:>10.2f}" for y in ys) + f"{slope(sizes, ys):>10.2f}"
        "   (of embed: the model's own time)"
    )
    print("\npeak memory per stage, MB (traced Python/NumPy allocations; index adds FAISS's bytes)")
    print(f"{'stage':<10}{head}{'exponent':>10}")
    for stage in STAGES:
        ys = [results[m]["traced_mb"].get(stage, 0.0) for m in sizes]
        print(f"{stage:<10}" + "".join(f"{y:>10.1f}" for y in ys) + f"{slope(sizes, ys):>10.2f}")
    print("\nper size")
    rows = [
        ("queries", "queries", "{:.0f}"),
        ("texts embedded (cold)", "embedded", "{:.0f}"),
        ("embedding cache, MB", "cache_mb", "{:.1f}"),
        ("process peak RSS, MB", "max_rss_mb", "{:.0f}"),
        ("wall time, s", "wall_s", "{:.0f}"),
    ]
    for label, key, fmt in rows:
        print(f"{label:<24}" + "".join(f"{fmt.format(results[m][key]):>10}" for m in sizes))
    for setting in results[sizes[0]]["chunks"]:
        ys = [results[m]["chunks"][setting] for m in sizes]
        print(f"{'chunks ' + setting:<24}" + "".join(f"{y:>10}" for y in ys))
        ys = [results[m]["index_s"][setting] for m in sizes]
        print(
            f"{'  index s':<24}"
            + "".join(f"{y:>10.3f}" for y in ys)
            + f"   exponent {slope(sizes, ys):.2f}"
        )
        ys = [results[m]["index_mb"][setting] for m in sizes]
        print(f"{'  index MB':<24}" + "".join(f"{y:>10.2f}" for y in ys))
        if setting in results[sizes[0]]["ann_recall"]:
            ys = [results[m]["ann_recall"][setting] for m in sizes]
            print(f"{'  ann_recall@10':<24}" + "".join(f"{y:>10.3f}" for y in ys))


if __name__ == "__main__":
    sys.exit(main())
