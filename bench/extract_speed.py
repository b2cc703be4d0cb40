"""Extraction throughput and quality of every document reader, next to plain text.

    python bench/extract_speed.py [--docs DIR] [--repeats 3] [--limit N] [--html-quality]
    python bench/extract_speed.py --example [--repeats 5]

Renders the Markdown documents of the bundled corpus (corpora/kestrel/docs) as
the files users have, with the builders the tests use (tests/documents.py):
PDF (fpdf2: wrapped and hyphenated lines, a running header and page numbers on
every page), HTML (the content inside a site's navigation, cookie banner,
sidebar, footer, script and style) and DOCX (python-docx: heading styles, lists,
tables). Then reads every file with every reader of its format and prints, per
reader: the MB of files read, the median seconds over the repeats, s/MB, and
how many times the plain-text reader's time on the same documents' Markdown (the
baseline, measured in the same run) it took. A second table gives what each
reader kept: the share of body sentences found verbatim, of headings found as
``#`` lines, and what leaked (running headers and page numbers, site
boilerplate).

``--example`` times the files of the bundled ``corpora/documents`` folder as they
are (the PDFs, web pages and Word files a sweep of it reads) with every reader of
their format, against the plain-text reader on the same documents' Markdown
originals, and says how many of the folder's quotes each reader's text locates
exactly, after normalising, fuzzily or not at all.

``--html-quality`` adds the comparison the HTML reader was chosen by:
trafilatura in several modes, markitdown and html2text on whole pages (html2text
only if installed; it is GPL-licensed and not a dependency), and both sweep
readers, on pages with semantic markup and on pages of bare ``<div>``s.
"""

from __future__ import annotations

import argparse
import io
import json
import re
import statistics
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path

from sweep.datasets.quotes import locate
from sweep.datasets.readers.base import Extracted, Reader
from sweep.datasets.readers.plain import PlainTextReader
from sweep.datasets.readers.registry import READERS, format_of, reader_for

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_DOCS = ROOT / "corpora" / "kestrel" / "docs"
EXAMPLE = ROOT / "corpora" / "documents"
# The file builders live with the tests, which write the same kinds of files.
sys.path.insert(0, str(ROOT / "tests"))

from documents import (  # noqa: E402
    BOILERPLATE,
    parse_markdown,
    plain_inline,
    render_html,
    sentences,
    write_docx,
    write_pdf,
)

HEADER = "Kestrel Labs — Internal documentation"


def load_markdown(folder: Path, limit: int | None) -> list[tuple[str, str]]:
    files = sorted(folder.rglob("*.md"))[:limit]
    return [(str(p.relative_to(folder)), p.read_text(encoding="utf-8")) for p in files]


def render(docs: list[tuple[str, str]], folder: Path) -> dict[str, list[tuple[Path, str]]]:
    """Each document written as every format: format -> [(file, its Markdown source)]."""
    out: dict[str, list[tuple[Path, str]]] = {"text": [], "pdf": [], "html": [], "docx": []}
    for i, (name, markdown) in enumerate(docs):
        stem = f"{i:03d}-{Path(name).stem}"
        title = next((b.text for b in parse_markdown(markdown) if b.kind == "heading"), stem)
        text = folder / f"{stem}.md"
        text.write_text(markdown, encoding="utf-8")
        html = folder / f"{stem}.html"
        html.write_text(render_html(title, markdown), encoding="utf-8")
        out["text"].append((text, markdown))
        out["pdf"].append(
            (write_pdf(folder / f"{stem}.pdf", markdown, header=HEADER, hyphenate=True), markdown)
        )
        out["html"].append((html, markdown))
        out["docx"].append((write_docx(folder / f"{stem}.docx", markdown), markdown))
    return out


def median_seconds(run: Callable[[], object], repeats: int) -> tuple[float, object]:
    times, result = [], None
    for _ in range(repeats):
        t0 = time.perf_counter()
        result = run()
        times.append(time.perf_counter() - t0)
    return statistics.median(times), result


def read_all(reader: Reader, files: list[tuple[Path, str]]) -> list[Extracted]:
    return [reader.read(data, path.name) for path, data in ((p, p.read_bytes()) for p, _ in files)]


def quality(
    fmt: str, extracted: list[Extracted], files: list[tuple[Path, str]]
) -> tuple[float, float, float]:
    """(share of body sentences verbatim, of headings as # lines, of boilerplate leaked)."""
    kept = total = heads = heads_total = leak = leak_total = 0
    for result, (_, markdown) in zip(extracted, files):
        expected = sentences(markdown)
        kept += sum(s in result.text for s in expected)
        total += len(expected)
        titles = [plain_inline(b.text) for b in parse_markdown(markdown) if b.kind == "heading"]
        marked = {
            line.lstrip("#").strip() for line in result.text.splitlines() if line.startswith("#")
        }
        heads += sum(t in marked for t in titles)
        heads_total += len(titles)
        body = " ".join(plain_inline(markdown).split())
        if fmt == "pdf":
            furniture = [HEADER] + [f"Page {n} of" for n in range(1, 40)]
            leak += sum(result.text.count(f) for f in furniture)
            leak_total += len(result.pages) * 2
        elif fmt == "html":
            snippets = [s for group in BOILERPLATE.values() for s in group if s not in body]
            leak += sum(s in result.text for s in snippets)
            leak_total += len(snippets)
    return (
        kept / max(total, 1),
        heads / max(heads_total, 1),
        leak / leak_total if leak_total else 0.0,
    )


def html_quality(docs: list[tuple[str, str]]) -> None:
    import trafilatura
    from markitdown import MarkItDown

    from sweep.datasets.readers.html import HtmlReader, MarkitdownHtmlReader

    converter = MarkItDown(enable_plugins=False)

    def traf(**options: object) -> Callable[[str], str]:
        return lambda html: (
            trafilatura.extract(html, output_format="markdown", include_tables=True, **options)
            or ""
        )

    candidates: dict[str, Callable[[str], str]] = {
        "sweep html=trafilatura": lambda html: HtmlReader().read(html.encode(), "p.html").text,
        "sweep html=markitdown": lambda html: (
            MarkitdownHtmlReader().read(html.encode(), "p.html").text
        ),
        "trafilatura fmt+recall": traf(include_formatting=True, favor_recall=True),
        "trafilatura fmt": traf(include_formatting=True),
        "trafilatura fmt+precision": traf(include_formatting=True, favor_precision=True),
        "trafilatura nofmt+recall": traf(include_formatting=False, favor_recall=True),
        "markitdown (whole page)": lambda html: (
            converter.convert_stream(io.BytesIO(html.encode()), file_extension=".html").markdown
        ),
    }
    try:
        import html2text

        def h2t(html: str) -> str:
            h = html2text.HTML2Text()
            h.body_width, h.ignore_links, h.ignore_images = 0, True, True
            return h.handle(html)

        candidates["html2text (whole page)"] = h2t
    except ImportError:
        pass

    def normal(text: str) -> str:
        text = re.sub(r"\\([\\`*_{}\[\]()#+\-.!|>~<])", r"\1", text)
        return " ".join(text.replace("**", "").replace("`", "").split())

    pages = list(docs) + [
        (
            "short",
            (
                "# Parking at the Lisbon office\n\nThe garage under the building has twelve spaces "
                "for visitors. Book one through reception a day ahead."
            ),
        ),
        (
            "list-only",
            (
                "# Checklist before a site visit\n\n- Charge the handheld meter.\n- Pack the "
                "spare inlet caps.\n- Print the site access letter."
            ),
        ),
        ("tiny", "# Holiday closure\n\nThe office is closed from 24 December to 1 January."),
    ]
    snippets = [s for group in BOILERPLATE.values() for s in group] + ["Kestrel Labs"]
    for semantic in (True, False):
        label = (
            "semantic markup (nav, aside, footer, classes)"
            if semantic
            else "bare <div>s, no class or id"
        )
        print(f"\nHTML extractors, {len(pages)} pages, {label}:")
        header = (
            f"{'extractor':28} {'boilerplate leaked':>18} {'sentences kept':>14} {'(raw)':>7} "
            f"{'headings #':>10} {'table rows':>10} {'ms/page':>8}"
        )
        print(header + "\n" + "-" * len(header))
        for name, extract in candidates.items():
            leak = leak_n = kept = kept_raw = n = heads = heads_n = rows = rows_n = 0
            times = []
            for _, markdown in pages:
                blocks = parse_markdown(markdown)
                title = next((b.text for b in blocks if b.kind == "heading"), "page")
                html = render_html(title, markdown, semantic=semantic)
                t0 = time.perf_counter()
                out = extract(html)
                times.append(time.perf_counter() - t0)
                flat, raw = normal(out), " ".join(out.split())
                body = " ".join(plain_inline(markdown).split())
                for s in snippets:
                    if s not in body:
                        leak_n += 1
                        leak += s in flat
                expected = [" ".join(s.split()) for s in sentences(markdown)]
                n += len(expected)
                kept += sum(s in flat for s in expected)
                kept_raw += sum(s in raw for s in expected)
                lines = [normal(line) for line in out.splitlines()]
                for b in blocks:
                    if b.kind == "heading":
                        heads_n += 1
                        heads += any(
                            re.fullmatch(r"#{1,6} " + re.escape(normal(plain_inline(b.text))), line)
                            for line in lines
                        )
                    elif b.kind == "table":
                        for row in b.rows:
                            rows_n += 1
                            cells = [normal(plain_inline(c)) for c in row]
                            rows += any(
                                line.startswith("|") and all(c in line for c in cells)
                                for line in lines
                            )
            print(
                f"{name:28} {leak / leak_n:18.1%} {kept / n:14.1%} {kept_raw / n:7.1%} "
                f"{heads / heads_n:10.1%} {rows / max(rows_n, 1):10.1%} {1000 * statistics.mean(times):8.1f}"
            )
    print(
        "\nsentences kept: body sentences found verbatim once bold markers, code ticks and "
        "Markdown escapes are taken out ((raw): as output)."
    )


def example(repeats: int) -> None:
    """Every reader on the bundled example's own files, next to plain text on their originals."""

    docs = sorted(p for p in (EXAMPLE / "docs").rglob("*") if p.is_file())
    originals = [
        (DEFAULT_DOCS / p.relative_to(EXAMPLE / "docs").with_suffix(".md"), "") for p in docs
    ]
    baseline, _ = median_seconds(lambda: read_all(PlainTextReader(), originals), repeats)
    baseline_mb = sum(p.stat().st_size for p, _ in originals) / 1e6
    quotes: dict[str, list[str]] = {}
    for line in (EXAMPLE / "queries.jsonl").read_text(encoding="utf-8").splitlines():
        for j in json.loads(line)["relevant"] if line else ():
            quotes.setdefault(j["doc_id"], []).append(j["quote"])
    print(
        f"{EXAMPLE.relative_to(ROOT)}: {len(docs)} files; baseline: the text reader on their "
        f"{len(originals)} Markdown originals ({baseline_mb:.2f} MB), {baseline / baseline_mb:.4f} s/MB; "
        f"median of {repeats} repeats\n"
    )
    header = (
        f"{'format':6} {'reader':12} {'files':>5} {'MB read':>8} {'median s':>9} {'s/MB':>8} "
        f"{'x text':>7}   {'exact':>5} {'normalised':>10} {'fuzzy':>5} {'not found':>9}"
    )
    print(header + "\n" + "-" * len(header))
    by_format: dict[str, list[Path]] = {}
    for path in docs:
        by_format.setdefault(format_of(path.name) or "?", []).append(path)
    for fmt, paths in sorted(by_format.items()):
        files = [(p, "") for p in paths]
        mb = sum(p.stat().st_size for p in paths) / 1e6
        for name in READERS[fmt]:
            reader = reader_for(fmt, name)
            read_all(reader, files[:1])  # the parser's imports, a once-per-process cost
            seconds, extracted = median_seconds(lambda r=reader, f=files: read_all(r, f), repeats)
            how = Counter()
            for path, result in zip(paths, extracted):
                for quote in quotes.get(path.relative_to(EXAMPLE / "docs").as_posix(), ()):
                    found = locate(result.text, quote, fuzzy=0.8)
                    how[found.how if found else "not found"] += 1
            print(
                f"{fmt:6} {name:12} {len(paths):5d} {mb:8.3f} {seconds:9.3f} {seconds / mb:8.3f} "
                f"{(seconds / mb) / (baseline / baseline_mb):7.0f}   {how['exact']:5d} "
                f"{how['normalised']:10d} {how['fuzzy']:5d} {how['not found']:9d}"
            )
    print(
        "\ns/MB: median seconds per MB of the files as stored; x text: that per MB over the text "
        "reader's per MB on the Markdown originals (same run). Quotes are located as a sweep with "
        "dataset.fuzzy=0.8 would locate them."
    )


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--docs", type=Path, default=DEFAULT_DOCS)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--limit", type=int, default=None, help="only the first N documents")
    ap.add_argument("--html-quality", action="store_true", help="also compare HTML extractors")
    ap.add_argument(
        "--example",
        action="store_true",
        help="time the bundled corpora/documents files as they are, with every reader",
    )
    args = ap.parse_args(argv)
    if args.example:
        example(args.repeats)
        return 0

    docs = load_markdown(args.docs, args.limit)
    if not docs:
        print(f"no Markdown documents under {args.docs}", file=sys.stderr)
        return 1
    with tempfile.TemporaryDirectory() as tmp:
        t0 = time.perf_counter()
        files = render(docs, Path(tmp))
        print(
            f"corpus: {args.docs}: {len(docs)} documents, rendered as text, PDF, HTML and DOCX "
            f"in {time.perf_counter() - t0:.1f} s; median of {args.repeats} repeats\n"
        )
        rows = []
        baseline, _ = median_seconds(
            lambda: read_all(PlainTextReader(), files["text"]), args.repeats
        )
        for fmt in ("text", "pdf", "html", "docx"):
            mb = sum(p.stat().st_size for p, _ in files[fmt]) / 1e6
            for name in READERS[fmt]:
                reader = reader_for(fmt, name)
                t0 = time.perf_counter()
                read_all(reader, files[fmt][:1])  # imports the parser: a once-per-process cost
                first = time.perf_counter() - t0
                seconds, extracted = median_seconds(
                    lambda r=reader, f=fmt: read_all(r, files[f]), args.repeats
                )
                rows.append(
                    (
                        fmt,
                        name,
                        mb,
                        first,
                        seconds,
                        quality(fmt, extracted, files[fmt]),
                        sum(len(e.pages) for e in extracted),
                    )
                )

    header = (
        f"{'format':6} {'reader':12} {'MB read':>8} {'1st file s':>10} {'median s':>9} {'s/MB':>8} "
        f"{'x text':>8}   {'sentences':>9} {'headings':>8} {'leaked':>7} {'pages':>6}"
    )
    print(header + "\n" + "-" * len(header))
    for fmt, name, mb, first, seconds, (kept, heads, leaked), pages in rows:
        quality_columns = (
            f"{kept:9.1%} {heads:8.1%} {leaked:7.1%}"
            if fmt != "text"
            else f"{'-':>9} {'-':>8} {'-':>7}"
        )
        print(
            f"{fmt:6} {name:12} {mb:8.2f} {first:10.2f} {seconds:9.3f} {seconds / mb:8.3f} "
            f"{seconds / baseline:8.0f}   {quality_columns} {pages:6d}"
        )
    print(
        "\n1st file s: reading one file in a fresh process, parser imports included (not in the "
        "median). x text: median / the text reader's median on the same documents' Markdown (same "
        "run). sentences: body sentences found verbatim; headings: found as '#' lines (pypdf "
        "makes none); leaked: PDF running headers and page numbers per page edge, HTML "
        "boilerplate snippets."
    )
    if args.html_quality:
        html_quality(docs)
    return 0


if __name__ == "__main__":
    sys.exit(main())
