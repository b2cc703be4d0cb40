"""``sweep.reporting.html``: what report.html shows first, and how its rows are marked (no model)."""

import re
from html import unescape

import numpy as np

from sweep.reporting.html import render_html
from sweep.reporting.sweepreport import build_report
from sweepdirs import GRID, base, make_grid


def _rows(html: str, table: int = 0) -> list[tuple[str, list[str]]]:
    """``(class, cells)`` of each body row of the page's ``table``-th table."""
    body = re.findall(r"<tbody>(.*?)</tbody>", html)[table]
    return [
        (
            cls,
            [
                " ".join(unescape(re.sub(r"<[^>]+>", " ", c)).split())
                for c in re.findall(r"<td[^>]*>(.*?)</td>", cells)
            ],
        )
        for cls, cells in re.findall(r'<tr(?: class="([^"]*)")?>(.*?)</tr>', body)
    ]


def _header(html: str, table: int = 0) -> list[str]:
    head = re.findall(r"<thead>(.*?)</thead>", html)[table]
    return [unescape(h) for h in re.findall(r"<th>(.*?)</th>", head)]


def _text(html: str) -> str:
    """What a reader sees: the body without tags, styles or attributes."""
    body = html[html.index("<body>") :]
    return unescape(re.sub(r"<[^>]+>", " ", body))


def _best_is_not_the_pick(tmp_path):
    """Best: size=256 overlap=0 (two queries more); size=64 overlap=0 ties it and reads less."""
    b = base()
    scores = {so: b.copy() for so in GRID}
    better = b.copy()
    better[np.flatnonzero(b == 0)[:2]] = 1
    scores[(256, 0)] = better
    make_grid(tmp_path, scores)
    return build_report(tmp_path)


def test_the_recommended_row_is_marked_apart_from_the_best_and_a_legend_says_so(tmp_path):
    html = render_html(_best_is_not_the_pick(tmp_path), [])
    rows = _rows(html)
    header = _header(html)
    picks = [(cls, cells) for cls, cells in rows if "pick" in (cls or "").split()]
    assert len(picks) == 1
    cls, cells = picks[0]
    assert cells[:2] == ["64", "0"] and cls.split() == ["tie", "pick"]
    assert cells[header.index("vs best")] == "≈ best (p=1.00) recommended"
    assert '<span class="badge">recommended</span>' in html
    (best,) = [(c, cells) for c, cells in rows if "best" in (c or "").split()]
    assert best[1][:2] == ["256", "0"] and "pick" not in best[0]
    legend = re.search(r'<p class="legend">(.*?)</p>', html).group(1)
    assert "best: the highest mean" in unescape(legend) and "recommended: the cheapest" in legend
    # The cost table marks the same row.
    cost = _rows(html, 1)
    assert [c for c, cells in cost if "pick" in (c or "")] == ["tie pick"]


def test_the_verdict_sits_beside_the_settings(tmp_path):
    # A wide table scrolls at 1400 px: the verdict must not be among the columns scrolled away.
    html = render_html(_best_is_not_the_pick(tmp_path), [])
    assert _header(html)[:3] == ["size", "overlap", "vs best"]


def test_recommendation_is_said_once(tmp_path):
    text = _text(render_html(_best_is_not_the_pick(tmp_path), []))
    assert text.count("Recommendation") == 1
    assert "size=64 overlap=0 is not distinguishable from the best, size=256 overlap=0" in text


def test_a_set_that_cannot_tell_the_settings_apart_says_so_first(tmp_path):
    b = base(15)
    near = b.copy()
    near[np.flatnonzero(b)[:2]] = 0
    make_grid(tmp_path, {(64, 0): near, (256, 0): b})
    text = _text(render_html(build_report(tmp_path), []))
    said = text.index("These 15 questions cannot tell the settings apart")
    assert (
        said
        < text.index("size=64 overlap=0 is not distinguishable")
        < text.index("Comparison table")
    )


def test_the_comparison_page_marks_each_sweeps_pick_and_says_recommendation_once(tmp_path):
    from sweep.reporting.comparison import compare_sweeps

    a, b = tmp_path / "a", tmp_path / "b"
    rep_a = _best_is_not_the_pick(a)
    make_grid(b, {(512, 0): np.ones(60), (512, 64): base()})
    html = compare_sweeps([rep_a, build_report(b)], tmp_path / "c.html").read_text(encoding="utf-8")
    picks = [cells for cls, cells in _rows(html) if "pick" in (cls or "").split()]
    assert [(cells[0][-1], *cells[1:3]) for cells in picks] == [("a", "64", "0"), ("b", "512", "0")]
    assert '<p class="legend">' in html and _text(html).count("Recommendation") == 1
