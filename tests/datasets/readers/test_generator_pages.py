"""Both HTML readers on pages in the shape documentation generators write (Sphinx, DocBook,
Texinfo, MkDocs, Docusaurus, a plain page): every word of the main text, in its order,
and none of the navigation."""

from __future__ import annotations

import re

import pytest

from documents import check_invariants
from generator_pages import GENERATORS, NAVIGATION, fidelity, sphinx
from sweep.datasets.readers.html import HtmlReader, MarkitdownHtmlReader

READERS = [HtmlReader(), MarkitdownHtmlReader()]
PAGES = {name: build() for name, build in GENERATORS.items()}


@pytest.fixture(params=READERS, ids=lambda r: r.name)
def reader(request):
    return request.param


def read(reader, html: str, filename: str = "page.html"):
    extracted = reader.read(html.encode("utf-8"), filename)
    check_invariants(extracted)
    return extracted


@pytest.mark.parametrize("generator", PAGES)
def test_every_word_of_the_main_text_is_kept_in_order(reader, generator) -> None:
    page = PAGES[generator]
    text = read(reader, page.html).text
    recall, order = fidelity(page.main_words, text)
    assert (recall, order) == (1.0, 1.0), text


@pytest.mark.parametrize("generator", PAGES)
def test_inline_code_stays_in_place(reader, generator) -> None:
    # Sphinx's :file: role puts the placeholder in <em> inside the literal, DocBook an
    # <em class="replaceable">, Texinfo a <var>: trafilatura moved it to the sentence's end.
    text = read(reader, PAGES[generator].html).text
    assert (
        "The preferred interpreter is /usr/bin/python3 or /usr/bin/python3.Y if it requires "
        "Python 3.Y. Modules go to /usr/lib/python2.Y/dist-packages, where Y is the minor version, "
        "and are byte-compiled by py3compile at install time."
    ) in text


@pytest.mark.parametrize("generator", PAGES)
def test_definition_terms_are_kept_under_their_heading(reader, generator) -> None:
    text = read(reader, PAGES[generator].html).text
    section = re.split(r"^#+ Control fields\n", text, maxsplit=1, flags=re.MULTILINE)[1]
    lines = [
        re.sub(r"^(?:- |:\s+)", "", line).strip() for line in section.splitlines() if line.strip()
    ]
    assert lines[:4] == [
        "mail",
        "The mailing list address for discussion of this package.",
        "Maintainer",
        "The person who looks after the package and answers its bugs.",
    ]


@pytest.mark.parametrize("generator", PAGES)
def test_navigation_is_dropped(reader, generator) -> None:
    # Texinfo's "Next: ..., Previous: ..., Up: ... [Index]" line and DocBook's Prev/Home/Next
    # tables carry no <nav> or telling class: their links (rel, accesskey) say what they are.
    text = read(reader, PAGES[generator].html).text
    assert [word for word in NAVIGATION if word in text] == []


@pytest.mark.parametrize("generator", PAGES)
def test_code_blocks_keep_no_markup(reader, generator) -> None:
    # DocBook's screen wraps what the user types in <strong>, Texinfo's example too.
    text = read(reader, PAGES[generator].html).text
    assert re.search(
        r"^\$ make install PREFIX=/opt/packager\ninstalled 12 modules$", text, re.MULTILINE
    ), text
    assert "**" not in text and "`" not in text.replace("```", "")


@pytest.mark.parametrize(
    "inline",
    [
        "Type <code><b>make install</b></code> and wait for the build to end.",
        "Type <code class='code'><strong class='strong'>make</strong> install</code> and wait for the build to end.",
        "Type <samp class='file'><var class='var'>make</var> install</samp> and wait for the build to end.",
        "Type <kbd><kbd>make</kbd> <kbd>install</kbd></kbd> and wait for the build to end.",
    ],
)
def test_emphasis_inside_inline_code_is_its_text_in_place(reader, inline) -> None:
    html = (
        f"<html><head><title>Build</title></head><body><article><h1>Build</h1><p>This page says how "
        f"to build the packager from its source.</p><p>{inline}</p></article></body></html>"
    )
    text = read(reader, html).text
    assert "Type make install and wait for the build to end." in text, text


def test_preformatted_lines_broken_by_br_stay_lines(reader) -> None:
    # Docusaurus ends each line of a code block with <br> inside <code>.
    html = (
        "<html><body><article><h1>Build</h1><p>Run these two commands one after the other.</p>"
        "<pre><code><span class='token-line'>npm ci<br></span><span class='token-line'>npm run build"
        "<br></span></code></pre></article></body></html>"
    )
    assert "npm ci\nnpm run build" in read(reader, html).text


def test_title_is_the_documents_title_not_its_first_heading(reader) -> None:
    # As a Sphinx document that opens with its abstract, whose first heading is "Abstract":
    # the first heading is not what the document is called.
    extracted = read(reader, sphinx(page_title="Debian Python Policy").html)
    assert extracted.title == "Debian Python Policy"
    assert extracted.headings[0].title == "Installing the packager"


@pytest.mark.parametrize("generator", PAGES)
def test_title_is_the_title_tag_without_the_sites_name(reader, generator) -> None:
    assert read(reader, PAGES[generator].html).title == PAGES[generator].title


@pytest.mark.parametrize(
    ("title", "heading", "expected"),
    [
        ("Install — Packager 2.1 documentation", "Abstract", "Install"),
        ("Install - Packager", "Install", "Install"),
        ("Packager | Install", "Install", "Install"),
        ("What's new - Python 3.12 - Docs", "Introduction", "What's new - Python 3.12"),
        ("Python 3.12 - What's new", "Python 3.12 - What's new", "Python 3.12 - What's new"),
        ("Chapter 2. Installing", "Chapter 2. Installing", "Chapter 2. Installing"),
        ("Opening hours", "Hours", "Opening hours"),
        ("Self-hosting", "Self-hosting", "Self-hosting"),
    ],
)
def test_site_names_are_taken_off_titles(reader, title, heading, expected) -> None:
    html = (
        f"<html><head><title>{title}</title></head><body><article><h1>{heading}</h1>"
        "<p>The page's one paragraph, long enough to be its main text.</p></article></body></html>"
    )
    assert read(reader, html).title == expected


def test_a_texinfo_title_loses_its_manuals_name(reader) -> None:
    html = (
        '<html><head><title>Overview (GNU Sed 4.9)</title><meta name="Generator" content="makeinfo">'
        "</head><body><h2>1 Overview</h2><p>sed is a stream editor: it filters and transforms text.</p>"
        "</body></html>"
    )
    assert read(reader, html).title == "Overview"
    plain = html.replace('<meta name="Generator" content="makeinfo">', "")
    assert (
        read(reader, plain).title == "Overview (GNU Sed 4.9)"
    )  # (elsewhere brackets are the title's)


def test_a_link_to_the_next_page_inside_a_sentence_is_the_sentences(reader) -> None:
    html = (
        "<html><body><article><h1>Build</h1><p>The build takes a few minutes on a laptop.</p><p>See "
        "<a rel='next' accesskey='n' href='ch3.html'>the next chapter</a> for its options.</p>"
        "</article></body></html>"
    )
    assert "See the next chapter for its options." in read(reader, html).text


def test_a_markdown_renderers_code_block_stays_a_code_block(reader) -> None:
    html = (
        "<html><body><article><h1>Token</h1><p>Request a token with this body, as JSON.</p>"
        '<pre><code class="language-json">{\n  "scope": "<b>read</b>",\n  "ttl": 30\n}</code></pre>'
        "<p>The token is valid for thirty minutes.</p></article></body></html>"
    )
    assert '```\n{\n  "scope": "read",\n  "ttl": 30\n}\n```' in read(reader, html).text
