"""The passages the evidence tool proposes: the passage cutter itself lives in
:mod:`sweep.core.text.passages` (the one of sweep); this module names it for the tool."""

from __future__ import annotations

from sweep.core.text.passages import (MAX_WORDS, MIN_WORDS, Passage, passages_of, sentences_of,
                                      split_passages)

__all__ = ["MAX_WORDS", "MIN_WORDS", "Passage", "passages_of", "sentences_of", "split_passages"]
