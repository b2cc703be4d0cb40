"""Chunking: split a :class:`~sweep.core.types.Document` into
:class:`~sweep.core.types.Chunk` objects with exact character offsets, sized in tokens.

One strategy per module behind :class:`BaseChunker` (``strategies``: token,
sentence, paragraph, recursive; ``markdown``; ``pages``: one chunk per page of a paged
document; ``semantic``), each registered where it is
defined with ``@chunker(name)`` (:func:`strategies` lists them), the tools they share
(``boundaries``, ``headings``, ``fitting``), and :func:`build_chunker`, which
builds one sweep setting's chunker (the ``_target_`` of the ``chunk`` config group).
``frameworks`` runs LangChain, LlamaIndex, chonkie, semchunk or any function as a
chunker, its texts located in the document by ``locate``. ``contexts`` has an LLM
write each chunk a situating context to search it by (Contextual Retrieval).
"""

from typing import Any

from sweep.chunking.base import (
    PREFIXES,
    BaseChunker,
    ChunkingSettingsError,
    Strategy,
    UnknownChunkSetting,
    chunker,
    strategies,
)
from sweep.chunking.factory import build_chunker
from sweep.chunking.frameworks import (
    FRAMEWORKS,
    FrameworkChunker,
    UnlocatableChunks,
    build_framework_chunker,
)
from sweep.chunking.headings import Heading, markdown_sections, parse_headings
from sweep.chunking.markdown import MarkdownChunker
from sweep.chunking.pages import PageChunker
from sweep.chunking.semantic import SemanticChunker
from sweep.chunking.strategies import (
    ParagraphChunker,
    RecursiveChunker,
    SentenceChunker,
    TokenChunker,
)

__all__ = [
    "FRAMEWORKS",
    "OVERLAP_MEANING",
    "PREFIXES",
    "STRATEGIES",
    "BaseChunker",
    "ChunkingSettingsError",
    "FrameworkChunker",
    "Heading",
    "MarkdownChunker",
    "PageChunker",
    "ParagraphChunker",
    "RecursiveChunker",
    "SemanticChunker",
    "SentenceChunker",
    "Strategy",
    "TokenChunker",
    "UnknownChunkSetting",
    "UnlocatableChunks",
    "build_chunker",
    "build_framework_chunker",
    "chunker",
    "markdown_sections",
    "parse_headings",
    "strategies",
]


def __getattr__(name: str) -> Any:
    # STRATEGIES and OVERLAP_MEANING are read from the registry when asked (factory's).
    if name in ("STRATEGIES", "OVERLAP_MEANING"):
        from sweep.chunking import factory

        return getattr(factory, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
