"""The HTML readers on pages with the boilerplate real sites wrap around their content."""

from __future__ import annotations

import re

import pytest

from documents import (
    BOILERPLATE,
    check_invariants,
    parse_markdown,
    plain_inline,
    render_html,
    sentences,
)
from paths import ROOT
from sweep.datasets.readers.base import UnreadableFile
from sweep.datasets.readers.html import HtmlReader, MarkitdownHtmlReader, decode_html

CORPUS_DOC = (
    ROOT
    / "src"
    / "sweep"
    / "corpora"
    / "kestrel"
    / "docs"
    / "products"
    / "aq200-user-manual-v3.0.md"
)
MARKDOWN = CORPUS_DOC.read_text(encoding="utf-8").split("\n## 3. ")[0]  # sections 1 and 2
TITLE = "AQ-200 Air Quality Sensor – User Manual v3.0"

READERS = [HtmlReader(), MarkitdownHtmlReader()]


@pytest.fixture(params=READERS, ids=lambda r: r.name)
def reader(request):
    return request.param


def read(reader, html: str | bytes, filename: str = "page.html"):
    extracted = reader.read(html.encode("utf-8") if isinstance(html, str) else html, filename)
    check_invariants(extracted)
    return extracted


def leaked(text: str, body: str) -> list[str]:
    body = " ".join(plain_inline(body).split())
    return [s for group in BOILERPLATE.values() for s in group if s not in body and s in text]


def test_main_content_only(reader) -> None:
    text = read(reader, render_html(TITLE, MARKDOWN)).text
    assert leaked(text, MARKDOWN) == []
    assert "<" not in text.replace("<=", "") and "dataLayer" not in text and "{" not in text


def test_every_body_sentence_is_kept_verbatim(reader) -> None:
    text = read(reader, render_html(TITLE, MARKDOWN)).text
    expected = sentences(MARKDOWN)
    assert len(expected) > 10
    assert [s for s in expected if s not in text] == []
    assert "**" not in text and "\\" not in text and "`" not in text  # no inline markup or escapes


def test_headings_lists_and_tables_are_markdown(reader) -> None:
    extracted = read(reader, render_html(TITLE, MARKDOWN))
    headings = [
        (b.level, plain_inline(b.text)) for b in parse_markdown(MARKDOWN) if b.kind == "heading"
    ]
    assert [(h.level, h.title) for h in extracted.headings] == headings
    text = extracted.text
    assert extracted.title == TITLE and text.startswith(f"# {TITLE}\n")
    assert "\n- SETUP button refers to" in text
    assert re.search(r"^1\. AQ-200 sensor unit", text, re.MULTILINE)
    assert re.search(
        r"^\| *Field *\| *Value *\|\n\| *-+ *\| *-+ *\|\n\| *Document number *\|",
        text,
        re.MULTILINE,
    )


def test_a_short_page_keeps_its_heading_and_text(reader) -> None:
    extracted = read(
        reader,
        render_html(
            "Holiday closure", "# Holiday closure\n\nThe office is closed from 24 December."
        ),
    )
    assert extracted.text == "# Holiday closure\n\nThe office is closed from 24 December.\n"


def test_headings_come_back_on_a_page_of_bare_divs() -> None:
    # No tag or class names to go by: trafilatura's fallback drops headings; they are put back.
    extracted = read(HtmlReader(), render_html(TITLE, MARKDOWN, semantic=False))
    headings = [plain_inline(b.text) for b in parse_markdown(MARKDOWN) if b.kind == "heading"]
    assert [h.title for h in extracted.headings] == headings
    assert [s for s in sentences(MARKDOWN) if s not in extracted.text] == []


def test_title_is_the_title_tag_else_the_h1_else_the_stem(reader) -> None:
    no_h1 = "<html><head><title>Opening hours</title></head><body><article><p>We open at nine every weekday.</p></article></body></html>"
    assert read(reader, no_h1).title == "Opening hours"
    no_title = "<html><body><article><h1>Hours</h1><p>We open at nine every weekday and close at six.</p></article></body></html>"
    assert read(reader, no_title).title == "Hours"
    bare = "<html><body><article><p>We open at nine every weekday and close at six.</p></article></body></html>"
    assert read(reader, bare, "site/hours.html").title == "hours"


def test_a_page_of_boilerplate_only_has_no_main_text(reader) -> None:
    for html in (
        render_html("Nothing", ""),
        "<html><body><nav><a href='/'>Home</a></nav><script>x()</script></body></html>",
        "<!-- nothing -->",
    ):
        with pytest.raises(
            UnreadableFile, match="^no main text: the page holds only navigation/boilerplate$"
        ):
            reader.read(html.encode(), "empty.html")
    with pytest.raises(UnreadableFile, match="^empty file$"):
        reader.read(b"  \n", "blank.html")


def test_bytes_are_decoded_by_meta_charset_else_utf8_else_windows_1252() -> None:
    page = "<html><head>{meta}</head><body><p>Café: €3 “to go”</p></body></html>"
    assert "€3 “to go”" in decode_html(
        page.format(meta='<meta charset="windows-1252">').encode("cp1252")
    )
    legacy = page.format(
        meta='<meta http-equiv="Content-Type" content="text/html; charset=ISO-8859-1">'
    )
    assert "Café: €3" in decode_html(legacy.encode("cp1252"))  # latin-1 means windows-1252
    assert "Café: €3" in decode_html(page.format(meta="").encode("utf-8"))
    assert "Café: €3" in decode_html(page.format(meta="").encode("cp1252"))
    assert decode_html(b"\xef\xbb\xbf<p>x</p>") == "<p>x</p>"
    assert "Café" in decode_html(page.format(meta="").encode("utf-16"))


def test_a_windows_1252_page_reads(reader) -> None:
    html = render_html(
        "Preços", "# Preços\n\nO sensor custa €1 290 “com IVA” em Lisboa, disse a equipa."
    )
    text = read(
        reader, html.replace('charset="utf-8"', 'charset="windows-1252"').encode("cp1252")
    ).text
    assert "O sensor custa €1 290 “com IVA” em Lisboa, disse a equipa." in text


def test_a_sidebars_heading_is_not_put_back(reader) -> None:
    # An "On this page" box lists the page's own headings; its heading is boilerplate.
    html = (
        "<html><body><aside class='toc'><h2>On this page</h2><ul><li><a href='#a'>Installing the bracket</a>"
        "</li></ul></aside><article><h1>Mounting guide</h1><h2>Installing the bracket</h2>"
        "<p>Fix the bracket to the pole with both U-bolts before you lift the sensor.</p></article></body></html>"
    )
    extracted = read(reader, html)
    assert "On this page" not in extracted.text
    assert [h.title for h in extracted.headings] == ["Mounting guide", "Installing the bracket"]


DOCS_PAGE = """<!DOCTYPE html><html><head><title>Policy — Example docs</title></head><body>
<div role="main" class="document">
<h1>Packaging policy<a class="headerlink" href="#packaging-policy" title="Permalink">¶</a></h1>
<p>Every package is built
      from its source
      in a clean chroot,   as
      <a href="#builds">the build section</a> explains.</p>
<h2 id="builds"><a class="hash-link" href="#builds">#</a>Builds</h2>
<p>A build&nbsp;log is kept for a year.</p>
<dl><dt><code>build(path)</code><a class="headerlink" href="#build">¶</a></dt>
<dd><p>Builds the package in the folder given, and returns the log of that build.</p></dd></dl>
<h2>Example<a class="anchor" href="#example"><svg aria-hidden="true" width="16"></svg></a></h2>
<pre>make build
    --jobs 2</pre>
</div></body></html>"""


def test_permalink_marks_are_dropped_and_whitespace_reads_as_a_browser_shows_it(reader) -> None:
    extracted = read(reader, DOCS_PAGE)
    text = extracted.text
    assert [h.title for h in extracted.headings] == ["Packaging policy", "Builds", "Example"]
    assert extracted.title == "Policy"  # (its <title>, less the site's name)
    assert "¶" not in text and "#builds" not in text and not re.search(r"^#+ #", text, re.MULTILINE)
    assert (
        "Every package is built from its source in a clean chroot, as the build section explains."
        in text
    )
    assert re.search(
        "A build[ \u00a0]log is kept for a year.", text
    )  # (trafilatura turns &nbsp; to a space)
    assert "make build\n    --jobs 2" in text  # preformatted text as it is
    assert "Builds the package in the folder given, and returns the log of that build." in text


def test_an_xhtml_page_with_an_xml_declaration_reads(reader) -> None:
    page = (
        '<?xml version="1.0" encoding="ISO-8859-1"?>\n'
        '<!DOCTYPE html PUBLIC "-//W3C//DTD XHTML 1.0 Transitional//EN" '
        '"http://www.w3.org/TR/xhtml1/DTD/xhtml1-transitional.dtd">\n'
        '<html xmlns="http://www.w3.org/1999/xhtml"><head><meta http-equiv="Content-Type" '
        'content="text/html; charset=ISO-8859-1" /><title>Module transform</title></head><body>'
        "<h1>Module transform</h1><p>The transform module applies a stylesheet to a document, "
        'caf\xe9 included.</p><p><a href="../index.html"><img src="logo.gif" alt="Logo" /></a></p>'
        "</body></html>"
    ).encode("latin-1")
    extracted = read(reader, page, "transform.html")
    assert (
        "The transform module applies a stylesheet to a document, café included." in extracted.text
    )
    assert extracted.title == "Module transform" and "logo" not in extracted.text.casefold()
