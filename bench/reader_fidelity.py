"""Does a parsed rendering retrieve like the original? Span recall of the same documents
as PDF/HTML/DOCX (``corpora/documents``) against the same documents as Markdown.

    python bench/reader_fidelity.py [--sizes 128,256] [--readers pdf=pypdf,pdf=pdfplumber,html=markitdown]
    python bench/reader_fidelity.py --pages

``--pages`` instead reads one manual rendered as each documentation generator writes
its pages (Sphinx, DocBook, Texinfo 6 and 7, MkDocs, Docusaurus, a plain page:
``tests/generator_pages.py``) with every HTML reader, and prints, per page and reader,
how many words of the main text a browser shows are missing from the reader's text
(token multiset recall), how many are out of order (the expected words less the
longest common subsequence of the two word sequences, less the missing ones), whether
navigation leaked in, and whether the title is the page's. It takes a second.

The baseline, run in the same invocation: the bundled corpus's own Markdown files
of the 14 documents the example was rendered from, with the same questions and
the same quotes, located in the Markdown (fuzzily where the Markdown has markup the
quote lost), so both arms score the same evidence.
Then the example folder with the default readers, and once per extra reader
given. Every arm is a real ``python -m sweep`` over the same chunk sizes, with the
same embedding cache, and the bench prints span recall@5 per arm and size, the
difference to Markdown with the paired randomization test's p-value over the same
questions (the test sweep uses for ``vs best``), and how the quotes were located.
"""

from __future__ import annotations

import argparse
import csv
import json
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

from sweep.decision.significance import paired_randomization_test

ROOT = Path(__file__).resolve().parent.parent
EXAMPLE = ROOT / "src" / "sweep" / "corpora" / "documents"
KESTREL = ROOT / "src" / "sweep" / "corpora" / "kestrel"
#: Markdown keeps the markup the renderings dropped (``**€15**``); such quotes are found fuzzily.
FUZZY = 0.8


def markdown_baseline(folder: Path) -> Path:
    """The example's documents as their Markdown originals, with the original offsets."""
    # Questions whose evidence is a PDF page have no page in Markdown: the comparison is
    # over the quote questions (the arms' means are over the questions both scored).
    example = [
        q
        for q in (
            json.loads(line)
            for line in (EXAMPLE / "queries.jsonl").read_text("utf-8").splitlines()
            if line
        )
        if all("quote" in j for j in q["relevant"])
    ]
    docs = {
        Path(p).with_suffix(".md").as_posix()
        for p in (
            p.relative_to(EXAMPLE / "docs").as_posix()
            for p in (EXAMPLE / "docs").rglob("*")
            if p.is_file()
        )
    }
    for doc in docs:
        target = folder / "docs" / doc
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(KESTREL / "docs" / doc, target)
    # The same quotes, located in the Markdown (markup and all: fuzzily where a quote has
    # lost a **bold** or a link target), so both arms score the same evidence.
    for q in example:
        for j in q["relevant"]:
            j["doc_id"] = Path(j["doc_id"]).with_suffix(".md").as_posix()
    (folder / "queries.jsonl").write_text(
        "".join(json.dumps(q, ensure_ascii=False) + "\n" for q in example), encoding="utf-8"
    )
    return folder


#: An arm's span recall@5 per chunk size: size -> {query_id: value}.
Scores = dict[str, dict[str, float]]


def sweep(dataset: Path, sizes: str, out: Path, cache: Path, *extra: str) -> Scores:
    cmd = [
        sys.executable,
        "-m",
        "sweep",
        f"dataset.path={dataset}",
        f"chunk.size={sizes}",
        "chunk.overlap=0",
        f"hydra.sweep.dir={out}",
        f"runtime.cache_dir={cache}",
        "runtime.show_progress=false",
        "eval.n_boot=200",
        *extra,
    ]
    proc = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True)
    if proc.returncode != 0:
        raise SystemExit(f"sweep failed ({' '.join(extra) or 'defaults'}): {proc.stderr[-2000:]}")
    with open(out / "results.csv", newline="", encoding="utf-8") as f:
        size_of = {r["job"]: r["chunk.size"] for r in csv.DictReader(f)}
    scores: Scores = {size: {} for size in size_of.values()}
    with open(out / "per_query.csv", newline="", encoding="utf-8") as f:
        for r in csv.DictReader(f):
            if r["level"] == "span" and r["metric"] == "recall@5" and r["value"] != "":
                scores[size_of[r["job"]]][r["query_id"]] = float(r["value"])
    return scores


def versus(scores: dict[str, float], base: dict[str, float]) -> tuple[float, float, float]:
    """(mean, mean difference to the baseline, paired p-value) over the questions both scored."""
    ids = sorted(base.keys() & scores.keys())
    a = np.array([scores[i] for i in ids])
    b = np.array([base[i] for i in ids])
    return float(a.mean()), float((a - b).mean()), paired_randomization_test(a, b)


def located(dataset: Path, *reader: str, fuzzy: float | None = None) -> str:
    cmd = [
        sys.executable,
        "-m",
        "sweep.validate",
        str(dataset),
        *(a for r in reader for a in ("--reader", r)),
        *(["--fuzzy", str(fuzzy)] if fuzzy else []),
    ]
    proc = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True)
    lines = [line for line in proc.stdout.splitlines() if line.startswith("quotes:")]
    return lines[0] if lines else (proc.stderr.splitlines() or ["?"])[-1][:100]


def pages() -> None:
    """The generator pages' table (see the module)."""
    sys.path.insert(0, str(ROOT / "tests"))
    from generator_pages import GENERATORS, NAVIGATION, fidelity
    from sweep.datasets.readers.registry import READERS

    print(
        f"{'page':<11} {'reader':<12} {'words':>5} {'missing':>7} {'moved':>5} {'recall':>6} "
        f"{'LCS ratio':>9}  navigation  title"
    )
    for name, build in GENERATORS.items():
        page = build()
        for reader_name, make in READERS["html"].items():
            extracted = make().read(page.html.encode("utf-8"), f"{name}.html")
            recall, order = fidelity(page.main_words, extracted.text)
            n = len(page.main_words)
            missing, moved = round(n * (1 - recall)), round(n * (recall - order))
            leaked = ",".join(w for w in NAVIGATION if w in extracted.text) or "-"
            title = "ok" if extracted.title == page.title else repr(extracted.title)
            print(
                f"{name:<11} {reader_name:<12} {n:>5} {missing:>7} {moved:>5} {recall:>6.3f} {order:>9.3f}"
                f"  {leaked:<10}  {title}"
            )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", default="128,256")
    ap.add_argument(
        "--readers",
        default="pdf=pdfplumber,html=markitdown",
        help="extra arms: FORMAT=READER, comma-separated",
    )
    ap.add_argument(
        "--pages",
        action="store_true",
        help="only read documentation generators' pages with every HTML reader (a second)",
    )
    args = ap.parse_args()
    if args.pages:
        pages()
        return
    sizes = args.sizes.split(",")
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        cache = tmp / "cache"
        baseline = markdown_baseline(tmp / "markdown")
        arms = {
            "markdown (baseline)": sweep(
                baseline, args.sizes, tmp / "s0", cache, f"dataset.fuzzy={FUZZY}"
            )
        }
        notes = {"markdown (baseline)": located(baseline, fuzzy=FUZZY)}
        choices = [("defaults", ())] + [(r, (r,)) for r in args.readers.split(",") if r]
        for i, (name, reader) in enumerate(choices, 1):
            extra = [f"dataset.reader.{r.split('=')[0]}={r.split('=')[1]}" for r in reader]
            arms[name] = sweep(EXAMPLE, args.sizes, tmp / f"s{i}", cache, *extra)
            notes[name] = located(EXAMPLE, *reader)
    base = arms["markdown (baseline)"]
    n = len(next(iter(base.values())))
    print(
        f"span recall@5 over {n} answerable questions; Δ md: the mean paired difference to the "
        f"Markdown arm, p: its paired randomization test (two-sided, 10,000 sign flips)\n"
    )
    print(f"{'arm':<22}" + "".join(f"  R@5 {s:>4}  Δ md       p" for s in sizes) + "  quotes")
    for name, scores in arms.items():
        cells = ""
        for s in sizes:
            if scores is base:
                cells += f"  {statistics.fmean(base[s].values()):8.3f}  {'':6}  {'':6}"
            else:
                mean, diff, p = versus(scores[s], base[s])
                cells += f"  {mean:8.3f}  {diff:+.3f}  {p:6.3f}"
        print(f"{name:<22}{cells}  {notes[name]}")


if __name__ == "__main__":
    main()
