"""The text rules of ``sweep.core.text``: one heading parser, one sentence-end rule, written
once. The chunkers' rules before the move are kept here verbatim as the reference: every
chunk boundary sweep ever measured came from them."""

from __future__ import annotations

import re

from hypothesis import given, settings
from hypothesis import strategies as st

from sweep.chunking import boundaries, headings
from sweep.chunking.health import chunk_health
from sweep.core.text import SENTENCE_ENDS, SentenceEnds, parse_headings, sentence_cuts
from sweep.core.types import Chunk, Document
from sweep.datasets.readers.markdown import markdown_headings

# --- the chunkers' sentence rule as it was (chunking/boundaries.py before issue 43) ---------
_OLD_SENTENCE_END = re.compile(r"[.!?…]+[\"'”’»)\]]*[ \t\u00a0\u3000]+")
_OLD_CJK_END = re.compile(r"[。！？]+[」』”’）)]*[ \t\u3000]*")
_OLD_NEWLINES = re.compile(r"[ \t]*\n\s*")
_OLD_BLOCK_START = re.compile(r"[ \t]*(?:#{1,6}\s|[-*+]\s|\d{1,3}[.)]\s|>|\||```|~~~)")
_OLD_LINE_END_PUNCT = re.compile(r"[.!?:;…。！？]['\"”’)\]]*[ \t]*$")
_OLD_HEADING_OR_ROW = re.compile(r"[ \t]*(?:#{1,6}\s|\|)")


def old_sentence_cuts(text: str, a: int, b: int) -> list[int]:
    cuts: list[int] = []
    for m in _OLD_SENTENCE_END.finditer(text, a, b):
        e = m.end()
        if e < b and not text[e].islower() and not text[e].isspace():
            cuts.append(e)
    for m in _OLD_CJK_END.finditer(text, a, b):
        if m.end() < b:
            cuts.append(m.end())
    for m in _OLD_NEWLINES.finditer(text, a, b):
        e = m.end()
        if e >= b:
            continue
        if m.group().count("\n") >= 2:
            cuts.append(e)
            continue
        line_start = max(text.rfind("\n", a, m.start()) + 1, a)
        prev_line = text[line_start : m.start()]
        if (
            _OLD_BLOCK_START.match(text, e)
            or _OLD_LINE_END_PUNCT.search(prev_line)
            or _OLD_HEADING_OR_ROW.match(prev_line)
        ):
            cuts.append(e)
    return sorted(set(cuts))


# --- the health columns' rule as it was (chunking/health.py) ---------------------------------
def old_ends_whole(text: str) -> bool:
    last = text.rstrip().rstrip("\"'”’)]*_`」』）")
    return bool(last) and last[-1] in set(".!?…:;。！？；：")


# Every mark any of the rules reads, and what sits around them.
_PIECES = [
    "a",
    "b",
    "Word",
    "é",
    "ё",
    "Ж",
    "日本",
    " ",
    "  ",
    "\t",
    "\n",
    "\n\n",
    "\u00a0",
    "\u3000",
    ".",
    "..",
    "!",
    "?",
    "…",
    ":",
    ";",
    "：",
    "；",
    "。",
    "！",
    "？",
    '"',
    "'",
    "”",
    "’",
    "»",
    ")",
    "]",
    "」",
    "』",
    "）",
    "*",
    "_",
    "`",
    "# ",
    "## ",
    "#",
    "- ",
    "1. ",
    "> ",
    "|",
    "```",
    "~~~",
    "e.g. ",
    "т. е. ",
]
_TEXT = st.lists(st.sampled_from(_PIECES), max_size=80).map("".join)


@settings(max_examples=600, deadline=None)
@given(_TEXT, st.data())
def test_the_shared_sentence_rule_cuts_where_the_chunkers_always_cut(text, data):
    assert sentence_cuts(text, 0, len(text)) == old_sentence_cuts(text, 0, len(text))
    a = data.draw(st.integers(0, len(text)))
    b = data.draw(st.integers(a, len(text)))
    assert sentence_cuts(text, a, b) == old_sentence_cuts(text, a, b)
    assert boundaries.sentence_cuts is sentence_cuts  # the chunkers cut with this very rule


@settings(max_examples=600, deadline=None)
@given(_TEXT)
def test_the_health_rule_is_the_old_one_but_for_guillemets(text):
    if "»" not in text:
        assert SENTENCE_ENDS.ends_whole(text) == old_ends_whole(text)


def test_a_sentence_closed_by_a_guillemet_ends_whole():
    # The one change to the mid-sentence column: » closes a sentence as ” always did.
    assert SENTENCE_ENDS.ends_whole("Он сказал: «Замените фильтр.»")
    assert not old_ends_whole("Он сказал: «Замените фильтр.»")
    text = "Он сказал: «Замените фильтр.» Потом ушёл."
    doc = Document("ru.md", text)
    end = text.index("»") + 1
    chunks = [
        Chunk("ru.md", 0, 0, end, text[:end], 8),
        Chunk("ru.md", 1, end + 1, len(text), text[end + 1 :], 4),
    ]
    assert chunk_health([doc], chunks).midsentence_share == 0.0


def test_japanese_and_russian_sentence_ends():
    ja = "保証期間は二年間です。ファンも対象です！交換は無料ですか？はい。"
    assert [ja[a:b] for a, b in boundaries.pieces(0, len(ja), sentence_cuts(ja, 0, len(ja)))] == [
        "保証期間は二年間です。",
        "ファンも対象です！",
        "交換は無料ですか？",
        "はい。",
    ]
    ru = "Гарантия действует два года. Замена бесплатна? Да, т. е. без доплаты."
    assert [
        ru[a:b].strip() for a, b in boundaries.pieces(0, len(ru), sentence_cuts(ru, 0, len(ru)))
    ] == ["Гарантия действует два года.", "Замена бесплатна?", "Да, т. е. без доплаты."]
    assert SENTENCE_ENDS.ends_whole("はい。") and SENTENCE_ENDS.ends_whole("次の通り：")
    assert not SENTENCE_ENDS.ends_whole("Гарантия действует")


def test_a_language_brings_its_own_marks():
    # The danda ends a Hindi sentence; the rule every stage uses today does not know it.
    text = "यह पहला वाक्य है। यह दूसरा है।"
    assert SENTENCE_ENDS.ends(text, 0, len(text)) == []
    hindi = SentenceEnds(stops=SENTENCE_ENDS.stops + "।")
    assert hindi.ends(text, 0, len(text)) == [text.index("यह दूसरा")]
    assert sentence_cuts(text, 0, len(text), hindi) == [text.index("यह दूसरा")]
    assert (
        hindi.ends_whole(text) and hindi == SentenceEnds(stops=".!?…।") and hindi != SENTENCE_ENDS
    )


# --- one heading parser -----------------------------------------------------------------------
def test_chunkers_and_readers_see_the_same_headings():
    assert (
        headings.parse_headings is parse_headings
        and headings.Heading is parse_headings("# a")[0].__class__
    )
    text = "\ufeffGuide\n=====\n\n####\n\n## Setup ##\n\n```\n# not a heading\n```\nText\n---\n"
    parsed = parse_headings(text)
    assert [(h.level, h.title, h.start) for h in parsed] == [
        (1, "Guide", 0),
        (4, "", 14),
        (2, "Setup", 20),
        (2, "Text", 57),
    ]
    # Readers list the same headings, but one that has no title: it names nothing.
    assert [(h.level, h.title, h.start) for h in markdown_headings(text)] == [
        (1, "Guide", 0),
        (2, "Setup", 20),
        (2, "Text", 57),
    ]
