"""The explorer in report.html, driven in a real headless Chromium (Playwright, the system
Chromium from Debian): deep links, the side-by-side view, the list's filters, the document
view, Back, markup in the data that must never run, the sidecar data file, 800 px wide.

The pages are opened from file:// as a user opens a mailed report; every request the page
makes is recorded and anything that is not file:// is refused and fails the test.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

ASSETS = Path(__file__).resolve().parents[2] / "src" / "sweep" / "reporting" / "assets"
CHROMIUM = "/usr/bin/chromium"
ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--no-first-run",
    "--disable-sync",
]
PWN = '<script>window.__pwned=1</script><img src=x onerror="window.__pwned=2">'
JA = (
    "東京都の図書館は午前九時に開館し、午後八時に閉館します。"
    "貸出期間は二週間で、延長は一回まで可能です。"
    "予約した資料は七日間取り置きされ、期限を過ぎると次の人に回されます。"
)
EN = (
    "The library opens at nine in the morning and closes at eight in the evening. "
    "Members may borrow up to twelve items at once. Loans last two weeks and can be "
    "renewed once, online or at the desk. Reserved items are held for seven days. "
    "Late returns cost ten cents a day per item, capped at the price of the item. "
    "Study rooms can be booked a week ahead for up to three hours. "
)
RU = "Читальный зал открыт до десяти вечера; выдача книг прекращается за полчаса до закрытия. "


# ---- the data, per the explorer's format (a shared fixture helper) --------------------------


def _chunks(n_chars: int, size: int, overlap: int) -> list[tuple[int, int]]:
    out, start = [], 0
    while start < n_chars:
        out.append((start, min(n_chars, start + size)))
        if start + size >= n_chars:
            break
        start += size - overlap
    return out


def explorer_data() -> dict:
    """A small sweep's explorer data: 3 settings (job numbers 0, 2, 5: not their indices),
    6 questions (one whose text is markup, one Japanese across two PDF pages, one
    unanswerable, one in a document whose text was not kept), 4 documents."""
    guide = EN * 4
    evil = "Notes. " + PWN + " The markup above is text in a document. " + EN
    manual = JA * 5
    kept_out = RU * 10
    docs = [
        {"id": "guide.md", "text": guide, "pages": None, "language": "en"},
        {"id": "evil <b>.md", "text": evil, "pages": None, "language": "en"},
        {
            "id": "manual.pdf",
            "text": manual,
            "pages": [[0, len(manual) // 2], [len(manual) // 2, len(manual)]],
            "language": "ja",
        },
        {"id": "big.md", "text": None, "pages": None, "language": "ru", "_text": kept_out},
    ]
    full_texts = [d["text"] if d["text"] is not None else d.pop("_text") for d in docs]
    for d, t in zip(docs, full_texts, strict=True):
        d["n_chars"] = len(t)
    g_guide = guide.index("Loans last two weeks")
    g_evil = evil.index(PWN)
    mid = len(manual) // 2
    g_big = kept_out.index("выдача")
    questions = [
        ("q1", "How long is a loan?", "fact", [(0, g_guide, g_guide + 50)], [1.0, 0.0, 1.0]),
        (PWN, PWN, "markup", [(1, g_evil, g_evil + len(PWN))], [1.0, 1.0, 0.0]),
        ("q3", "貸出期間はどのくらいですか", "fact", [(2, mid - 30, mid + 30)], [0.0, 1.0, 0.5]),
        ("q4", "Is there a café?", "fact", [], [None, None, None]),
        ("q5", "What do late returns cost?", "cost", [(0, 300, 380)], [0.5, 0.5, 0.0]),
        ("q6", "Когда прекращается выдача книг?", "fact", [(3, g_big, g_big + 20)], [1, 0, 1]),
    ]
    jobs = [
        {"job": 0, "label": "size=200 overlap=0", "size": 200, "overlap": 0, "window": 180},
        {"job": 2, "label": "size=400 overlap=50 rerank", "size": 400, "overlap": 50},
        {"job": 5, "label": "size=150 parent=600", "size": 150, "overlap": 0, "parent": 600},
    ]
    k = 3
    passages, hits = {}, {}
    for ji, j in enumerate(jobs):
        ids, dd, ss, ee, toks, win, txt = [], [], [], [], [], [], []

        def put(d, s, e, i, j=j, ids=ids, dd=dd, ss=ss, ee=ee, toks=toks, win=win, txt=txt):
            ids.append(f"{docs[d]['id']}#{i}")
            dd.append(d)
            ss.append(s)
            ee.append(e)
            toks.append((e - s) // 4)
            w = j.get("window", -1)
            win.append(w if 0 <= w < e - s else -1)
            txt.append(full_texts[d][s:e] if docs[d]["text"] is None else None)

        for d in range(len(docs)):
            for i, (s, e) in enumerate(_chunks(len(full_texts[d]), j["size"], j["overlap"])):
                put(d, s, e, i)
        n_chunks = len(ids)
        if "parent" in j:
            for d in range(len(docs)):
                for i, (s, e) in enumerate(_chunks(len(full_texts[d]), j["parent"], 0)):
                    put(d, s, e, f"p{i}")
        pool = range(n_chunks, len(ids)) if "parent" in j else range(n_chunks)
        p_rows, s_rows, first_rows, via_rows = [], [], [], []
        for _qid, _text, _type, gold, outcome in questions:

            def overlap(p, gold=gold):
                return sum(
                    max(0, min(ee[p], ge) - max(ss[p], gs)) for d, gs, ge in gold if dd[p] == d
                )

            found = outcome[ji] not in (None, 0)
            ranked = sorted(
                (p for p in pool if found or overlap(p) == 0), key=lambda p: (-overlap(p), p)
            )[:k]
            p_rows.append(ranked)
            s_rows.append([round(0.9 - 0.1 * r, 3) for r in range(k)])
            first_rows.append([r + 3 if r < 2 else 0 for r in range(k)])
            via_rows.append(
                [
                    next(c for c in range(n_chunks) if dd[c] == dd[p] and ss[c] >= ss[p])
                    for p in ranked
                ]
            )
        passages[str(j["job"])] = {
            "n_chunks": n_chunks,
            "id": ids,
            "doc": dd,
            "start": ss,
            "end": ee,
            "tokens": toks,
            "window": win,
            "text": txt,
        }
        hits[str(j["job"])] = {
            "p": p_rows,
            "s": s_rows,
            "first": first_rows if ji == 1 else None,
            "via": via_rows if "parent" in j else None,
        }
    means = [0.7, 0.5, 0.5]
    return {
        "format": "sweep-explorer",
        "version": 1,
        "title": "sweep report",
        "sweep": "outputs/test",
        "primary": {"label": "span recall@5", "level": "span", "metric": "recall@5"},
        "k": k,
        "jobs": [
            {
                "job": j["job"],
                "label": j["label"],
                "ok": True,
                "status": "ok",
                "pick": ji == 0,
                "verdict": "best" if ji == 0 else "worse",
                "settings": {"chunk.size": str(j["size"]), "chunk.overlap": str(j["overlap"])},
                "max_seq_length": 45 if "window" in j else 0,
                "rerank": "cross_encoder" if ji == 1 else None,
                "parent": "parent" in j,
            }
            for ji, j in enumerate(jobs)
        ],
        "table": {
            "columns": [
                {"name": "chunk.size", "kind": "setting"},
                {"name": "chunk.overlap", "kind": "setting"},
                {"name": "span recall@5", "kind": "metric"},
                {"name": "chunks", "kind": "number"},
            ],
            "rows": [
                {
                    "job": j["job"],
                    "class": "best pick" if ji == 0 else "",
                    "cells": [
                        str(j["size"]),
                        str(j["overlap"]),
                        f"{m:.3f} [{m - 0.05:.2f}, {m + 0.05:.2f}]",
                        str(passages[str(j["job"])]["n_chunks"]),
                    ],
                    "values": [None, None, m, passages[str(j["job"])]["n_chunks"]],
                    "low": [None, None, m - 0.05, None],
                    "high": [None, None, m + 0.05, None],
                }
                for ji, (j, m) in enumerate(zip(jobs, means, strict=True))
            ],
        },
        "docs": docs,
        "questions": [
            {
                "id": qid,
                "text": text,
                "type": qtype,
                "source": None,
                "reference": "Two weeks." if qid == "q1" else None,
                "answerable": bool(gold),
                "gold": [
                    {"doc": d, "start": s, "end": e, "grade": 1, "pages": "1-2" if d == 2 else None}
                    # the page cannot cut the evidence from a document whose text it lacks
                    | ({"text": full_texts[d][s:e]} if docs[d]["text"] is None else {})
                    for d, s, e in gold
                ],
                "outcome": [None if v is None else float(v) for v in outcome],
            }
            for qid, text, qtype, gold, outcome in questions
        ],
        "passages": passages,
        "hits": hits,
    }


def _filler() -> str:
    # the static report below the explorer is long: a view must open at the top anyway
    return "".join(
        f'<details class="section" id="s-part-{i}" open><summary><h2>Part {i}</h2></summary>'
        f"<p>{'Static report text. ' * 120}</p></details>"
        for i in range(8)
    )


def _page(data: dict | None, *, sidecar: bool = False) -> str:
    """report.html as the report writer lays it out (the same functions): the explorer
    right after the header, the static sections below, the data inline or in
    report-data.js."""
    from sweep.reporting.explorer import explorer_page_parts
    from sweep.reporting.htmlkit import Section, page

    # inline whatever its size (the bench measures a 10 MB page both ways)
    parts = explorer_page_parts(data, inline_bytes=0 if sidecar else 1 << 40)
    static_table = (
        "<table><tr><th>chunk.size</th><th>span recall@5</th></tr>"
        "<tr><td>200</td><td>0.700</td></tr></table>"
    )
    sections = [Section("Comparison table", f'<div id="results-table">{static_table}</div>')]
    return page(
        "sweep report",
        sections,
        subtitle="outputs/test",
        css=parts.css,
        top='<div id="explorer"></div>',
        end=_filler() + parts.body,
    )


def _sidecar_js(data: dict) -> str:
    from sweep.reporting.explorer import explorer_page_parts

    return explorer_page_parts(data, inline_bytes=0).sidecar


# ---- the browser --------------------------------------------------------------------------


def _need_browser(reason: str):
    if os.environ.get("SWEEP_REQUIRE_BROWSER") == "1":
        pytest.fail(f"{reason} (SWEEP_REQUIRE_BROWSER=1: the browser tests must run)")
    pytest.skip(reason)


@pytest.fixture(scope="module")
def browser():
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        _need_browser("playwright is not installed (pip install -e '.[test]')")
    if not Path(CHROMIUM).exists():
        _need_browser(f"{CHROMIUM} is missing (apt-get install chromium)")
    with sync_playwright() as pw:
        # launch() gives every run a fresh temporary profile; Playwright's own browser
        # download is never used: the system Chromium is the one users have
        b = pw.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        yield b
        b.close()


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    """The pages, written once: inline data, sidecar data, sidecar missing."""
    root = tmp_path_factory.mktemp("explorer")
    data = explorer_data()
    (root / "report.html").write_text(_page(data), encoding="utf-8")
    side = root / "side"
    side.mkdir()
    (side / "report.html").write_text(_page(None, sidecar=True), encoding="utf-8")
    (side / "report-data.js").write_text(_sidecar_js(data), encoding="utf-8")
    lone = root / "lone"
    lone.mkdir()
    shutil.copy(side / "report.html", lone / "report.html")
    return {"root": root, "data": data}


class Opened:
    """A page in its own context; ``foreign`` lists every request that was not file://."""

    def __init__(self, browser, width: int = 1400, height: int = 900):
        self.context = browser.new_context(viewport={"width": width, "height": height})
        self.requests: list[str] = []
        self.foreign: list[str] = []
        self.errors: list[str] = []

        def guard(route):
            url = route.request.url
            if url.startswith("file://"):
                route.continue_()
            else:
                self.foreign.append(url)
                route.abort()

        self.context.route("**/*", guard)
        self.page = self.context.new_page()
        self.page.set_default_timeout(5000)  # every wait here is for a local file
        self.page.on("request", lambda r: self.requests.append(r.url))
        self.page.on("pageerror", lambda e: self.errors.append(str(e)))

    def open(self, path: Path, hash_: str = "") -> Opened:
        self.path = path
        self.page.goto(path.as_uri() + hash_)
        self.page.wait_for_selector("#explorer > nav, #explorer .x-missing")
        self.painted()
        return self

    def go(self, hash_: str) -> None:
        """Follow a deep link on the open page and wait until its view is drawn."""
        self.page.goto(self.path.as_uri() + hash_)
        self.page.wait_for_function(
            "document.getElementById('explorer').dataset.view === location.hash"
        )
        self.painted()

    def painted(self) -> None:
        """Wait for the frame after the view: a long document's blocks are rendered only
        then (content-visibility), and innerText reads only what is rendered."""
        self.page.evaluate(
            "() => new Promise(done => requestAnimationFrame(() => requestAnimationFrame(done)))"
        )

    def close(self):
        self.context.close()
        assert not self.foreign, f"network requests: {self.foreign}"
        assert all(u.startswith("file://") for u in self.requests), self.requests
        assert not self.errors, self.errors


@pytest.fixture
def opened(browser):
    made: list[Opened] = []

    def make(width: int = 1400, height: int = 900) -> Opened:
        made.append(Opened(browser, width, height))
        return made[-1]

    yield make
    for o in made:
        o.close()


def _listed_ids(page) -> list[str]:
    return page.locator(".x-qlist tbody tr td:first-child").all_inner_texts()


def _in_window(page, locator) -> bool:
    box = locator.bounding_box()
    height = page.evaluate("window.innerHeight")
    return box is not None and box["y"] >= 0 and box["y"] + box["height"] <= height


# ---- tests --------------------------------------------------------------------------------


def test_ci_fails_the_browser_tests_instead_of_skipping_them(monkeypatch):
    monkeypatch.setenv("SWEEP_REQUIRE_BROWSER", "1")
    with pytest.raises(pytest.fail.Exception, match="must run"):
        _need_browser("no browser")
    monkeypatch.delenv("SWEEP_REQUIRE_BROWSER")
    with pytest.raises(pytest.skip.Exception):
        _need_browser("no browser")


def test_explorer_js_never_writes_markup_nor_reaches_the_network():
    js = (ASSETS / "explorer.js").read_text(encoding="utf-8")
    for sink in (
        "innerHTML",
        "outerHTML",
        "insertAdjacentHTML",
        "document.write",
        "fetch(",
        "XMLHttpRequest",
        "eval(",
        "new Function",
        "sendBeacon",
        "WebSocket",
    ):
        assert sink not in js, sink


def test_a_question_link_opens_it_at_the_top_with_both_settings(opened, site):
    o = opened().open(site["root"] / "report.html", "#question=q1&a=0&b=2")
    page = o.page
    assert page.locator(".x-title").inner_text().startswith("Question q1")
    mark = page.locator(".x-evidence mark").first
    guide = site["data"]["docs"][0]["text"]
    start = guide.index("Loans last two weeks")
    assert mark.inner_text() == guide[start : start + 50]
    # the evidence is in the window although the page is long and the view is not its top
    assert page.evaluate("document.documentElement.scrollHeight") > 3000
    assert _in_window(page, mark)
    cols = page.locator(".x-col")
    assert cols.count() == 2
    data = site["data"]
    for side, job in (("a", "0"), ("b", "2")):
        col = page.locator(f'.x-col[data-side="{side}"]')
        first = data["hits"][job]["p"][0][0]
        assert (
            col.locator(".x-hit").first.locator(".x-hitmeta a").first.inner_text()
            == (data["passages"][job]["id"][first])
        )
        assert col.locator(".x-hit").count() == data["k"]
    # a (found) holds the gold; b (missed) has no marked chunk
    assert (
        "holds 100% of gold 1" in page.locator('.x-col[data-side="a"] .x-cover').first.inner_text()
    )
    assert page.locator('.x-col[data-side="b"] .x-chunk mark').count() == 0
    # the model's window: the part past it is greyed (job 0 reads 180 characters)
    past = page.locator('.x-col[data-side="a"] .x-past').first
    assert past.get_attribute("title") == "past the model's window: never embedded"
    # ...and said beside the rank: 180 of the 200 characters of job 0's chunks
    assert (
        "embedded: first 90%" in page.locator('.x-col[data-side="a"] .x-hitmeta').first.inner_text()
    )
    # the re-ranker's and the parent's view
    page.locator('.x-col[data-side="b"] select').select_option(label="#5 size=150 parent=600")
    page.wait_for_function("location.hash.endsWith('b=5')")
    assert "via chunk" in page.locator('.x-col[data-side="b"] .x-hitmeta').first.inner_text()
    o.go("#question=q1&a=2&b=0")
    assert "was #3 before re-ranking" in page.locator(".x-hitmeta").first.inner_text()


def test_columns_sit_side_by_side_wide_and_stack_narrow(opened, site):
    wide = opened(1400).open(site["root"] / "report.html", "#question=q3&a=0&b=2").page
    a, b = (wide.locator(f'.x-col[data-side="{s}"]').bounding_box() for s in "ab")
    assert abs(a["y"] - b["y"]) < 2 and b["x"] > a["x"] + a["width"] - 1
    narrow = opened(800).open(site["root"] / "report.html", "#question=q3&a=0&b=2").page
    a, b = (narrow.locator(f'.x-col[data-side="{s}"]').bounding_box() for s in "ab")
    assert b["y"] >= a["y"] + a["height"] - 1


def test_a_document_link_shows_chunk_ids_boundaries_pages_and_cut_evidence(opened, site):
    data = site["data"]
    o = opened().open(site["root"] / "report.html", "#document=guide.md&job=0")
    page = o.page
    p = data["passages"]["0"]
    expected = [p["id"][i] for i in range(p["n_chunks"]) if p["doc"][i] == 0]
    assert page.locator(".x-doc .x-clabel").all_inner_texts() == expected
    assert page.locator(".x-doc span.k0").count() > 0 and page.locator(".x-doc span.k1").count() > 0
    assert _in_window(page, page.locator(".x-title"))
    # overlapping chunks (job 2) show their overlap; the PDF shows pages and the cut evidence
    o.go("#document=manual.pdf&job=2")
    assert page.locator(".x-doc span.ov").count() > 0
    assert page.locator(".x-doc .x-clabel").first.inner_text() == "manual.pdf#0 · pp. 1–2"
    assert page.locator(".x-doc .x-clabel").last.inner_text().endswith("· p. 2")
    o.go("#document=manual.pdf&job=0")
    cut = page.locator(".x-doc .x-cut")
    assert cut.count() >= 1 and "q3" in cut.first.get_attribute("title")
    assert "evidence of q3" in page.locator(".x-doc u.x-ev").first.get_attribute("title")
    # a chunk link scrolls to that chunk and marks it
    o.go("#document=guide.md&job=0&chunk=guide.md%235")
    assert _in_window(page, page.locator(".x-doc .hl").first)
    # a document whose text was not kept shows its kept chunks and says so
    o.go("#document=big.md&job=0")
    assert "not kept" in page.locator("#explorer").inner_text()
    assert "выдача" in page.locator(".x-doc").inner_text()
    # ... and its evidence is shown from the evidence's own text
    o.go("#question=q6")
    assert page.locator(".x-evidence mark").inner_text().startswith("выдача книг")


def test_the_lists_filters_and_the_paired_count(opened, site):
    o = opened().open(site["root"] / "report.html", "#questions&a=0&b=2&filter=flipped")
    page = o.page
    assert _listed_ids(page) == ["q1", "q3", "q6"]
    assert page.locator("#explorer .x-count").inner_text() == "3 of 6 questions"
    assert "better on 2" in page.locator(".x-paired").inner_text()
    page.get_by_label("setting b").select_option(label="#5 size=150 parent=600")
    page.wait_for_function("location.hash.includes('b=5')")
    assert _listed_ids(page) == [PWN, "q3", "q5"]
    page.get_by_label("outcome").select_option("all")
    page.get_by_label("filter questions by text").fill("貸出")
    page.wait_for_function("document.querySelectorAll('.x-qlist tbody tr').length === 1")
    assert _listed_ids(page) == ["q3"]
    page.get_by_label("filter questions by text").fill("")
    page.get_by_label("outcome").select_option("unanswerable")
    page.wait_for_function("document.querySelectorAll('.x-qlist tbody tr').length === 1")
    assert _listed_ids(page) == ["q4"]
    marks = page.locator(".x-qlist tbody tr").first.locator(".x-mark")
    assert (
        marks.count() == 3
        and marks.first.get_attribute("title") == "size=200 overlap=0: not scored"
    )


def test_back_walks_the_views(opened, site):
    o = opened().open(site["root"] / "report.html", "#questions&a=0&b=2&filter=flipped")
    page = o.page
    page.get_by_role("link", name="q3", exact=True).click()
    page.wait_for_selector(".x-col")
    page.locator(".x-evidence a").first.click()
    page.wait_for_selector(".x-doc")
    assert page.locator(".x-title").inner_text() == "Document manual.pdf"
    page.go_back()
    page.wait_for_selector(".x-col")
    assert page.locator(".x-title").inner_text().startswith("Question q3")
    page.go_back()
    page.wait_for_selector(".x-qlist")
    assert _listed_ids(page) == ["q1", "q3", "q6"]


def test_back_to_the_page_as_it_opened_shows_the_list_again(opened, site):
    o = opened().open(site["root"] / "report.html")
    page = o.page
    page.get_by_role("link", name="q1", exact=True).click()
    page.wait_for_selector(".x-col")
    page.go_back()
    page.wait_for_selector(".x-qlist")
    assert page.locator(".x-col").count() == 0 and "q1" in _listed_ids(page)


def test_one_document_read_two_ways_opens_in_each_jobs_own_text(opened, tmp_path):
    """A reader sweep: the same doc id in two datasets; a job's link opens its own text,
    and the document list says which reading each entry is."""
    data = explorer_data()
    data["datasets"] = [
        {"name": "d", "label": "d (pdf=pypdf)"},
        {"name": "d", "label": "d (pdf=pdfplumber)"},
    ]
    for ji, j in enumerate(data["jobs"]):
        j["dataset"] = 1 if ji == 2 else 0
    for d in data["docs"]:
        d["dataset"] = 0
    other = dict(data["docs"][0], dataset=1, text=data["docs"][0]["text"].upper())
    data["docs"].append(other)
    twin = len(data["docs"]) - 1
    p = data["passages"]["5"]
    p["doc"] = [twin if d == 0 else d for d in p["doc"]]
    path = tmp_path / "report.html"
    path.write_text(_page(data), encoding="utf-8")
    o = opened().open(path, "#document=guide.md&job=5")
    page = o.page
    assert "THE LIBRARY OPENS" in page.locator(".x-doc").inner_text()
    options = page.locator('select[aria-label="document"] option').all_inner_texts()
    assert "guide.md (d (pdf=pypdf))" in options and "guide.md (d (pdf=pdfplumber))" in options
    o.go("#document=guide.md&job=0")
    assert "The library opens" in page.locator(".x-doc").inner_text()


def test_markup_in_the_data_is_shown_as_text_and_never_runs(opened, site):
    o = opened().open(site["root"] / "report.html", "#questions&filter=all")
    page = o.page
    assert PWN in _listed_ids(page)
    from urllib.parse import quote

    o.go(f"#question={quote(PWN, safe='')}")
    assert page.locator(".x-qtext").inner_text() == PWN
    assert page.locator(".x-evidence mark").first.inner_text() == PWN
    page.locator(".x-evidence a").first.click()
    page.wait_for_selector(".x-doc")
    assert PWN in page.locator(".x-doc").inner_text()
    assert page.locator(".x-title").inner_text() == "Document evil <b>.md"
    assert page.evaluate("typeof window.__pwned") == "undefined"
    assert page.locator("#explorer img, #explorer script, #explorer b.x").count() == 0


def test_the_data_in_a_sidecar_file_and_without_it(opened, site):
    o = opened().open(site["root"] / "side" / "report.html", "#question=q1&a=0&b=2")
    assert o.page.locator(".x-col").count() == 2
    assert any(u.endswith("/side/report-data.js") for u in o.requests)
    lone = opened().open(site["root"] / "lone" / "report.html")
    line = lone.page.locator("#explorer .x-missing")
    assert line.is_visible()
    assert "report-data.js was not found beside report.html" in line.inner_text()
    assert "travel together" in line.inner_text()


def test_unknown_ids_in_a_link_say_so_in_one_line(opened, site):
    o = opened().open(site["root"] / "report.html", "#question=nope&a=0&b=2")
    page = o.page
    assert "No question with id “nope”" in page.locator(".x-msg").inner_text()
    o.go("#document=guide.md&job=99")
    assert "No setting with job number 99" in page.locator(".x-msg").inner_text()


def test_the_results_table_sorts_filters_and_colours_on_a_fixed_scale(opened, site):
    page = opened().open(site["root"] / "report.html").page
    host = page.locator("#results-table")
    rows = host.locator("tbody tr")
    assert rows.count() == 3
    assert "recommended" in rows.first.inner_text()
    assert "pick" in rows.first.get_attribute("class")
    host.get_by_role("button", name="chunk.size").click()
    assert [t[:3] for t in rows.all_inner_texts()] == ["150", "200", "400"]
    # the headers are buttons: the keyboard sorts too, and again reverses
    host.get_by_role("button", name="chunk.size").press("Enter")
    assert [t[:3] for t in rows.all_inner_texts()] == ["400", "200", "150"]
    # 0.7 and 0.5 are shaded by value on 0-1 (lightness 97% at 0 down to 45% at 1), not
    # stretched so that the lower of the two is white and the higher the darkest
    lightness = host.locator("td.num[title]").evaluate_all(
        """tds => tds.map(t => {
            const [r, g, b] = getComputedStyle(t).backgroundColor.match(/\\d+/g).map(Number);
            return [t.title, (Math.max(r, g, b) + Math.min(r, g, b)) / 5.1];
        })"""
    )
    by_value = {title.split()[2].rstrip(","): light for title, light in lightness}
    assert by_value["0.500"] == pytest.approx(97 - 52 * 0.5, abs=1)
    assert by_value["0.700"] == pytest.approx(97 - 52 * 0.7, abs=1)
    host.get_by_label("filter the table by its settings").fill("150")
    page.wait_for_function("document.querySelectorAll('#results-table tbody tr').length === 1")
    # the table's "a" button opens the list with that setting as a
    host.get_by_role("button", name="a", exact=True).click()
    page.wait_for_function("location.hash.startsWith('#questions&a=5')")


def test_usable_at_800_px_without_page_scroll(opened, site):
    o = opened(800)
    o.open(site["root"] / "report.html")
    for hash_ in ("#questions", "#question=q1&a=0&b=2", "#document=manual.pdf&job=2"):
        o.go(hash_)
        assert o.page.evaluate("document.documentElement.scrollWidth") <= 800, hash_


def test_a_long_list_is_drawn_a_page_at_a_time(opened, site):
    data = explorer_data()
    extra = [
        dict(data["questions"][0], id=f"z{i:03d}", text=f"Copy {i} of a loan question")
        for i in range(240)
    ]
    data["questions"] += extra
    for h in data["hits"].values():
        h["p"] += [h["p"][0]] * len(extra)
        h["s"] += [h["s"][0]] * len(extra)
        for key in ("first", "via"):
            if h[key] is not None:
                h[key] += [h[key][0]] * len(extra)
    path = site["root"] / "long.html"
    path.write_text(_page(data), encoding="utf-8")
    page = opened().open(path, "#questions").page
    assert page.locator(".x-qlist tbody tr").count() == 100
    assert page.locator("#explorer .x-count").inner_text() == "246 of 246 questions"
    page.get_by_role("button", name="next →").click()
    assert _listed_ids(page)[0] == "z094"
    page.get_by_role("button", name="next →").click()
    assert page.locator(".x-qlist tbody tr").count() == 46
    assert page.get_by_role("button", name="next →").is_disabled()
    assert page.locator(".x-pager").inner_text().endswith("rows 201–246 of 246")
    # the page is in the address: Back from a question returns to it
    assert page.evaluate("location.hash").endswith("&page=3")
    page.get_by_role("link", name="z200", exact=True).click()
    page.wait_for_selector(".x-col")
    page.go_back()
    page.wait_for_selector(".x-qlist")
    assert _listed_ids(page)[0] == "z194"


def test_the_keyboard_reaches_and_opens_everything(opened, site):
    o = opened().open(site["root"] / "report.html", "#questions&a=0&b=2")
    page = o.page
    # everything clickable is a link or a button: nothing listens for clicks on a div or span
    plain = page.evaluate(
        """() => [...document.querySelectorAll('#explorer *, #results-table *')]
             .filter(e => e.onclick || e.getAttribute('onclick')).length"""
    )
    assert plain == 0
    page.get_by_role("link", name="q3", exact=True).focus()
    outline = page.evaluate("getComputedStyle(document.activeElement).outlineStyle")
    page.keyboard.press("Enter")
    page.wait_for_selector(".x-col")
    assert page.locator(".x-title").inner_text().startswith("Question q3")
    # the view takes the focus, so the next Tab goes on from its top
    assert page.evaluate("document.activeElement.classList.contains('x-title')")
    page.keyboard.press("Tab")
    assert page.evaluate("document.activeElement.tagName") in ("A", "SELECT", "BUTTON")
    assert outline == "solid"


@pytest.mark.parametrize("kind", ["mixed", "japanese"])
def test_a_300000_character_document_is_laid_out_in_blocks(opened, site, kind):
    """A long document is split into blocks the browser lays out only near the window (how
    fast that is: bench/explorer_scale.py), also a Japanese text with neither line ends
    nor spaces to cut at; no character is lost and every chunk keeps its label."""
    data = explorer_data()
    unit = EN + JA + RU if kind == "mixed" else JA
    big = (unit * (300_000 // len(unit) + 1))[:300_000]
    data["docs"][0] = dict(data["docs"][0], text=big, n_chars=300_000)
    p = data["passages"]["0"]
    n = p["n_chunks"]
    starts = range(0, 300_000, 500)
    for key, values in (
        ("id", [f"guide.md#b{i}" for i in range(len(starts))]),
        ("doc", [0] * len(starts)),
        ("start", list(starts)),
        ("end", [min(300_000, s + 550) for s in starts]),
        ("tokens", [128] * len(starts)),
        ("window", [-1] * len(starts)),
        ("text", [None] * len(starts)),
    ):
        p[key] = p[key][:n] + values  # more chunks of job 0 (it has no other passages)
    p["n_chunks"] = len(p["id"])
    path = site["root"] / f"big-{kind}.html"
    path.write_text(_page(data), encoding="utf-8")
    o = opened().open(path, "#document=guide.md&job=0")
    assert o.page.locator(".x-doc .x-clabel").count() >= 600
    parts = o.page.evaluate(
        """() => Array.from(document.querySelectorAll('.x-doc .x-part'), part =>
             Array.from(part.children).filter(c => !c.classList.contains('x-clabel'))
               .map(c => c.textContent).join(''))"""
    )
    assert len(parts) >= 15 and max(len(t) for t in parts) <= 3 * 4000 + 1000
    assert "".join(parts) == big


READ_DATA = """() => {
  const s = document.getElementById('sweep-explorer-data');
  return (s && JSON.parse(s.textContent)) || window.sweepExplorerData || null;
}"""


@pytest.mark.e2e
def test_the_explorer_of_a_real_sweep_of_the_tiny_corpus(opened, tmp_path):
    import subprocess
    import sys
    from urllib.parse import quote

    from paths import ROOT

    env = {k: v for k, v in os.environ.items() if k != "HF_HUB_OFFLINE"}
    sweep = tmp_path / "sweep"
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "sweep",
            "dataset=tiny",
            "chunk.size=32,64",
            f"runtime.cache_dir={tmp_path / 'cache'}",
            f"hydra.sweep.dir={sweep}",
            "runtime.show_progress=false",
            "eval.n_boot=100",
        ],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    o = opened().open(sweep / "report.html")
    page = o.page
    assert page.locator("#explorer .x-missing").count() == 0
    data = page.evaluate(READ_DATA)
    assert data["format"] == "sweep-explorer" and len(data["jobs"]) == 2
    a, b = (j["job"] for j in data["jobs"])
    q = next(
        q
        for q in data["questions"]
        if q["gold"]
        and q["gold"][0]["start"] is not None
        and data["docs"][q["gold"][0]["doc"]]["text"] is not None
    )
    o.go(f"#question={quote(q['id'], safe='')}&a={a}&b={b}")
    g = q["gold"][0]
    mark = page.locator(".x-evidence mark").first
    assert mark.inner_text() == data["docs"][g["doc"]]["text"][g["start"] : g["end"]]
    assert _in_window(page, mark)
    for side in "ab":
        assert page.locator(f'.x-col[data-side="{side}"] .x-hit').count() >= 1
    doc = data["docs"][g["doc"]]
    o.go(f"#document={quote(doc['id'], safe='')}&job={a}")
    p = data["passages"][str(a)]
    expected = [p["id"][i] for i in range(p["n_chunks"]) if p["doc"][i] == g["doc"]]
    labels = page.locator(".x-doc .x-clabel").all_inner_texts()
    assert expected and [t.split(" · ")[0] for t in labels] == expected
    page.set_viewport_size({"width": 800, "height": 900})
    assert page.evaluate("document.documentElement.scrollWidth") <= 800


def test_a_long_passage_scrolls_to_its_evidence(opened, tmp_path):
    """A parent passage shows its first lines; evidence near its end is scrolled into its
    box, so both columns show the marked text without a search."""
    data = explorer_data()
    qi = next(i for i, q in enumerate(data["questions"]) if q["id"] == "q5")
    guide = data["docs"][0]["text"]
    end = len(guide) - 20
    data["questions"][qi]["gold"] = [{"doc": 0, "start": end - 50, "end": end, "grade": 1}]
    side = data["passages"]["5"]
    parent = next(
        i for i in range(side["n_chunks"], len(side["id"])) if side["id"][i] == "guide.md#p0"
    )
    side["end"][parent] = len(guide)  # a parent of the whole guide: 20 lines and more
    data["hits"]["5"]["p"][qi][0] = parent
    path = tmp_path / "report.html"
    path.write_text(_page(data), encoding="utf-8")
    o = opened(width=1400, height=900).open(path, "#question=q5&a=0&b=5")
    box = o.page.locator('.x-col[data-side="b"] .x-chunk').first
    mark = box.locator("mark").first
    assert mark.inner_text() == guide[end - 50 : end]
    inside = o.page.evaluate(
        """([b, m]) => { const B = b.getBoundingClientRect(), M = m.getBoundingClientRect();
           return b.scrollTop > 0 && M.top >= B.top && M.bottom <= B.bottom; }""",
        [box.element_handle(), mark.element_handle()],
    )
    assert inside


def test_a_chunk_on_the_evidences_page_is_credited_when_pages_are_scored(opened, tmp_path):
    # q3's evidence runs over manual.pdf's page break; job 0's last chunk of manual.pdf is on
    # page 2 and holds none of the evidence's characters.
    data = explorer_data()
    p = data["passages"]["0"]
    last = max(i for i in range(p["n_chunks"]) if p["doc"][i] == 2)
    data["hits"]["0"]["p"][2] = [last]
    data["hits"]["0"]["s"][2] = [0.5]
    data["hits"]["0"]["first"] = None
    for level, credited in (("span", False), ("page", True)):
        data["primary"] = {"label": f"{level} recall@5", "level": level, "metric": "recall@5"}
        path = tmp_path / f"{level}.html"
        path.write_text(_page(data), encoding="utf-8")
        page = opened().open(path, "#question=q3&a=0&b=2").page
        hit = page.locator('.x-col[data-side="a"] .x-hit').first
        assert hit.locator(".x-cover").inner_text() == "is on gold 1's p. 2"
        assert ("x-rel" in hit.get_attribute("class")) is credited
