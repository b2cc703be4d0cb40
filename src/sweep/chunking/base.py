"""What every chunking strategy shares: the settings it takes, their checks, and how
spans become :class:`~sweep.core.types.Chunk` objects.

Every strategy obeys the same contract (tests/chunking/test_chunking.py checks it):

- ``doc.text[chunk.start:chunk.end] == chunk.text``; chunks are in document
  order and ``chunk.index`` is the position, so ids are ``f"{doc_id}#{i}"``;
- ``chunk.n_tokens`` is the chunk text re-encoded on its own and is at most
  ``size`` (a single character that alone needs more tokens than ``size`` is
  the only exception);
- no chunk is empty or whitespace-only and every non-whitespace character of
  the document lies in some chunk;
- the same input gives the same chunks.

A strategy registers itself where its class is defined, with the :func:`chunker`
decorator (chonkie's ``@chunker("token")``): its name, what ``overlap`` means to it,
and its options, which are the keyword-only parameters of its ``__init__`` with their
defaults. :func:`strategies` is the table every reader takes (``build_chunker``, the
config test, the docs table), so adding a strategy edits one file.
"""

from __future__ import annotations

import importlib
import inspect
import pkgutil
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any, TypeVar

from sweep.chunking.boundaries import Span
from sweep.chunking.fitting import DocTools
from sweep.chunking.headings import Prefixer
from sweep.core.checks import is_int
from sweep.core.errors import InvalidSetting
from sweep.core.suggest import did_you_mean
from sweep.core.tokenization import DEFAULT_TOKENIZER, count_tokens, get_encoding, tokenizer_label
from sweep.core.types import Chunk, Document

__all__ = [
    "PREFIXES",
    "BaseChunker",
    "ChunkingSettingsError",
    "Strategy",
    "UnknownChunkSetting",
    "build_chunks",
    "check_prefix",
    "check_size_overlap",
    "chunker",
    "strategies",
]

PREFIXES = ("none", "title", "title+headings")


class ChunkingSettingsError(ValueError, InvalidSetting):
    """Invalid chunker settings; str() is one line naming the setting."""


class UnknownChunkSetting(ChunkingSettingsError):
    """A strategy, prefix or option name sweep does not know: a typo, never a grid cell to
    skip, so a sweep stops on it before its first job."""


def build_chunks(
    doc: Document, spans: Sequence[Span], encoding: Any, prefix: str, chunker_name: str
) -> list[Chunk]:
    """Chunks of ``doc`` from its spans: the text, its token count in ``encoding`` and
    the embed-time prefix (``prefix`` mode) of the section each chunk starts in."""
    prefixer = Prefixer(prefix, doc)
    chunks: list[Chunk] = []
    last = 0
    for i, (start, end) in enumerate(spans):
        if not (0 <= start < end <= len(doc.text)) or start < last:
            raise RuntimeError(
                f"chunker {chunker_name} produced span ({start}, {end}) out of order "
                f"or outside document {doc.doc_id!r}"
            )
        last = start
        text = doc.text[start:end]
        head = prefixer(start)
        chunks.append(
            Chunk(
                doc_id=doc.doc_id,
                index=i,
                start=start,
                end=end,
                text=text,
                n_tokens=count_tokens(encoding, text),
                embed_text=f"{head}\n\n{text}" if head else None,
            )
        )
    return chunks


def check_size_overlap(size: Any, overlap: Any) -> None:
    if not is_int(size):
        raise ChunkingSettingsError(f"chunk.size must be an integer number of tokens, got {size!r}")
    if not is_int(overlap):
        raise ChunkingSettingsError(
            f"chunk.overlap must be an integer number of tokens, got {overlap!r}"
        )
    if size <= 0:
        raise ChunkingSettingsError(f"chunk.size must be > 0 tokens, got {size}")
    if overlap < 0:
        raise ChunkingSettingsError(f"chunk.overlap must be >= 0 tokens, got {overlap}")
    if overlap >= size:
        raise ChunkingSettingsError(
            f"chunk.overlap ({overlap}) must be smaller than chunk.size ({size})"
        )


def check_prefix(prefix: Any) -> None:
    if prefix not in PREFIXES:
        raise UnknownChunkSetting(
            f"unknown chunk prefix {prefix!r}{did_you_mean(str(prefix), PREFIXES)}; "
            f"valid: {', '.join(PREFIXES)}"
        )


class BaseChunker(ABC):
    """Splits documents into chunks; subclasses implement ``spans``.

    ``settings`` describes the effective settings; ``notes`` are remarks on
    settings that do not apply (the pipeline reports them with the results).
    """

    strategy: str = ""

    def __init__(
        self,
        size: int = 256,
        overlap: int = 0,
        tokenizer: str = DEFAULT_TOKENIZER,
        prefix: str = "none",
    ) -> None:
        check_size_overlap(size, overlap)
        check_prefix(prefix)
        self.size = size
        self.overlap = overlap
        self.prefix = prefix
        self.tokenizer = tokenizer
        self.encoding = get_encoding(tokenizer)
        special = int(getattr(self.encoding, "special_tokens", 0))
        #: the tokens a chunk's text may hold: ``size`` less the special tokens a model adds
        #: around every text it reads (chunk.tokenizer=model: [CLS] and [SEP]), so a chunk
        #: of ``size`` fills at most ``size`` positions of the model's window
        self.text_size = size - special
        if self.text_size <= overlap:
            raise ChunkingSettingsError(
                f"chunk.size ({size}) leaves no room for text past chunk.overlap ({overlap}): "
                f"{tokenizer_label(self.encoding)} adds {special} special tokens to every text"
            )
        #: what ``size`` counts, for the table: ``tokens (cl100k_base)``, or the embedding
        #: model's own with ``chunk.tokenizer=model`` (``tokens (all-MiniLM-L6-v2)``)
        self.size_unit = f"tokens ({tokenizer_label(self.encoding)})"
        #: the size a chunk is measured against (chunk health's "tiny"), in ``length``'s units
        self.target_size: int = size
        self.notes: tuple[str, ...] = ()
        self.settings: dict[str, Any] = {
            "strategy": self.strategy,
            "size": size,
            "overlap": overlap,
            "tokenizer": tokenizer,
            "encoding": self.encoding.name,
            "prefix": prefix,
        }

    def length(self, text: str) -> int:
        """Length of ``text`` in the units of ``size`` (tokens of ``tokenizer``)."""
        return count_tokens(self.encoding, text)

    @abstractmethod
    def spans(self, doc: Document) -> list[Span]:
        """Character spans of the chunks of ``doc``, in order, each fitting ``size``."""

    def chunk(self, doc: Document) -> list[Chunk]:
        """Chunks of one document, ids ``f"{doc_id}#{i}"``."""
        return self._build(doc, self.spans(doc))

    def chunk_documents(self, docs: Iterable[Document]) -> list[Chunk]:
        """Chunks of all documents, in document order."""
        return [c for doc in docs for c in self.chunk(doc)]

    def _build(self, doc: Document, spans: Sequence[Span]) -> list[Chunk]:
        return build_chunks(doc, spans, self.encoding, self.prefix, type(self).__name__)

    def _tools(self, text: str) -> DocTools:
        return DocTools(text, self.encoding, self.text_size)

    def __repr__(self) -> str:
        args = ", ".join(f"{k}={v!r}" for k, v in self.settings.items() if k != "encoding")
        return f"{type(self).__name__}({args})"


_C = TypeVar("_C", bound=BaseChunker)
#: Parameters the sweep hands a chunker (the embedder's function), never config keys.
_HANDED = ("embed_fn",)
_REGISTERED: dict[str, Strategy] = {}
#: The module of the strategies every other one builds on: the table lists them first
#: (token, sentence, paragraph, recursive), then the others by module.
_FIRST_MODULE = "strategies"


@dataclass(frozen=True)
class Strategy:
    """A registered strategy: ``name`` (``chunk.strategy``), its class, what ``overlap``
    means to it, and its own options with their defaults."""

    name: str
    cls: type[BaseChunker]
    overlap: str
    options: Mapping[str, Any]

    @property
    def takes_embed_fn(self) -> bool:
        """Whether it embeds text itself (the semantic strategy): handed ``embed_fn``."""
        return "embed_fn" in inspect.signature(self.cls.__init__).parameters


def chunker(name: str, *, overlap: str) -> Callable[[type[_C]], type[_C]]:
    """Register the decorated :class:`BaseChunker` subclass as strategy ``name``; ``overlap``
    says what ``chunk.overlap`` means to it (the docs' table). Its options are the
    keyword-only parameters of its ``__init__`` (``embed_fn`` aside), defaults included:
    declared once, there."""

    def register(cls: type[_C]) -> type[_C]:
        taken = _REGISTERED.get(name)
        # (a module reloaded registers its class again: the same name, not a clash)
        if taken is not None and _path(taken.cls) != _path(cls):
            raise ValueError(
                f"chunk strategy {name!r} is registered twice: {_path(taken.cls)} and {_path(cls)}"
            )
        cls.strategy = name
        params = inspect.signature(cls.__init__).parameters.values()
        options = {
            p.name: p.default for p in params if p.kind is p.KEYWORD_ONLY and p.name not in _HANDED
        }
        _REGISTERED[name] = Strategy(name, cls, overlap, MappingProxyType(options))
        return cls

    return register


def _path(cls: type) -> str:
    return f"{cls.__module__}.{cls.__qualname__}"


def strategies() -> Mapping[str, Strategy]:
    """Every strategy, by name. The modules of ``sweep.chunking`` are imported first, so the
    table is complete however this module was reached (a module imported alone registers
    only itself)."""
    import sweep.chunking as package

    for module in pkgutil.iter_modules(package.__path__):
        importlib.import_module(f"{package.__name__}.{module.name}")
    # In a fixed order whoever imported what first: by module, in definition order within one.
    order = sorted(
        enumerate(_REGISTERED.values()),
        key=lambda pair: (
            pair[1].cls.__module__.rsplit(".", 1)[-1] != _FIRST_MODULE,
            pair[1].cls.__module__,
            pair[0],
        ),
    )
    return MappingProxyType({s.name: s for _, s in order})
