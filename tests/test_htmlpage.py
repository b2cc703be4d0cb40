import base64
import re

from sweep.htmlpage import (Picture, Section, Table, marked, page, picture_html, table_html,
                            worst_queries_html, write_page)
from sweep.breakdown import worst_first
from sweep.traces import Evidence, QueryTrace, Retrieved

PNG_1x1 = base64.b64decode("iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==")


def test_table_escapes_cells_and_marks_rows():
    html = table_html(Table(("size", "status"), (("128", "ok"), ("64", "invalid: <overlap> & size")),
                            ("best", "bad")))
    assert "<th>size</th><th>status</th>" in html
    assert '<tr class="best"><td class="num">128</td><td>ok</td></tr>' in html
    assert "invalid: &lt;overlap&gt; &amp; size" in html and "<overlap>" not in html


def test_picture_is_embedded_as_the_same_bytes(tmp_path):
    (tmp_path / "p.png").write_bytes(PNG_1x1)
    html = picture_html(Picture(tmp_path / "p.png", 'a "caption"'))
    data = re.search(r'src="data:image/png;base64,([^"]+)"', html).group(1)
    assert base64.b64decode(data) == PNG_1x1
    assert "a &quot;caption&quot;" in html


def test_page_is_one_self_contained_document(tmp_path):
    (tmp_path / "p.png").write_bytes(PNG_1x1)
    html = page("sweep <report>", [Section("Pictures", picture_html(Picture(tmp_path / "p.png", "c"))),
                                  Section("", "<p>x</p>")], subtitle="dir")
    assert html.startswith("<!DOCTYPE html>") and "<title>sweep &lt;report&gt;</title>" in html
    assert "<style>" in html and not re.search(r'(src|href)="(?!data:)', html)
    out = write_page(tmp_path / "r.html", html)
    assert out.read_text(encoding="utf-8") == html and not (tmp_path / "r.html.tmp").exists()


def test_gold_text_is_highlighted_inside_a_chunk():
    assert marked("ab<c>de", [(2, 5)]) == "ab<mark>&lt;c&gt;</mark>de"
    assert marked("abcdef", [(3, 5), (1, 4)]) == "a<mark>bcd</mark><mark>e</mark>f"
    assert marked("abc", [(2, 9)]) == "ab<mark>c</mark>"


def test_worst_queries_html():
    rec = QueryTrace("q1", "Why <not>?", "multi", None, (Evidence("a.md", 1, 5, 10, "56789"),),
                     (Retrieved(1, "a.md#0", "a.md", 0, 12, 3, 0.9, "0123456789ab"),
                      Retrieved(2, "b.md#0", "b.md", 0, 4, 1, 0.8, "zzzz")), {"span": (1,)})
    rows = worst_first({"q1": 0.0, "q2": 1.0}, {0: {"q1": 0.0, "q2": 1.0}}, {"q1": rec})
    html = worst_queries_html(rows, metric="span recall@5", setting="size=64", details=5)
    assert "Why &lt;not&gt;?" in html and "01234<mark>56789</mark>ab" in html
    assert "holds 100% of gold 1" in html and "no gold" in html
    assert "(no saved hits)" in html  # q2 has no hits.jsonl line
    assert html.index(">q1<") < html.index(">q2<")
