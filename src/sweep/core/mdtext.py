"""Text from data shown in Markdown: a name shows as itself and adds no structure.

A sweep folder's name, a setting's value, a dataset's name or a job's error can
come from anyone (a folder committed as a CI baseline, a pull request), and
sweep writes them into Markdown that GitHub renders: ``$GITHUB_STEP_SUMMARY``,
results.md. Unescaped, ``new|<img src=x onerror=...>`` adds a table column and
an HTML tag, a line break ends the table, ``![x](https://...)`` loads a picture
from elsewhere, ``*`` and ``_`` emphasise. :func:`md_text` turns such text into
one line that renders as the text itself.
"""

from __future__ import annotations

import re

from sweep.core.messages import one_line

__all__ = ["md_text"]

# Besides what a terminal acts on (escapes, bidi overrides, lone surrogates: one_line shows
# those as their code), what a reader of the rendered page cannot see: zero-width spaces
# and joiners, word joiners, the byte-order mark.
_UNSEEN = re.compile("[\u200b-\u200d\u2060-\u2065\ufeff]")
# Markup: HTML's entities for <, > and & (which every Markdown renderer honours), a
# backslash before the rest (CommonMark escapes any ASCII punctuation), the backslash itself
# too, so no backslash of the text's own can cancel one added here.
_ESCAPES = {"&": "&amp;", "<": "&lt;", ">": "&gt;", **{c: "\\" + c for c in "\\`|*~_"}}
# An underscore inside a word (by_source.md, cl100k_base) never emphasises: left as it reads.
_ESCAPED = re.compile(r"[&<>\\`|*~]|(?<![^\W_])_|_(?![^\W_])")
# Brackets make a link or an image only before "(", "[" or ":" ([x](url), [x][ref],
# [ref]: url); an interval such as [0.41, 0.67] is left as it reads.
_LINK = re.compile(r"\][(\[:]")
# What starts a block when a line starts with it (a heading, a list, a rule, "1. "): a
# line of prose may begin with the text, so that mark is escaped as well.
_BLOCK = re.compile(r"^(?:([#+=-])|(\d{1,9})([.)])(?=\s|$))")


def md_text(text: object, *, starts_line: bool = True) -> str:
    """``text`` on one line, safe in a line of prose or (``starts_line=False``, where no
    block can start: ``-0.05`` stays as it reads) a table cell."""
    line = one_line(text)
    line = _UNSEEN.sub(lambda m: f"\\u{ord(m.group()):04x}", line)
    line = _ESCAPED.sub(lambda m: _ESCAPES[m.group()], line)
    if _LINK.search(line):
        line = line.replace("[", "\\[").replace("]", "\\]")
    if not starts_line:
        return line
    return _BLOCK.sub(lambda m: f"\\{m[1]}" if m[1] else f"{m[2]}\\{m[3]}", line)
