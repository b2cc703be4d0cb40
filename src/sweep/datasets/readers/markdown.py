"""The Markdown that readers write: its headings, and its inline markup taken out.

Readers of structured formats (HTML, DOCX, PPTX, XLSX) write headings as ``#``
lines, lists as ``- `` and tables as Markdown tables, so ``chunk=markdown`` and
heading prefixes work on every format. Headings are then taken from the text
itself, not from the parser's tree, so a heading's ``start`` is by construction
the offset of its line in the text the offsets index.

The headings are the one parser's of sweep (:mod:`sweep.core.text.headings`), so the
headings a reader lists are the ones the chunkers cut at.

Inline markup is another matter: ``**bold**``, ``*em*``, ````code```` and the
backslash escapes of Markdown converters (``snake\\_case``, ``3 \\* 4``) are not
the document's text, and a quote taken from the document would not match a text
that has them. :func:`plain_markdown` keeps the block structure and drops them.
"""

from __future__ import annotations

import re

from sweep.core.text.headings import parse_headings
from sweep.datasets.readers.base import ExtractedHeading

__all__ = ["PLAIN_TEXT_FALLBACK", "markdown_headings", "markitdown_html", "plain_markdown"]

#: What a reader says when markitdown wrote a page as plain text.
PLAIN_TEXT_FALLBACK = (
    "nested too deeply for markitdown's Markdown conversion: read as plain "
    "text, without its headings, lists and tables"
)


def markitdown_html(html: str, warnings: list[str]) -> str:
    """markitdown's Markdown of an HTML page. A page nested past Python's recursion limit,
    which markitdown's converter cannot walk, is read as plain text (as markitdown itself
    would) and ``warnings`` says so. markitdown is asked to raise rather than fall back
    (``strict``): the fallback is seen here, not told by the wording of its warning."""
    from markitdown.converters import HtmlConverter

    try:
        return HtmlConverter().convert_string(html, strict=True).markdown or ""
    except RecursionError:
        from bs4 import BeautifulSoup

        warnings.append(PLAIN_TEXT_FALLBACK)
        soup = BeautifulSoup(html, "html.parser")
        for element in soup(["script", "style"]):
            element.extract()
        return (soup.find("body") or soup).get_text("\n", strip=True)


def markdown_headings(text: str) -> tuple[ExtractedHeading, ...]:
    """The Markdown headings of ``text`` as :func:`~sweep.core.text.headings.parse_headings`
    finds them (the chunkers' headings: ``#`` and setext headings outside fenced code);
    ``start`` is the offset of the heading's first line. A heading without a title
    (``####`` alone) names nothing and is left out."""
    return tuple(
        ExtractedHeading(h.level, h.title, h.start) for h in parse_headings(text) if h.title
    )


# Fences as plain_markdown keeps them (a block whose inline markup stays).
_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")
_CODE_SPAN = re.compile(r"(`+)(.+?)\1")
_STRONG = re.compile(r"(?<!\\)(\*\*|__)(?=\S)(.+?)(?<=\S)(?<!\\)\1")
_EMPHASIS = re.compile(r"(?<![\\\w*])\*(?=[^\s*])(.+?)(?<=[^\s\\*])\*(?![\w*])")
_ESCAPE = re.compile(r"\\([\\`*_{}\[\]()#+\-.!|>~<])")
_IMAGE = re.compile(r"!\[([^\]]*)\]\([^)]*\)")
_LINK = re.compile(r"\[([^\]]*)\]\([^)]*\)")
_BULLET = re.compile(r"^(\s*)[*+](?= )")
_EMPTY_ROW = re.compile(r"^\|(?:\s*\|)+\s*$")
_RULE_ROW = re.compile(r"^\|(?:\s*:?-{3,}:?\s*\|)+\s*$")


def plain_markdown(markdown: str) -> str:
    """Markdown with its block structure (``#`` headings, ``- `` lists, tables, code
    fences) and without inline markup, links' targets, images or HTML comments; a
    table whose header row is empty (Word tables have none) gets its first row as
    header. Runs of blank lines become one."""
    markdown = re.sub(r"<!--.*?-->", "", markdown, flags=re.DOTALL)
    out: list[str] = []
    fence: str | None = None
    for line in markdown.splitlines():
        if fence is not None:
            if line.lstrip(" ").startswith(fence):
                fence = None
            out.append(line.rstrip())
            continue
        if (m := _FENCE.match(line)) is not None:
            fence = m.group(1)[0] * 3
            out.append(line.rstrip())
            continue
        out.append(_BULLET.sub(r"\1-", _plain_line(line)).rstrip())
    i = 0
    while i + 2 < len(out):
        if _EMPTY_ROW.match(out[i]) and _RULE_ROW.match(out[i + 1]) and out[i + 2].startswith("|"):
            out[i : i + 3] = [out[i + 2], out[i + 1]]  # the first row becomes the header
        i += 1
    # (rows of empty cells hold no text: the spacer rows of a page laid out with tables)
    out = [line for line in out if not _EMPTY_ROW.match(line)]
    return re.sub(r"\n{3,}", "\n\n", "\n".join(out)).strip("\n")


def _plain_line(line: str) -> str:
    # Code spans stand in as private-use marks while the prose around them loses its markup,
    # so that bold around code (**`max_len`**) goes too and code keeps its * and _.
    if "\ue000" in line:  # (the mark in the text itself: no stand-ins)
        return _plain_prose(line)
    spans: list[str] = []

    def hold(m: re.Match[str]) -> str:
        spans.append(m.group(2).strip() or m.group(2))
        return f"\ue000{len(spans) - 1}\ue001"

    prose = _plain_prose(_CODE_SPAN.sub(hold, line))
    return _HELD.sub(lambda m: spans[int(m.group(1))], prose)


_HELD = re.compile("\ue000(\\d+)\ue001")


def _plain_prose(text: str) -> str:
    text = _LINK.sub(
        r"\1", _IMAGE.sub(r"\1", text)
    )  # (images first: a linked image nests one in a link)
    text = _STRONG.sub(r"\2", text)
    text = _EMPHASIS.sub(r"\1", text)
    return _ESCAPE.sub(r"\1", text)
