"""Chunking: split a :class:`~sweep.core.types.Document` into
:class:`~sweep.core.types.Chunk` objects with exact character offsets, sized in tokens.

One strategy per module behind :class:`BaseChunker` (``strategies``: token,
sentence, paragraph, recursive; ``markdown``; ``semantic``), the tools they share
(``boundaries``, ``headings``, ``fitting``), and :func:`build_chunker`, which
builds one sweep setting's chunker (the ``_target_`` of the ``chunk`` config group).
``frameworks`` runs LangChain, LlamaIndex, chonkie, semchunk or any function as a
chunker, its texts located in the document by ``locate``. ``contexts`` has an LLM
write each chunk a situating context to search it by (Contextual Retrieval).
"""

from sweep.chunking.base import (PREFIXES, BaseChunker, ChunkingSettingsError,
                                 UnknownChunkSetting)
from sweep.chunking.factory import OVERLAP_MEANING, STRATEGIES, build_chunker
from sweep.chunking.frameworks import (FRAMEWORKS, FrameworkChunker, UnlocatableChunks,
                                       build_framework_chunker)
from sweep.chunking.headings import Heading, markdown_sections, parse_headings
from sweep.chunking.markdown import MarkdownChunker
from sweep.chunking.semantic import SemanticChunker
from sweep.chunking.strategies import (ParagraphChunker, RecursiveChunker, SentenceChunker,
                                       TokenChunker)

__all__ = ["BaseChunker", "ChunkingSettingsError", "FRAMEWORKS", "FrameworkChunker",
           "UnlocatableChunks", "build_framework_chunker", "Heading", "MarkdownChunker",
           "OVERLAP_MEANING", "PREFIXES", "ParagraphChunker", "RecursiveChunker",
           "STRATEGIES", "SemanticChunker", "SentenceChunker", "TokenChunker",
           "UnknownChunkSetting", "build_chunker", "markdown_sections", "parse_headings"]
