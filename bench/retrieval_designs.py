"""Parent documents, contextual chunk headers and late chunking against plain chunking, on the
bundled corpus: what each design changes, and what it costs next to plain chunking.

    python bench/retrieval_designs.py [--out DIR] [--sizes 128,256]

Three real ``python -m sweep`` runs, each paired-tested on the same 167 questions, all
with a fresh embedding cache in ``--out`` (so times are cold):

1. ``chunk.size=SIZES parent.mode=none,section,window``: parents scored, budgets in
   parent tokens; the chunks' own recall is the ``child`` column.
2. ``chunk.size=SIZES context.mode=none,llm chunk.prefix=none,title`` against the
   stand-in LLM of ``tests/llm_server.py``, started here. Its "contexts" are the document's
   first heading and three long words of the chunk, written by no model, so this row
   measures the plumbing and a title-like prefix, not an LLM's contexts; the
   ``prefix=title`` rows are the control for that. A second run of the same sweep must
   send zero requests.
3. ``chunk.size=SIZES embed.late=false,true``: the late rows' model time against the
   plain rows' (ratio), both cold.

It prints one Markdown table per design.
"""

from __future__ import annotations

import argparse
import csv
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))

from llm_server import ContextResponders, StandInLLM  # noqa: E402


def sweep(out: Path, cache: Path, *overrides: str) -> list[dict]:
    cmd = [
        sys.executable,
        "-m",
        "sweep",
        f"hydra.sweep.dir={out}",
        "runtime.show_progress=false",
        f"runtime.cache_dir={cache}",
        *overrides,
    ]
    proc = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True)
    if proc.returncode != 0:
        sys.exit(f"sweep failed ({' '.join(overrides)}):\n{proc.stderr[-2000:]}")
    with open(out / "results.csv", newline="", encoding="utf-8") as f:
        return sorted(csv.DictReader(f), key=lambda r: int(r["job"]))


def num(r: dict, key: str, digits: int = 3) -> str:
    value = r.get(key, "")
    return "–" if value in ("", "None", "nan") else f"{float(value):.{digits}f}"


def _verdict(r: dict) -> str:
    p = r.get("p_holm", "")
    return r["vs_best"] if p in ("", "None", "nan") else f"{r['vs_best']} (p={float(p):.2f})"


def table(rows: list[dict], axis: list[str], extra: dict[str, str]) -> None:
    head = [
        *axis,
        "span recall@5 [95% CI]",
        "vs best",
        "@512t",
        "@1024t",
        "tok@5",
        "trunc %",
        *extra,
    ]
    print("| " + " | ".join(head) + " |")
    print("|" + "---|" * len(head))
    for r in rows:
        cells = [r[a] for a in axis] + [
            f"{num(r, 'span.recall@5')} [{num(r, 'span.recall@5.lo', 2)}, "
            f"{num(r, 'span.recall@5.hi', 2)}]",
            _verdict(r),
            num(r, "span.recall@512t"),
            num(r, "span.recall@1024t"),
            num(r, "tokens@5", 0),
            f"{100 * float(r['truncated_share']):.1f}",
        ]
        cells += [
            num(r, key, 1 if key.endswith("_s") else 3)
            if not key.startswith("=")
            else r.get(key[1:], "")
            for key in extra.values()
        ]
        print("| " + " | ".join(cells) + " |")
    print()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--out", type=Path, help="where the sweeps go (default: a temporary folder)"
    )
    parser.add_argument("--sizes", default="128,256", help="chunk sizes to sweep (128,256)")
    args = parser.parse_args()
    base = args.out or Path(tempfile.mkdtemp(prefix="designs-"))
    size = f"chunk.size={args.sizes}"

    print("## Parent documents\n")
    parents = sweep(
        base / "parents", base / "cache-parents", size, "parent.mode=none,section,window"
    )
    table(
        parents,
        ["chunk.size", "retrieve.parent"],
        {
            "child recall@5": "child.span.recall@5",
            "parents": "=n_parents",
            "parent tokens": "mean_parent_tokens",
        },
    )

    print("## Contextual chunk headers (stand-in LLM: a title and three words, no model)\n")
    with ContextResponders().install(StandInLLM()) as server:
        llm = [
            f"llm.base_url={server.url}",
            "llm.model=stand-in",
            "llm.api_key_env=null",
            f"llm.cache_dir={base / 'llm'}",
            "context.confirm=true",
        ]
        grid = [size, "context.mode=none,llm", "chunk.prefix=none,title", *llm]
        contexts = sweep(base / "contexts", base / "cache-contexts", *grid)
        sent = len(server.requests)
        sweep(base / "contexts-again", base / "cache-contexts", *grid)
        again = len(server.requests) - sent
    table(
        contexts,
        ["chunk.size", "chunk.prefix", "chunk.context"],
        {
            "requests": "=context_requests",
            "LLM tokens": "=context_prompt_tokens",
            "context s": "context_s",
        },
    )
    print(f"Requests sent: {sent} the first time, {again} on the rerun.\n")

    print("## Late chunking (cold: model time of the late rows against the plain rows)\n")
    late = sweep(base / "late", base / "cache-late", size, "embed.late=false,true")
    table(late, ["chunk.size", "embed.late"], {"model s": "model_s", "embedded": "=embedded"})
    for s in args.sizes.split(","):
        plain = next(r for r in late if r["chunk.size"] == s and r["embed.late"] == "False")
        lat = next(r for r in late if r["chunk.size"] == s and r["embed.late"] == "True")
        print(
            f"size {s}: late / plain model time = "
            f"{float(lat['model_s']) / max(float(plain['model_s']), 1e-9):.2f}"
        )
    print(f"\nsweeps in {base}")


if __name__ == "__main__":
    main()
