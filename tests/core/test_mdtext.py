"""``sweep.core.mdtext``: text from data in Markdown renders as itself, in a table cell and in
prose, and adds no column, row, tag or link (rendered by a CommonMark renderer with GFM
tables, as GitHub renders ``$GITHUB_STEP_SUMMARY`` and results.md)."""

from __future__ import annotations

import html
import re

from hypothesis import given, settings
from hypothesis import strategies as st
from markdown_it import MarkdownIt

from sweep.core.mdtext import md_text

RENDER = MarkdownIt("commonmark").enable("table").render
HOSTILE = [
    "new|<img src=x onerror=alert(1)>",
    "two\nlines | x",
    "![pixel](https://evil/p.png)",
    "[click](javascript:alert(1))",
    "a\\|b",
    "`code` *em* _em_ ~~s~~",
    "# heading",
    "1. list",
    "- item",
    "&lt;script&gt;",
    "[ref]: https://evil",
    "\x1b[31mred\u202eevil",
    "<https://evil>",
    "x\r\ny\u2028z",
]


def _shown(text: str) -> str:
    """What a reader should see: controls, bidi marks and invisible characters as their
    codes, then every run of whitespace as one space (the text on one line)."""
    escaped = re.sub(
        "[\x00-\x08\x0e-\x1f\x7f-\x84\x86-\x9f\u061c\u200b-\u200f\u202a-\u202e"
        "\u2060-\u2069\ufeff\ud800-\udfff]",
        lambda m: m.group().encode("unicode_escape").decode("ascii"),
        text,
    )
    return " ".join(escaped.split())


def _cells(rendered: str) -> list[str]:
    body = rendered.split("<tbody>", 1)[1]
    assert body.count("<tr>") == 1, rendered  # one row: no line break got out
    return re.findall(r"<td>(.*?)</td>", body, flags=re.S)


def _check_cell(text: str) -> None:
    rendered = RENDER(
        f"| a | b | c |\n|---|---|---|\n| x | {md_text(text, starts_line=False)} | y |\n"
    )
    cells = _cells(rendered)
    assert len(cells) == 3 and cells[0] == "x" and cells[2] == "y", rendered  # no new column
    assert "<" not in cells[1], rendered  # no tag, no link, no emphasis
    assert html.unescape(cells[1]) == _shown(text).strip()


def _check_prose(text: str) -> None:
    if not _shown(text).strip():
        return
    for line, tag in ((md_text(text), "p"), (f"- {md_text(text)}", "li")):
        rendered = RENDER(line).strip()
        inner = re.fullmatch(rf"(?:<ul>\s*)?<{tag}>(.*)</{tag}>(?:\s*</ul>)?", rendered, re.S)
        assert inner is not None, rendered  # one paragraph or item: no heading, no new list
        assert "<" not in inner.group(1), rendered
        assert html.unescape(inner.group(1)) == _shown(text).strip()


def test_hostile_names_stay_in_their_cell_and_show_as_written():
    for text in HOSTILE:
        _check_cell(text)
        _check_prose(text)
    # what sweep itself writes reads as before
    assert md_text("0.550 [0.41, 0.67]") == "0.550 [0.41, 0.67]"
    assert md_text("-0.05", starts_line=False) == "-0.05" and md_text("-0.05") == "\\-0.05"
    assert md_text("by_source.md, cl100k_base") == "by_source.md, cl100k_base"
    assert md_text("_em_ a__b") == "\\_em\\_ a\\_\\_b"


@settings(max_examples=300, deadline=None)
@given(st.text(max_size=40))  # lone surrogates too: a folder name that is not UTF-8 has them
def test_any_text_renders_as_itself(text):
    _check_cell(text)
    _check_prose(text)


@settings(max_examples=300, deadline=None)
@given(
    st.lists(
        st.sampled_from(list("|<>&`*_~[]()!#-+=.:\\ \n1aé_") + ["\x1b", "\u202e"]), max_size=16
    ).map("".join)
)
def test_any_markup_renders_as_itself(text):
    _check_cell(text)
    _check_prose(text)
