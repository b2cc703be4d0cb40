"""The text rules every stage reads, each written once: Markdown headings, where a
sentence ends, and the passages a person would accept as evidence.

The chunkers, the health columns, the document readers, the evidence tool and question
generation all take them from here, so a rule changed here (a language's sentence marks,
say) changes for all of them at once. Sentence ends have one rule per language
(:func:`sentence_rule`), chosen per document.
"""

from sweep.core.text.headings import ATX_HEADING, Heading, parse_headings
from sweep.core.text.passages import (
    MAX_WORDS,
    MIN_WORDS,
    Passage,
    passages_of,
    sentences_of,
    split_passages,
)
from sweep.core.text.sentences import (
    SENTENCE_ENDS,
    SENTENCE_RULES,
    SentenceEnds,
    sentence_cuts,
    sentence_rule,
)

__all__ = [
    "ATX_HEADING",
    "MAX_WORDS",
    "MIN_WORDS",
    "SENTENCE_ENDS",
    "SENTENCE_RULES",
    "Heading",
    "Passage",
    "SentenceEnds",
    "parse_headings",
    "passages_of",
    "sentence_cuts",
    "sentence_rule",
    "sentences_of",
    "split_passages",
]
