"""What finding a framework's chunks in their document costs, next to the splitting itself.

    python bench/locate_speed.py [--repeats 5]

For ``chunk=langchain|...`` sweep calls the framework's splitter and then locates every
returned text in the document (``sweep.chunking.locate``). This times both on the same
texts in the same run and prints the medians and locate/split, for:

- the bundled corpus (43 documents) with LangChain's RecursiveCharacterTextSplitter 800/200;
- one 1.1 MB document of the corpus's prose, as returned and with each chunk's whitespace
  collapsed (a splitter that joins lines: every chunk is found by its words);
- 200 KB of one repeated line (every chunk's text occurs thousands of times), and prose
  around 8,000 identical table rows;
- LangChain's TokenTextSplitter at 32 tokens over text with accents, CJK and emoji (the
  splitter cuts characters in half).

Locating should stay a fraction of splitting and grow with the document, not its square.
"""

from __future__ import annotations

import argparse
import re
import statistics
import time
from pathlib import Path

from langchain_text_splitters import RecursiveCharacterTextSplitter, TokenTextSplitter

from sweep.chunking.locate import locate_pieces

ROOT = Path(__file__).resolve().parent.parent


def _median_seconds(call, repeats: int) -> tuple[float, object]:
    times, result = [], None
    for _ in range(repeats):
        start = time.perf_counter()
        result = call()
        times.append(time.perf_counter() - start)
    return statistics.median(times), result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()

    corpus = [
        p.read_text(encoding="utf-8")
        for p in sorted((ROOT / "corpora" / "kestrel" / "docs").rglob("*.md"))
    ]
    prose = "\n\n".join(corpus)
    big = (prose + "\n\n") * (1_100_000 // len(prose) + 1)
    recursive = RecursiveCharacterTextSplitter(chunk_size=800, chunk_overlap=200)
    tokens = TokenTextSplitter(encoding_name="cl100k_base", chunk_size=32, chunk_overlap=8)
    table = prose[:20000] + "\n\n| a | b |\n|---|---|\n" + "| x | 1 |\n" * 8000 + prose[-20000:]
    mixed = "Ünïcödé façade — naïve café 日本語のテキストです。 emoji 🎉🎊 " * 2000

    def collapsed(text: str) -> list[str]:
        return [re.sub(r"\s+", " ", p) for p in recursive.split_text(text)]

    cases = [
        ("bundled corpus, 43 documents", corpus, recursive.split_text),
        ("1.1 MB document", [big], recursive.split_text),
        ("1.1 MB, whitespace collapsed", [big], collapsed),
        (
            "200 KB of one repeated line",
            ["same line\n" * 20000],
            RecursiveCharacterTextSplitter(chunk_size=1000, chunk_overlap=200).split_text,
        ),
        ("prose and 8,000 identical rows", [table], recursive.split_text),
        ("token 32 over accents/CJK/emoji", [mixed], tokens.split_text),
    ]
    print("| text | chunks | split ms | locate ms | locate/split | placed |")
    print("|---|---|---|---|---|---|")
    for name, texts, split in cases:
        pieces = [split(t) for t in texts]
        split_s, _ = _median_seconds(lambda: [split(t) for t in texts], args.repeats)
        locate_s, located = _median_seconds(
            lambda: [locate_pieces(t, p) for t, p in zip(texts, pieces)], args.repeats
        )
        n = sum(len(p) for p in pieces)
        placed = sum(len(x.spans) for x in located)
        print(
            f"| {name} | {n} | {1000 * split_s:.1f} | {1000 * locate_s:.1f} | "
            f"{locate_s / split_s:.2f} | {placed}/{n} |"
        )


if __name__ == "__main__":
    main()
