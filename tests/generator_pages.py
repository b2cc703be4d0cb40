"""Web pages in the shape documentation generators write, and how much of their text a reader kept.

Each builder renders the same manual (:data:`MANUAL`) as one generator's HTML output
does: Sphinx (``<span class="pre">`` inline code, ``:file:`` placeholders in ``<em>``,
``<dl>`` definition lists, headerlink ``¶`` anchors, a sidebar), DocBook (docbook-xsl:
``<div class="sect1">``, ``<code class="literal">``, navheader/navfooter tables),
Texinfo (makeinfo --html: the Next/Previous/Up nav panel, ``<pre class="example">``),
MkDocs with the material theme, Docusaurus, and a plain hand-written page. A
:class:`Page` carries the words a browser shows of the page's main text, in order,
taken from the manual itself (never from the HTML), so that :func:`fidelity` measures a
reader's text against what a person reads on the page.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from html import escape

__all__ = ["GENERATORS", "MANUAL", "NAVIGATION", "Page", "fidelity", "words"]

# The manual, as blocks: ("h", level, text), ("p", inline), ("dl", [(term inline, definition)]),
# ("screen", prompt, command, output). Inline text is a list of pieces: a str, or a tuple
# ("code", literal) or ("file", before, placeholder, after) for a path with a placeholder.
Inline = Sequence[str | tuple[str, ...]]

MANUAL_TITLE = "Installing the packager"
SITE = "Packager 2.1 documentation"
MANUAL: list[tuple] = [
    ("h", 1, MANUAL_TITLE),
    (
        "p",
        [
            "The packager builds one archive per module and installs it where the interpreter "
            "finds it."
        ],
    ),
    ("h", 2, "Interpreter location"),
    (
        "p",
        [
            "The preferred interpreter is ",
            ("code", "/usr/bin/python3"),
            " or ",
            ("file", "/usr/bin/python3.", "Y", ""),
            " if it requires Python 3.Y. Modules go to ",
            ("file", "/usr/lib/python2.", "Y", "/dist-packages"),
            ", where Y is the minor version, and are byte-compiled by ",
            ("code", "py3compile"),
            " at install time.",
        ],
    ),
    ("h", 2, "Control fields"),
    # ("mail" alone reads like a share button to trafilatura, which drops it)
    (
        "dl",
        [
            (["mail"], "The mailing list address for discussion of this package."),
            (["Maintainer"], "The person who looks after the package and answers its bugs."),
        ],
    ),
    ("h", 2, "Building"),
    ("p", ["Run the build from the source folder; the log goes to ", ("code", "build.log"), "."]),
    ("screen", "$", "make install PREFIX=/opt/packager", "installed 12 modules"),
    ("p", ["A failed build leaves the previous archive in place."]),
]

#: Words of the generators' navigation: none of them is main text (they are checked absent).
NAVIGATION = (
    "Next:",
    "Previous:",
    "Prev",
    "Home",
    "[Index]",
    "Quick search",
    "Edit this page",
    "On this page",
)


def words(text: str) -> list[str]:
    """The words of ``text`` as a reader sees them: runs of letters and digits, with ``.``,
    ``/``, ``-`` and ``_`` inside (``/usr/bin/python3.Y`` is one word), casefolded."""
    return [w.casefold() for w in re.findall(r"\w+(?:[./_-]+\w+)*", text)]


@dataclass(frozen=True)
class Page:
    """One generator's page of the manual: its HTML, and the words of its main text in order."""

    generator: str
    html: str
    title: str
    main_words: tuple[str, ...]


def fidelity(expected: Sequence[str], text: str) -> tuple[float, float]:
    """(recall, order) of a reader's ``text`` against the ``expected`` words: the share of
    the expected words (as a multiset) the text holds, and the longest common subsequence of
    the two word sequences over the expected length (a word moved elsewhere lowers it)."""
    got = words(text)
    recall = sum((Counter(expected) & Counter(got)).values()) / len(expected)
    return recall, _lcs(list(expected), got) / len(expected)


def _lcs(a: list[str], b: list[str]) -> int:
    previous = [0] * (len(b) + 1)
    for x in a:
        current = [0]
        for j, y in enumerate(b):
            current.append(previous[j] + 1 if x == y else max(previous[j + 1], current[j]))
        previous = current
    return previous[-1]


def _plain(inline: Inline) -> str:
    return "".join(p if isinstance(p, str) else "".join(p[1:]) for p in inline)


def _main_words() -> tuple[str, ...]:
    out: list[str] = []
    for block in MANUAL:
        if block[0] == "h":
            out += words(block[2])
        elif block[0] == "p":
            out += words(_plain(block[1]))
        elif block[0] == "dl":
            for term, definition in block[1]:
                out += words(_plain(term)) + words(definition)
        elif block[0] == "screen":
            out += words(" ".join(block[1:]))
    return tuple(out)


# --------------------------------------------------------------------------- the generators


def _inline(
    inline: Inline, code: Callable[[str], str], file: Callable[[str, str, str], str]
) -> str:
    return "".join(
        escape(p) if isinstance(p, str) else code(p[1]) if p[0] == "code" else file(*p[1:])
        for p in inline
    )


def _sphinx_code(text: str) -> str:
    # Sphinx writes each space-separated word of a literal as its own span
    return (
        '<code class="docutils literal notranslate">'
        + " ".join(f'<span class="pre">{escape(w)}</span>' for w in text.split(" "))
        + "</code>"
    )


def _sphinx_file(before: str, var: str, after: str) -> str:
    # the :file: role: a {placeholder} is an <em> inside the literal
    tail = f'<span class="pre">{escape(after)}</span>' if after else ""
    return (
        f'<code class="file docutils literal notranslate"><span class="pre">{escape(before)}</span>'
        f'<em><span class="pre">{escape(var)}</span></em>{tail}</code>'
    )


def _anchor(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")


def sphinx(page_title: str = MANUAL_TITLE) -> Page:
    """The manual as a Sphinx page; ``page_title`` is the document's title (its ``<title>``,
    before Sphinx's suffix), which need not be its first heading."""
    body: list[str] = []
    depth = 0
    for block in MANUAL:
        if block[0] == "h":
            _, level, text = block
            while depth >= level:
                body.append("</section>")
                depth -= 1
            body.append(
                f'<section id="{_anchor(text)}"><h{level}>{escape(text)}<a class="headerlink" '
                f'href="#{_anchor(text)}" title="Link to this heading">¶</a></h{level}>'
            )
            depth = level
        elif block[0] == "p":
            body.append(f"<p>{_inline(block[1], _sphinx_code, _sphinx_file)}</p>")
        elif block[0] == "dl":
            # a glossary: each term a target with its headerlink
            items = "".join(
                f'<dt id="term-{_anchor(_plain(t))}">{_inline(t, _sphinx_code, _sphinx_file)}'
                f'<a class="headerlink" href="#term-{_anchor(_plain(t))}" title="Link to this term">¶</a>'
                f"</dt><dd><p>{escape(d)}</p></dd>"
                for t, d in block[1]
            )
            body.append(f'<dl class="simple glossary">{items}</dl>')
        elif block[0] == "screen":
            _, prompt, command, output = block
            body.append(
                '<div class="highlight-console notranslate"><div class="highlight"><pre><span></span>'
                f'<span class="gp">{prompt} </span>{escape(command)}\n<span class="go">{escape(output)}'
                "</span>\n</pre></div></div>"
            )
    body += ["</section>"] * depth
    html = f"""<!DOCTYPE html>
<html lang="en" data-content_root="./"><head><meta charset="utf-8" />
<meta name="viewport" content="width=device-width, initial-scale=1.0" />
<title>{escape(page_title)} &#8212; {escape(SITE)}</title>
<link rel="stylesheet" type="text/css" href="_static/alabaster.css?v=12dfc556" />
<script src="_static/documentation_options.js?v=7f41d439"></script>
<link rel="index" title="Index" href="genindex.html" /><link rel="search" title="Search" href="search.html" />
</head><body>
<div class="document">
<div class="documentwrapper"><div class="bodywrapper"><div class="body" role="main">
{chr(10).join(body)}
</div></div></div>
<div class="sphinxsidebar" role="navigation" aria-label="Main"><div class="sphinxsidebarwrapper">
<h1 class="logo"><a href="index.html">Packager</a></h1>
<h3>Navigation</h3><ul class="current"><li class="toctree-l1 current"><a class="current reference internal" href="#">{escape(MANUAL_TITLE)}</a></li>
<li class="toctree-l1"><a class="reference internal" href="usage.html">Usage</a></li></ul>
<div class="relations"><h3>Related Topics</h3><ul><li><a href="index.html">Documentation overview</a><ul>
<li>Previous: <a href="index.html" title="previous chapter">Welcome</a></li></ul></li></ul></div>
<search id="searchbox" role="search"><h3 id="searchlabel">Quick search</h3><div class="searchformwrapper">
<form class="search" action="search.html" method="get"><input type="text" name="q" /><input type="submit" value="Go" /></form></div></search>
</div></div>
<div class="clearer"></div></div>
<div class="footer">&#169;2026, The Packager Team. | Powered by <a href="https://www.sphinx-doc.org/">Sphinx 7.2.6</a>
&amp; <a href="https://alabaster.readthedocs.io">Alabaster 0.7.16</a> | <a href="_sources/install.rst.txt" rel="nofollow">Page source</a></div>
</body></html>
"""
    return Page("sphinx", html, page_title, _main_words())


def _docbook_code(text: str) -> str:
    return f'<code class="literal">{escape(text)}</code>'


def _docbook_file(before: str, var: str, after: str) -> str:
    return (
        f'<code class="filename">{escape(before)}<em class="replaceable"><code>{escape(var)}</code>'
        f"</em>{escape(after)}</code>"
    )


def docbook() -> Page:
    parts: list[str] = []
    open_sect = False
    for block in MANUAL:
        if block[0] == "h" and block[1] == 1:
            parts.append(
                f'<div class="titlepage"><div><div><h1 class="title"><a name="install"></a>'
                f"Chapter 2. {escape(block[2])}</h1></div></div></div>"
                '<div class="toc"><p><b>Table of Contents</b></p><dl class="toc">'
                + "".join(
                    f'<dt><span class="sect1"><a href="#{_anchor(b[2])}">{escape(b[2])}</a>'
                    "</span></dt>"
                    for b in MANUAL
                    if b[0] == "h" and b[1] == 2
                )
                + "</dl></div>"
            )
        elif block[0] == "h":
            if open_sect:
                parts.append("</div>")
            parts.append(
                f'<div class="sect1"><div class="titlepage"><div><div><h2 class="title" '
                f'style="clear: both"><a name="{_anchor(block[2])}"></a>{escape(block[2])}</h2>'
                "</div></div></div>"
            )
            open_sect = True
        elif block[0] == "p":
            parts.append(f"<p>{_inline(block[1], _docbook_code, _docbook_file)}</p>")
        elif block[0] == "dl":
            items = "".join(
                f'<dt><span class="term">{_inline(t, _docbook_code, _docbook_file)}</span></dt>'
                f"<dd><p>{escape(d)}</p></dd>"
                for t, d in block[1]
            )
            parts.append(f'<div class="variablelist"><dl class="variablelist">{items}</dl></div>')
        elif block[0] == "screen":
            _, prompt, command, output = block
            parts.append(
                f'<pre class="screen"><code class="prompt">{prompt}</code> <strong class="userinput">'
                f'<code>{escape(command)}</code></strong>\n<code class="computeroutput">'
                f"{escape(output)}</code></pre>"
            )
    if open_sect:
        parts.append("</div>")
    html = f"""<html><head><meta http-equiv="Content-Type" content="text/html; charset=UTF-8">
<title>Chapter 2. {escape(MANUAL_TITLE)}</title><link rel="stylesheet" type="text/css" href="docbook.css">
<meta name="generator" content="DocBook XSL Stylesheets V1.79.2"><link rel="home" href="index.html" title="Packager Guide">
<link rel="up" href="index.html" title="Packager Guide"><link rel="prev" href="ch01.html" title="Chapter 1. Introduction">
<link rel="next" href="ch03.html" title="Chapter 3. Configuring"></head>
<body bgcolor="white" text="black" link="#0000FF" vlink="#840084" alink="#0000FF">
<div class="navheader"><table width="100%" summary="Navigation header"><tr><th colspan="3" align="center">Chapter 2. {escape(MANUAL_TITLE)}</th></tr>
<tr><td width="20%" align="left"><a accesskey="p" href="ch01.html">Prev</a> </td><th width="60%" align="center"> </th>
<td width="20%" align="right"> <a accesskey="n" href="ch03.html">Next</a></td></tr></table><hr></div>
<div class="chapter"><a name="install"></a>{"".join(parts)}</div>
<div class="navfooter"><hr><table width="100%" summary="Navigation footer"><tr><td width="40%" align="left"><a accesskey="p" href="ch01.html">Prev</a> </td>
<td width="20%" align="center"> </td><td width="40%" align="right"> <a accesskey="n" href="ch03.html">Next</a></td></tr>
<tr><td width="40%" align="left" valign="top">Chapter 1. Introduction </td><td width="20%" align="center"><a accesskey="h" href="index.html">Home</a></td>
<td width="40%" align="right" valign="top"> Chapter 3. Configuring</td></tr></table></div>
</body></html>
"""
    return Page(
        "docbook", html, f"Chapter 2. {MANUAL_TITLE}", tuple(words("Chapter 2.")) + _main_words()
    )


def _texinfo_code(text: str) -> str:
    return f'<code class="code">{escape(text)}</code>'


def _texinfo_file(before: str, var: str, after: str) -> str:
    return (
        f'<samp class="file">{escape(before)}<var class="var">{escape(var)}</var>'
        f"{escape(after)}</samp>"
    )


def texinfo(version: int = 7) -> Page:
    """makeinfo 7's page (``<div class="nav-panel">``), or makeinfo 6's (``version=6``:
    ``<div class="header">``, ``<a name>`` targets, ``<pre class="example">``)."""
    nav = (
        f'<div class="{"nav-panel" if version >= 7 else "header"}"><p>Next: <a href="Usage.html" '
        'accesskey="n" rel="next">Usage</a>, Previous: <a href="Overview.html" accesskey="p" rel="prev">'
        'Overview</a>, Up: <a href="index.html" accesskey="u" rel="up">Packager</a> &nbsp; '
        '[<a href="Index.html" title="Index" rel="index">Index</a>]</p></div>'
    )
    parts = [nav, "<hr>"]
    number = 0
    for block in MANUAL:
        if block[0] == "h":
            _, level, text = block
            number += level == 1
            tag, cls = ("h2", "chapter") if level == 1 else ("h3", "section")
            label = f"{number} {escape(text)}" if level == 1 else escape(text)
            if version >= 7:
                parts.append(
                    f'<{tag} class="{cls}" id="{_anchor(text)}-1"><span>{label}<a class="copiable-link" '
                    f'href="#{_anchor(text)}-1"> &para;</a></span></{tag}>'
                )
            else:
                parts.append(
                    f'<a name="{_anchor(text)}-1"></a>\n<{tag} class="{cls}">{label}</{tag}>'
                )
        elif block[0] == "p":
            parts.append(f"<p>{_inline(block[1], _texinfo_code, _texinfo_file)}</p>")
        elif block[0] == "dl":
            items = "".join(
                f"<dt>{_inline(t, _texinfo_code, _texinfo_file)}</dt><dd><p>{escape(d)}\n</p></dd>"
                for t, d in block[1]
            )
            parts.append(f'<dl class="table">{items}</dl>')
        elif block[0] == "screen":
            _, prompt, command, output = block
            pre = "example-preformatted" if version >= 7 else "example"
            parts.append(
                f'<div class="example">\n<pre class="{pre}">{prompt} <strong class="strong">'
                f"{escape(command)}</strong>\n{escape(output)}\n</pre></div>"
            )
    main = words("1") + list(_main_words())
    html = f"""<!DOCTYPE html>
<html>
<!-- Created by GNU Texinfo {"7.1" if version >= 7 else "6.8"}, https://www.gnu.org/software/texinfo/ -->
<head>
<meta http-equiv="Content-Type" content="text/html; charset=utf-8">
<title>{escape(MANUAL_TITLE)} (The Packager Manual)</title>
<meta name="description" content="{escape(MANUAL_TITLE)} (The Packager Manual)">
<meta name="Generator" content="makeinfo">
<link href="index.html" rel="start" title="Top"><link href="Index.html" rel="index" title="Index">
<style type="text/css">a.copiable-link {{visibility: hidden}}</style>
</head>
<body lang="en">
{'<div class="chapter-level-extent" id="' + _anchor(MANUAL_TITLE) + '">' if version >= 7 else ""}
{chr(10).join(parts)}
<hr>
{nav}
{"</div>" if version >= 7 else ""}
</body>
</html>
"""
    return Page("texinfo" if version >= 7 else "texinfo-6", html, MANUAL_TITLE, tuple(main))


def _md_code(text: str) -> str:
    return f"<code>{escape(text)}</code>"


def _md_file(before: str, var: str, after: str) -> str:
    return f"<code>{escape(before + var + after)}</code>"


def _markdown_body(headerlink: Callable[[str], str]) -> str:
    parts = []
    for block in MANUAL:
        if block[0] == "h":
            _, level, text = block
            parts.append(
                f'<h{level} id="{_anchor(text)}">{escape(text)}{headerlink(_anchor(text))}</h{level}>'
            )
        elif block[0] == "p":
            parts.append(f"<p>{_inline(block[1], _md_code, _md_file)}</p>")
        elif block[0] == "dl":
            items = "".join(
                f"<dt>{_inline(t, _md_code, _md_file)}</dt><dd>{escape(d)}</dd>"
                for t, d in block[1]
            )
            parts.append(f"<dl>{items}</dl>")
        elif block[0] == "screen":
            _, prompt, command, output = block
            parts.append(
                f'<div class="language-console highlight"><pre><span></span><code><span class="gp">{prompt}</span> '
                f'<span class="n">{escape(command)}</span>\n<span class="go">{escape(output)}</span>\n'
                "</code></pre></div>"
            )
    return "\n".join(parts)


def mkdocs() -> Page:
    body = _markdown_body(
        lambda a: f'<a class="headerlink" href="#{a}" title="Permanent link">&para;</a>'
    )
    toc = "".join(
        f'<li class="md-nav__item"><a href="#{_anchor(b[2])}" class="md-nav__link">'
        f'<span class="md-ellipsis">{escape(b[2])}</span></a></li>'
        for b in MANUAL
        if b[0] == "h" and b[1] == 2
    )
    html = f"""<!doctype html>
<html lang="en" class="no-js"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">
<meta name="generator" content="mkdocs-1.6.0, mkdocs-material-9.5.27">
<title>{escape(MANUAL_TITLE)} - Packager</title><link rel="stylesheet" href="../assets/stylesheets/main.6543a935.min.css">
</head><body dir="ltr" data-md-color-scheme="default">
<input class="md-toggle" data-md-toggle="drawer" type="checkbox" id="__drawer" autocomplete="off">
<label class="md-overlay" for="__drawer"></label>
<div data-md-component="skip"><a href="#interpreter-location" class="md-skip">Skip to content</a></div>
<header class="md-header md-header--shadow" data-md-component="header"><nav class="md-header__inner md-grid" aria-label="Header">
<a href=".." title="Packager" class="md-header__button md-logo" aria-label="Packager" data-md-component="logo"></a>
<div class="md-header__title" data-md-component="header-title"><div class="md-header__ellipsis"><div class="md-header__topic">
<span class="md-ellipsis">Packager</span></div><div class="md-header__topic" data-md-component="header-topic">
<span class="md-ellipsis">{escape(MANUAL_TITLE)}</span></div></div></div>
<div class="md-search" data-md-component="search" role="dialog"><label class="md-search__overlay" for="__search"></label></div>
</nav></header>
<div class="md-container" data-md-component="container"><main class="md-main" data-md-component="main"><div class="md-main__inner md-grid">
<div class="md-sidebar md-sidebar--primary" data-md-component="sidebar" data-md-type="navigation"><div class="md-sidebar__scrollwrap"><div class="md-sidebar__inner">
<nav class="md-nav md-nav--primary" aria-label="Navigation" data-md-level="0"><label class="md-nav__title" for="__drawer">Packager</label>
<ul class="md-nav__list" data-md-scrollfix><li class="md-nav__item"><a href="../index.html" class="md-nav__link"><span class="md-ellipsis">Home</span></a></li>
<li class="md-nav__item md-nav__item--active"><a href="./" class="md-nav__link md-nav__link--active"><span class="md-ellipsis">{escape(MANUAL_TITLE)}</span></a></li></ul></nav>
</div></div></div>
<div class="md-sidebar md-sidebar--secondary" data-md-component="sidebar" data-md-type="toc"><div class="md-sidebar__scrollwrap"><div class="md-sidebar__inner">
<nav class="md-nav md-nav--secondary" aria-label="Table of contents"><label class="md-nav__title" for="__toc">Table of contents</label>
<ul class="md-nav__list" data-md-component="toc" data-md-scrollfix>{toc}</ul></nav></div></div></div>
<div class="md-content" data-md-component="content"><article class="md-content__inner md-typeset">
<a href="https://github.com/packager/docs/edit/main/install.md" title="Edit this page" class="md-content__button md-icon"></a>
{body}
</article></div>
<script>var tabs=__md_get("__tabs");</script>
</div><button type="button" class="md-top md-icon" data-md-component="top" hidden>Back to top</button></main>
<footer class="md-footer"><nav class="md-footer__inner md-grid" aria-label="Footer"><a href="../usage/" class="md-footer__link md-footer__link--next" aria-label="Next: Usage">
<div class="md-footer__title"><span class="md-footer__direction">Next</span><div class="md-ellipsis">Usage</div></div></a></nav>
<div class="md-footer-meta md-typeset"><div class="md-footer-meta__inner md-grid"><div class="md-copyright">Made with
<a href="https://squidfunk.github.io/mkdocs-material/" target="_blank" rel="noopener">Material for MkDocs</a></div></div></div></footer>
</div></body></html>
"""
    return Page("mkdocs", html, MANUAL_TITLE, _main_words())


def docusaurus() -> Page:
    body = _markdown_body(
        lambda a: (
            f'<a href="#{a}" class="hash-link" aria-label="Direct link to {a}" '
            f'title="Direct link to {a}">\u200b</a>'
        )
    )
    body = body.replace("<h1", "<header><h1", 1).replace("</h1>", "</h1></header>", 1)
    html = f"""<!doctype html>
<html lang="en" dir="ltr" class="docs-wrapper docs-doc-page docs-version-current plugin-docs plugin-id-default docs-doc-id-install">
<head><meta charset="UTF-8"><meta name="generator" content="Docusaurus v3.4.0">
<title data-rh="true">{escape(MANUAL_TITLE)} | Packager</title><meta data-rh="true" property="og:title" content="{escape(MANUAL_TITLE)} | Packager">
<link rel="stylesheet" href="/assets/css/styles.4badbe07.css"><script src="/assets/js/runtime~main.c4b5d9e1.js" defer="defer"></script>
</head><body class="navigation-with-keyboard">
<script>!function(){{document.documentElement.setAttribute("data-theme","light")}}()</script>
<div id="__docusaurus"><div role="region" aria-label="Skip to main content"><a class="skipToContent_fXgn" href="#__docusaurus_skipToContent_fallback">Skip to main content</a></div>
<nav aria-label="Main" class="navbar navbar--fixed-top"><div class="navbar__inner"><div class="navbar__items"><a class="navbar__brand" href="/"><b class="navbar__title text--truncate">Packager</b></a>
<a aria-current="page" class="navbar__item navbar__link navbar__link--active" href="/docs/intro">Tutorial</a><a class="navbar__item navbar__link" href="/blog">Blog</a></div></div></nav>
<div id="__docusaurus_skipToContent_fallback" class="main-wrapper mainWrapper_z2l0"><div class="docsWrapper_hBAB"><div class="docRoot_UBD9">
<aside class="theme-doc-sidebar-container docSidebarContainer_YfHR"><div class="sidebarViewport_aRkj"><div class="sidebar_njMd"><nav aria-label="Docs sidebar" class="menu thin-scrollbar menu_SIkG">
<ul class="theme-doc-sidebar-menu menu__list"><li class="theme-doc-sidebar-item-link menu__list-item"><a class="menu__link" href="/docs/intro">Tutorial Intro</a></li>
<li class="theme-doc-sidebar-item-link menu__list-item"><a class="menu__link menu__link--active" aria-current="page" href="/docs/install">{escape(MANUAL_TITLE)}</a></li></ul></nav></div></div></aside>
<main class="docMainContainer_TBSr"><div class="container padding-top--md padding-bottom--lg"><div class="row"><div class="col docItemCol_VOVn"><div class="docItemContainer_Djhp"><article>
<nav class="theme-doc-breadcrumbs breadcrumbsContainer_Z_bl" aria-label="Breadcrumbs"><ul class="breadcrumbs"><li class="breadcrumbs__item"><a aria-label="Home page" class="breadcrumbs__link" href="/">Home</a></li>
<li class="breadcrumbs__item breadcrumbs__item--active"><span class="breadcrumbs__link">{escape(MANUAL_TITLE)}</span></li></ul></nav>
<div class="tocCollapsible_ETCw theme-doc-toc-mobile tocMobile_ITEo"><button type="button" class="clean-btn tocCollapsibleButton_TO0P">On this page</button></div>
<div class="theme-doc-markdown markdown">{body}</div>
<footer class="theme-doc-footer docusaurus-mt-lg"><div class="theme-doc-footer-edit-meta-row row"><div class="col"><a href="https://github.com/packager/docs/tree/main/docs/install.md" target="_blank" rel="noopener noreferrer" class="theme-edit-this-page">Edit this page</a></div></div></footer>
</article><nav class="pagination-nav docusaurus-mt-lg" aria-label="Docs pages"><a class="pagination-nav__link pagination-nav__link--prev" href="/docs/intro"><div class="pagination-nav__sublabel">Previous</div><div class="pagination-nav__label">Tutorial Intro</div></a></nav></div></div>
<div class="col col--3"><div class="tableOfContents_bqdL thin-scrollbar theme-doc-toc-desktop"><ul class="table-of-contents table-of-contents__left-border">
<li><a href="#interpreter-location" class="table-of-contents__link toc-highlight">Interpreter location</a></li></ul></div></div></div></div></main></div></div></div>
<footer class="footer footer--dark"><div class="container container-fluid"><div class="footer__bottom text--center"><div class="footer__copyright">Copyright © 2026 Packager. Built with Docusaurus.</div></div></div></footer></div>
</body></html>
"""
    return Page("docusaurus", html, MANUAL_TITLE, _main_words())


def plain() -> Page:
    html = (
        f'<!DOCTYPE html>\n<html><head><meta charset="utf-8"><title>{escape(MANUAL_TITLE)}</title></head>\n'
        f"<body>\n{_markdown_body(lambda a: '')}\n</body></html>\n"
    )
    return Page("plain", html, MANUAL_TITLE, _main_words())


#: Every generator's page builder, by name.
GENERATORS: dict[str, Callable[[], Page]] = {
    "sphinx": sphinx,
    "docbook": docbook,
    "texinfo": texinfo,
    "texinfo-6": lambda: texinfo(6),
    "mkdocs": mkdocs,
    "docusaurus": docusaurus,
    "plain": plain,
}
