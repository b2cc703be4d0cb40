"""sweep: find the chunking configuration that retrieves best on your data, with evidence.

The names below are what a notebook needs to run settings without Hydra::

    import sweep
    dataset = sweep.load_dataset(sweep.bundled_corpus("kestrel"))
    result = sweep.evaluate_setting(dataset.documents, dataset.queries,
                                    sweep.build_chunker("token", size=256),
                                    sweep.SentenceTransformerEmbedder(),
                                    sweep.DenseRetriever(), sweep.EvalConfig())

They are imported on first use, so ``import sweep`` alone loads neither torch nor faiss.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"

# name -> the module that defines it
_EXPORTS = {
    # data
    "Document": "sweep.core.types",
    "Judgment": "sweep.core.types",
    "Query": "sweep.core.types",
    "Dataset": "sweep.core.types",
    "Chunk": "sweep.core.types",
    "Hit": "sweep.core.types",
    "Ranking": "sweep.core.types",
    "load_dataset": "sweep.datasets.loading",
    "DatasetError": "sweep.datasets.loading",
    "bundled_corpus": "sweep.datasets.bundled",
    # the stages: what each must do, and sweep's own
    "Chunker": "sweep.core.protocols",
    "Embedder": "sweep.core.protocols",
    "Retriever": "sweep.core.protocols",
    "Reranker": "sweep.core.protocols",
    "BaseChunker": "sweep.chunking",
    "build_chunker": "sweep.chunking",
    "build_framework_chunker": "sweep.chunking",
    "SentenceTransformerEmbedder": "sweep.embedding.embedder",
    "DenseRetriever": "sweep.retrieval.dense",
    "BM25Retriever": "sweep.retrieval.lexical",
    # one setting, scored
    "EvalConfig": "sweep.core.evalconfig",
    "evaluate_setting": "sweep.pipeline.evaluate",
    "SettingResult": "sweep.pipeline.evaluate",
    "ScoreTable": "sweep.scoring.table",
    "score_queries": "sweep.scoring.credit",
    "summarize": "sweep.scoring.aggregate",
    # settings compared, sweeps read back
    "compare": "sweep.decision.compare",
    "decide": "sweep.decision.decide",
    "load": "sweep.reporting.frames",
    "load_per_query": "sweep.reporting.frames",
    "write_report": "sweep.reporting.write",
}

__all__ = ["__version__", *_EXPORTS]


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'sweep' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value  # the next lookup does not come here
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_EXPORTS))


if TYPE_CHECKING:  # for type checkers and editors; at run time the names load lazily
    from sweep.chunking import BaseChunker, build_chunker, build_framework_chunker
    from sweep.core.evalconfig import EvalConfig
    from sweep.core.protocols import Chunker, Embedder, Reranker, Retriever
    from sweep.core.types import Chunk, Dataset, Document, Hit, Judgment, Query, Ranking
    from sweep.datasets.bundled import bundled_corpus
    from sweep.datasets.loading import DatasetError, load_dataset
    from sweep.decision.compare import compare
    from sweep.decision.decide import decide
    from sweep.embedding.embedder import SentenceTransformerEmbedder
    from sweep.pipeline.evaluate import SettingResult, evaluate_setting
    from sweep.reporting.frames import load, load_per_query
    from sweep.reporting.write import write_report
    from sweep.retrieval.dense import DenseRetriever
    from sweep.retrieval.lexical import BM25Retriever
    from sweep.scoring.aggregate import summarize
    from sweep.scoring.credit import score_queries
    from sweep.scoring.table import ScoreTable
