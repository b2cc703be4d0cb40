"""Web pages: the page's own text as Markdown, without the site around it.

A saved web page is mostly not its content: menus, a cookie banner, a sidebar of
related links, a footer, scripts. Chunked whole, every chunk of every page of a
site would share that text, and retrieval would match it. Two readers:

- :class:`HtmlReader` (``trafilatura``, the default) first drops what the markup
  marks unmistakably as not content (scripts, styles, forms, ``<nav>``,
  ``<aside>``, ``<footer>``, a site ``<header>``, cookie banners, breadcrumbs,
  hidden elements), then lets trafilatura find the main content by its text, in
  ``favor_recall`` mode: on pages without semantic markup the default and
  precision modes dropped 38% of the body sentences. Measured on the bundled
  corpus as pages with realistic boilerplate (``bench/extract_speed.py
  --html-quality``) it leaked no boilerplate and kept every body sentence and
  heading; on pages of bare ``<div>`` s (no tag or class to go by) it still kept
  every sentence and leaked 10% of the boilerplate snippets (a cookie notice, a
  copyright line), where markitdown or html2text on the whole page leak 84%.
- :class:`MarkitdownHtmlReader` (``markitdown``) judges nothing by the text: it
  drops what the markup marks as boilerplate (the above, and menus, sidebars,
  share and newsletter boxes by class or id) and converts the page's ``<main>``
  or ``<article>`` (else its body) with markitdown. Structure is kept exactly,
  but a page of bare ``<div>`` s is read whole; it is the alternative to sweep.

Both write headings as ``#`` lines, lists as ``- `` and tables as Markdown
tables, and take inline markup out (``**bold**``, ``*em*``, ````code````, escapes:
:func:`~sweep.datasets.readers.markdown.plain_markdown`) so that a quote of the
page matches its text. When trafilatura falls back to a simpler extractor it
drops headings or writes them as plain lines: each heading of the page it lost
is put back as a ``#`` line, on its plain line or before the text that follows it
on the page. A page that has no text left once its boilerplate is dropped is
refused rather than given trafilatura, which would return the ``<title>``.
The title is the page's ``<title>`` without the name of its site (``Install — Packager
2.1 documentation`` is ``Install``; see :func:`_without_site_name`), else its first
``<h1>``, else the file's stem: a page's first heading may be its "Abstract".

Two things a browser shows differently from the markup are done as a browser does
before either reader sees the page: whitespace runs outside ``<pre>`` are one space
(an editor's line breaks and indentation inside a paragraph are not the text's), and
the permalink marks documentation generators put after headings and API entries
(Sphinx's and MkDocs' ``¶``, Docusaurus' ``#``, anchor icons: a link to ``#...`` whose
text is only such a mark) are dropped, so that a heading reads ``Copyright``, not
``Copyright¶``. So are link targets that show nothing (``<a name="x"></a>``). Inline code
and preformatted blocks are their text alone: the emphasis generators nest in them (a
Sphinx or DocBook path's placeholder in ``<em>``, Texinfo's ``<var>``, DocBook's typed
commands in ``<strong>``) is the same characters in a browser, where trafilatura moved
it out of place or wrote it as ``**``.

Navigation bars without ``<nav>`` or a telling class, as makeinfo and docbook-xsl write
them (Texinfo's ``Next: ..., Previous: ..., Up: ... [Index]``, DocBook's Prev/Home/Next
tables), are known by their links and dropped for both readers.

Bytes are decoded by a byte-order mark, else the ``<meta charset>`` (or the
``http-equiv`` content type) of the first 4 kB, else UTF-8, else windows-1252,
as browsers do for a page that does not say. A declaration of UTF-16 or UTF-32 found
that way is read as UTF-8, as browsers do: bytes in which the declaration reads as
ASCII are not UTF-16. Bytes not valid in the encoding used become U+FFFD, and the
reader warns how many.

Nothing of the page is lost without a warning: elements nested deeper than the HTML
parser goes (2048 levels, libxml2's limit with its huge-document option on; 256
without) end the text there, and the reader says so; an XHTML page's internal DTD
subset (``<!DOCTYPE html [ <!ENTITY ...> ]>``), which an HTML parser would show as
text (``]>``), is taken out, and an entity it declares stays as written (``&x;``),
with a warning, since entities are never expanded.
"""

from __future__ import annotations

import codecs
import re
from bisect import bisect_left
from functools import cache
from pathlib import PurePath
from typing import Any

from sweep.datasets.readers.base import Extracted, UnreadableFile
from sweep.datasets.readers.markdown import markdown_headings, markitdown_html, plain_markdown
from sweep.datasets.readers.pdf import library_version

__all__ = ["HtmlReader", "MarkitdownHtmlReader", "decode_html"]

NO_MAIN_TEXT = "no main text: the page holds only navigation/boilerplate"

# 6: headings by the one shared parser (setext headings listed, BOM at 0)
_TRAFILATURA_RECIPE = 6
_MARKITDOWN_RECIPE = 6

_META_CHARSET = re.compile(
    rb"""<meta[^>]+charset\s*=\s*["']?\s*([A-Za-z0-9_.:-]+)""", re.IGNORECASE
)
_BOMS = (
    (codecs.BOM_UTF8, "utf-8-sig"),
    (codecs.BOM_UTF16_LE, "utf-16"),
    (codecs.BOM_UTF16_BE, "utf-16"),
)


def decode_html(data: bytes, warnings: list[str] | None = None) -> str:
    """The text of an HTML file's bytes (see the module for the order of the clues);
    what could not be decoded is said in ``warnings``."""
    for bom, encoding in _BOMS:
        if data.startswith(bom):
            return _decoded(data, encoding, warnings)
    encoding = _declared_encoding(data[:4096])
    if encoding is not None:
        return _decoded(data, encoding, warnings)
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return _decoded(data, "cp1252", warnings)


def _declared_encoding(head: bytes) -> str | None:
    match = _META_CHARSET.search(head)
    if match is None:
        return None
    try:
        encoding = codecs.lookup(match.group(1).decode("ascii")).name
    except (LookupError, UnicodeDecodeError):
        return None
    # A page that says latin-1 means windows-1252, as browsers read it; one that says
    # UTF-16 in bytes that read as ASCII is not UTF-16, and browsers read it as UTF-8.
    if encoding in ("latin_1", "iso8859-1", "ascii"):
        return "cp1252"
    if encoding.replace("_", "-").startswith(("utf-16", "utf-32")):
        return "utf-8"
    return encoding


def _decoded(data: bytes, encoding: str, warnings: list[str] | None) -> str:
    text = data.decode(encoding, errors="replace")
    if "\ufffd" in text and warnings is not None:
        # (a U+FFFD the page holds itself is not a loss)
        lost = text.count("\ufffd") - data.decode(encoding, errors="ignore").count("\ufffd")
        if lost:
            warnings.append(
                f"{lost:,} byte sequence{'s' if lost != 1 else ''} not valid "
                f"{codecs.lookup(encoding).name} read as U+FFFD"
            )
    return text


# --------------------------------------------------------------------------- the page's own structure


# An XHTML page's first line; lxml refuses a decoded string that still declares an encoding.
_XML_DECLARATION = re.compile(r"^\ufeff?\s*<\?xml[^>]*\?>")


# An XHTML page's internal DTD subset, before the root element: an HTML parser ends the
# doctype at its first ">" and shows the rest ("]>") as text.
_INTERNAL_SUBSET = re.compile(
    r"\A(\ufeff?\s*(?:<!--.*?-->\s*)*<!DOCTYPE[^\[>]*)\[(.*?)\]\s*>", re.IGNORECASE | re.DOTALL
)
_ENTITY_DECLARATION = re.compile(r"<!ENTITY\s+([^\s%][^\s]*)")


def _parse(html: str, warnings: list[str]) -> Any | None:
    import lxml.html
    from lxml.etree import ParserError

    html = _without_internal_subset(_XML_DECLARATION.sub("", html, count=1), warnings)
    # huge_tree: libxml2's limits on depth and text size are raised (the page's text and
    # tags are bounded by the reading limits); past the deeper limit it still stops.
    try:
        tree = lxml.html.document_fromstring(html, parser=lxml.html.HTMLParser(huge_tree=True))
    except (ParserError, ValueError):
        return None  # no elements at all
    deepest = _deepest_parsed()
    if deepest is not None and _depth(tree) >= deepest:
        warnings.append(
            f"elements nested more than {deepest:,} deep: the page's text from there on is not read"
        )
    return tree


# Deeper than any page the reading limits let through (they count its tags).
_PROBE_DEPTH = 200_000


@cache
def _deepest_parsed() -> int | None:
    """How deep a tree the HTML parser builds before it stops (libxml2: 2048 levels with its
    huge-document option, 256 without), found by parsing a page nested deeper, not read from
    the parser's message, whose wording may change; None when it does not stop."""
    import lxml.html

    depth = _depth(
        lxml.html.document_fromstring(
            "<div>" * _PROBE_DEPTH, parser=lxml.html.HTMLParser(huge_tree=True)
        )
    )
    return depth if depth < _PROBE_DEPTH else None


def _depth(tree: Any) -> int:
    """The levels of ``tree``'s deepest element (the root is 1), walked without recursion."""
    from lxml.etree import iterwalk

    depth = deepest = 0
    for event, _ in iterwalk(tree, events=("start", "end")):
        depth += 1 if event == "start" else -1
        deepest = max(deepest, depth)
    return deepest


def _without_internal_subset(html: str, warnings: list[str]) -> str:
    match = _INTERNAL_SUBSET.match(html)
    if match is None:
        return html
    rest = html[match.end() :]
    used = [
        name
        for name in dict.fromkeys(_ENTITY_DECLARATION.findall(match.group(2)))
        if f"&{name};" in rest
    ]
    if used:
        shown = ", ".join(f"&{name};" for name in used[:5]) + (", ..." if len(used) > 5 else "")
        warnings.append(
            f"entities declared in the page's DTD are not expanded: {shown} left as written"
        )
    return match.group(1) + ">" + rest


def _text(element: Any) -> str:
    return " ".join(element.text_content().split())


def _page_headings(tree: Any | None) -> list[tuple[int, str]]:
    if tree is None:
        return []
    return [
        (int(h.tag[1]), text)
        for h in tree.iter("h1", "h2", "h3", "h4", "h5", "h6")
        if (text := _text(h))
    ]


# Between a page's name and its site's in a <title>: "Install — Packager 2.1 documentation"
# (Sphinx), "Install - Packager" (MkDocs), "Install | Packager" (Docusaurus).
_TITLE_SEPARATOR = re.compile(r"\s+(?:[—–|·»]|::|-{1,2})\s+")
# makeinfo's "Node (Manual)".
_MANUAL_NAME = re.compile(r"\s*\([^()]*\)\Z")


def _page_title(tree: Any | None, headings: list[tuple[int, str]]) -> str:
    """The ``<title>`` without its site's name (see :func:`_without_site_name`), else the
    first ``<h1>``, else ``""``. The ``<title>`` first: it names the page, where the first
    heading of a page that opens with its abstract is "Abstract"."""
    titles = [] if tree is None else tree.xpath("//title[not(ancestor::svg)]")
    title = _text(titles[0]) if titles else ""
    if title:
        generator = " ".join(
            tree.xpath("//meta[translate(@name, 'GENRATO', 'genrato')='generator']/@content")
        )
        return _without_site_name(title, [text for _, text in headings], generator)
    return next((text for level, text in headings if level == 1), "")


def _without_site_name(title: str, headings: list[str], generator: str = "") -> str:
    """``title`` less the name of the site it is part of: the part that is one of the
    page's ``headings`` when there is one (``Packager | Install``), else all but the part
    after the last separator (`` — ``, `` – ``, `` - ``, `` | ``, `` · ``, `` :: ``,
    `` » ``), where documentation generators and most sites put their name; a Texinfo
    page (``generator`` makeinfo or texi2any) less its ``(Manual)``."""
    if generator.casefold().startswith(("makeinfo", "texi2any")):
        title = _MANUAL_NAME.sub("", title) or title
    cuts = list(_TITLE_SEPARATOR.finditer(title))
    if not cuts:
        return title
    named = {" ".join(h.split()).casefold() for h in headings}
    bounds = [0, *(i for m in cuts for i in (m.start(), m.end())), len(title)]
    for i in range(0, len(bounds), 2):  # a run of parts that is a heading of the page
        for j in range(len(bounds) - 1, i, -2):
            if title[bounds[i] : bounds[j]].casefold() in named:
                return title[bounds[i] : bounds[j]]
    return title[: cuts[-1].start()]


_LIST_MARK = re.compile(r"^\s*(?:[-*+]|\d+[.)])\s+")


def _restore_headings(text: str, anchors: list[tuple[list[tuple[int, str]], str]]) -> str:
    """``text`` with the page's headings that an extractor lost or wrote as plain lines
    written as ``#`` lines. ``anchors``: the headings of the page in order, each group
    with the start of the text that follows it on the page, where a lost one goes."""
    lines = text.split("\n")
    present = {line.lstrip("#").strip() for line in lines if line.startswith("#")}
    at = 0  # headings are put back in page order: never before one already placed
    for group, probe in anchors:
        missing = [(level, title) for level, title in group if title not in present]
        if not missing:
            continue
        for level, title in list(missing):  # a plain line holding exactly the heading's text
            for i in range(at, len(lines)):
                if lines[i].strip() == title:
                    lines[i] = f"{'#' * level} {title}"
                    present.add(title)
                    missing.remove((level, title))
                    at = i + 1
                    break
        if not missing or not probe:
            continue
        for i in range(at, len(lines)):
            if probe in (
                f"\n{_LIST_MARK.sub('', lines[i]).strip()}\n"
                if probe.startswith("\n")
                else " ".join(lines[i].split())
            ):
                block = [
                    line for level, title in missing for line in (f"{'#' * level} {title}", "")
                ]
                lines[i:i] = block
                present.update(title for _, title in missing)
                at = i + len(block) + 1
                break
    return "\n".join(lines)


def _restore_terms(text: str, terms: list[tuple[str, str]]) -> str:
    """``text`` with the page's definition terms that an extractor dropped put back, each
    as a line before the line that starts with its definition (with that line's list
    mark). ``terms``: each term in page order, with its definition's first 40 characters
    (``""`` when shorter than 15: too few to be found by). Lines are looked up, not
    searched, so a page of many terms costs no more than its lines."""
    lines = text.split("\n")
    where: dict[str, list[int]] = {}  # a line's text without its list mark, and its start
    for i, line in enumerate(lines):
        plain = " ".join(_LIST_MARK.sub("", line).split())
        where.setdefault(plain, []).append(i)
        if len(plain) > 40:
            where.setdefault(plain[:40], []).append(i)
    inserts: list[tuple[int, str]] = []
    at = 0  # terms are put back in page order: never before one already seen
    for term, probe in terms:
        here = _first_from(where.get(term, ()), at)
        if here is None and probe:
            here = _first_from(where.get(probe, ()), at)
            if here is not None:
                mark = _LIST_MARK.match(lines[here])
                inserts.append((here, (mark.group(0) if mark else "") + term))
        if here is not None:
            at = here + 1
    before = dict(inserts)  # (one term at most before a line: each term moves ``at`` past it)
    return "\n".join(
        part
        for i, line in enumerate(lines)
        for part in ((before[i], line) if i in before else (line,))
    )


def _first_from(indices: list[int] | tuple[()], at: int) -> int | None:
    """The first of the sorted ``indices`` at ``at`` or after, or None."""
    k = bisect_left(indices, at)
    return indices[k] if k < len(indices) else None


def _definition_terms(tree: Any) -> list[tuple[str, str]]:
    """Each ``<dt>`` of the page, with the start of the ``<dd>`` after it (see
    :func:`_restore_terms`)."""
    terms = []
    for dt in tree.iter("dt"):
        dd = dt.getnext()
        definition = _text(dd) if dd is not None and dd.tag == "dd" else ""
        if term := _text(dt):
            terms.append((term, definition[:40] if len(definition) >= 15 else ""))
    return terms


def _extracted(
    markdown: str,
    anchors: list[tuple[list[tuple[int, str]], str]],
    title: str,
    filename: str,
    warnings: list[str],
    terms: list[tuple[str, str]] | None = None,
) -> Extracted:
    text = _restore_headings(_restore_terms(plain_markdown(markdown), terms or []), anchors)
    if not text.strip():
        raise UnreadableFile(NO_MAIN_TEXT)
    text = text.strip("\n") + "\n"
    return Extracted(
        text=text,
        title=title or PurePath(filename).stem,
        headings=markdown_headings(text),
        warnings=tuple(warnings),
    )


_BLOCKS = frozenset(
    {"p", "li", "pre", "td", "th", "dd", "dt", "blockquote", "figcaption", "caption"}
)


def _heading_anchors(tree: Any | None) -> list[tuple[list[tuple[int, str]], str]]:
    """The page's headings in order, grouped by the block of text that follows them (its
    first 40 characters; a shorter definition term as ``"\\nterm\\n"``, to be found as a
    line of its own; ``""`` for headings that no text follows)."""
    if tree is None:
        return []
    anchors: list[tuple[list[tuple[int, str]], str]] = []
    pending: list[tuple[int, str]] = []
    for element in tree.iter():
        tag = element.tag if isinstance(element.tag, str) else ""
        if len(tag) == 2 and tag[0] == "h" and tag[1] in "123456":
            if title := _text(element):
                pending.append((int(tag[1]), title))
        elif pending and tag in _BLOCKS and len(probe := _text(element)) >= 15:
            anchors.append((pending, probe[:40]))
            pending = []
        elif pending and tag == "dt" and probe:
            # A definition list's term is short: found only as a line of its own, as its few
            # words could stand in any line before it.
            anchors.append((pending, f"\n{probe}\n"))
            pending = []
    if pending:
        anchors.append((pending, ""))
    return anchors


# --------------------------------------------------------------------------- what is not content

_DROP_TAGS = (
    "script",
    "style",
    "noscript",
    "template",
    "svg",
    "canvas",
    "iframe",
    "form",
    "button",
    "input",
    "select",
    "textarea",
    "nav",
    "aside",
    "footer",
    "dialog",
    "object",
    "embed",
    "img",
    "picture",
    "video",
    "audio",
    "map",
)
_DROP_ROLES = frozenset(
    {
        "navigation",
        "banner",
        "contentinfo",
        "complementary",
        "search",
        "dialog",
        "alertdialog",
        "menu",
        "menubar",
    }
)
# Class or id words of boilerplate. trafilatura weighs such names itself, so before it only
# the unmistakable ones are acted on; markitdown has no judgement of its own, so all are.
_UNMISTAKABLE_NAME = re.compile(
    r"(?:^|[-_\s])(?:cookies?|consent|gdpr|breadcrumbs?)(?:$|[-_\s])", re.IGNORECASE
)
_BOILERPLATE_NAME = re.compile(
    r"(?:^|[-_\s])(?:cookies?|consent|gdpr|banner|breadcrumbs?|menu|navbar|nav|sidebar|side-bar|"
    r"footer|newsletter|subscribe|share|sharing|social|advert|ads|promo|related|popup|modal|"
    r"skip-link|masthead|site-header|toolbar)(?:$|[-_\s])",
    re.IGNORECASE,
)


def _prune(tree: Any, names: re.Pattern[str]) -> None:
    """Drops, in place, what the page's markup marks as not content: scripts, styles and
    forms, ``<nav>``, ``<aside>``, ``<footer>``, a site ``<header>`` (one without the
    page's ``<h1>``), navigation and banner roles, hidden elements, and elements whose
    class or id matches ``names``."""
    _drop_navigation_bars(tree)
    for element in list(tree.iter()):
        if element.getparent() is None:
            continue
        if not isinstance(element.tag, str) or _is_boilerplate(element, names):
            element.drop_tree()  # (its tail text, which is its parent's, stays)


# A link to the next, previous or parent page, as generators mark them: makeinfo and
# docbook-xsl give them an access key and a rel, in a bar without <nav> or a telling class
# (Texinfo's "Next: ..., Previous: ..., Up: ... [Index]" line, DocBook's Prev/Home/Next tables).
_NAVIGATION_RELS = frozenset(
    {"next", "prev", "previous", "up", "index", "contents", "start", "top", "home", "first", "last"}
)
_NAVIGATION_BAR_CHARS = (
    300  # a bar's text: its links, labels and the titles of the pages they go to
)
# Blocks only: a link in a sentence ("see <a rel=next>the next chapter</a>") is the sentence's.
_BAR_TAGS = frozenset({"div", "p", "table", "ul", "ol", "header", "footer", "center"})
_HEADING_TAGS = frozenset({"h1", "h2", "h3", "h4", "h5", "h6"})


def _drop_navigation_bars(tree: Any) -> None:
    """Empties, in place, bars of links to other pages: blocks whose links, two or more, all
    go to the next, previous or parent page (or carry an access key), with no heading and
    at most 300 characters of text. One walk, children before parents, so a page of many such
    links costs no more than its tags."""
    from lxml.etree import iterwalk

    # element -> (characters of text, links, navigation links, headings), as text_content counts
    counts: dict[Any, tuple[int, int, int, int]] = {}
    bars: list[Any] = []
    for _, element in iterwalk(tree, events=("end",)):
        if not isinstance(element.tag, str):
            continue
        chars, links, navigation, headings = len(element.text or ""), 0, 0, 0
        if element.tag == "a" and element.get("href") is not None:
            links = 1
            rels = set((element.get("rel") or "").lower().split())
            navigation = int(element.get("accesskey") is not None or bool(rels & _NAVIGATION_RELS))
        headings = int(element.tag in _HEADING_TAGS)
        for child in element:
            c = counts.get(child, (0, 0, 0, 0))
            chars += c[0] + len(child.tail or "")
            links, navigation, headings = links + c[1], navigation + c[2], headings + c[3]
        counts[element] = (chars, links, navigation, headings)
        if (
            element.tag in _BAR_TAGS
            and links >= 2
            and links == navigation
            and not headings
            and chars <= _NAVIGATION_BAR_CHARS
        ):
            bars.append(element)
    for bar in bars:
        # emptied rather than dropped, which costs as many steps as the bar has siblings
        tail = bar.tail
        bar.clear()
        bar.tail = tail


def _is_boilerplate(element: Any, names: re.Pattern[str]) -> bool:
    if element.tag in _DROP_TAGS:
        return True
    if element.tag == "header" and not element.xpath("ancestor::article | ancestor::main"):
        return not element.xpath(".//h1") or bool(element.xpath(".//nav"))
    if element.get("role", "").lower() in _DROP_ROLES or element.get("aria-hidden") == "true":
        return True
    if element.get("hidden") is not None:
        return True
    label = f"{element.get('class', '')} {element.get('id', '')}"
    return (
        element.tag not in ("main", "article", "body", "html")
        and bool(label.strip())
        and bool(names.search(label))
    )


def _main_content(tree: Any) -> Any:
    """The page's ``<main>`` (or ``role=main``), else its longest ``<article>``, else its body."""
    mains = tree.xpath("//main | //*[@role='main']")
    if mains:
        return mains[0]
    articles = tree.xpath("//article")
    if articles:
        return max(articles, key=lambda a: len(a.text_content()))
    body = tree.find("body")
    return body if body is not None else tree


def _page(data: bytes, warnings: list[str]) -> tuple[Any, str]:
    """The parsed page as a browser shows it (see the module) and its title, taken before
    anything is pruned (its ``<h1>`` may sit in a ``<header>`` that goes); what of the
    page could not be read is said in ``warnings``."""
    html = decode_html(data, warnings)
    if not html.strip():
        raise UnreadableFile("empty file")
    tree = _parse(html, warnings)
    if tree is None:
        raise UnreadableFile(NO_MAIN_TEXT)
    _drop_permalinks(tree)
    _drop_empty_anchors(tree)
    _collapse_whitespace(tree)
    _flatten_code(tree)
    return tree, _page_title(tree, _page_headings(tree))


# The marks of a permalink: pilcrow, section sign, hash, link and anchor symbols, nothing.
_PERMALINK_MARK = re.compile(r"[\s\u200b¶§#🔗⚓\ufe0f\U0001f517]*")
_HTML_SPACE = re.compile(r"[ \t\n\r\f]+")  # (not \s: a non-breaking space is not collapsed)
_PREFORMATTED = frozenset({"pre", "textarea", "listing", "plaintext", "xmp"})


def _drop_permalinks(tree: Any) -> None:
    for link in tree.xpath("//a[starts-with(@href, '#')]"):
        if link.getparent() is not None and _PERMALINK_MARK.fullmatch(link.text_content()):
            link.drop_tree()  # (its tail text stays)


def _drop_empty_anchors(tree: Any) -> None:
    """Drops link targets that show nothing (``<a name="build"></a>``, as docbook-xsl puts
    before every title): trafilatura lost the whole section after such a title."""
    for anchor in tree.xpath("//a[not(@href) and (@name or @id) and not(*)]"):
        if not (anchor.text or "").strip() and anchor.getparent() is not None:
            anchor.drop_tree()  # (its tail text stays)


# Inline code as generators write it: Sphinx's literal of <span class="pre"> words, with a
# :file: placeholder in <em>; DocBook's <code class="filename"> with <em class="replaceable">;
# Texinfo's <samp class="file"> with <var>.
_CODE_TAGS = frozenset({"code", "samp", "kbd", "var", "tt"})


def _flatten_code(tree: Any) -> None:
    """Every preformatted block and every outermost inline code element as its text alone,
    in place. What is nested in them is emphasis inside code, which a browser shows as
    the same characters in their order, but which trafilatura moves out of place
    (``python3.<em>Y</em>`` became ``python3.`` and a ``Y`` later in the sentence) and
    writes as ``**`` inside code, where it cannot be told from the code's own."""
    stack = [tree]
    while stack:
        element = stack.pop()
        if not isinstance(element.tag, str):
            continue
        if element.tag not in _PREFORMATTED and element.tag not in _CODE_TAGS:
            stack.extend(element)
            continue
        if (
            element.tag in _PREFORMATTED
            and len(element) == 1
            and element[0].tag == "code"
            and not (element.text or "").strip()
        ):
            element = element[0]  # (<pre><code> is how Markdown renderers write a code block: kept)
        if len(element):  # (what is inside is not walked: it becomes text here)
            for br in element.iter("br"):  # (Docusaurus ends each line of a code block with <br>)
                br.tail = "\n" + (br.tail or "")
            text = element.text_content()
            for child in list(element):
                element.remove(child)
            element.text = text


def _collapse_whitespace(tree: Any) -> None:
    """Every run of HTML whitespace outside preformatted elements as one space, in place."""
    stack = [(tree, False)]
    while stack:
        element, kept = stack.pop()
        if not isinstance(element.tag, str):  # a comment or processing instruction
            continue
        kept = kept or element.tag in _PREFORMATTED
        if element.text and not kept:
            element.text = _HTML_SPACE.sub(" ", element.text)
        for child in element:
            if child.tail and not kept:
                child.tail = _HTML_SPACE.sub(" ", child.tail)
            stack.append((child, kept))


# --------------------------------------------------------------------------- trafilatura


class HtmlReader:
    """The main content of a page, found by trafilatura."""

    name = "trafilatura"

    @property
    def version(self) -> str:
        return f"{library_version('trafilatura', 'lxml')}+recipe{_TRAFILATURA_RECIPE}"

    def read(self, data: bytes, filename: str) -> Extracted:
        import trafilatura

        warnings: list[str] = []
        tree, title = _page(data, warnings)
        _prune(tree, _UNMISTAKABLE_NAME)
        anchors = _heading_anchors(tree)  # (after pruning: a sidebar's heading is not put back)
        # trafilatura drops a block whose text reads like a share button ("Mail", "Print",
        # "PDF"): a definition term so dropped is put back
        terms = _definition_terms(tree)
        body = tree.find("body")
        if not _text(body if body is not None else tree):
            # Nothing but boilerplate: trafilatura would fall back to the <title>.
            raise UnreadableFile(NO_MAIN_TEXT)
        markdown = trafilatura.extract(
            tree,
            output_format="markdown",
            include_tables=True,
            include_formatting=True,
            include_comments=False,
            include_links=False,
            include_images=False,
            favor_recall=True,
            deduplicate=False,
            config=_trafilatura_config(),
        )
        return _extracted(markdown or "", anchors, title, filename, warnings, terms)


_CONFIG: Any = None


def _trafilatura_config() -> Any:
    global _CONFIG
    if _CONFIG is None:
        from copy import deepcopy

        from trafilatura.settings import DEFAULT_CONFIG

        config = deepcopy(DEFAULT_CONFIG)
        # Below 250 characters trafilatura distrusts its own result and falls back to a
        # whole-page extractor, which keeps the menu of a short page and loses its heading.
        config.set("DEFAULT", "MIN_EXTRACTED_SIZE", "1")
        config.set("DEFAULT", "EXTRACTION_TIMEOUT", "0")  # (a signal alarm: main thread only)
        _CONFIG = config
    return _CONFIG


# --------------------------------------------------------------------------- markitdown


class MarkitdownHtmlReader:
    """A page less what its markup marks as boilerplate, converted by markitdown."""

    name = "markitdown"

    @property
    def version(self) -> str:
        return f"{library_version('markitdown', 'markdownify', 'lxml')}+recipe{_MARKITDOWN_RECIPE}"

    def read(self, data: bytes, filename: str) -> Extracted:
        import lxml.html

        warnings: list[str] = []
        tree, title = _page(data, warnings)
        _prune(tree, _BOILERPLATE_NAME)
        page = lxml.html.tostring(_main_content(tree), encoding="unicode")
        return _extracted(markitdown_html(page, warnings), [], title, filename, warnings)
