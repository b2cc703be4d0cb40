import base64
import re

from sweep.reporting.htmlkit import (
    Picture,
    Section,
    Table,
    marked,
    page,
    picture_html,
    table_html,
    write_page,
)

PNG_1x1 = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg=="
)


def test_table_escapes_cells_and_marks_rows():
    html = table_html(
        Table(
            ("size", "status"),
            (("128", "ok"), ("64", "invalid: <overlap> & size")),
            ("best", "bad"),
        )
    )
    assert "<th>size</th><th>status</th>" in html
    assert '<tr class="best"><td class="num">128</td><td class="short">ok</td></tr>' in html
    assert "invalid: &lt;overlap&gt; &amp; size" in html and "<overlap>" not in html


def test_picture_is_embedded_as_the_same_bytes(tmp_path):
    (tmp_path / "p.png").write_bytes(PNG_1x1)
    html = picture_html(Picture(tmp_path / "p.png", 'a "caption"'))
    data = re.search(r'src="data:image/png;base64,([^"]+)"', html).group(1)
    assert base64.b64decode(data) == PNG_1x1
    assert "a &quot;caption&quot;" in html


def test_page_is_one_self_contained_document(tmp_path):
    (tmp_path / "p.png").write_bytes(PNG_1x1)
    html = page(
        "sweep <report>",
        [
            Section("Pictures", picture_html(Picture(tmp_path / "p.png", "c"))),
            Section("", "<p>x</p>"),
        ],
        subtitle="dir",
    )
    assert html.startswith("<!DOCTYPE html>") and "<title>sweep &lt;report&gt;</title>" in html
    assert "<style>" in html and not re.search(r'(src|href)="(?!data:|#)', html)
    out = write_page(tmp_path / "r.html", html)
    assert out.read_text(encoding="utf-8") == html and not (tmp_path / "r.html.tmp").exists()


def test_gold_text_is_highlighted_inside_a_chunk():
    assert marked("ab<c>de", [(2, 5)]) == "ab<mark>&lt;c&gt;</mark>de"
    assert marked("abcdef", [(3, 5), (1, 4)]) == "a<mark>bcd</mark><mark>e</mark>f"
    assert marked("abc", [(2, 9)]) == "ab<mark>c</mark>"


def _png(path, width_in):
    from matplotlib.figure import Figure

    fig = Figure(figsize=(width_in, 2))
    fig.subplots().plot([0, 1], [0, 1])
    fig.savefig(path, dpi=100)
    return path


def test_a_click_opens_a_picture_full_size_without_any_script(tmp_path):
    html = picture_html(Picture(_png(tmp_path / "p.png", 5), "rank <histograms>"))
    fig = re.fullmatch(
        r'<div class="picture" id="(fig-\w+)-at"><figure class="zoom" id="\1">'
        r'<a href="#\1" title="open full size"><img alt="rank &lt;histograms&gt;" '
        r'width="500" height="200" src="data:image/png;base64,[^"]+"></a>'
        r'<a class="close" href="#\1-at" aria-label="close"></a>'
        r'<figcaption>rank &lt;histograms&gt;<span class="hint"> \(click to enlarge\)'
        r"</span></figcaption>"
        r"</figure></div>",
        html,
    )
    assert fig is not None
    css = page("r", [Section("", html)])
    assert "figure.zoom:target{position:fixed" in css and "<script" not in css
    # Another picture gets another id: one page holds many.
    assert fig.group(1) not in picture_html(Picture(_png(tmp_path / "q.png", 5), "c"))


def test_a_wide_picture_takes_a_whole_row(tmp_path):
    wide = picture_html(Picture(_png(tmp_path / "w.png", 13), "six panels"))
    narrow = picture_html(Picture(_png(tmp_path / "n.png", 5), "one heatmap"))
    assert wide.startswith('<div class="picture wide"')
    assert narrow.startswith('<div class="picture"')
    assert ".grid .picture.wide{grid-column:1/-1}" in page("r", [])


def test_the_recommended_row_gets_a_badge_only_on_its_own_row():
    html = table_html(
        Table(
            ("size", "vs best"),
            (("64", "≈ best (p=0.84), recommended"), ("128", "status: recommended")),
            ("tie pick", ""),
            badge="recommended",
        )
    )
    assert '<td class="short">≈ best (p=0.84)<span class="badge">recommended</span></td>' in html
    assert '<td class="short">status: recommended</td>' in html and '<tr class="tie pick">' in html
