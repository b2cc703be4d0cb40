"""Which language a text is in, told by its script.

Script ranges separate the languages sweep treats differently (Japanese, Chinese,
Korean, Russian, English) without a model or a data file: Japanese is the only one
that writes kana, Korean the only one that writes Hangul, Chinese writes Han
without either, Russian writes Cyrillic. Text in Latin letters is called English
when English function words make up a fair share of its words, ``latin``
otherwise (German, French, code...). Detection runs on the NFKC form, so Latin
letters typed full-width (``ａｐｔ－ｇｅｔ``, as Japanese input methods write them)
count as Latin and half-width katakana as kana.

A Han-only text is ambiguous: a short Japanese question can be all kanji
(``出張旅費の上限`` has one kana, ``交通費精算`` none). ``prior`` (the corpus's
language) settles it.
"""

from __future__ import annotations

import re
import unicodedata
from collections import Counter
from collections.abc import Iterable

__all__ = [
    "CJK_CLASS",
    "LANGUAGES",
    "detect_language",
    "is_cjk",
    "language_mix",
    "nfkc",
    "script_counts",
]

#: Every value ``detect_language`` returns. ``latin``: Latin script, not English-looking;
#: ``other``: no letters, or a script sweep has no rules for (Arabic, Greek, Thai...).
LANGUAGES = ("en", "ja", "zh", "ko", "ru", "latin", "other")

_KANA = "\u3040-\u30ff\u31f0-\u31ff\uff66-\uff9f"
_HAN = "\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\U00020000-\U0003134f"
_HANGUL = "\uac00-\ud7af\u1100-\u11ff\u3130-\u318f"
#: A regex character class (without brackets) of the characters written without spaces
#: between words: kana, Han and Hangul (Hangul does use spaces, between phrases).
CJK_CLASS = _KANA + _HAN + _HANGUL
_CJK = re.compile(f"[{CJK_CLASS}]")
_SCRIPTS = {
    "kana": re.compile(f"[{_KANA}]"),
    "han": re.compile(f"[{_HAN}]"),
    "hangul": re.compile(f"[{_HANGUL}]"),
    "cyrillic": re.compile("[\u0400-\u052f]"),
    "latin": re.compile("[A-Za-z\u00c0-\u024f]"),
}
_WORD = re.compile(r"[A-Za-z]+")
# The commonest English function words: running English has about one in three of its
# words among them, other Latin-script languages almost none (a few loans: "a", "in").
_ENGLISH = frozenset(
    [
        "the",
        "of",
        "and",
        "to",
        "a",
        "in",
        "is",
        "it",
        "you",
        "that",
        "for",
        "on",
        "are",
        "with",
        "as",
        "be",
        "this",
        "was",
        "have",
        "or",
        "at",
        "by",
        "not",
        "your",
        "from",
        "can",
        "if",
        "an",
        "will",
        "do",
        "we",
        "all",
        "but",
        "they",
        "which",
        "when",
        "there",
        "their",
        "what",
        "must",
        "may",
    ]
)
# Below this share of English function words a Latin text is not called English.
_ENGLISH_SHARE = 0.12
# Texts of fewer Latin words than this are called English: too short to tell.
_FEW_WORDS = 6
# A text is in a CJK language when at least this share of its letters is CJK: one CJK
# character carries about a word, so a Japanese page with English commands in it is
# Japanese at well under half its letters.
_CJK_SHARE = 0.15
# Kana are 30-60% of running Japanese; a Chinese text has none. A few kana (a quoted
# Japanese name) do not make a Chinese text Japanese.
_KANA_SHARE = 0.05


def nfkc(text: str) -> str:
    """The NFKC form of the whole string: full-width Latin to ASCII, half-width kana to
    full-width with their voicing marks composed (``ﾊﾟ`` → ``パ``), which happens only
    when the mark is normalised together with its letter, never one character at a time."""
    return unicodedata.normalize("NFKC", text)


def is_cjk(char: str) -> bool:
    """Whether ``char`` is kana, Han or Hangul (written without spaces between words)."""
    return _CJK.match(char) is not None


def script_counts(text: str) -> Counter[str]:
    """Letters per script in the NFKC form of ``text``: kana, han, hangul, cyrillic, latin."""
    folded = nfkc(text)
    return Counter({name: len(rx.findall(folded)) for name, rx in _SCRIPTS.items()})


def detect_language(text: str, prior: str | None = None) -> str:
    """One of ``LANGUAGES`` for ``text``, by its letters' scripts.

    ``prior`` (the corpus's language) decides a Han-only text between Japanese and
    Chinese, and is returned for a text without letters.
    """
    counts = script_counts(text)
    letters = sum(counts.values())
    if letters == 0:
        return prior if prior in LANGUAGES else "other"
    cjk = counts["kana"] + counts["han"] + counts["hangul"]
    if cjk >= _CJK_SHARE * letters:
        if counts["hangul"] >= counts["kana"] + counts["han"]:
            return "ko"
        if counts["kana"] >= _KANA_SHARE * (counts["kana"] + counts["han"]):
            return "ja"
        return "ja" if prior == "ja" else "zh"
    if counts["cyrillic"] >= counts["latin"]:
        return "ru"
    words = _WORD.findall(nfkc(text).lower())
    if len(words) < _FEW_WORDS:
        return "en" if prior in (None, "en", "ja", "zh", "ko", "ru") else prior
    english = sum(w in _ENGLISH for w in words)
    return "en" if english >= _ENGLISH_SHARE * len(words) else "latin"


def language_mix(texts: Iterable[str], prior: str | None = None) -> dict[str, float]:
    """Each language's share of the characters of ``texts`` (languages as
    ``detect_language`` tells them per text), largest first; empty for no characters."""
    chars: Counter[str] = Counter()
    for text in texts:
        if text:
            chars[detect_language(text, prior)] += len(text)
    total = sum(chars.values())
    return {lang: n / total for lang, n in chars.most_common()} if total else {}
