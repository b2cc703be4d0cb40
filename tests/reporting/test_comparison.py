"""``sweep.reporting.comparison``: several sweeps on one page, tested together only when they
scored the same evaluation set the same way, and whether two question sets rank one grid alike.
Sweep folders are written through sweep's own types (tests/sweepdirs.py, no model)."""

from __future__ import annotations

import re
import struct
import zlib
from html import unescape

import numpy as np
from scipy.stats import kendalltau

from sweep.reporting.comparison import compare_sweeps, sweep_agreements, sweep_name, why_not_pooled
from sweep.reporting.pictures import plot_name
from sweep.reporting.sweepreport import build_report
from sweepdirs import base, make_grid, make_job

GRID3 = [(64, 0), (128, 0), (256, 0)]


def _png(path):
    """A valid 1x1 PNG (the page embeds pictures as data URIs)."""

    def chunk(kind, data):
        return (
            struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))
        )

    raw = (
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", struct.pack(">IIBBBBB", 1, 1, 8, 0, 0, 0, 0))
        + chunk(b"IDAT", zlib.compress(b"\x00\x00"))
        + chunk(b"IEND", b"")
    )
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(raw)


def _sweep(folder, scores, **kw):
    make_grid(folder, dict(zip(GRID3, scores)), **kw)
    return build_report(folder)


def _rows(html):
    body = re.search(r"<tbody>(.*?)</tbody>", html).group(1)
    return [
        (
            cls or "",
            [
                " ".join(unescape(re.sub(r"<[^>]+>", " ", c)).split())
                for c in re.findall(r"<td[^>]*>(.*?)</td>", cells)
            ],
        )
        for cls, cells in re.findall(r'<tr(?: class="([^"]*)")?>(.*?)</tr>', body)
    ]


def test_a_sweep_is_named_by_its_last_two_folders(tmp_path):
    assert (
        sweep_name(tmp_path / "outputs" / "grid" / "2024-05-01_10-00-00")
        == "grid/2024-05-01_10-00-00"
    )


# --------------------------------------------------------------------------- pooling


def test_sweeps_of_one_evaluation_set_scored_alike_are_pooled(tmp_path):
    a = _sweep(tmp_path / "a", [base(), np.ones(60), base(seed=1)])
    b = _sweep(tmp_path / "b", [base(seed=2), base(seed=3), base(seed=4)])
    assert why_not_pooled([a, b]) is None


def test_different_evaluation_sets_are_named_by_content(tmp_path):
    a = _sweep(tmp_path / "x" / "a", [base()] * 3, dataset="evalset", fingerprint="a" * 16)
    b = _sweep(tmp_path / "x" / "b", [base()] * 3, dataset="evalset", fingerprint="b" * 16)
    why = why_not_pooled([a, b])
    assert why == (
        "No test across sweeps: they scored different evaluation sets (by content: "
        "x/a: evalset #aaaaaaaa, x/b: evalset #bbbbbbbb); each sweep is tested on its own."
    )


def test_different_scoring_settings_are_listed_key_by_key(tmp_path):
    a = _sweep(tmp_path / "a", [base()] * 3)
    b = _sweep(tmp_path / "b", [base()] * 3, min_coverage=0.3, fingerprint="c" * 16)
    why = why_not_pooled([a, b])
    assert "they scored different evaluation sets" in why and " and " in why
    assert "their scoring settings differ (eval.min_coverage: 0.5 vs 0.3)" in why


def test_one_sweep_already_split_in_groups_is_not_pooled_with_another(tmp_path):
    make_job(tmp_path / "a", 0, 64, 0, base(), fingerprint="a" * 16)
    make_job(tmp_path / "a", 1, 128, 0, base(), fingerprint="b" * 16)
    make_job(tmp_path / "b", 0, 64, 0, base(), fingerprint="a" * 16)
    why = why_not_pooled([build_report(tmp_path / "a"), build_report(tmp_path / "b")])
    assert why.startswith(
        "No test across sweeps: their rows were scored on several evaluation sets"
    )


# --------------------------------------------------------------------------- agreement of question sets


def test_one_grid_on_two_question_sets_says_how_alike_they_rank_it(tmp_path):
    sa = [base(seed=s) for s in (1, 2, 3)]
    sb = [base(seed=s) for s in (4, 5, 6)]
    sb[1] = np.ones(60)
    a = _sweep(tmp_path / "r" / "a", sa, dataset="synthetic-set", fingerprint="a" * 16)
    b = _sweep(tmp_path / "r" / "b", sb, dataset="handmade", fingerprint="b" * 16)
    (line,) = sweep_agreements([a, b])
    tau = kendalltau([s.mean() for s in sa], [s.mean() for s in sb]).statistic
    assert line.startswith(
        "r/a vs r/b (synthetic-set, 60 questions; handmade, 60): Kendall's τ "
        "between their rankings of the 3 shared settings on span recall@5 = "
        f"{tau:.2f} ["
    )
    pa, pb = a.decision.decisions[0].chosen_job, b.decision.decisions[0].chosen_job
    assert pb == 1
    if pa == pb:
        assert line.endswith(f"both recommend {a.labels[pa]}.")
    else:
        assert line.endswith(f"r/a recommends {a.labels[pa]}, r/b {a.labels[pb]}.")


def test_both_recommending_the_same_setting_is_said_once(tmp_path):
    good = [base(seed=1), np.ones(60), base(seed=2)]
    a = _sweep(tmp_path / "a", good, fingerprint="a" * 16)
    b = _sweep(tmp_path / "b", [base(seed=3), np.ones(60), base(seed=4)], fingerprint="b" * 16)
    (line,) = sweep_agreements([a, b])
    assert line.endswith("both recommend size=128 overlap=0.")


def test_no_agreement_line_unless_it_is_one_grid_on_two_question_sets(tmp_path):
    a = _sweep(tmp_path / "a", [base(seed=1), base(seed=2), base(seed=3)], fingerprint="a" * 16)
    same_set = _sweep(
        tmp_path / "b", [base(seed=4), base(seed=5), base(seed=6)], fingerprint="a" * 16
    )
    assert sweep_agreements([a, same_set]) == []
    other_grid = tmp_path / "c"
    make_grid(
        other_grid,
        {(64, 0): base(), (512, 0): base(seed=1), (1024, 0): base(seed=2)},
        fingerprint="c" * 16,
    )
    assert sweep_agreements([a, build_report(other_grid)]) == []  # one shared setting
    bigger = tmp_path / "d"  # a's grid and more: not the same grid either way
    make_grid(
        bigger, {**dict(zip(GRID3, [base()] * 3)), (512, 0): base(seed=9)}, fingerprint="d" * 16
    )
    assert sweep_agreements([build_report(bigger), a]) == []


# --------------------------------------------------------------------------- the page


def test_the_comparison_page_pools_every_setting_of_every_sweep(tmp_path):
    a = _sweep(tmp_path / "runs" / "a", [base(), base(seed=1), base(seed=2)])
    bdir = tmp_path / "runs" / "b"
    make_grid(bdir, {(512, 0): np.ones(60), (512, 64): base(seed=3)})
    make_job(bdir, 2, 64, 64, None, status="invalid", error="ValueError: overlap 64 >= size 64")
    b = build_report(bdir)
    out = compare_sweeps([a, b], tmp_path / "page.html")
    assert out == tmp_path / "page.html"
    html = out.read_text(encoding="utf-8")
    assert re.findall(r"<h2>(.*?)</h2>", html) == [
        "Recommendations",
        "All settings",
        "Side by side",
    ]
    rows = _rows(html)
    header = [unescape(h) for h in re.findall(r"<th>(.*?)</th>", html)]
    assert header[:3] == ["sweep", "size", "overlap"]
    assert "vs best (all sweeps)" in header and "vs best (own sweep)" in header
    assert [cells[0] for _, cells in rows] == ["runs/a"] * 3 + ["runs/b"] * 3
    across = header.index("vs best (all sweeps)")
    verdicts = [cells[across] for _, cells in rows]
    assert verdicts[3] == "best" and verdicts[5] == "–"  # b's perfect setting; the invalid row
    assert all(v.startswith("worse") for v in verdicts[:3] + verdicts[4:5])
    cls, cells = rows[5]
    assert cls == "bad" and cells[-1] == "invalid: ValueError: overlap 64 >= size 64"
    assert "best" in rows[3][0].split()
    assert (
        "vs best (all sweeps): every setting of every sweep against the overall best"
        in unescape(html)
    )
    # Each vs best column says its correction: over the pooled grid, and over each sweep's own.
    assert (
        "paired over the queries they share, p Holm-adjusted over 4 comparisons with the best."
    ) in unescape(html)
    assert "runs/a: vs best: p Holm-adjusted over 2 comparisons with the best" in unescape(html)
    assert "runs/a · runs/b" in html  # the subtitle names both


def test_sweeps_that_cannot_be_pooled_are_shown_side_by_side_with_the_reason(tmp_path):
    a = _sweep(tmp_path / "a", [base()] * 3, fingerprint="a" * 16)
    b = _sweep(tmp_path / "b", [base(seed=1)] * 3, fingerprint="b" * 16)
    html = compare_sweeps([a, b], tmp_path / "c.html").read_text(encoding="utf-8")
    assert "vs best (all sweeps)" not in html
    assert unescape(html).count("No test across sweeps: they scored different evaluation sets") == 1


def test_each_sweeps_pictures_are_embedded_when_they_were_drawn(tmp_path):
    a = _sweep(tmp_path / "a", [base(), np.ones(60), base(seed=1)])
    b = _sweep(tmp_path / "b", [base(seed=2), base(seed=3), base(seed=4)])
    p = a.decision.decisions[0].primary
    _png(a.sweep_dir / "plots" / plot_name("heatmap", p.level, p.metric))
    _png(a.sweep_dir / "plots" / plot_name("budget", p.level, p.measure.name))
    html = compare_sweeps([a, b], tmp_path / "c.html").read_text(encoding="utf-8")
    side = html[html.index("<h2>Side by side</h2>") :]
    first, second = side.split("<h3>")[1:3]
    assert first.count('src="data:image/png;base64,') == 2 and "(no pictures)" not in first
    assert "(no pictures)" in second
    assert not re.search(r'(src|href)="(?!data:|#)', html)  # nothing outside the file


def test_a_sweep_with_several_groups_keeps_its_budget_picture_on_the_page(tmp_path):
    from sweep.reporting.pictures import write_pictures

    multi = tmp_path / "m"
    make_job(multi, 0, 64, 0, base(), fingerprint="a" * 16)
    make_job(multi, 1, 128, 0, np.ones(60), fingerprint="a" * 16)
    make_job(multi, 2, 64, 0, base(seed=1), fingerprint="b" * 16)
    make_job(multi, 3, 128, 0, base(seed=2), fingerprint="b" * 16)
    rep = build_report(multi)
    drawn = {pic.path.name for pic in write_pictures(rep)}
    assert "budget_span_recall_1.png" in drawn  # the first group's budget picture exists
    other = _sweep(tmp_path / "o", [base(seed=3), base(seed=4), base(seed=5)])
    html = compare_sweeps([rep, other], tmp_path / "c.html").read_text(encoding="utf-8")
    first = html[html.index("<h2>Side by side</h2>") :].split("<h3>")[1]
    assert "by token budget" in first
