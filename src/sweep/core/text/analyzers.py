"""Text to the terms BM25 counts, read in the text's own language.

Every analyzer starts from the NFKC form of the text, lowercased: Latin letters typed
full-width (``ａｐｔ－ｇｅｔ``, as Japanese input methods write them) become ``apt-get``,
half-width katakana full-width with their voicing marks (``ﾊﾟｯｹｰｼﾞ`` → ``パッケージ``).

``auto`` (the default) picks per text, by :func:`~sweep.core.text.languages.detect_language`
with the corpus's language as the prior:

- Japanese: Sudachi (``sudachipy`` + ``sudachidict_core``, split mode C, each word's
  normalized form: ``行っ`` → ``行く``), particles, auxiliaries and punctuation left out as
  Lucene's JapaneseAnalyzer leaves them out; MeCab (``fugashi`` + ``unidic_lite``, each
  word's lemma) when Sudachi is missing;
- Chinese: ``jieba``'s words (cut by ``rjieba`` when installed: the same cuts, faster);
- Korean: character bigrams (Lucene's CJKAnalyzer: a run of Hangul, kana or Han gives
  each pair of neighbouring characters; a lone character gives itself);
- anything else: runs of word characters (``\\w+``), each read by the rules of its own
  script: Cyrillic words by the Russian Snowball stemmer without Russian stopwords
  (``ё`` read as ``е``), Latin words (and digits) by the English rules, exactly as
  sweep read every text before it read languages: English stopwords out, then the
  ``english`` Snowball stemmer (``retrieve.stemmer``/``retrieve.stopwords``).

Latin words inside Japanese or Chinese text take the English rules too, Cyrillic words
the Russian ones. When the package a language needs is missing, its text is read as
character bigrams instead, said once in the log; an analyzer asked for by name whose
package is missing is an error (:class:`AnalyzerMissing`).
"""

from __future__ import annotations

import logging
import re
from collections.abc import Callable
from typing import Any

from sweep.core.errors import InvalidSetting
from sweep.core.text.languages import CJK_CLASS, detect_language, nfkc

__all__ = ["ANALYZERS", "Analyzer", "AnalyzerMissing", "cjk_bigrams"]

log = logging.getLogger(__name__)

#: Every value of ``retrieve.analyzer``. ``english``: every text as English (what sweep
#: did before it read languages); ``simple``: lowercased ``\\w+`` runs, nothing dropped or
#: stemmed (Elasticsearch's "simple" analyzer, digits kept).
ANALYZERS = ("auto", "english", "sudachi", "mecab", "jieba", "russian", "bigram", "simple")

_INSTALL = 'pip install "chunk-sweep[languages]"'
# What each package-backed analyzer needs, and how to get it.
_NEEDS = {
    "sudachi": ("sudachipy", _INSTALL),
    "mecab": ("fugashi", 'pip install "chunk-sweep[mecab]"'),
    "jieba": ("jieba", _INSTALL),
}
# The ideographic iteration and closing marks (人々, 〆) belong to CJK words too.
_CJK_RUN = CJK_CLASS + "\u3005\u3006\u3007\u303b"
_CJK = re.compile(f"[{_CJK_RUN}]")
# A CJK run, or a run of other word characters: on text without CJK exactly ``\w+``.
_PIECE = re.compile(f"[{_CJK_RUN}]+|(?:(?![{_CJK_RUN}])\\w)+")
_CYRILLIC = re.compile("[\u0400-\u052f]")
_WORD = re.compile(r"\w+")
# Parts of speech left out of Japanese terms (Lucene's JapaneseAnalyzer stop tags, in
# UniDic's and Sudachi's names): particles, auxiliary verbs, punctuation, blanks.
_JA_STOP_POS = frozenset({"助詞", "助動詞", "補助記号", "記号", "空白"})
# Verbs and adjectives that can stand after another word (する, ください, できる, いる,
# よい: "non-independent possible" in both dictionaries) are in nearly every sentence
# and carry no topic; Lucene's Japanese stopword list holds most of them.
_JA_LIGHT = frozenset({"動詞", "形容詞"})
# Sudachi's split modes: A (shortest units), B, C (longest: 年次有給休暇 is one word),
# AC (C's words and, for a compound, its A parts as well: both match).
_SUDACHI_MODES = ("A", "B", "C", "AC")
# Sudachi refuses inputs over about 49,000 bytes; a Japanese character is 3 in UTF-8.
_SUDACHI_CHARS = 10_000

# Memo (per process): the loaded segmenters by name (None: the package is missing), so
# a dictionary loads and a missing package is said once.
_TOOLS: dict[str, Any] = {}
# Memo (per process): a text's words from a segmenter, by (segmenter, text): a sweep's
# grid reads the same chunks and questions once per setting, and Sudachi reads about
# 75,000 characters a second (bench/analyzers.py). Bounded: emptied when full.
_TERMS_MEMO: dict[tuple[str, str], tuple[str, ...]] = {}
_MEMO_ENTRIES = 200_000


class AnalyzerMissing(InvalidSetting, ImportError):
    """``retrieve.analyzer`` names an analyzer whose package is not installed: that
    setting's row is invalid, and says how to install it; a sweep's other settings run."""


def cjk_bigrams(run: str) -> list[str]:
    """Each pair of neighbouring characters of ``run``; a lone character gives itself."""
    return [run] if len(run) == 1 else [run[i : i + 2] for i in range(len(run) - 1)]


def _load(name: str) -> Any:
    """The segmenter ``name`` needs, loaded once per process; None when its package
    (or dictionary) is missing."""
    if name in _TOOLS:
        return _TOOLS[name]
    tool: Any = None
    try:
        if name.startswith("sudachi"):  # sudachi (mode C) or sudachi:A, sudachi:B
            from sudachipy import Dictionary

            tool = Dictionary(dict="core").tokenizer(mode=name.partition(":")[2] or "C")
        elif name == "mecab":
            import fugashi

            tool = fugashi.Tagger()
        elif name == "jieba":
            tool = _jieba_cut()
    except Exception:  # noqa: BLE001 - a missing module, dictionary or data file alike
        tool = None
    _TOOLS[name] = tool
    return tool


def _jieba_cut() -> Callable[[str], list[str]]:
    """jieba's word cutter: ``rjieba`` (the same dictionary and cuts, in Rust, about 50
    times faster) when installed, else ``jieba``."""
    try:
        import rjieba

        return rjieba.cut
    except ImportError:
        import jieba

        jieba.setLogLevel(logging.WARNING)  # its dictionary load prints three lines
        jieba.initialize()
        return jieba.lcut


def _stopwords(stopwords: Any) -> frozenset[str]:
    if stopwords is None or (isinstance(stopwords, str) and stopwords.lower() in ("none", "")):
        return frozenset()
    if isinstance(stopwords, str):
        if stopwords.lower() != "en":
            raise ValueError(
                f"retrieve.stopwords must be en, none or a list of words, got {stopwords!r}"
            )
        from bm25s.stopwords import STOPWORDS_EN

        return frozenset(STOPWORDS_EN)
    words = list(stopwords)
    if not all(isinstance(w, str) for w in words):
        raise ValueError(
            f"retrieve.stopwords must be en, none or a list of words, got {stopwords!r}"
        )
    return frozenset(w.lower() for w in words)


def _stemmer(name: str | None) -> Callable[[str], str] | None:
    if name is None or str(name).lower() in ("none", ""):
        return None
    try:
        import Stemmer
    except ImportError:
        raise ImportError(
            "retrieve.stemmer needs PyStemmer: pip install PyStemmer (or set retrieve.stemmer=none)"
        ) from None
    if name not in Stemmer.algorithms():
        raise ValueError(
            f"retrieve.stemmer must be none or one of "
            f"{', '.join(Stemmer.algorithms())}, got {name!r}"
        )
    return Stemmer.Stemmer(name).stemWord


class Analyzer:
    """Text -> BM25 terms, by ``name`` (one of :data:`ANALYZERS`; the module docstring
    says what each does). ``stemmer`` and ``stopwords`` are the rules for English words
    (``retrieve.stemmer``, ``retrieve.stopwords``). The rest are the choices measured
    in ``bench/analyzers.py``: ``japanese_pos_filter`` (particles, auxiliaries and
    punctuation out), ``sudachi_mode`` (``A``: shortest words, ``C``: longest) and
    ``russian``: ``snowball`` (the Russian Snowball stemmer) or ``lemmas``
    (``pymorphy3``'s dictionary forms).

    Raises :class:`AnalyzerMissing` when ``name`` needs a package that is not installed.
    """

    def __init__(
        self,
        name: str = "auto",
        stemmer: str | None = "english",
        stopwords: Any = "en",
        *,
        japanese_pos_filter: bool = True,
        sudachi_mode: str = "AC",
        russian: str = "snowball",
    ) -> None:
        if name not in ANALYZERS:
            raise ValueError(
                f"retrieve.analyzer must be one of {', '.join(ANALYZERS)}, got {name!r}"
            )
        if sudachi_mode not in _SUDACHI_MODES:
            raise ValueError(
                f"sudachi_mode must be one of {', '.join(_SUDACHI_MODES)}, got {sudachi_mode!r}"
            )
        if russian not in ("snowball", "lemmas"):
            raise ValueError(f"russian must be snowball or lemmas, got {russian!r}")
        self.name = name
        self.stopwords = _stopwords(stopwords)
        self._stem = _stemmer(stemmer)
        self._pos_filter = japanese_pos_filter
        self._sudachi = "sudachi" if sudachi_mode in ("C", "AC") else f"sudachi:{sudachi_mode}"
        self._sudachi_parts = sudachi_mode == "AC"
        self._russian = russian
        self._ru_cache: dict[str, str] = {}
        self._ru_stem: Callable[[str], str] | None = None
        self._ru_stop: frozenset[str] = frozenset()
        if name in _NEEDS and _load(name) is None:
            package, install = _NEEDS[name]
            raise AnalyzerMissing(
                f"retrieve.analyzer={name} needs {package}, which is not installed: {install} "
                "(or retrieve.analyzer=auto, which reads such text as character bigrams)"
            )

    def for_language(self, language: str) -> str:
        """The analyzer that reads a text in ``language`` (one of ``LANGUAGES``), as a row
        records it: ``sudachi``, or ``bigram (sudachipy missing)`` when it fell back."""
        if self.name != "auto":
            return self.name
        if language == "ja":
            if _load("sudachi") is not None:
                return "sudachi"
            if _load("mecab") is not None:
                return self._fallback("sudachipy", "Japanese", "mecab")
            return self._fallback("sudachipy", "Japanese")
        if language == "zh":
            return "jieba" if _load("jieba") is not None else self._fallback("jieba", "Chinese")
        if language == "ko":
            return "bigram"
        return "russian" if language == "ru" else "english"

    def _fallback(self, package: str, language: str, instead: str = "bigram") -> str:
        said = f"said:{package}"
        if said not in _TOOLS:
            _TOOLS[said] = True
            how = "as character bigrams" if instead == "bigram" else f"by {instead}"
            log.warning(
                "%s is not installed: %s text is read %s (%s for its analyzer)",
                package,
                language,
                how,
                _INSTALL,
            )
        return f"{instead} ({package} missing)"

    def __call__(self, text: str, prior: str | None = None) -> list[str]:
        """The terms of ``text``, in order, repeats kept."""
        folded = nfkc(text).lower()
        if self.name == "english":
            return self._english_words(_WORD.findall(folded))
        if self.name == "simple":
            return _WORD.findall(folded)
        if self.name == "auto" and not _CJK.search(folded):
            # No word of it needs a segmenter: its language changes nothing.
            return self._words(folded)
        segmenter = self.reads(folded, prior).split(" ", 1)[0]
        if segmenter in _NEEDS:
            return self._segmented(segmenter, folded)
        return self._words(folded)

    def reads(self, text: str, prior: str | None = None) -> str:
        """The analyzer that reads ``text`` (:meth:`for_language` of its language)."""
        if self.name != "auto":
            return self.name
        return self.for_language(detect_language(text, prior))

    # -- the rules for words of each script ------------------------------------------

    def _english_words(self, words: list[str]) -> list[str]:
        words = [w for w in words if w not in self.stopwords]
        stem = self._stem
        return [stem(w) for w in words] if stem is not None else words

    def _russian_word(self, word: str) -> str | None:
        word = word.replace("ё", "е")
        if self._ru_stem is None:
            from bm25s.stopwords import STOPWORDS_RUSSIAN

            self._ru_stop = frozenset(w.replace("ё", "е") for w in STOPWORDS_RUSSIAN)
            self._ru_stem = self._russian_stemmer()
        if word in self._ru_stop:
            return None
        out = self._ru_cache.get(word)
        if out is None:
            out = self._ru_cache[word] = self._ru_stem(word)
        return out

    def _russian_stemmer(self) -> Callable[[str], str]:
        if self._russian == "lemmas":
            try:
                import pymorphy3

                morph = pymorphy3.MorphAnalyzer()
                return lambda w: morph.parse(w)[0].normal_form.replace("ё", "е")
            except ImportError:
                pass
        import Stemmer

        return Stemmer.Stemmer("russian").stemWord

    def _words(self, text: str) -> list[str]:
        """``\\w+`` runs (split where CJK starts or ends), each by its script's rules."""
        if not _CYRILLIC.search(text) and not _CJK.search(text):
            return self._english_words(_WORD.findall(text))  # the same, in one pass
        out: list[str] = []
        for piece in _PIECE.findall(text):
            out.extend(self._piece(piece))
        return out

    def _piece(self, piece: str) -> list[str]:
        if _CJK.match(piece):
            return cjk_bigrams(piece)
        if _CYRILLIC.search(piece):
            term = self._russian_word(piece)
            return [] if term is None else [term]
        if piece in self.stopwords:
            return []
        return [self._stem(piece)] if self._stem is not None else [piece]

    # -- segmenters ---------------------------------------------------------------------

    def _segmented(self, name: str, text: str) -> list[str]:
        """Words from a segmenter; CJK words kept (Japanese: in their normalized form),
        other words by their script's rules, punctuation and blanks dropped."""
        key = (f"{self._memo_name(name)}:{self._pos_filter}", text)
        words = _TERMS_MEMO.get(key)
        if words is None:
            words = tuple(self._segment(name, text))
            if len(_TERMS_MEMO) >= _MEMO_ENTRIES:
                _TERMS_MEMO.clear()
            _TERMS_MEMO[key] = words
        out: list[str] = []
        for word in words:
            if _CJK.search(word):
                out.append(word)
            else:
                for piece in _PIECE.findall(word):
                    out.extend(self._piece(piece))
        return out

    def _memo_name(self, name: str) -> str:
        if name != "sudachi":
            return name
        return self._sudachi + ("+A" if self._sudachi_parts else "")

    def _segment(self, name: str, text: str) -> list[str]:
        tool = _load(self._sudachi if name == "sudachi" else name)
        text = _encodable(text)
        if name == "jieba":
            return [w for w in tool(text) if _WORD.search(w)]
        words: list[str] = []
        for part in _parts(text):
            if name == "sudachi":
                for m in tool.tokenize(part):
                    if self._keep(m.part_of_speech(), m.surface()):
                        words.append(_japanese_term(m.surface(), m.normalized_form()))
                        if self._sudachi_parts and _CJK.search(m.surface()):
                            parts = m.split(_split_a())
                            if len(parts) > 1:
                                words.extend(
                                    _japanese_term(a.surface(), a.normalized_form()) for a in parts
                                )
            else:
                for w in tool(part):
                    if self._keep((w.feature.pos1, w.feature.pos2), w.surface):
                        words.append(_japanese_term(w.surface, _unidic_lemma(w.feature.lemma)))
        return words

    def _keep(self, pos: tuple[str, ...], surface: str) -> bool:
        if not _WORD.search(surface):
            return False
        if not self._pos_filter:
            return True
        return pos[0] not in _JA_STOP_POS and not (pos[0] in _JA_LIGHT and pos[1] == "非自立可能")


def _split_a() -> Any:
    from sudachipy import SplitMode

    return SplitMode.A


def _japanese_term(surface: str, normal: str | None) -> str:
    """A Japanese word's dictionary form; a word in other letters as written (its own
    script's rules stem it), since Sudachi writes ``apt`` as ``APT``."""
    if not _CJK.search(surface) or not normal:
        return surface
    return normal.lower()


def _unidic_lemma(lemma: str | None) -> str | None:
    """UniDic's lemma without the English gloss it gives loanwords (``パッケージ-package``)."""
    if lemma and "-" in lemma and _CJK.match(lemma):
        return lemma.split("-", 1)[0]
    return lemma


def _encodable(text: str) -> str:
    """``text`` with lone surrogates (undecodable bytes a reader kept) as ``?``: Sudachi
    MeCab and rjieba read UTF-8, which cannot hold them."""
    try:
        text.encode("utf-8")
        return text
    except UnicodeEncodeError:
        return text.encode("utf-8", "replace").decode("utf-8")


def _parts(text: str) -> list[str]:
    """``text`` in pieces Sudachi accepts: cut at line ends where it can, else anywhere."""
    if len(text) <= _SUDACHI_CHARS:
        return [text]
    parts: list[str] = []
    while len(text) > _SUDACHI_CHARS:
        cut = text.rfind("\n", 0, _SUDACHI_CHARS) + 1 or text.rfind("。", 0, _SUDACHI_CHARS) + 1
        cut = cut if cut > 0 else _SUDACHI_CHARS
        parts.append(text[:cut])
        text = text[cut:]
    return [*parts, text] if text else parts
