"""What each BM25 analyzer finds and what it costs, per language.

In one run:
  1. quality: BM25 (sweep's BM25Retriever, k1=1.5, b=0.75) over the Japanese and
     Russian company rules of tests/retrieval/test_languages_bm25.py (one paragraph per
     chunk), recall@1/@3/@5 and MRR of the answering paragraph, for each analyzer and
     each choice inside one (Sudachi's split mode A or C, particles and punctuation
     kept or left out; Russian stems or pymorphy3 lemmas);
  2. speed: documents and characters per second of each analyzer (the per-process
     memo emptied before each round, dictionaries loaded beforehand; medians of
     --repeats), on those paragraphs joined ten at a time into ~500-character
     documents, and on a few Chinese paragraphs for jieba and rjieba (and whether
     the two cut them the same).

The report starts with the CPU and its instruction sets. The machine is shared:
compare numbers measured in the same run.

    python bench/analyzers.py [--repeats 5]
"""

from __future__ import annotations

import argparse
import importlib.util
import statistics
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))
sys.path.insert(0, str(ROOT / "bench"))

from embed_speed import cpu_line  # noqa: E402

from sweep.core.text import analyzers  # noqa: E402
from sweep.core.text.analyzers import Analyzer  # noqa: E402
from sweep.core.types import Chunk  # noqa: E402
from sweep.retrieval.lexical import BM25Retriever  # noqa: E402


def _corpora():
    path = ROOT / "tests" / "retrieval" / "test_languages_bm25.py"
    spec = importlib.util.spec_from_file_location("language_corpora", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


ZH = [
    "员工出差报销需要在返回后十四天内提交申请，并附上发票和行程单。",
    "年假根据工龄计算，工作满一年不满十年的，年休假五天。",
    "采购金额超过十万元的，需要取得两家以上供应商的报价，并经采购部审核。",
    "密码长度不少于十二位，必须包含大写字母、小写字母、数字和特殊符号。",
    "在家办公每周不超过两天，需提前一天在考勤系统中申请。",
    "笔记本电脑丢失后，应立即向信息系统部和直属上级报告。",
]

JA_VARIANTS = {
    "english (sweep before)": dict(name="english"),
    "simple (\\w+)": dict(name="simple"),
    "bigram": dict(name="bigram"),
    "sudachi C, POS filter": dict(name="sudachi", sudachi_mode="C"),
    "sudachi C, all words": dict(name="sudachi", sudachi_mode="C", japanese_pos_filter=False),
    "sudachi A, POS filter": dict(name="sudachi", sudachi_mode="A"),
    "sudachi A, all words": dict(name="sudachi", sudachi_mode="A", japanese_pos_filter=False),
    "sudachi B, POS filter": dict(name="sudachi", sudachi_mode="B"),
    "sudachi C+A parts, POS filter (default)": dict(name="sudachi"),
    "sudachi C+A parts, all words": dict(name="sudachi", japanese_pos_filter=False),
    "mecab, POS filter": dict(name="mecab"),
    "mecab, all words": dict(name="mecab", japanese_pos_filter=False),
}
RU_VARIANTS = {
    "english (sweep before)": dict(name="english"),
    "bigram": dict(name="bigram"),
    "russian, Snowball stems": dict(name="russian"),
    "russian, pymorphy3 lemmas": dict(name="russian", russian="lemmas"),
}


def _retriever(options: dict) -> BM25Retriever:
    options = dict(options)
    retriever = BM25Retriever(analyzer=options.pop("name"))
    if options:  # a choice inside an analyzer: not a setting, so set on its analyzer
        tok = retriever.tokenize
        tok.analyzer = Analyzer(tok.analyzer.name, **options)
    return retriever


def quality(corpus, questions, variants) -> list[str]:
    chunks = [Chunk("d", i, 0, len(t), t, len(t)) for i, t in enumerate(corpus)]
    queries, answers = [q for q, _ in questions], [a for _, a in questions]
    lines = ["| analyzer | recall@1 | recall@3 | recall@5 | MRR |", "|---|---|---|---|---|"]
    for label, options in variants.items():
        retriever = _retriever(options)
        retriever.index(chunks)
        ids = retriever.retrieve(queries, None, len(corpus)).ids
        ranks = [int(np.flatnonzero(row == a)[0]) + 1 for row, a in zip(ids, answers)]
        at = [np.mean([r <= k for r in ranks]) for k in (1, 3, 5)]
        mrr = np.mean([1 / r for r in ranks])
        lines.append(f"| {label} | {at[0]:.3f} | {at[1]:.3f} | {at[2]:.3f} | {mrr:.3f} |")
    return lines


def speed(docs: list[str], analyzer: Analyzer, prior: str, repeats: int) -> tuple[float, float]:
    """Median documents/s and characters/s, the memo emptied before each round."""
    analyzer(docs[0], prior)  # loads the dictionary
    rates = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        for d in docs:
            analyzers._TERMS_MEMO.clear()  # each text read afresh
            analyzer(d, prior)
        rates.append(time.perf_counter() - t0)
    seconds = statistics.median(rates)
    return len(docs) / seconds, sum(map(len, docs)) / seconds


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    corpora = _corpora()
    print(cpu_line())
    print("\n## Japanese: which paragraph answers (31 paragraphs, 12 questions)\n")
    print("\n".join(quality(corpora.JA_CORPUS, corpora.JA_QUESTIONS, JA_VARIANTS)))
    print("\n## Russian (12 paragraphs, 8 questions)\n")
    print("\n".join(quality(corpora.RU_CORPUS, corpora.RU_QUESTIONS, RU_VARIANTS)))

    ja = ["".join(corpora.JA_CORPUS[i : i + 10]) for i in range(0, len(corpora.JA_CORPUS), 10)]
    ja = ja * 20
    ru = [" ".join(corpora.RU_CORPUS)] * 40
    en = [
        "Travel expenses are approved by the manager within ten days of the trip. "
        "The meal allowance is 45 euros per day for travel inside the EU, and rail "
        "travel is preferred over flights for trips under 500 km. " * 3
    ] * 60
    zh = ["".join(ZH)] * 60
    print(f"\n## Speed (median of {args.repeats} rounds, memo emptied each round)\n")
    print("| analyzer | text | documents/s | characters/s |\n|---|---|---|---|")
    cases = [
        ("english", "en", en, Analyzer("english")),
        ("auto on English", "en", en, Analyzer("auto")),
        ("sudachi C", "ja", ja, Analyzer("sudachi", sudachi_mode="C")),
        ("sudachi A", "ja", ja, Analyzer("sudachi", sudachi_mode="A")),
        ("sudachi C+A parts (default)", "ja", ja, Analyzer("sudachi")),
        ("auto on Japanese", "ja", ja, Analyzer("auto")),
        ("mecab", "ja", ja, Analyzer("mecab")),
        ("bigram", "ja", ja, Analyzer("bigram")),
        ("jieba", "zh", zh, Analyzer("jieba")),
        ("russian (Snowball)", "ru", ru, Analyzer("russian")),
        ("russian (pymorphy3)", "ru", ru, Analyzer("russian", russian="lemmas")),
    ]
    for label, lang, docs, analyzer in cases:
        per_doc, per_char = speed(docs, analyzer, lang, args.repeats)
        print(f"| {label} | {lang}, {len(docs[0])} chars | {per_doc:,.0f} | {per_char:,.0f} |")
    cutters = {}
    try:
        import jieba

        jieba.setLogLevel(40)  # its dictionary load prints three lines
        cutters["jieba (cut only)"] = jieba.lcut
    except ImportError:
        pass
    try:
        import rjieba

        cutters["rjieba (cut only)"] = rjieba.cut
    except ImportError:
        pass
    for label, cut in cutters.items():
        cut(zh[0])
        rates = []
        for _ in range(args.repeats):
            t0 = time.perf_counter()
            for d in zh:
                cut(d)
            rates.append(time.perf_counter() - t0)
        s = statistics.median(rates)
        print(
            f"| {label} | zh, {len(zh[0])} chars | {len(zh) / s:,.0f} | "
            f"{sum(map(len, zh)) / s:,.0f} |"
        )
    if len(cutters) == 2:
        same = sum(jieba.lcut(p) == rjieba.cut(p) for p in ZH)
        print(f"\njieba and rjieba cut {same} of {len(ZH)} Chinese paragraphs the same")


if __name__ == "__main__":
    main()
