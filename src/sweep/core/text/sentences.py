"""Where a sentence ends: one rule per language, its marks held as data.

The chunkers cut at these ends (:func:`sentence_cuts`), the health columns ask whether a
chunk stops at one (:meth:`SentenceEnds.ends_whole`), the evidence tool cuts long
passages and proposals' sentences at them. Each document is cut by the rule of its
language (:func:`sentence_rule`, the language told by
:func:`~sweep.core.text.languages.detect_language` unless given):

- **English** (and every language without a rule of its own): :data:`SENTENCE_ENDS`,
  the rule every score before languages was measured with. ``. ! ? …`` end a sentence
  before a space and a character that is no lowercase letter; ``。！？`` anywhere.
- **Japanese, Chinese**: ``。！？．‼⁇`` end a sentence with or without a space after
  them, the closing brackets and quotes after them with it; half-width ``! ?`` before
  a CJK character too (typed without a space). A stop inside ``「…」`` (``『…』``,
  ``“…”``) ends no sentence: the quotation belongs to the sentence around it, which
  goes on after ``」`` when a quoting particle (``と``, ``って``) or a comma follows. A
  line break before a list mark (``・``, ``①``, ``（1）``) ends a line item.
- **Russian**: ``. ! ? …`` end a sentence before a space and a capital letter (after an
  opening quote or a dialogue dash, too), not after an abbreviation that never ends
  one (``т. е.``, ``г.``, ``ул.``, ``см.``: :data:`RUSSIAN_ABBREVIATIONS`) or an
  initial (``А. С. Пушкин``). List-closing abbreviations (``и т. д.``, ``и др.``) do
  end a sentence before a capital: nothing else starts with one after them.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType

from sweep.core.text.languages import CJK_CLASS, detect_language

__all__ = [
    "RUSSIAN_ABBREVIATIONS",
    "RUSSIAN_LIST_ENDS",
    "RUSSIAN_UNITS",
    "SENTENCE_ENDS",
    "SENTENCE_RULES",
    "SentenceEnds",
    "sentence_cuts",
    "sentence_rule",
]


def _chars(marks: str) -> str:
    """``marks`` as the inside of a regex character class."""
    return "".join(re.escape(c) for c in marks)


_BLOCK_START_MARKUP = r"#{1,6}\s|[-*+]\s|\d{1,3}[.)]\s|>|\||```|~~~"
_LIST_ITEM_MARKUP = r"[-*+]\s|\d{1,3}[.)]\s"


def _written(abbreviations: tuple[str, ...]) -> str:
    """A regex of ``abbreviations`` as written, a space after an inner dot or not, the
    longest first; each ends at its last dot."""
    forms = [r"\.\s?".join(map(re.escape, a.rstrip(".").split("."))) + r"\." for a in abbreviations]
    return "|".join(sorted(forms, key=len, reverse=True))


@dataclass(frozen=True)
class SentenceEnds:
    """The marks that end a sentence, and the three questions asked of them.

    A *spaced* stop (``stops``) ends a sentence when whitespace (``gaps``) follows it and
    the next character is no lowercase letter ("e.g. the" is no end); with
    ``capital_next`` only when that character is a capital letter, ``openers`` (quotes,
    a dialogue dash) and spaces allowed before it. A ``.`` after one of
    ``abbreviations`` (written with their dots, matched without regard to case or to
    the space after an inner dot) or, with ``initials``, after a lone capital letter
    ends nothing, save ``units`` after a number ("в 2020 г.") and ``list_ends``. A *full* stop (``full_stops``, the CJK ones) ends one with or without
    a space after it, and so do ``bare_stops`` before a CJK character; inside the
    brackets of ``quotes`` (pairs: opening, closing) none does, and after the closing
    one the sentence goes on before a ``quotative``. Closing quotes and brackets after a
    stop belong to the sentence it ends. ``clause_ends`` end a line's thought (a
    lead-in: "Steps:") but not a sentence inside a line. ``bullets``: a regex of the
    list marks (beside Markdown's) that start a new line item; with ``items_end_lines``
    a line item ends at its line break, stop or none.
    """

    stops: str = ".!?…"
    closers: str = "\"'”’»)]"
    gaps: str = " \t\u00a0\u3000"
    full_stops: str = "。！？"
    full_closers: str = "」』”’）)"
    full_gaps: str = " \t\u3000"
    clause_ends: str = ":;"
    full_clause_ends: str = "：；"
    # What may close a finished sentence at a line's end. It lacks "»" (the chunkers never
    # counted it there, and their cuts are what every score was measured with).
    line_closers: str = "\"'”’)]"
    # Marks a chunk's text may end with after its sentence: Markdown emphasis and code.
    markup_closers: str = "*_`"
    capital_next: bool = False
    openers: str = ""
    abbreviations: tuple[str, ...] = ()
    units: tuple[str, ...] = ()
    list_ends: tuple[str, ...] = ()
    initials: bool = False
    bare_stops: str = ""
    quotes: tuple[str, ...] = ()
    quotative: tuple[str, ...] = ()
    bullets: str = ""
    items_end_lines: bool = False
    _spaced: re.Pattern[str] = field(init=False, repr=False, compare=False)
    _full: re.Pattern[str] = field(init=False, repr=False, compare=False)
    _line_end: re.Pattern[str] = field(init=False, repr=False, compare=False)
    _block_start: re.Pattern[str] = field(init=False, repr=False, compare=False)
    _item_start: re.Pattern[str] = field(init=False, repr=False, compare=False)
    _no_end: re.Pattern[str] | None = field(init=False, repr=False, compare=False)
    _still_ends: re.Pattern[str] | None = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        # Patterns built once from the marks (a frozen instance: set past __setattr__).
        set_ = object.__setattr__
        set_(
            self,
            "_spaced",
            re.compile(f"[{_chars(self.stops)}]+[{_chars(self.closers)}]*[{_chars(self.gaps)}]+"),
        )
        # A full-width period between digits is a decimal point (１．５), no stop.
        marks = [
            f"{re.escape(c)}(?![0-9０-９])" if c == "．" else re.escape(c) for c in self.full_stops
        ]
        if self.bare_stops:
            marks.append(f"[{_chars(self.bare_stops)}](?=[{CJK_CLASS}])")
        full = f"(?:{'|'.join(marks)})"
        set_(
            self,
            "_full",
            re.compile(f"{full}+[{_chars(self.full_closers)}]*[{_chars(self.full_gaps)}]*"),
        )
        set_(
            self,
            "_line_end",
            re.compile(
                f"[{_chars(self.stops + self.clause_ends + self.full_stops)}]"
                f"[{_chars(self.line_closers)}]*[ \t]*$"
            ),
        )
        bullets = f"|{self.bullets}" if self.bullets else ""
        set_(self, "_block_start", re.compile(f"[ \t]*(?:{_BLOCK_START_MARKUP}{bullets})"))
        set_(self, "_item_start", re.compile(f"[ \t]*(?:{_LIST_ITEM_MARKUP}{bullets})"))
        alternatives = [f"(?i:{_written(self.abbreviations)})"] if self.abbreviations else []
        if self.initials:
            alternatives.append(r"[A-ZА-ЯЁ]\.")  # an initial: one capital letter
        set_(
            self,
            "_no_end",
            re.compile(f"(?<![\\w.])(?:{'|'.join(alternatives)})\\Z") if alternatives else None,
        )
        still = [f"\\d\\s?(?i:{_written(self.units)})"] if self.units else []
        if self.list_ends:
            still.append(f"(?<![\\w.])(?i:{_written(self.list_ends)})")
        set_(
            self,
            "_still_ends",
            re.compile(f"(?:{'|'.join(still)})\\Z") if still else None,
        )

    def ends(self, text: str, a: int, b: int) -> list[int]:
        """Positions strictly inside ``(a, b)`` just after a sentence end and the spaces
        after it, in order. A spaced stop followed by a line break is no end here: where a
        line ends is :func:`sentence_cuts`' business."""
        cuts: list[int] = []
        for m in self._spaced.finditer(text, a, b):
            e = m.end()
            if e < b and self._starts_sentence(text, e, b) and not self._abbreviated(text, m):
                cuts.append(e)
        if self.quotes:
            cuts.extend(self._full_ends_outside_quotes(text, a, b))
        else:
            cuts.extend(m.end() for m in self._full.finditer(text, a, b) if m.end() < b)
        return _whole(text, cuts, b)

    def _starts_sentence(self, text: str, e: int, b: int) -> bool:
        """Whether the text at ``e`` (after a stop and a space) may start a sentence."""
        if not self.capital_next:
            return not text[e].islower() and not text[e].isspace()
        while e < b and (text[e] in self.openers or text[e] in self.gaps):
            e += 1
        return e < b and text[e].isupper()

    def _abbreviated(self, text: str, m: re.Match[str]) -> bool:
        """Whether the stop run of ``m`` is the dot of an abbreviation or an initial."""
        if self._no_end is None or text[m.start()] != ".":
            return False
        lo, hi = max(0, m.start() - 16), m.start() + 1
        if self._no_end.search(text, lo, hi) is None:
            return False
        return self._still_ends is None or self._still_ends.search(text, lo, hi) is None

    def _full_ends_outside_quotes(self, text: str, a: int, b: int) -> list[int]:
        """The ends of the full stops not inside a quotation of the same line."""
        opening = "".join(q[0] for q in self.quotes)
        closing = "".join(q[1] for q in self.quotes)
        cuts: list[int] = []
        # How deep in quotation the text is at ``pos``, read once from the line's start
        # (a quotation never spans lines here): one pass, however long the line.
        pos, depth = text.rfind("\n", 0, a) + 1, 0
        for m in self._full.finditer(text, a, b):
            newline = text.rfind("\n", pos, m.start())
            if newline >= 0:
                pos, depth = newline + 1, 0
            between = text[pos : m.start()]
            depth += sum(map(between.count, opening)) - sum(map(between.count, closing))
            depth = max(0, depth)
            closed = sum(map(m.group().count, closing))  # the brackets the stop closes
            inside = depth > closed  # a stop inside the quotation
            # 「はい。」と言った: the closed quotation is part of the sentence that goes on.
            quoted = depth > 0 and text.startswith(self.quotative, m.end())
            if m.end() < b and not inside and not quoted:
                cuts.append(m.end())
            pos, depth = m.end(), max(0, depth - closed)
        return cuts

    def ends_line(self, line: str) -> bool:
        """Whether ``line`` (without its line break) ends with a finished sentence or a
        lead-in, so a line break after it is a place to cut."""
        return self._line_end.search(line) is not None

    def starts_block(self, text: str, pos: int) -> bool:
        """Whether a Markdown block or a list item starts at ``pos``."""
        return self._block_start.match(text, pos) is not None

    def starts_item(self, line: str) -> bool:
        """Whether ``line`` is a list item (a Markdown one, or one of ``bullets``)."""
        return self._item_start.match(line) is not None

    def ends_whole(self, text: str) -> bool:
        """Whether ``text`` ends with a sentence or clause end, closing quotes, brackets
        and Markdown emphasis after it allowed."""
        marks = self.closers + self.full_closers + self.markup_closers
        last = text.rstrip().rstrip(marks)
        ends = self.stops + self.clause_ends + self.full_stops + self.full_clause_ends
        return bool(last) and last[-1] in ends


#: The rule of English, and of every language without a rule of its own.
SENTENCE_ENDS = SentenceEnds()

#: Russian abbreviations that end no sentence: a name, a number or a word always follows
#: them. Not here: those that close a list (``и т. д.``, ``и т. п.``, ``и др.``), which a
#: capital letter follows only when a new sentence starts.
RUSSIAN_ABBREVIATIONS = (
    "т. е.",
    "т. к.",
    "т. н.",
    "т. ч.",
    "т. о.",
    "и. о.",
    "г.",
    "гг.",
    "им.",
    "ул.",
    "пр.",
    "просп.",
    "пер.",
    "пл.",
    "наб.",
    "д.",
    "корп.",
    "кв.",
    "стр.",
    "с.",
    "см.",
    "ср.",
    "напр.",
    "рис.",
    "табл.",
    "гл.",
    "п.",
    "пп.",
    "ст.",
    "ч.",
    "обл.",
    "пос.",
    "дер.",
    "проф.",
    "акад.",
    "доц.",
    "св.",
    "тов.",
    "гр.",
    "ген.",
    "англ.",
    "лат.",
    "нем.",
    "фр.",
    "рус.",
    "тел.",
    "факс.",
    "эл.",
    "прим.",
    "ред.",
    "изд.",
    "вып.",
    "ок.",
    "прибл.",
)

#: Of :data:`RUSSIAN_ABBREVIATIONS`, those that end a sentence after a number: a year
#: ("в 2020 г."), not a city ("г. Москва"); centimetres ("1,5 см."), not "see" ("см. ниже").
RUSSIAN_UNITS = ("г.", "гг.", "см.")
#: Abbreviations that close a list and end a sentence before a capital letter, though
#: their last part alone ("д.": дом) would not.
RUSSIAN_LIST_ENDS = ("т. д.", "т. п.", "др.")

_CJK_CLOSERS = "」』）】〉》〕］｝\"'”’)]"
# List marks of Japanese and Chinese documents: bullets, circled numbers, (1), 1．, 一、
_CJK_BULLETS = (
    r"[・●○■□◆◇▪▫•※★☆◎▶►]|[\u2460-\u2473\u3251-\u325f]"
    r"|[(（][0-9０-９一二三四五六七八九十]{1,3}[)）]|[0-9０-９]{1,3}[．.、]|[一二三四五六七八九十]{1,3}、"
)
_JAPANESE = SentenceEnds(
    full_stops="。！？．‼⁇",
    full_closers=_CJK_CLOSERS,
    line_closers=_CJK_CLOSERS,
    bare_stops="!?",
    quotes=("「」", "『』", "“”"),
    quotative=("と", "って", "、", "，"),
    bullets=_CJK_BULLETS,
    items_end_lines=True,
)
_RUSSIAN = SentenceEnds(
    line_closers="\"'”’»)]",
    capital_next=True,
    openers="«„\"'“(—–-",
    abbreviations=RUSSIAN_ABBREVIATIONS,
    units=RUSSIAN_UNITS,
    list_ends=RUSSIAN_LIST_ENDS,
    initials=True,
    items_end_lines=True,
)

#: The sentence rule of each language that has one of its own.
SENTENCE_RULES: Mapping[str, SentenceEnds] = MappingProxyType(
    {"en": SENTENCE_ENDS, "ja": _JAPANESE, "zh": _JAPANESE, "ru": _RUSSIAN}
)


def sentence_rule(text: str = "", language: str | None = None) -> SentenceEnds:
    """The sentence rule of ``language``, or of ``text``'s language when none is given;
    English's for a language without a rule of its own."""
    lang = language if language is not None else detect_language(text)
    return SENTENCE_RULES.get(lang, SENTENCE_ENDS)


_NEWLINES = re.compile(r"[ \t]*\n\s*")
# What continues the character before it (combining marks, variation selectors, a joiner):
# a cut goes after them, never between them and their base ("‼️" is two code points).
_CONTINUING = re.compile(
    "[\u0300-\u036f\u0483-\u0489\u0591-\u05bd\u0610-\u061a\u064b-\u065f\u0900-\u0903"
    "\u093a-\u094f\u1ab0-\u1aff\u1dc0-\u1dff\u200c\u200d\u20d0-\u20ff\u3099\u309a"
    "\ufe00-\ufe0f\ufe20-\ufe2f\U0001f3fb-\U0001f3ff\U000e0020-\U000e007f\U000e0100-\U000e01ef]*"
)
_HEADING_OR_ROW = re.compile(r"[ \t]*(?:#{1,6}\s|\|)")


def sentence_cuts(text: str, a: int, b: int, rule: SentenceEnds = SENTENCE_ENDS) -> list[int]:
    """Cut positions strictly inside ``(a, b)`` at sentence and line-block ends."""
    cuts = rule.ends(text, a, b)
    for m in _NEWLINES.finditer(text, a, b):
        e = m.end()
        if e >= b:
            continue
        if m.group().count("\n") >= 2:
            cuts.append(e)
            continue
        # One newline: a cut between Markdown blocks or after a finished
        # sentence, not inside hard-wrapped prose.
        line_start = text.rfind("\n", a, m.start()) + 1
        line_start = max(line_start, a)
        prev_line = text[line_start : m.start()]
        if (
            rule.starts_block(text, e)
            or rule.ends_line(prev_line)
            or _HEADING_OR_ROW.match(prev_line)
            # A list item ends at its line's end, stop or none, unless the next line is
            # indented (the item goes on).
            or (rule.items_end_lines and m.group().endswith("\n") and rule.starts_item(prev_line))
        ):
            cuts.append(e)
    return _whole(text, cuts, b)


def _whole(text: str, cuts: list[int], b: int) -> list[int]:
    """``cuts`` moved past the marks that continue the character before them, in order."""
    moved = set()
    for c in cuts:
        m = _CONTINUING.match(text, c, b)
        e = m.end() if m is not None else c
        if e < b:
            moved.add(e)
    return sorted(moved)
