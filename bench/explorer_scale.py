"""How report.html's explorer holds up on a large sweep, in headless Chromium.

A synthetic sweep of realistic size: 2,000 questions x 12 settings, 300 documents of about
8,000 characters plus one of 300,000, each setting's chunks over all of them (sizes 256 to
2,048 characters, overlap 0 or 1/8), 10 hits traced per question and setting, text kept
for every document. The page is written twice, the data inline and the data beside it in
report-data.js (as the report writes it past its inline budget), each opened from file://
in the system Chromium; measured, medians of --repeats fresh pages:

  - the files' sizes;
  - open: from navigation start until the question list is drawn (the explorer's own
    performance mark, so JSON parsing and the first draw are in it);
  - filter: choosing the outcome filter "flipped" until the frame after the list is redrawn;
  - question: a click on a question in the list until the frame after its view is drawn;
  - document: opening the 300,000-character document's boundary view the same way.

Then the Python side, on a sweep folder of the same shape written through sweep's own
writers: preparing the explorer's data from the folder (rows, per-query scores, every
job's hits.jsonl), against writing the folder's tables (results.csv/.md, per_query.csv)
in the same run, as a ratio: what the explorer adds to the end of a sweep.

The report starts with the CPU and its instruction sets. The machine is shared:
compare numbers measured in the same run.

    python bench/explorer_scale.py [--repeats 3] [--questions 2000] [--jobs 12]
    python bench/explorer_scale.py --report outputs/sweep/<timestamp>/report.html
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import sys
import tempfile
from pathlib import Path
from urllib.parse import quote

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))
sys.path.insert(0, str(ROOT / "bench"))
sys.path.insert(0, str(ROOT / "tests" / "reporting"))
sys.path.insert(0, str(ROOT / "tests"))

from embed_speed import cpu_line  # noqa: E402
from test_explorer_browser import ARGS, CHROMIUM, _page, _sidecar_js  # noqa: E402

WORDS = [
    "the",
    "library",
    "opens",
    "at",
    "nine",
    "members",
    "may",
    "borrow",
    "twelve",
    "items",
    "loans",
    "last",
    "two",
    "weeks",
    "renewed",
    "once",
    "online",
    "desk",
    "reserved",
    "held",
    "seven",
    "days",
    "late",
    "returns",
    "cost",
    "ten",
    "cents",
    "study",
    "rooms",
    "booked",
    "ahead",
    "three",
    "hours",
    "catalogue",
    "archive",
    "reading",
    "hall",
    "periodicals",
]

# a click until the frame after the view is drawn: the explorer's hashchange listener
# draws synchronously, this one (added later) runs after it, then waits a frame
CLICK = """sel => new Promise(done => {
  const t0 = performance.now();
  window.addEventListener('hashchange',
    () => requestAnimationFrame(() => setTimeout(() => done(performance.now() - t0))),
    {once: true});
  document.querySelector(sel).click();
})"""
FILTER = """value => new Promise(done => {
  const sel = document.querySelector('select[aria-label=outcome]');
  const t0 = performance.now();
  sel.value = value;
  sel.dispatchEvent(new Event('change'));
  requestAnimationFrame(() => setTimeout(() => done(performance.now() - t0)));
})"""
READ_DATA = """(() => {
  const s = document.getElementById('sweep-explorer-data');
  return (s && JSON.parse(s.textContent)) || window.sweepExplorerData;
})"""
GO = """hash => new Promise(done => {
  const t0 = performance.now();
  window.addEventListener('hashchange',
    () => requestAnimationFrame(() => setTimeout(() => done(performance.now() - t0))),
    {once: true});
  location.hash = hash;
})"""


def _text(rng: random.Random, n_chars: int) -> str:
    out, size = [], 0
    while size < n_chars:
        sentence = " ".join(rng.choice(WORDS) for _ in range(rng.randint(8, 20))).capitalize()
        out.append(sentence + ". ")
        size += len(sentence) + 2
    return "".join(out)[:n_chars]


def synthetic(n_questions: int, n_jobs: int, k: int = 10, seed: int = 0) -> dict:
    rng = random.Random(seed)
    texts = [_text(rng, rng.randint(6000, 10000)) for _ in range(300)] + [_text(rng, 300_000)]
    docs = [
        {"id": f"doc{d:03d}.md", "n_chars": len(t), "language": "en", "text": t, "pages": None}
        for d, t in enumerate(texts)
    ]
    docs[-1]["id"] = "big.md"
    questions = []
    for qi in range(n_questions):
        d = rng.randrange(300)
        s = rng.randrange(0, len(texts[d]) - 200)
        questions.append(
            {
                "id": f"q{qi:04d}",
                "text": " ".join(rng.choice(WORDS) for _ in range(12)) + "?",
                "type": rng.choice(["fact", "list", "why", "multi-hop"]),
                "source": None,
                "reference": None,
                "answerable": True,
                "gold": [{"doc": d, "start": s, "end": s + rng.randint(40, 200), "grade": 1}],
                "outcome": [],
            }
        )
    jobs, passages, hits, rows = [], {}, {}, []
    sizes = [256, 512, 1024, 2048, 384, 768]
    for ji in range(n_jobs):
        size = sizes[ji % len(sizes)]
        overlap = 0 if ji < len(sizes) else size // 8
        ids, dd, ss, ee = [], [], [], []
        by_doc: dict[int, list[int]] = {}
        for d, t in enumerate(texts):
            start, i = 0, 0
            while start < len(t):
                by_doc.setdefault(d, []).append(len(ids))
                ids.append(f"{docs[d]['id']}#{i}")
                dd.append(d)
                ss.append(start)
                ee.append(min(len(t), start + size))
                start += size - overlap
                i += 1
        n = len(ids)
        passages[str(ji)] = {
            "n_chunks": n,
            "id": ids,
            "doc": dd,
            "start": ss,
            "end": ee,
            "tokens": [(e - s) // 4 for s, e in zip(ss, ee, strict=True)],
            "window": [-1 if e - s <= 1024 else 1024 for s, e in zip(ss, ee, strict=True)],
            "text": [None] * n,
        }
        p_rows, s_rows = [], []
        for q in questions:
            g = q["gold"][0]
            holding = [p for p in by_doc[g["doc"]] if ss[p] < g["end"] and ee[p] > g["start"]]
            found = rng.random() < 0.6 + 0.02 * ji
            row = (holding[:1] if found else []) + rng.sample(range(n), k)
            p_rows.append(row[:k])
            s_rows.append(sorted((round(rng.random(), 4) for _ in range(k)), reverse=True))
            q["outcome"].append(1.0 if found else 0.0)
        hits[str(ji)] = {"p": p_rows, "s": s_rows, "first": None, "via": None}
        jobs.append(
            {
                "job": ji,
                "label": f"size={size} overlap={overlap}",
                "ok": True,
                "status": "ok",
                "pick": ji == n_jobs - 1,
                "verdict": "best" if ji == n_jobs - 1 else "worse",
                "settings": {"chunk.size": str(size), "chunk.overlap": str(overlap)},
                "max_seq_length": 256,
                "rerank": None,
                "parent": False,
            }
        )
        m = statistics.fmean(q["outcome"][ji] for q in questions)
        rows.append(
            {
                "job": ji,
                "class": "best pick" if ji == n_jobs - 1 else "",
                "cells": [str(size), str(overlap), f"{m:.3f}"],
                "values": [None, None, m],
                "low": [None, None, m - 0.02],
                "high": [None, None, m + 0.02],
            }
        )
    return {
        "format": "sweep-explorer",
        "version": 1,
        "title": "sweep report",
        "sweep": "synthetic",
        "primary": {"label": "span recall@5", "level": "span", "metric": "recall@5"},
        "k": k,
        "jobs": jobs,
        "table": {
            "columns": [
                {"name": "chunk.size", "kind": "setting"},
                {"name": "chunk.overlap", "kind": "setting"},
                {"name": "span recall@5", "kind": "metric"},
            ],
            "rows": rows,
        },
        "docs": docs,
        "questions": questions,
        "passages": passages,
        "hits": hits,
    }


def measure(page_path: Path, repeats: int, doc: str = "big.md") -> dict[str, float]:
    from playwright.sync_api import sync_playwright

    got: dict[str, list[float]] = {"open": [], "filter": [], "question": [], "document": []}
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        for _ in range(repeats):
            context = browser.new_context(viewport={"width": 1400, "height": 900})
            foreign: list[str] = []
            context.route(
                "**/*",
                lambda r: (
                    r.continue_()
                    if r.request.url.startswith("file://")
                    else (foreign.append(r.request.url), r.abort())
                ),
            )
            page = context.new_page()
            page.goto(page_path.as_uri(), timeout=120_000)
            page.wait_for_selector(".x-qlist tbody tr", timeout=120_000)
            got["open"].append(
                page.evaluate("performance.getEntriesByName('sweep-explorer-drawn')[0].startTime")
            )
            got["filter"].append(page.evaluate(FILTER, "flipped"))
            got["question"].append(page.evaluate(CLICK, ".x-qlist tbody tr:nth-child(7) a"))
            assert page.locator(".x-col").count() == 2
            job = page.evaluate(f"{READ_DATA}().jobs[0].job")
            got["document"].append(page.evaluate(GO, f"#document={quote(doc, safe='')}&job={job}"))
            assert page.locator(".x-doc .x-clabel").count() > 0
            assert not foreign, foreign
            context.close()
        browser.close()
    return {name: statistics.median(v) for name, v in got.items()}


def measure_report(report: Path, repeats: int) -> None:
    """A sweep's own report.html: its sizes, and the same clicks (the longest document)."""
    html = report.read_text(encoding="utf-8")
    start = html.find('id="sweep-explorer-data">') + len('id="sweep-explorer-data">')
    inline = html[start : html.index("</script>", start)]
    sidecar = report.parent / "report-data.js"
    if inline == "null":
        text = sidecar.read_text(encoding="utf-8")
        data = json.loads(text[text.index("=") + 1 : text.rindex(";")])
    else:
        data = json.loads(inline)
    longest = max(data["docs"], key=lambda d: d["n_chars"])
    print(
        f"{report}: {len(data['questions'])} questions x {len(data['jobs'])} settings, "
        f"{len(data['docs'])} documents; report.html {report.stat().st_size / 1e6:.2f} MB"
        + (f" + report-data.js {sidecar.stat().st_size / 1e6:.1f} MB" if inline == "null" else "")
    )
    t = measure(report, repeats, longest["id"])
    print(f"medians of {repeats} fresh pages, headless Chromium, 1400x900:")
    for key, what in (
        ("open", "open until the question list is drawn"),
        ("filter", "outcome filter 'flipped' until redrawn"),
        ("question", "click a question until its view shows"),
        ("document", f"open the longest document ({longest['n_chars']:,} chars)"),
    ):
        print(f"  {what:46s}{t[key]:6.0f} ms")


def python_side(questions: int, jobs: int, repeats: int) -> None:
    """Preparing the explorer's data from a sweep folder vs writing its tables, same run."""
    import time

    import numpy as np

    from sweep.reporting.explorer import explorer_data, explorer_page_parts
    from sweep.reporting.sweepreport import build_report
    from sweep.reporting.write import write_tables
    from sweepdirs import make_grid

    rng = np.random.default_rng(0)
    grid = {
        (64 * (1 + i // 2), 16 * (i % 2)): (rng.random(questions) < 0.6).astype(float)
        for i in range(jobs)
    }
    with tempfile.TemporaryDirectory() as tmp:
        make_grid(Path(tmp), grid, n_boot=200)
        tables, data = [], []
        for _ in range(repeats):
            t0 = time.perf_counter()
            rep = build_report(Path(tmp))
            write_tables(rep)
            t1 = time.perf_counter()
            explorer_page_parts(explorer_data(rep))
            t2 = time.perf_counter()
            tables.append(t1 - t0)
            data.append(t2 - t1)
    a, b = statistics.median(tables), statistics.median(data)
    print(
        f"python side, {questions} questions x {jobs} settings (medians of {repeats}): "
        f"report and tables {a:.2f} s, explorer data {b:.2f} s ({b / a:.2f}x the tables)"
    )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--questions", type=int, default=2000)
    ap.add_argument("--jobs", type=int, default=12)
    ap.add_argument("--report", type=Path, help="measure this report.html instead")
    args = ap.parse_args()
    print(cpu_line())
    if args.report:
        measure_report(args.report, args.repeats)
        return
    python_side(args.questions, args.jobs, args.repeats)
    data = synthetic(args.questions, args.jobs)
    n_data = len(json.dumps(data, ensure_ascii=False).encode("utf-8"))
    with tempfile.TemporaryDirectory() as tmp:
        inline = Path(tmp) / "inline" / "report.html"
        side = Path(tmp) / "sidecar" / "report.html"
        inline.parent.mkdir()
        side.parent.mkdir()
        inline.write_text(_page(data), encoding="utf-8")
        side.write_text(_page(None, sidecar=True), encoding="utf-8")
        (side.parent / "report-data.js").write_text(_sidecar_js(data), encoding="utf-8")
        print(
            f"{args.questions} questions x {args.jobs} settings, {len(data['docs'])} documents, "
            f"k={data['k']}: data {n_data / 1e6:.1f} MB; report.html "
            f"{inline.stat().st_size / 1e6:.1f} MB with the data inline, "
            f"{side.stat().st_size / 1e3:.0f} kB + report-data.js "
            f"{(side.parent / 'report-data.js').stat().st_size / 1e6:.1f} MB beside it"
        )
        print(f"medians of {args.repeats} fresh pages, headless Chromium, 1400x900:")
        print(f"{'':42s}{'inline':>9s}{'sidecar':>9s}")
        t_in = measure(inline, args.repeats)
        t_side = measure(side, args.repeats)
    for key, what in (
        ("open", "open until the question list is drawn"),
        ("filter", "outcome filter 'flipped' until redrawn"),
        ("question", "click a question until its view shows"),
        ("document", "open the 300,000-character document"),
    ):
        print(f"  {what:40s}{t_in[key]:6.0f} ms{t_side[key]:6.0f} ms")


if __name__ == "__main__":
    main()
