"""Do the splitters people deploy retrieve as well as sweep's own strategies? The bundled
corpus, every framework preset against sweep's strategies at about 256 tokens, then each
framework's own default settings checked against the pick.

    python bench/deployed_splitters.py [--out DIR]

Part 1 is one real ``python -m sweep`` over ``chunk=token,recursive,sentence,markdown,
langchain,langchain_token,llamaindex,chonkie,semchunk`` (the presets' sizes are about 256
tokens; LangChain's recursive splitter is its RAG tutorial's 1000 characters with 200 of
overlap), so every row is paired-tested against the best on the same questions. Part 2
sweeps each framework's defaults alone (LangChain 4000/200 characters, LlamaIndex
1024/200 tokens, chonkie 2048 characters) and compares each with part 1's recommended
setting by ``python -m sweep.check`` (the same paired test). It prints Markdown tables.
"""

from __future__ import annotations

import argparse
import csv
import json
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PRESETS = "token,recursive,sentence,markdown,langchain,langchain_token,llamaindex,chonkie,semchunk"
DEFAULTS = {
    "LangChain RecursiveCharacterTextSplitter() defaults: 4000 chars, 200 overlap": (
        "chunk=langchain",
        "chunk.size=4000",
        "chunk.overlap=200",
    ),
    "LlamaIndex SentenceSplitter() defaults: 1024 tokens, 200 overlap": (
        "chunk=llamaindex",
        "chunk.size=1024",
        "chunk.overlap=200",
    ),
    "chonkie RecursiveChunker() defaults: 2048 characters": (
        "chunk=chonkie",
        "~chunk.splitter.tokenizer",
        "chunk.size=2048",
    ),
}


def sweep(out: Path, *overrides: str) -> Path:
    cmd = [
        sys.executable,
        "-m",
        "sweep",
        f"hydra.sweep.dir={out}",
        "runtime.show_progress=false",
        *overrides,
    ]
    proc = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True)
    if proc.returncode != 0:
        sys.exit(f"sweep failed ({' '.join(overrides)}):\n{proc.stderr[-2000:]}")
    return out


def rows(out: Path) -> list[dict]:
    with open(out / "results.csv", newline="", encoding="utf-8") as f:
        return list(csv.DictReader(f))


def pct(value: str) -> str:
    return "–" if value in ("", "None") else f"{100 * float(value):.0f}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--out", type=Path, help="where the sweeps go (default: a temporary folder)"
    )
    args = parser.parse_args()
    base = args.out or Path(tempfile.mkdtemp(prefix="deployed-"))
    grid = sweep(base / "presets", f"chunk={PRESETS}")
    print(
        "| chunker | setting | span recall@5 [95% CI] | vs best | @1024t | tok@5 | trunc % | "
        "mid-sentence % | tiny % | tables/code cut % |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|")
    for r in rows(grid):
        print(
            f"| {r['chunk']} | {r['chunk.strategy'].rsplit('.', 1)[-1]} "
            f"{r['chunk.size']}/{r['chunk.overlap']} | {float(r['span.recall@5']):.3f} "
            f"[{float(r['span.recall@5.lo']):.2f}, {float(r['span.recall@5.hi']):.2f}] | "
            f"{r['vs_best']} | {float(r['span.recall@1024t']):.3f} | {float(r['tokens@5']):.0f} | "
            f"{pct(r['truncated_share'])} | "
            f"{pct(r['midsentence_share'])} | {pct(r['tiny_share'])} | "
            f"{pct(r['blocks_cut_share'])} |"
        )
    print()
    print("| framework defaults | span recall@5 | against the pick | @1024t | tok@5 | trunc % |")
    print("|---|---|---|---|---|---|")
    for n, (label, overrides) in enumerate(DEFAULTS.items()):
        out = sweep(base / f"default-{n}", *overrides)
        check = subprocess.run(
            [sys.executable, "-m", "sweep.check", str(out), "--baseline", str(grid), "--json"],
            cwd=ROOT,
            capture_output=True,
            text=True,
        )
        verdict = json.loads(check.stdout)
        (r,) = rows(out)
        p = verdict["p_value"]
        shown = "< 0.001" if p < 0.001 else f"= {p:.3f}"
        print(
            f"| {label} | {float(r['span.recall@5']):.3f} | {verdict['diff']:+.3f}, p {shown} "
            f"({verdict['result']}) | {float(r['span.recall@1024t']):.3f} | "
            f"{float(r['tokens@5']):.0f} | {pct(r['truncated_share'])} |"
        )
    print(f"\nsweeps in {base}")


if __name__ == "__main__":
    main()
