"""Find where a quoted passage sits in a document's text, as original character offsets.

An evaluation label may name its evidence by a quote (``{"doc_id", "quote"}``) instead
of offsets. The document's text comes from a parser, and the quote from a person who
copied it from a PDF viewer or a web page, so the two rarely agree byte for byte:
line breaks, hyphenation at a line end, non-breaking spaces, curly quotes, ligatures,
case. :class:`QuoteIndex` tries, in order,

1. ``exact``: ``str.find`` on the text as it is;
2. ``normalised``: both sides folded by :func:`normalise` (NFKC, whitespace runs as
   one space and none beside a CJK character, hyphens between letters dropped, curly
   quotes and dashes made ASCII, case-folded, ``ё`` as ``е``), with a map from every
   folded character back to the original ones, so the span returned covers exactly
   the original characters that matched;
3. ``fuzzy`` (only when asked, with a threshold): the best approximate passage on
   the folded text, among a few candidate windows seeded by the quote's rarest words
   and scored like difflib's ratio (2·matched characters / all characters). Words are
   ``\\w+`` runs, but in Chinese, Japanese and Korean script every character is one
   (and character pairs seed the windows): those languages put no space between
   words, so a ``\\w+`` run there is a whole clause.

A quote that cannot be placed gives a :class:`NotLocated` that says why, and shows
the closest passage verbatim with what differs, so the label can be fixed by pasting.

Text is folded a grapheme cluster at a time (a letter with its accents, an emoji
with its modifiers and joiners, a flag's two letters, a Hangul syllable's jamo: what
a reader sees as one character, as Unicode's UAX #29 defines it), a cluster taking
with it the clusters NFKC joins to it (``ㄱㅏ`` is ``가``), so the folded text is NFKC
of the whole string, never of pieces cut where NFKC would compose. Every span
returned, the closest passage of a quote not found included, starts and ends on
cluster boundaries of the original text. An exact or normalised match that would cut
a cluster (``"cafe"`` in a text whose "é" is "e" and a combining accent, one flag of
a pair) is no match: the quote is not what the text shows there.

The quote is folded on its own, so a quote that begins or ends on a hyphen cut off
from its word (``"exam-"`` of ``exam-\nple``) is not found normalised; real quotes
begin and end on whole words.
"""

from __future__ import annotations

import json
import math
import re
from array import array
from bisect import bisect_right
from collections import Counter
from dataclasses import dataclass
from difflib import SequenceMatcher
from functools import lru_cache
from itertools import accumulate, chain, combinations
from typing import Literal, NamedTuple

import regex

from sweep.core.checks import is_int
from sweep.core.text.languages import CJK_CLASS, is_cjk, nfkc
from sweep.core.textspans import strip_span

__all__ = [
    "NotLocated",
    "QuoteIndex",
    "QuoteLocation",
    "describe_difference",
    "locate",
    "normalise",
]

How = Literal["exact", "normalised", "fuzzy"]
Reason = Literal["not found", "ambiguous", "occurrence", "empty"]

# The normalisations, as bits, so a subset of them is one small int (and a cache key).
_WHITESPACE, _CASE, _PUNCTUATION, _UNICODE, _HYPHENATION, _YO = 1, 2, 4, 8, 16, 32
_ALL = 63
#: Names in the order a message lists them, and in which a smaller set is preferred.
#: Unicode before case: case-folding alone also undoes a ligature, but says less.
_NAMES = (
    (_WHITESPACE, "whitespace"),
    (_UNICODE, "unicode"),
    (_PUNCTUATION, "quotes/dashes"),
    (_HYPHENATION, "hyphenation"),
    (_CASE, "case"),
    (_YO, "ё/е"),
)
# Russian writes "ё" as "е" more often than not (only dictionaries and children's books
# keep the dots), so a quote typed with either letter is the same quote.
_YO_MAP = str.maketrans("ёЁ", "еЕ")

_DASHES = "\u2010\u2011\u2012\u2013\u2014\u2015\u2043\u2212\ufe58\ufe63\uff0d"
_PUNCTUATION_MAP = str.maketrans(
    {
        **dict.fromkeys("\u2018\u2019\u201a\u201b\u2032\u2035\u02bc", "'"),
        **dict.fromkeys("\u201c\u201d\u201e\u201f\u2033\u2036", '"'),
        **dict.fromkeys(_DASHES, "-"),
    }
)
# Grapheme clusters, as UAX #29 (Unicode 15.1, table 1c) defines them: what a reader
# sees as one character. Written out rather than the regex module's \X, whose regional
# indicators take time quadratic in the length of a run of them (a file of flags).
# Characters that join the cluster before them (rules GB9, GB9a: combining marks, ZWJ,
# spacing marks): a token that ends before one would cut a cluster.
_JOINS = r"\p{GCB=Extend}\p{GCB=ZWJ}\p{GCB=SpacingMark}"
_CONTROLS = r"\p{GCB=Control}\p{GCB=CR}\p{GCB=LF}"
# characters that may begin a cluster of more than themselves and their joiners
_SPECIAL = (
    _CONTROLS + r"\p{GCB=Prepend}\p{GCB=RI}\p{GCB=L}\p{GCB=V}\p{GCB=T}\p{GCB=LV}"
    r"\p{GCB=LVT}\p{Extended_Pictographic}\p{InCB=Consonant}"
)
_CLUSTER_PATTERN = (
    rf"(?:[^{_SPECIAL}]"  # most characters: one, with its marks
    r"|\p{GCB=Prepend}*(?:"
    r"\p{GCB=RI}\p{GCB=RI}"  # a flag
    r"|\p{GCB=L}*(?:\p{GCB=V}+|\p{GCB=LV}\p{GCB=V}*|\p{GCB=LVT})\p{GCB=T}*"  # Hangul jamo
    r"|\p{GCB=L}+|\p{GCB=T}+"
    r"|\p{Extended_Pictographic}(?:\p{GCB=Extend}*\p{GCB=ZWJ}\p{Extended_Pictographic})*"
    r"|\p{InCB=Consonant}(?:[\p{InCB=Extend}\p{InCB=Linker}]*\p{InCB=Linker}"  # conjuncts
    r"[\p{InCB=Extend}\p{InCB=Linker}]*\p{InCB=Consonant})+"
    rf"|[^{_CONTROLS}]))[{_JOINS}]*"
    rf"|\r\n|[{_CONTROLS}]"
)


def _hangul_letters(pattern: str) -> str:
    """The Hangul letters whose NFKC form matches ``pattern`` (as regex class contents):
    conjoining jamo, and the compatibility and half-width letters NFKC makes jamo."""
    blocks = chain(range(0x1100, 0x1200), range(0x3130, 0x3190), range(0xFFA0, 0xFFE0))
    return "".join(chr(c) for c in blocks if regex.fullmatch(pattern, nfkc(chr(c))))


# The only characters NFKC composes with the one before them although they begin a
# grapheme cluster (every other, a combining mark or a voicing mark, joins its cluster;
# a test checks that against every code point): Hangul vowels after an initial
# (``ㄱㅏ`` is ``가``) and finals after both or after a syllable without one (``가ㄳ``
# is ``갃``). A cluster takes them with it, so that NFKC never composes across tokens.
_INITIALS = _hangul_letters(r".*[\u1100-\u1112]")
_VOWELS = _hangul_letters(r"[\u1161-\u1175].*")
_FINALS = _hangul_letters(r"[\u11a8-\u11c2].*")
_NFKC_JOINS = _VOWELS + _FINALS
_HANGUL_TAIL = (
    rf"(?:(?<=[{_INITIALS}])[{_VOWELS}][{_FINALS}]?"
    rf"|(?<=[{_INITIALS}][{_VOWELS}]|\p{{GCB=LV}})[{_FINALS}])?"
)
# Chinese and Japanese characters that every normalisation leaves as they are (kana
# without the voicing marks that compose, unified ideographs, the commonest CJK
# punctuation): folded a run at a time, like ASCII, not a cluster at a time.
_STABLE_CJK = "\u3001\u3002\u300c-\u3011\u3041-\u3096\u30a1-\u30fc\u3400-\u4dbf\u4e00-\u9fff"
_TOKEN = regex.compile(
    # a hyphen between letters, maybe followed by a line break: "exam-\nple", "e-mail"
    # (the hyphen first, then what is behind it: a look behind at every character is slow)
    rf"(?P<hyphen>[-\u00ad{_DASHES}](?<=\p{{L}}\p{{M}}*.)(?![{_JOINS}])"
    rf"(?:[^\S\r\n\u2028\u2029\x85]*[\r\n\u2028\u2029\x85]\s*)?(?=\p{{L}}))"
    rf"|(?P<space>(?:\s(?![{_JOINS}]))+)"
    # ASCII that folds one character to one (only its case changes), single spaces
    # included: one token per phrase, not per word, is what makes folding fast
    rf"|(?P<plain>[!-,.-~](?:[!-,.-~]| (?=[!-,.-~]))*(?![{_JOINS}]))"
    rf"|(?P<cjk>[{_STABLE_CJK}]+(?![{_JOINS}{_NFKC_JOINS}]))"
    # anything else a whole grapheme cluster at a time, with the clusters NFKC would
    # compose with it: what each token folds to is then what NFKC of the whole text has
    # there (no composition crosses from one token to the next)
    rf"|(?P<other>(?:{_CLUSTER_PATTERN}){_HANGUL_TAIL}[{_JOINS}]*)",
    regex.DOTALL,
)
# Characters between which a space is optional: Chinese and Japanese put none between
# words, and Japanese typed with spaces, or a PDF's line broken inside a sentence, puts
# one where the reader sees none. A space beside one of these is dropped when folding.
_SPACELESS = CJK_CLASS + "\u3001-\u303f"
_SPACE_BY_CJK = re.compile(rf" (?=[{_SPACELESS}])|(?<=[{_SPACELESS}]) ")
_SPACELESS_CHAR = re.compile(f"[{_SPACELESS}]")
# Dropped when folding Unicode: format characters (soft hyphens, zero-width spaces and
# joiners, byte-order marks) and variation selectors (text or emoji presentation of
# the same character), all invisible in a viewer and often lost when copying.
_INVISIBLE = regex.compile(r"[\p{Cf}\p{Variation_Selector}]+")
_WORD = re.compile(r"\w+")
# A word of the fuzzy step: a CJK character alone, a run of other word characters, or
# a punctuation mark. For text without CJK characters, \w+ runs and marks.
_TOKEN_OF_DIFF = re.compile(rf"[{CJK_CLASS}]|[^\W{CJK_CLASS}]+|[^\w\s]")
# The same for text without CJK characters, and a fifth faster: what is used there.
_WORD_OR_MARK = re.compile(r"\w+|[^\w\s]")
# What seeds and checks the fuzzy step's windows: words, and CJK runs (cut into
# character pairs by _terms).
_TERM = re.compile(rf"[^\W{CJK_CLASS}]+|(?P<cjk>[{CJK_CLASS}]+)")

#: How far from a match (in original characters) a ``context`` hint may be.
CONTEXT_REACH = 200
# Candidate windows scored per fuzzy search, at most; each costs a word alignment.
_CANDIDATES = 8
# Seed words of the quote that vote for where it starts; a word found more often than
# _COMMON times in the document says little about where the quote is.
_SEED_WORDS = 8
_COMMON = 200
# Longest stretch of differing text (quote and passage together) compared character by
# character when scoring; longer ones count as no match.
_LONGEST_GAP = 400


@lru_cache(maxsize=4096)
def _fold_cluster(chars: str, kinds: int) -> str:
    """One grapheme cluster folded; cached as documents repeat them."""
    out = nfkc(chars) if kinds & _UNICODE else chars
    if kinds & _CASE:
        out = _casefold(out)
        if kinds & _UNICODE:  # case folding can decompose: "ǰ" folds to "j" and a caron
            out = nfkc(out)
    if kinds & _UNICODE:
        out = _INVISIBLE.sub("", out)
    if kinds & _YO:
        out = out.translate(_YO_MAP)
    # last, as NFKC can make a prime (from U+2033) and case folding an apostrophe (from "ŉ")
    return out.translate(_PUNCTUATION_MAP) if kinds & _PUNCTUATION else out


# a combining dot above that belongs to an "i": only marks neither above nor base between
_DOT_ABOVE_I = regex.compile(r"(i[^\p{ccc=0}\p{ccc=230}]*)\u0307")


def _casefold(text: str) -> str:
    """``text`` case-folded by Unicode's full case folding (``str.casefold``: "ß" is "ss"),
    with the four Turkish i's made one.

    Unicode folds the dotted capital "İ" to "i" and a combining dot above, and leaves
    the dotless "ı" alone although its capital is "I": so "İstanbul", "ISTANBUL" and
    "istanbul" would not all be the same. The dot above an "i" is dropped (an "i" has
    one already; marks below it may come between, in canonical order) and "ı" folds to
    "i", as a reader comparing without case would.
    """
    return _DOT_ABOVE_I.sub(r"\1", text.casefold().replace("\u0131", "i"))


class _Folded(NamedTuple):
    """A folded text, and for each of its characters the original span it came from."""

    text: str
    starts: list[int]
    ends: list[int]
    #: whether it has a Chinese, Japanese or Korean character (see ``_SPACELESS``)
    cjk: bool = False


class _Builder:
    """Accumulates folded characters with their original spans; runs of spaces merge."""

    def __init__(self, with_offsets: bool = True) -> None:
        self.parts: list[str] = []
        self.starts: list[int] = []
        self.ends: list[int] = []
        self.with_offsets = with_offsets
        self.after_space = True  # so that leading whitespace is dropped

    def same(self, chars: str, start: int) -> None:
        """Characters that fold one to one, from ``start`` on."""
        self.parts.append(chars)
        if self.with_offsets:
            self.starts.extend(range(start, start + len(chars)))
            self.ends.extend(range(start + 1, start + len(chars) + 1))
        self.after_space = chars.endswith(" ")

    def space(self, start: int, end: int) -> None:
        if self.after_space:
            if self.ends:
                self.ends[-1] = end
            return
        self.parts.append(" ")
        if self.with_offsets:
            self.starts.append(start)
            self.ends.append(end)
        self.after_space = True

    def cluster(self, folded: str, start: int, end: int) -> None:
        """The folded form of the original characters ``[start, end)``, any length."""
        for char in folded:
            if char.isspace():
                self.space(start, end)
            else:
                self.parts.append(char)
                if self.with_offsets:
                    self.starts.append(start)
                    self.ends.append(end)
                self.after_space = False

    def result(self, cjk: bool) -> _Folded:
        text = "".join(self.parts)
        if text.endswith(" "):
            text = text[:-1]
            if self.with_offsets:
                del self.starts[-1], self.ends[-1]
        return _Folded(text, self.starts, self.ends, cjk)


def _fold(text: str, kinds: int = _ALL, with_offsets: bool = True) -> _Folded:
    """Fold ``text`` by the normalisations in ``kinds``, keeping the map to ``text``."""
    out = _Builder(with_offsets)
    cjk = False  # told from the tokens: a scan of the whole text costs a few percent
    for match in _TOKEN.finditer(text):
        kind, start, end = match.lastgroup, match.start(), match.end()
        chars = match.group()
        if kind == "hyphen" and not kinds & _HYPHENATION:
            out.cluster(_fold_cluster(chars[0], kinds), start, start + 1)
            kind, chars, start = ("space", chars[1:], start + 1)
            if not chars:
                continue
        if kind == "hyphen":
            continue
        if kind == "space":
            if kinds & _WHITESPACE:
                out.space(start, end)
            else:
                out.same(chars, start)
        elif kind == "plain":
            out.same(chars.lower() if kinds & _CASE else chars, start)
        elif kind == "cjk":
            out.same(chars, start)
            cjk = True
        else:
            folded = _fold_cluster(chars, kinds)
            cjk = cjk or _SPACELESS_CHAR.search(folded) is not None
            out.cluster(folded, start, end)
    if not kinds & _WHITESPACE:
        return _Folded("".join(out.parts), out.starts, out.ends, cjk)
    result = out.result(cjk)
    return _without_cjk_spaces(result, with_offsets) if cjk else result


def _without_cjk_spaces(folded: _Folded, with_offsets: bool) -> _Folded:
    """``folded`` without the spaces beside a CJK character (see ``_SPACELESS``)."""
    kept, at = [], 0
    for match in _SPACE_BY_CJK.finditer(folded.text):
        kept.append((at, match.start()))
        at = match.end()
    if not kept:
        return folded
    kept.append((at, len(folded.text)))
    text = "".join(folded.text[a:b] for a, b in kept)
    if not with_offsets:
        return _Folded(text, [], [], cjk=True)
    starts = [i for a, b in kept for i in folded.starts[a:b]]
    ends = [i for a, b in kept for i in folded.ends[a:b]]
    return _Folded(text, starts, ends, cjk=True)


def _squeeze(folded: _Folded) -> _Folded:
    """``folded`` without its spaces."""
    keep = [i for i, char in enumerate(folded.text) if char != " "]
    return _Folded(
        folded.text.replace(" ", ""),
        [folded.starts[i] for i in keep],
        [folded.ends[i] for i in keep],
        folded.cjk,
    )


def _has_cjk(text: str) -> bool:
    return not text.isascii() and _SPACELESS_CHAR.search(text) is not None


def _fold_text(text: str, kinds: int) -> str:
    return _fold(text, kinds, with_offsets=False).text.strip()


def normalise(text: str) -> str:
    """``text`` as the ``normalised`` step compares it.

    NFKC of the whole string (ligatures, full-width forms, the ellipsis, half-width kana
    with their voicing marks: ``ﾊﾟｽﾜｰﾄﾞ`` is ``パスワード``), invisible format characters
    and variation selectors dropped, curly quotes, primes and dashes as ASCII, a hyphen
    between two letters dropped (with the line break after it: ``exam-\\nple`` is
    ``example``), every whitespace run as one space, none beside a Chinese, Japanese or
    Korean character (``出張 申請`` is ``出張申請``), stripped, case-folded by Unicode's
    rules (see :func:`_casefold`), and ``ё`` as ``е``.
    """
    return _fold(text, with_offsets=False).text


# --- grapheme clusters ------------------------------------------------------------------

_CLUSTER = regex.compile(_CLUSTER_PATTERN)
# A boundary is certain between two characters when the left one is no Prepend or CR
# and the right one neither joins what is before it (marks, ZWJ, Hangul jamo) nor is
# one whose joining depends on more than its neighbour (a regional indicator, an
# emoji after a ZWJ, an Indic consonant after a virama). Clusters found from such a
# boundary on are the text's own, whatever comes before it.
_NO_BREAK_AFTER = regex.compile(r"[\p{GCB=Prepend}\r]")
_NO_BREAK_BEFORE = regex.compile(
    rf"[{_JOINS}\p{{GCB=RI}}\p{{GCB=L}}\p{{GCB=V}}\p{{GCB=T}}\p{{GCB=LV}}\p{{GCB=LVT}}"
    r"\p{Extended_Pictographic}\p{InCB=Consonant}]"
)
# How far around a position clusters are looked for before segmenting the whole text
# once (a run of flags or of combining marks has no certain boundary in it).
_REACH = 64


class _Graphemes:
    """The grapheme clusters of one text, found around a position when asked.

    Spans are widened to whole clusters so that a span never ends between a letter and
    its accent, inside an emoji sequence or between a flag's two letters. Between two
    ASCII characters there is always a boundary (CR LF aside), so English text costs
    nothing; elsewhere the clusters are found from the nearest certain boundary, and
    only in a text without one nearby is the whole text segmented, once.
    """

    def __init__(self, text: str) -> None:
        self.text = text
        self._ends: array[int] | None = None

    def widen(self, start: int, end: int) -> tuple[int, int]:
        """``(start, end)`` moved outward to the nearest cluster boundaries."""
        if start < end:
            if not self._is_boundary(start):
                start = self._cluster(start)[0]
            if not self._is_boundary(end):
                end = self._cluster(end)[1]
        return start, end

    def _is_boundary(self, at: int) -> bool:
        text = self.text
        if at <= 0 or at >= len(text):
            return True
        before, after = text[at - 1], text[at]
        if before < "\x80" and after < "\x80":
            return not (before == "\r" and after == "\n")
        return self._cluster(at)[0] == at

    def _cluster(self, at: int) -> tuple[int, int]:
        """The cluster that holds ``text[at]``."""
        text = self.text
        low, limit = at, max(0, at - _REACH)
        while low > limit and not self._certain(low):
            low -= 1
        if self._certain(low):
            high = min(len(text), at + _REACH)
            for match in _CLUSTER.finditer(text, low, high):
                if match.end() > at:
                    if match.end() < high or high == len(text):
                        return match.span()
                    break  # the cluster may go on past the window
        return self._cluster_in_whole_text(at)

    def _certain(self, at: int) -> bool:
        """Whether there is a cluster boundary at ``at`` whatever precedes ``at - 1``."""
        return at == 0 or not (
            _NO_BREAK_AFTER.match(self.text, at - 1) or _NO_BREAK_BEFORE.match(self.text, at)
        )

    def _cluster_in_whole_text(self, at: int) -> tuple[int, int]:
        if self._ends is None:
            self._ends = array("q", accumulate(map(len, _CLUSTER.findall(self.text))))
        index = bisect_right(self._ends, at)
        return (self._ends[index - 1] if index else 0), self._ends[index]


@dataclass(frozen=True)
class QuoteLocation:
    """Where the quote is: ``text[start:end]``, trimmed to non-space characters.

    It is truthy and :class:`NotLocated` falsy, so ``if found := index.locate(q):``
    reads naturally.
    """

    start: int
    end: int
    how: How
    score: float = 1.0
    #: for ``normalised``: the fewest normalisations that make quote and span equal
    normalisations: tuple[str, ...] = ()
    #: how many matches the step found (more than 1 when a hint chose among them)
    occurrences: int = 1

    def message(self) -> str:
        """One line: ``exact``, ``normalised (whitespace, case)`` or ``fuzzy 0.94``."""
        if self.how == "fuzzy":
            return f"fuzzy {_floor2(self.score)}"
        if self.how == "normalised" and self.normalisations:
            return f"normalised ({', '.join(self.normalisations)})"
        return self.how

    def __bool__(self) -> bool:
        return True


@dataclass(frozen=True)
class NotLocated:
    """Why a quote was not placed, and the passage closest to it, ready to paste."""

    reason: Reason
    #: the closest passage, verbatim (a slice of the original text); "" for an empty text
    closest: str = ""
    closest_start: int = 0
    #: how alike the folded quote and the folded closest passage are, as the fuzzy
    #: step scores them (2·matched characters / all characters)
    similarity: float = 0.0
    #: what differs between quote and closest passage, in a few words
    differs: str = ""
    #: matches found, for "ambiguous" and "occurrence"
    occurrences: int = 0
    #: original start offsets of those matches
    positions: tuple[int, ...] = ()
    #: the step whose matches were ambiguous or too few
    how: str = ""
    #: the occurrence asked for, for "occurrence"
    asked: int | None = None
    #: anything else worth saying (e.g. a context found near none of the matches)
    detail: str = ""
    #: for "not found": every word of the quote is in the text around the closest passage,
    #: but not in the quote's order (what a parser that moves text would leave)
    reordered: bool = False

    def message(self) -> str:
        """The reason on one line, with the closest passage quoted (newlines as ``\\n``)."""
        if self.reason == "empty":
            return "the quote is empty"
        if self.reason == "occurrence":
            return (
                f"occurrence {self.asked} asked, quote found {_times(self.occurrences)}"
                f" ({self.how})"
            )
        if self.reason == "ambiguous":
            shown = ", ".join(map(str, self.positions[:5]))
            more = ", ..." if len(self.positions) > 5 else ""
            text = (
                f"quote found {_times(self.occurrences)} ({self.how}) at offsets "
                f"{shown}{more}; pass occurrence=1..{self.occurrences} or a context"
            )
            return f"{text}; {self.detail}" if self.detail else text
        if not self.closest:
            return "quote not found; the document is empty"
        moved = (
            "; the text around it has every word of the quote, in another order"
            if self.reordered
            else ""
        )
        return (
            f"quote not found; closest passage (similarity {_floor2(self.similarity)}, "
            f"{self.differs}): {_quoted(self.closest)}{moved}"
        )

    def __bool__(self) -> bool:
        return False


class _Match(NamedTuple):
    start: int  # original offsets
    end: int
    score: float


class QuoteIndex:
    """One document's text, ready to place many quotes in it.

    The folded copy (and a word index for fuzzy search) is built once, on the first
    quote that needs it: an exact match needs neither.
    """

    def __init__(self, text: str) -> None:
        self.text = text
        self._graphemes = _Graphemes(text)
        self._folded: _Folded | None = None
        self._squeezed: _Folded | None = None
        self._words: dict[str, list[int]] | None = None

    @property
    def _folding(self) -> _Folded:
        if self._folded is None:
            self._folded = _fold(self.text)
        return self._folded

    @property
    def _squeezing(self) -> _Folded:
        """The folded text without its spaces, for quotes in Chinese, Japanese or Korean."""
        if self._squeezed is None:
            self._squeezed = _squeeze(self._folding)
        return self._squeezed

    @property
    def _word_starts(self) -> dict[str, list[int]]:
        """Every word of the folded text and where it starts, to seed fuzzy windows."""
        if self._words is None:
            words: dict[str, list[int]] = {}
            text = self._folding.text
            if self._folding.cjk:
                for word, start in _terms(text):
                    words.setdefault(word, []).append(start)
            else:  # the same terms, a third faster for a long text
                for match in _WORD.finditer(text):
                    words.setdefault(match.group(), []).append(match.start())
            self._words = words
        return self._words

    def locate(
        self,
        quote: str,
        *,
        occurrence: int | None = None,
        context: str | None = None,
        fuzzy: float | None = None,
    ) -> QuoteLocation | NotLocated:
        """Place ``quote``: exact, else normalised, else (if ``fuzzy``) approximate.

        A step that finds several matches takes the ``occurrence``-th (1-based, counted
        in that step; it wins over ``context``), else the one with ``context`` nearest
        (within :data:`CONTEXT_REACH` characters, compared normalised), else the one
        scoring strictly best; otherwise the result is ``ambiguous``. A step with fewer
        matches than ``occurrence`` hands over to the next step, which finds at least
        as many. ``fuzzy`` is the lowest similarity accepted, in (0, 1]: 2·matched
        characters / all characters, as difflib's ratio (see :func:`_similarity`).
        """
        _check_arguments(occurrence, fuzzy)
        wanted = quote.strip()
        if not wanted:
            return NotLocated("empty")
        # folded once the exact step has not found it: most quotes are copied as they are
        folded_quote: str | None = None
        most_found = (0, "")  # the most matches a step found, when `occurrence` asks more
        steps: tuple[How, ...] = ("exact", "normalised", "fuzzy")
        for how in steps:
            if how == "fuzzy" and fuzzy is None:
                break
            if how != "exact" and folded_quote is None:
                folded_quote = normalise(wanted)
            matches = self._matches(how, wanted, folded_quote or "", fuzzy)
            if not matches:
                continue
            if occurrence is not None and occurrence > len(matches):
                if len(matches) > most_found[0]:
                    most_found = (len(matches), how)
                continue
            return self._choose(how, matches, wanted, occurrence, context)
        if most_found[0]:
            return NotLocated(
                "occurrence", occurrences=most_found[0], how=most_found[1], asked=occurrence
            )
        return self._not_found(wanted, normalise(wanted) if folded_quote is None else folded_quote)

    # --- the three steps ---------------------------------------------------------------

    def _matches(
        self, how: How, quote: str, folded_quote: str, fuzzy: float | None
    ) -> list[_Match]:
        if how == "exact":
            # an occurrence that cuts a grapheme cluster (a letter from its accent, one
            # flag of a pair) is not what the text shows there
            widen = self._graphemes.widen
            return [
                _Match(s, s + len(quote), 1.0)
                for s in _find_all(self.text, quote)
                if widen(s, s + len(quote)) == (s, s + len(quote))
            ]
        if not folded_quote:  # only invisible characters, and not found as they are
            return []
        if how == "normalised":
            return self._normalised(folded_quote)
        assert fuzzy is not None
        return sorted(m for m in self._candidates(folded_quote) if m.score >= fuzzy)

    def _normalised(self, folded_quote: str) -> list[_Match]:
        spans = {
            self._span(s, s + len(folded_quote))
            for s in _find_all(self._folding.text, folded_quote)
        }
        # A match that begins or ends inside what one cluster folds to ("s" of the "ss"
        # that "ß" folds to, "❤" of an emoji sequence) gives a span that folds to more
        # than the quote: not a match.
        found = [
            _Match(s, e, 1.0) for s, e in sorted(spans) if normalise(self.text[s:e]) == folded_quote
        ]
        if found or not _has_cjk(folded_quote):
            return found
        # A line of a Japanese PDF may break anywhere, inside a number or an English word
        # of the sentence too ("3\n0日", "Windows\nUpdate"), where the quote has none, and a
        # space between two English words in a Japanese sentence is one writers differ on:
        # a quote with CJK characters is also looked for with no space at all.
        squeezed = folded_quote.replace(" ", "")
        spans = {
            self._span(s, s + len(squeezed), self._squeezing)
            for s in _find_all(self._squeezing.text, squeezed)
        }
        return [
            _Match(s, e, 1.0)
            for s, e in sorted(spans)
            if normalise(self.text[s:e]).replace(" ", "") == squeezed
        ]

    def _span(
        self, folded_start: int, folded_end: int, folded: _Folded | None = None
    ) -> tuple[int, int]:
        """The original characters behind folded ``[start, end)`` (of the folded text, or
        of ``folded``), trimmed of spaces, on grapheme cluster boundaries."""
        folded = folded or self._folding
        start, end = folded.starts[folded_start], folded.ends[folded_end - 1]
        return self._graphemes.widen(*strip_span(self.text, start, end))

    def _candidates(self, folded_quote: str) -> list[_Match]:
        """The best windows for an approximate match, best first, none overlapping."""
        norm = self._folding.text
        if not norm:
            return []
        length = len(folded_quote)
        pad = max(8, length // 5)
        scored: list[tuple[float, int, int]] = []
        cjk = self._folding.cjk or _has_cjk(folded_quote)
        tokens = _TOKEN_OF_DIFF if cjk else _WORD_OR_MARK
        for low, high in self._seed_windows(folded_quote):
            window_start = max(0, low - pad)
            window_end = min(len(norm), high + length + pad)
            for start, end in _align(folded_quote, norm, window_start, window_end, tokens):
                scored.append((_similarity(folded_quote, norm[start:end], tokens), start, end))
        kept: list[_Match] = []
        taken: list[tuple[int, int]] = []
        for ratio, start, end in sorted(scored, key=lambda item: (-item[0], item[1])):
            if all(end <= s or start >= e for s, e in taken):
                taken.append((start, end))
                kept.append(_Match(*self._span(start, end), ratio))
        return kept

    def _seed_windows(self, folded_quote: str) -> list[tuple[int, int]]:
        """Ranges of folded offsets where the quote may start, most supported first.

        Each occurrence of one of the quote's rarest words votes for a start (its
        position minus its offset in the quote); votes close together form a range.
        """
        votes = self._word_votes(folded_quote) or self._gram_votes(folded_quote)
        if not votes:
            return [(0, 0)]
        votes.sort()
        reach = max(16, len(folded_quote) // 2)
        groups: list[tuple[int, int, set[int]]] = []
        for start, voter in votes:
            if groups and start - groups[-1][0] <= reach:
                low, _, voters = groups[-1]
                voters.add(voter)
                groups[-1] = (low, start, voters)
            else:
                groups.append((start, start, {voter}))
        groups.sort(key=lambda g: (-len(g[2]), g[0]))
        # a window with under half the best one's seed words will not be the best match
        enough = (len(groups[0][2]) + 1) // 2
        return [
            (max(0, low), max(0, high))
            for low, high, voters in groups[:_CANDIDATES]
            if len(voters) >= enough
        ]

    def _word_votes(self, folded_quote: str) -> list[tuple[int, int]]:
        offsets: dict[str, list[int]] = {}
        for word, start in _terms(folded_quote):
            offsets.setdefault(word, []).append(start)
        starts = self._word_starts
        present = sorted(
            (w for w in offsets if w in starts), key=lambda w: (len(starts[w]), -len(w))
        )
        rare = [w for w in present if len(starts[w]) <= _COMMON][:_SEED_WORDS] or present[:2]
        return [
            (position - offset, voter)
            for voter, word in enumerate(rare)
            for offset in offsets[word][:3]
            for position in starts[word][: _COMMON * 4]
        ]

    def _gram_votes(self, folded_quote: str) -> list[tuple[int, int]]:
        """Votes by 4-character pieces, for a quote sharing no whole word with the text."""
        norm, votes = self._folding.text, []
        step = max(1, len(folded_quote) // 16)
        for voter, offset in enumerate(range(0, max(1, len(folded_quote) - 3), step)):
            gram = folded_quote[offset : offset + 4]
            for position in _find_all(norm, gram, limit=50):
                votes.append((position - offset, voter))
        return votes

    # --- choosing among matches, and failing well ----------------------------------------

    def _choose(
        self,
        how: How,
        matches: list[_Match],
        quote: str,
        occurrence: int | None,
        context: str | None,
    ) -> QuoteLocation | NotLocated:
        detail = ""
        if occurrence is not None:
            chosen: _Match | None = matches[occurrence - 1]
        elif len(matches) == 1:
            chosen = matches[0]
        elif context and context.strip():
            chosen = self._by_context(matches, context)
            if chosen is None:
                detail = f"context {_quoted(context.strip())} does not single one out"
        else:
            chosen = _strictly_best(matches)
        if chosen is None:
            first = matches[0]
            return NotLocated(
                "ambiguous",
                closest=self.text[first.start : first.end],
                closest_start=first.start,
                similarity=first.score,
                occurrences=len(matches),
                positions=tuple(m.start for m in matches),
                how=how,
                detail=detail,
            )
        names = self._needed(quote, chosen) if how == "normalised" else ()
        return QuoteLocation(chosen.start, chosen.end, how, chosen.score, names, len(matches))

    def _by_context(self, matches: list[_Match], context: str) -> _Match | None:
        """The match with ``context`` nearest to it, if exactly one is nearest."""
        wanted = normalise(context)
        gaps: list[tuple[int, _Match]] = []
        for match in matches:
            gap = self._context_gap(match, wanted)
            if gap is not None:
                gaps.append((gap, match))
        gaps.sort(key=lambda item: item[0])
        if not gaps or (len(gaps) > 1 and gaps[1][0] == gaps[0][0]):
            return None
        return gaps[0][1]

    def _context_gap(self, match: _Match, wanted: str) -> int | None:
        """Characters between ``match`` and the nearest ``wanted`` around it, if close."""
        low = max(0, match.start - CONTEXT_REACH - 4 * len(wanted))
        high = min(len(self.text), match.end + CONTEXT_REACH + 4 * len(wanted))
        around = _fold(self.text[low:high])
        gaps = []
        for found in _find_all(around.text, wanted):
            start = low + around.starts[found]
            end = low + around.ends[found + len(wanted) - 1]
            gaps.append(max(0, match.start - end, start - match.end))
        best = min(gaps, default=None)
        return best if best is not None and best <= CONTEXT_REACH else None

    def _needed(self, quote: str, match: _Match) -> tuple[str, ...]:
        """The fewest normalisations under which quote and matched span are equal."""
        passage = self.text[match.start : match.end]
        # Normalisations that change neither string are left out: the first set that
        # makes them equal never has one (the set without it comes first), and each set
        # tried folds both. On ASCII only whitespace, hyphenation and case do anything;
        # "ё/е" only where there is an "ё".
        both = quote + passage
        idle = (_UNICODE, _PUNCTUATION, _YO) if both.isascii() else ()
        if not any(char in nfkc(both) for char in "ёЁ"):
            idle = (*idle, _YO)
        bits = [bit for bit, _ in _NAMES if bit not in idle]
        # a quote in CJK script may be found without any space (see _normalised)
        squeezed = _has_cjk(quote)
        for size in range(1, len(bits) + 1):
            for subset in combinations(bits, size):
                kinds = sum(subset)
                ours, theirs = _fold_text(quote, kinds), _fold_text(passage, kinds)
                if ours == theirs or (
                    squeezed
                    and kinds & _WHITESPACE
                    and ours.replace(" ", "") == theirs.replace(" ", "")
                ):
                    return tuple(name for bit, name in _NAMES if bit & kinds)
        return ()

    def _not_found(self, quote: str, folded_quote: str) -> NotLocated:
        if not self.text.strip():
            return NotLocated("not found", differs="the document is empty")
        best = next(iter(self._candidates(folded_quote)), None)
        start, end = (
            (best.start, best.end)
            if best
            else strip_span(self.text, 0, min(len(quote), len(self.text)))
        )
        if start >= end:  # nothing but whitespace where the fallback window fell
            start, end = strip_span(self.text, 0, len(self.text))
        start, end = self._graphemes.widen(*_whole_words(self.text, start, end, quote))
        closest = self.text[start:end]
        similarity = _similarity(folded_quote, normalise(closest))
        if len(folded_quote) > len(self._folding.text):
            differs = "the quote is longer than any passage"
        else:
            differs = describe_difference(quote, closest)
        around = normalise(self.text[max(0, start - len(quote)) : end + len(quote)])
        return NotLocated(
            "not found",
            closest=closest,
            closest_start=start,
            similarity=similarity,
            differs=differs,
            reordered=_holds_every_word(around, folded_quote),
        )


def _holds_every_word(text: str, quote: str) -> bool:
    """Whether ``text`` (folded) holds every word of ``quote`` (folded) as often as the quote
    does: the quote's words, moved. A word of three letters or more may be glued to another
    in the text (``dist-packagespy3compile``), as a parser that moves words leaves them; a
    number never is (``25`` is not in ``2025``).

    A run of CJK characters has no words to count: it must be made of pieces of two
    characters or more that are each in ``text`` (``申請は上司が承認する`` in a text with
    ``上司が承認する`` and, elsewhere, ``申請は``), so one changed character, which leaves
    a piece of one, says no."""
    wanted_words, runs = _words_and_runs(quote)
    wanted = Counter(wanted_words)
    if not wanted and not runs:
        return False
    words = _words_and_runs(text)[0]
    missing = wanted - Counter(words)
    return all(
        len(word) >= 3 and not word.isdigit() and any(word in other for other in words)
        for word in missing
    ) and all(_made_of_pieces(run, text) for run in runs)


def _made_of_pieces(run: str, text: str) -> bool:
    """Whether ``run`` is pieces of ``text`` of two characters or more, one after another
    (one piece of one character if ``run`` is one character)."""
    at = 0
    while at < len(run):
        # the longest piece from `at` on: a piece's beginning is in the text too
        low, high = at, len(run)
        while low < high:
            middle = (low + high + 1) // 2
            if run[at:middle] in text:
                low = middle
            else:
                high = middle - 1
        if low - at < min(2, len(run)):
            return False
        at = low
    return True


def _words_and_runs(text: str) -> tuple[list[str], list[str]]:
    """The ``\\w+`` words of ``text`` that have no CJK character, and its runs of CJK ones."""
    if not _has_cjk(text):
        return _WORD.findall(text), []
    words: list[str] = []
    runs: list[str] = []
    for match in _TERM.finditer(text):
        (runs if match.lastgroup else words).append(match.group())
    return words, runs


def _terms(text: str) -> list[tuple[str, int]]:
    """The terms of ``text`` that seed fuzzy windows, with where each starts: its words,
    and the overlapping character pairs of its CJK runs (a run of one as it is)."""
    if not _has_cjk(text):
        return [(match.group(), match.start()) for match in _WORD.finditer(text)]
    terms = []
    for match in _TERM.finditer(text):
        term, start = match.group(), match.start()
        if match.lastgroup is None or len(term) == 1:
            terms.append((term, start))
        else:
            terms.extend((term[i : i + 2], start + i) for i in range(len(term) - 1))
    return terms


def _tokens_of(text: str) -> re.Pattern[str]:
    """The pattern of the fuzzy step's words for ``text`` (see _TOKEN_OF_DIFF)."""
    return _TOKEN_OF_DIFF if _has_cjk(text) else _WORD_OR_MARK


def locate(
    text: str,
    quote: str,
    *,
    occurrence: int | None = None,
    context: str | None = None,
    fuzzy: float | None = None,
) -> QuoteLocation | NotLocated:
    """Place one quote in ``text``; build a :class:`QuoteIndex` to place many."""
    return QuoteIndex(text).locate(quote, occurrence=occurrence, context=context, fuzzy=fuzzy)


def describe_difference(quote: str, passage: str) -> str:
    """What differs between ``quote`` and ``passage``, in a short phrase for a message."""
    squeezed = ("".join(quote.split()), "".join(passage.split()))
    if squeezed[0] == squeezed[1]:
        return "whitespace only"
    if quote.casefold() == passage.casefold():
        return "case only"
    if squeezed[0].casefold() == squeezed[1].casefold():
        return "whitespace and case only"
    if normalise(quote) == normalise(passage):
        return "only Unicode forms, quotes, dashes or hyphenation"
    ours, theirs = _diff_tokens(quote), _diff_tokens(passage)
    opcodes = [
        op
        for op in SequenceMatcher(
            None, [t.folded for t in ours], [t.folded for t in theirs], autojunk=False
        ).get_opcodes()
        if op[0] != "equal"
    ]
    if len(opcodes) == 1:
        phrase = _one_change(opcodes[0], (quote, ours), (passage, theirs))
        if phrase:
            return phrase
    count = sum(max(i2 - i1, j2 - j1) for _, i1, i2, j1, j2 in opcodes)
    unit = _unit(
        [t for _, i1, i2, _, _ in opcodes for t in ours[i1:i2]]
        + [t for _, _, _, j1, j2 in opcodes for t in theirs[j1:j2]]
    )
    return f"{count} {unit}s differ" if count != 1 else f"1 {unit} differs"


def _unit(tokens: list[_Token]) -> str:
    """What the differing ``tokens`` are, for a message: in Chinese and Japanese every
    character (and punctuation mark) is a word of the comparison."""
    return "character" if all(_is_cjk_token(t.folded) for t in tokens) else "word"


def _is_cjk_token(token: str) -> bool:
    return _SPACELESS_CHAR.fullmatch(token) is not None


def _one_change(
    opcode: tuple[str, int, int, int, int],
    ours: tuple[str, list[_Token]],
    theirs: tuple[str, list[_Token]],
) -> str:
    tag, i1, i2, j1, j2 = opcode
    mine, other = _as_written(*ours, i1, i2), _as_written(*theirs, j1, j2)
    if tag == "replace" and i2 - i1 == 1 and j2 - j1 == 1:
        return f"{_kind(mine, other)}: quote has {_quoted(mine)}, text has {_quoted(other)}"
    if tag == "replace" and max(i2 - i1, j2 - j1) <= 4:
        unit = _unit(ours[1][i1:i2] + theirs[1][j1:j2])
        return f"{unit}s: quote has {_quoted(mine)}, text has {_quoted(other)}"
    if tag == "delete" and i2 - i1 <= 4:
        return f"only in the quote: {_quoted(mine)}"
    if tag == "insert" and j2 - j1 <= 4:
        return f"only in the text: {_quoted(other)}"
    return ""


def _kind(a: str, b: str) -> str:
    if any(c.isdigit() for c in a) and any(c.isdigit() for c in b):
        return "a number"
    a, b = normalise(a), normalise(b)
    if _is_cjk_token(a) and _is_cjk_token(b):
        return "a character"
    if _WORD.fullmatch(a) and _WORD.fullmatch(b):
        return "a word"
    return "a character"


class _Token(NamedTuple):
    """A word or punctuation mark: folded, and where it is in the text as written."""

    folded: str
    start: int
    end: int


def _diff_tokens(text: str) -> list[_Token]:
    """Words and punctuation marks of ``text``, folded, with their original spans.

    Tokenised after folding, so that ``deduc-\nted`` is one word, as the search saw it.
    Pieces of what one original cluster folds to ("1", "⁄" and "2" of "½") are one token,
    so that the cluster is shown once, as written.
    """
    folded = _fold(text)
    tokens: list[_Token] = []
    for match in _tokens_of(folded.text).finditer(folded.text):
        start, end = folded.starts[match.start()], folded.ends[match.end() - 1]
        if tokens and start < tokens[-1].end:
            last = tokens[-1]
            tokens[-1] = _Token(last.folded + match.group(), last.start, max(end, last.end))
        else:
            tokens.append(_Token(match.group(), start, end))
    return tokens


def _as_written(text: str, tokens: list[_Token], first: int, last: int) -> str:
    """``tokens[first:last]`` as the text has them, verbatim (spaces and line breaks too)."""
    return text[tokens[first].start : tokens[last - 1].end] if last > first else ""


# --- small helpers -----------------------------------------------------------------------


def _check_arguments(occurrence: int | None, fuzzy: float | None) -> None:
    if occurrence is not None and (not is_int(occurrence) or occurrence < 1):
        raise ValueError(f"occurrence must be an integer >= 1, got {occurrence!r}")
    if fuzzy is not None and not (isinstance(fuzzy, (int, float)) and 0 < fuzzy <= 1):
        raise ValueError(f"fuzzy must be a threshold in (0, 1], got {fuzzy!r}")


def _find_all(text: str, part: str, limit: int | None = None) -> list[int]:
    """Every start of ``part`` in ``text``, overlapping ones included."""
    found: list[int] = []
    at = text.find(part)
    while at >= 0 and (limit is None or len(found) < limit):
        found.append(at)
        at = text.find(part, at + 1)
    return found


def _whole_words(text: str, start: int, end: int, quote: str) -> tuple[int, int]:
    """Widen a passage that cuts a word, when the quote itself begins/ends on a word.

    Not beside a CJK character: there every character may end a word."""
    if quote[:1].isalnum():
        limit = max(0, start - 30)
        while start > limit and _inside_word(text[start - 1], text[start]):
            start -= 1
    if quote[-1:].isalnum():
        limit = min(len(text), end + 30)
        while end < limit and _inside_word(text[end - 1], text[end]):
            end += 1
    return start, end


def _inside_word(before: str, after: str) -> bool:
    return before.isalnum() and after.isalnum() and not (is_cjk(before) or is_cjk(after))


def _similarity(a: str, b: str, tokens: re.Pattern[str] | None = None) -> float:
    """How alike two folded strings are: 2·matched characters / all characters.

    Like difflib's ratio, but spaces are ignored and the strings are aligned word by
    word first, characters being compared only inside words that differ: as good a
    score for a typo or a changed number, at a fraction of the cost on long quotes.
    """
    ours, theirs = _words_of(a, tokens), _words_of(b, tokens)
    total = sum(map(len, ours)) + sum(map(len, theirs))
    if not total:
        return 1.0
    matched = 0
    for tag, i1, i2, j1, j2 in SequenceMatcher(None, ours, theirs, autojunk=False).get_opcodes():
        if tag == "equal":
            matched += sum(map(len, ours[i1:i2]))
        elif tag == "replace":
            matched += _matched_chars("".join(ours[i1:i2]), "".join(theirs[j1:j2]))
    return 2 * matched / total


def _words_of(text: str, tokens: re.Pattern[str] | None = None) -> list[str]:
    """The fuzzy step's words of ``text``, by ``tokens`` if given (see _tokens_of)."""
    return (tokens or _tokens_of(text)).findall(text)


def _matched_chars(a: str, b: str) -> int:
    if len(a) + len(b) > _LONGEST_GAP:  # passages that differ this much score low anyway
        return 0
    blocks = SequenceMatcher(None, a, b, autojunk=False).get_matching_blocks()
    return sum(block.size for block in blocks)


def _align(
    quote: str, norm: str, window_start: int, window_end: int, tokens: re.Pattern[str]
) -> list[tuple[int, int]]:
    """The parts of ``norm[window_start:window_end]`` that may best match ``quote``.

    The words of quote and window are aligned once; the stretch kept runs from an
    early matching block to a late one, chosen to maximise 2·matched / (quote + stretch)
    so that stray matches far out at the window's edges are cut off, then widened by
    as many words as the quote has before its first and after its last match: both
    are returned, for the caller to score (a typo in the quote's first word must not
    cut that word off, an extra word in the quote must not add one to the passage).
    """
    quote_words = _words_of(quote, tokens)
    spans = [(m.start(), m.end()) for m in tokens.finditer(norm, window_start, window_end)]
    words = [norm[s:e] for s, e in spans]
    blocks = [
        b
        for b in SequenceMatcher(None, quote_words, words, autojunk=False).get_matching_blocks()
        if b.size
    ]
    if not blocks:
        return []
    lengths = [0]
    for word in words:
        lengths.append(lengths[-1] + len(word))
    matched = [0]
    for block in blocks:
        matched.append(matched[-1] + lengths[block.b + block.size] - lengths[block.b])
    quote_chars = sum(map(len, quote_words))
    best, chosen = -1.0, (0, 0)
    for first in range(min(6, len(blocks))):
        for last in range(max(first, len(blocks) - 6), len(blocks)):
            low, high = blocks[first].b, blocks[last].b + blocks[last].size
            ratio = (
                2
                * (matched[last + 1] - matched[first])
                / (quote_chars + lengths[high] - lengths[low])
            )
            if ratio > best:
                best, chosen = ratio, (first, last)
    head, tail = blocks[chosen[0]], blocks[chosen[1]]
    low, high = head.b, tail.b + tail.size
    wide_low = max(0, low - head.a)
    wide_high = min(len(words), high + len(quote_words) - tail.a - tail.size)
    return sorted(
        {(spans[low][0], spans[high - 1][1]), (spans[wide_low][0], spans[wide_high - 1][1])}
    )


def _strictly_best(matches: list[_Match]) -> _Match | None:
    ranked = sorted(matches, key=lambda m: -m.score)
    if len(ranked) == 1 or ranked[0].score > ranked[1].score:
        return ranked[0]
    return None


def _quoted(text: str) -> str:
    """``text`` in double quotes on one line: newlines and other line breaks escaped."""
    shown = json.dumps(text, ensure_ascii=False)
    for char in "\x85\u2028\u2029":
        shown = shown.replace(char, f"\\u{ord(char):04x}")
    return shown


def _floor2(value: float) -> str:
    # floored, so a score just under a threshold of 0.9 never prints as 0.90
    return f"{math.floor(value * 100 + 1e-9) / 100:.2f}"


def _times(n: int) -> str:
    return f"{n} time" if n == 1 else f"{n} times"
