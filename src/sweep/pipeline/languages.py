"""Whether the embedding model can read the corpus: its languages, the model's ``[UNK]`` share
on it, and the model ``embed=auto`` picks for it.

An English-only model run on Japanese or Russian text gives numbers near zero and a
recommendation that looks like any other. all-MiniLM-L6-v2's WordPiece vocabulary reads
17% of Japanese tokens as ``[UNK]`` and Cyrillic letter by letter; every chunk then looks
alike, and a few short chunks fill the top 5 of nearly every question. Nothing in the
scores says why, so sweep says it before the first job (:func:`language_warning`) and
``embed=auto`` picks a multilingual model for such a corpus (:func:`choose_embedder`).

The languages are told by script (``sweep.core.text.languages``) and weighed by
characters: a Japanese page with English commands in it counts as Japanese.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from sweep.core.text.languages import detect_language, language_mix
from sweep.core.tokenization import count_tokens
from sweep.core.types import Dataset, Ranking

__all__ = [
    "ENGLISH_ONLY_MODELS",
    "HUB_SHARE",
    "NON_LATIN",
    "UNK_SHARE",
    "CorpusLanguages",
    "EmbedChoice",
    "chars_per_token",
    "choose_embedder",
    "corpus_languages",
    "describe_mix",
    "english_only",
    "hub_share",
    "language_warning",
    "model_unk_share",
    "non_latin_share",
    "unk_share",
]

#: Languages an English model cannot read: not in Latin letters (``other``: Greek, Arabic,
#: Thai... sweep has no rules for, but an English vocabulary has no words for them either).
NON_LATIN = ("ja", "zh", "ko", "ru", "other")
#: Models trained on English text only: the English presets of ``conf/embed``. A model
#: outside this list is judged by its tokenizer's ``[UNK]`` share alone.
ENGLISH_ONLY_MODELS = frozenset(
    {
        "all-minilm-l6-v2",
        "all-minilm-l12-v2",
        "all-mpnet-base-v2",
        "bge-small-en-v1.5",
        "bge-base-en-v1.5",
        "e5-small-v2",
        "gte-small",
        "nomic-embed-text-v1.5",
    }
)
#: At this share of ``[UNK]`` tokens a model cannot read the corpus (MiniLM: 0.0% on the
#: bundled English corpus, 17% on Japanese product documentation).
UNK_SHARE = 0.05
#: A corpus is mostly non-Latin above this share of its characters.
_MOSTLY = 0.5
#: One chunk in the top 5 of this share of the questions is a "hub": the chunks' vectors all
#: look alike to the model, which is what ``[UNK]``-heavy embeddings do.
HUB_SHARE = 0.8
#: Chunks read for the ``[UNK]`` share: enough for a share to a percent, fast to tokenize.
_SAMPLE = 200
_NAMES = {
    "en": "English",
    "ja": "Japanese",
    "zh": "Chinese",
    "ko": "Korean",
    "ru": "Russian",
    "latin": "Latin-script",
    "other": "in a non-Latin script",
}
_FIX = "use embed=multilingual (offline) or a multilingual preset (docs/languages.md)"


def describe_mix(mix: Mapping[str, float], *, percent: bool = False) -> str:
    """``ja 0.93, en 0.07`` (``percent``: ``ja 93% en 7%``), largest first; ``–`` when empty.
    Shares that round to nothing are left out."""
    items = sorted(mix.items(), key=lambda kv: -kv[1])
    if percent:
        shown = [f"{lang} {100 * share:.0f}%" for lang, share in items if share >= 0.005]
        return " ".join(shown) or "–"
    shown = [f"{lang} {share:.2f}" for lang, share in items if share >= 0.005]
    return ", ".join(shown) or "–"


def non_latin_share(mix: Mapping[str, float]) -> float:
    """The share of characters in languages an English model cannot read (:data:`NON_LATIN`)."""
    return sum(share for lang, share in mix.items() if lang in NON_LATIN)


def _main_language(mix: Mapping[str, float]) -> str:
    """The largest non-Latin language of ``mix`` (``other`` when it has none)."""
    found = [(share, lang) for lang, share in mix.items() if lang in NON_LATIN]
    return max(found)[1] if found else "other"


@dataclass(frozen=True)
class CorpusLanguages:
    """Each language's share of the characters of a dataset's documents and of its questions."""

    documents: Mapping[str, float]
    questions: Mapping[str, float]

    @property
    def non_latin(self) -> float:
        return non_latin_share(self.documents)

    def column(self) -> str:
        """The row's ``corpus.languages`` value: ``ja 0.93, en 0.07``."""
        return describe_mix(self.documents)


def corpus_languages(dataset: Dataset) -> CorpusLanguages:
    """The language mix of ``dataset``'s documents and questions, by characters. A question
    written all in Han characters is read as the corpus's main CJK language."""
    documents = language_mix(d.text for d in dataset.documents)
    main = next(iter(documents), None)
    questions = language_mix((q.query for q in dataset.queries), prior=main)
    return CorpusLanguages(documents, questions)


def chars_per_token(texts: Iterable[str], encoding: str = "cl100k_base") -> dict[str, float]:
    """Characters per token of ``encoding`` for each language of ``texts``, the commonest
    language first: how far a size in tokens tuned on English carries to another language."""
    chars: Counter[str] = Counter()
    tokens: Counter[str] = Counter()
    for text in texts:
        if text:
            lang = detect_language(text)
            chars[lang] += len(text)
            tokens[lang] += count_tokens(encoding, text)
    return {lang: n / tokens[lang] for lang, n in chars.most_common() if tokens[lang]}


def english_only(model: str | None) -> bool:
    """Whether ``model`` (a Hub id or a folder) is one of :data:`ENGLISH_ONLY_MODELS`, by its
    last path part."""
    if not model:
        return False
    return str(model).rstrip("/\\").replace("\\", "/").rsplit("/", 1)[-1].lower() in (
        ENGLISH_ONLY_MODELS
    )


def unk_share(tokenizer: Any, texts: Sequence[str]) -> float | None:
    """The share of ``[UNK]`` among the tokens a ``tokenizers.Tokenizer`` makes of ``texts``
    (special tokens left out); None when it has no unknown token or ``texts`` make none."""
    unk = _unk_id(tokenizer)
    if unk is None:
        return None
    total = unknown = 0
    for encoding in tokenizer.encode_batch(list(texts), add_special_tokens=False):
        total += len(encoding.ids)
        unknown += sum(1 for i in encoding.ids if i == unk)
    return unknown / total if total else None


def _unk_id(tokenizer: Any) -> int | None:
    model = getattr(tokenizer, "model", None)
    token = getattr(model, "unk_token", None)
    if isinstance(token, str):
        return tokenizer.token_to_id(token)
    unk_id = getattr(model, "unk_id", None)  # a Unigram model names its unknown by id
    return unk_id if isinstance(unk_id, int) else None


def _sample(texts: Sequence[str], n: int = _SAMPLE) -> list[str]:
    """Up to ``n`` of ``texts``, evenly spaced (never the first ``n``: a corpus's first
    documents are often its English README)."""
    if len(texts) <= n:
        return list(texts)
    step = len(texts) / n
    return [texts[int(i * step)] for i in range(n)]


def model_unk_share(embedder: Any, texts: Sequence[str]) -> float | None:
    """The ``[UNK]`` share of a sentence-transformers embedder's own tokenizer on a sample
    of ``texts``, read from its folder's ``tokenizer.json`` (the model is not loaded);
    None for another embedder or a model whose files are not at hand."""
    from sweep.embedding.embedder import SentenceTransformerEmbedder
    from sweep.embedding.models import load_tokenizer, model_files

    if not isinstance(embedder, SentenceTransformerEmbedder) or not texts:
        return None
    source = Path(embedder.source)
    if not source.is_dir():
        return None
    try:
        files = model_files(source)
        if files.tokenizer_file is None:
            return None
        return unk_share(load_tokenizer(files.tokenizer_file), _sample(texts))
    except Exception:  # a tokenizer file this cannot read: the model's list decides alone
        return None


def language_warning(
    mix: Mapping[str, float], unk: float | None, model: str, *, english_model: bool
) -> str | None:
    """The one-line warning when ``model`` cannot read a corpus of language mix ``mix``
    (shares of characters), or None.

    It cannot when it is English-only (``english_model``) and most of the corpus is not
    in Latin letters, or when its tokenizer reads ``unk`` (a share) of it as ``[UNK]``.
    """
    share = non_latin_share(mix)
    mostly = share > _MOSTLY
    unreadable = unk is not None and unk >= UNK_SHARE
    if not (unreadable or (english_model and mostly)):
        return None
    name = model.rstrip("/").rsplit("/", 1)[-1]
    if mostly:
        lang = _main_language(mix)
        what = f"{100 * share:.0f}% of the corpus is {_NAMES[lang]}"
        if lang != "other" and mix.get(lang, 0.0) < share - 0.005:
            what = (
                f"{100 * share:.0f}% of the corpus is not in Latin letters (mostly {_NAMES[lang]})"
            )
    else:
        what = f"{100 * share:.0f}% of the corpus is not in Latin letters"
    reads = (
        f"{name} reads it as {100 * unk:.0f}% [UNK] tokens"
        if unreadable
        else f"{name} was trained on English only"
    )
    return f"warning: {what} and {reads}: its numbers will be near zero; {_FIX}"


@dataclass(frozen=True)
class EmbedChoice:
    """What ``embed=auto`` picked: ``english`` (MiniLM) or ``other`` (the multilingual
    model), and the line that says why."""

    node: str
    line: str


def choose_embedder(
    mix: Mapping[str, float], *, english: str = "minilm", other: str = "multilingual"
) -> EmbedChoice:
    """``embed=auto``'s pick for a corpus of language mix ``mix``: the multilingual model
    when most of its characters are not in Latin letters, else the English one."""
    share = non_latin_share(mix)
    if share > _MOSTLY:
        lang = _main_language(mix)
        return EmbedChoice(
            "other",
            f"embed auto → {other}: the corpus is {100 * mix.get(lang, 0.0):.0f}% {_NAMES[lang]}",
        )
    if not mix:
        return EmbedChoice("english", f"embed auto → {english}: the corpus has no text")
    top = max(mix, key=lambda lang: mix[lang])
    return EmbedChoice(
        "english",
        f"embed auto → {english}: the corpus is {100 * (1 - share):.0f}% in Latin letters "
        f"(mostly {_NAMES[top]})",
    )


def hub_share(ranking: Ranking, k: int = 5) -> tuple[float, int] | None:
    """The largest share of questions whose top ``k`` holds one same chunk, and that chunk's
    position; None without questions. Above :data:`HUB_SHARE` the model sees every chunk
    alike (a few short chunks win every question), which is what ``[UNK]``-heavy vectors do."""
    n = ranking.ids.shape[0]
    if n == 0:
        return None
    counts: Counter[int] = Counter()
    for i in range(n):
        counts.update({int(c) for c in ranking.row(i)[:k]})
    if not counts:
        return None
    chunk, most = counts.most_common(1)[0]
    return most / n, chunk
