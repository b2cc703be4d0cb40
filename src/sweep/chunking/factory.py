"""One sweep setting's chunker from its plain settings: the ``_target_`` of the chunk
config group, and the list of strategies and what ``overlap`` means to each."""

from __future__ import annotations

from typing import Any

from sweep.chunking.base import CONTEXT_KEYS, BaseChunker, UnknownChunkSetting
from sweep.chunking.markdown import MarkdownChunker
from sweep.chunking.semantic import DEFAULT_MIN_UNIT_TOKENS, EmbedFn, SemanticChunker
from sweep.chunking.strategies import (ParagraphChunker, RecursiveChunker, SentenceChunker,
                                       TokenChunker)
from sweep.core.suggest import did_you_mean

__all__ = ["OPTIONS", "OVERLAP_MEANING", "STRATEGIES", "build_chunker"]

STRATEGIES = ("token", "sentence", "paragraph", "recursive", "markdown", "semantic")

OVERLAP_MEANING = {
    "token": "exactly `overlap` tokens shared by consecutive chunks (stride size - overlap)",
    "sentence": "up to `overlap` tokens of whole sentences repeated from the end of the previous chunk",
    "paragraph": "ignored: chunks never overlap",
    "recursive": "up to `overlap` tokens of whole pieces (lines, sentences, words) repeated from the previous chunk",
    "markdown": "as recursive, but only between chunks of one section longer than `size`",
    "semantic": "as sentence, but only between chunks of one semantic group longer than `size`",
}

#: The settings every strategy takes (build_chunker's own parameters).
_SETTINGS = ("strategy", "size", "overlap", "tokenizer", "prefix")
#: Strategy options: name -> (the strategy that uses it, its default).
OPTIONS: dict[str, tuple[str, Any]] = {
    "breakpoint_percentile": ("semantic", 90.0),
    "buffer_size": ("semantic", 1),
    "min_unit_tokens": ("semantic", DEFAULT_MIN_UNIT_TOKENS),
}

_CLASSES: dict[str, type[BaseChunker]] = {
    "token": TokenChunker,
    "sentence": SentenceChunker,
    "paragraph": ParagraphChunker,
    "recursive": RecursiveChunker,
    "markdown": MarkdownChunker,
    "semantic": SemanticChunker,
}


def build_chunker(
    strategy: str = "token",
    size: int = 256,
    overlap: int = 0,
    tokenizer: str = "cl100k_base",
    prefix: str = "none",
    embed_fn: EmbedFn | None = None,
    **options: Any,
) -> BaseChunker:
    """Build the chunker for one sweep setting (the ``_target_`` of the chunk config group).

    ``embed_fn`` is used by ``semantic`` only; ``options`` are strategy
    options (``breakpoint_percentile``, ``buffer_size``, ``min_unit_tokens``
    for ``semantic``).
    Options given for another strategy with a non-default value are kept in
    ``notes``. Invalid settings raise ``ChunkingSettingsError`` (a ValueError).
    """
    options = {k: v for k, v in options.items() if k not in CONTEXT_KEYS}
    cls = _CLASSES.get(strategy)
    if cls is None:
        raise UnknownChunkSetting(
            f"unknown chunk strategy {strategy!r}{did_you_mean(str(strategy), STRATEGIES)}; "
            f"valid: {', '.join(STRATEGIES)}"
        )
    unknown = sorted(set(options) - set(OPTIONS))
    if unknown:
        keys = sorted(_SETTINGS + tuple(OPTIONS))
        raise UnknownChunkSetting(
            f"unknown chunk setting {unknown[0]!r}{did_you_mean(unknown[0], keys)}; "
            f"valid: {', '.join(keys)}"
        )
    mine = {k: v for k, v in options.items() if OPTIONS[k][0] == strategy}
    ignored = [
        f"option {k}={v!r} is ignored by strategy {strategy!r}"
        for k, v in sorted(options.items())
        if OPTIONS[k][0] != strategy and v != OPTIONS[k][1]
    ]
    base = dict(size=size, overlap=overlap, tokenizer=tokenizer, prefix=prefix)
    chunker = cls(**base, embed_fn=embed_fn, **mine) if cls is SemanticChunker else cls(**base, **mine)
    chunker.notes = chunker.notes + tuple(ignored)
    return chunker
