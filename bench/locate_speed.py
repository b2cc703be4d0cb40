"""What finding a framework's chunks in their document costs, next to the splitting itself,
and what finding the quotes of a dataset's evidence costs.

    python bench/locate_speed.py [--repeats 5] [--only chunks|quotes]

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

A second table times the quote locator (``sweep.datasets.quotes``, what ``sweep.validate``
and the loader run on every ``{"doc_id", "quote"}``): one index per document of the bundled
corpus and 20 passages of each, located as they are (exact), with their line breaks
collapsed and their case changed (normalised), and with one character changed (fuzzy 0.8,
or not found without it); the same for Japanese rules hard-wrapped as a PDF reader returns
them, quoted without the line breaks, with half-width katakana, and with a character
changed. The passages are drawn with a fixed seed, so two checkouts time the same work.
"""

from __future__ import annotations

import argparse
import random
import re
import statistics
import time
from collections import Counter
from pathlib import Path

from langchain_text_splitters import RecursiveCharacterTextSplitter, TokenTextSplitter

from sweep.chunking.locate import locate_pieces
from sweep.datasets.quotes import QuoteIndex

ROOT = Path(__file__).resolve().parent.parent


def _median_seconds(call, repeats: int) -> tuple[float, object]:
    times, result = [], None
    for _ in range(repeats):
        start = time.perf_counter()
        result = call()
        times.append(time.perf_counter() - start)
    return statistics.median(times), result


# Japanese travel rules; repeated with their article numbers changed, so passages differ.
RULES_JA = (
    "第{n}条（出張の申請）出張する社員は、出張の5営業日前までに出張申請書を所属長に提出し、"
    "承認を得なければならない。緊急の場合は、事後速やかに申請することができる。"
    "交通費は、最も経済的な経路および方法により計算した実費を支給する。"
    "宿泊費は、1泊につき{yen},000円を上限として実費を支給する。"
    "社員は、社内システムのパスワードを{days}日ごとに変更しなければならない。\n"
)
HALF_WIDTH = str.maketrans({"パ": "ﾊﾟ", "ス": "ｽ", "ワ": "ﾜ", "ー": "ｰ", "ド": "ﾄﾞ"})


def _passages(text: str, rng: random.Random, n: int, size: tuple[int, int]) -> list[str]:
    out = []
    for _ in range(n):
        start = rng.randrange(max(1, len(text) - size[1]))
        out.append(text[start : start + rng.randrange(*size)])
    return out


def _changed(passage: str, rng: random.Random, letter: str) -> str:
    at = rng.randrange(len(passage))
    return passage[:at] + letter + passage[at + 1 :]


def quote_cases(corpus: list[str]) -> list[tuple[str, list[tuple[str, list[str]]], float | None]]:
    """(name, [(text, quotes)], fuzzy) for each case the quote table times."""
    rng = random.Random(44)
    english = [(text, _passages(text, rng, 20, (40, 300))) for text in corpus]
    wrapped = "\n".join(
        "".join(RULES_JA.format(n=n, yen=8 + n % 9, days=30 * (1 + n % 4)) for n in range(1, 61))[
            i : i + 38
        ]
        for i in range(0, 60 * len(RULES_JA), 38)
    )
    flat = wrapped.replace("\n", "")
    japanese = [(wrapped, _passages(flat, rng, 100, (20, 120)))]
    return [
        ("bundled corpus, exact", english, None),
        (
            "bundled corpus, normalised",
            [(t, [" ".join(q.split()).upper() for q in qs]) for t, qs in english],
            None,
        ),
        (
            "bundled corpus, one letter changed",
            [(t, [_changed(q, rng, "q") for q in qs]) for t, qs in english],
            None,
        ),
        (
            "bundled corpus, one letter changed, fuzzy",
            [(t, [_changed(q, rng, "q") for q in qs]) for t, qs in english],
            0.8,
        ),
        ("Japanese, hard-wrapped, quoted unwrapped", japanese, None),
        (
            "Japanese, half-width katakana",
            [(t, [q.translate(HALF_WIDTH) for q in qs]) for t, qs in japanese],
            None,
        ),
        (
            "Japanese, one character changed, fuzzy",
            [(t, [_changed(q, rng, "変") for q in qs]) for t, qs in japanese],
            0.8,
        ),
    ]


def time_quotes(corpus: list[str], repeats: int) -> None:
    print("| quotes | n | ms | exact / normalised / fuzzy / not located |")
    print("|---|---|---|---|")
    for name, cases, fuzzy in quote_cases(corpus):

        def run(cases=cases, fuzzy=fuzzy) -> Counter[str]:
            found: Counter[str] = Counter()
            for text, quotes in cases:
                index = QuoteIndex(text)
                for quote in quotes:
                    result = index.locate(quote, fuzzy=fuzzy, occurrence=1)
                    found[result.how if result else "not"] += 1
            return found

        seconds, found = _median_seconds(run, repeats)
        n = sum(len(q) for _, q in cases)
        hows = " / ".join(str(found[h]) for h in ("exact", "normalised", "fuzzy", "not"))
        print(f"| {name} | {n} | {1000 * seconds:.1f} | {hows} |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--only", choices=("chunks", "quotes"))
    args = parser.parse_args()

    corpus = [
        p.read_text(encoding="utf-8")
        for p in sorted((ROOT / "corpora" / "kestrel" / "docs").rglob("*.md"))
    ]
    if args.only != "chunks":
        time_quotes(corpus, args.repeats)
        if args.only == "quotes":
            return
        print()
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
