"""Read a dataset (documents and evaluation queries) and check every rule of its format.

Two layouts are read, detected from the files themselves:

- project: ``corpus.jsonl`` rows ``{"doc_id", "title", "text"}``, else a ``docs/``
  folder of documents, else the documents in the dataset folder itself: plain
  text and Markdown (``.md``, ``.txt``, ``.rst``, ...) read as they are, PDF,
  HTML, DOCX, PPTX and XLSX through a reader (:mod:`sweep.datasets.readers`;
  any letter case; hidden files and folders, other extensions, files that are not
  regular files and links leaving the dataset folder are skipped, counted and
  logged), and ``queries.jsonl`` with one Query per line; evidence
  is given by offsets or by a quote, which is located in the document's text
  (:mod:`sweep.datasets.quotes`);
- BEIR: ``corpus.jsonl`` rows ``{"_id", "title", "text"}``, ``queries.jsonl`` rows
  ``{"_id", "text"}`` and document-level judgments in ``qrels/<split>.tsv``.

Nothing is half-loaded: every loader collects all problems it can find and
raises one :class:`DatasetError` whose ``str()`` is the first problem on one line.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from sweep.core.types import Dataset, Document, Query
from sweep.datasets.corpus import (
    CORPUS_FILE,
    DOCS_DIR,
    Corpus,
    ReadOptions,
    SkippedFiles,
    list_folder,
    read_corpus,
)
from sweep.datasets.judgments import MAX_GRADE, QUERIES_FILE, read_queries
from sweep.datasets.problems import (
    BadJsonLine,
    DatasetError,
    Problem,
    Report,
    describe_value,
    parse_json_line,
)

__all__ = [
    "CORPUS_FILE",
    "DOCS_DIR",
    "MAX_GRADE",
    "QUERIES_FILE",
    "BadJsonLine",
    "DatasetError",
    "Problem",
    "ReadOptions",
    "SkippedFiles",
    "check_dataset",
    "describe_value",
    "load_corpus",
    "load_dataset",
    "load_queries",
    "parse_json_line",
    "scan_dataset",
    "skipped_files",
]


def skipped_files(path: str | Path, *, follow_links: bool = False) -> SkippedFiles | None:
    """What the loader skips in the documents folder of ``path`` (a dataset directory or
    the folder itself); None when the corpus is not a folder of files."""
    path = Path(path).expanduser()
    if (path / DOCS_DIR).is_dir():
        return list_folder(path / DOCS_DIR, root=path, follow_links=follow_links)[1]
    if not path.is_dir() or (path / CORPUS_FILE).is_file():
        return None
    return list_folder(path, dataset_files=True, follow_links=follow_links)[1]


def load_corpus(
    path: str | Path,
    *,
    reader: Mapping[str, str] | None = None,
    skip_unreadable: bool = False,
    cache_dir: str | Path | None = None,
    follow_links: bool = False,
    **limits: float | None,
) -> tuple[Document, ...]:
    """Documents of a ``corpus.jsonl`` (project or BEIR rows), a folder of document files,
    or a dataset directory holding either (``reader``: format -> reader name, ``limits``:
    ``max_file_mb=...`` and the others, see :class:`ReadOptions`). Raises :class:`DatasetError`."""
    path = Path(path).expanduser()
    options = ReadOptions.of(path, reader, skip_unreadable, None, cache_dir, follow_links, **limits)
    report = Report()
    documents = read_corpus(path, report, options)
    report.raise_if_any(_hint(path))
    return documents.documents


def load_queries(
    path: str | Path,
    documents: Sequence[Document],
    *,
    split: str = "test",
    fuzzy: float | None = None,
) -> tuple[Query, ...]:
    """Queries of a project or BEIR ``queries.jsonl`` (or a dataset directory), checked
    against ``documents``; quotes are located in their texts. BEIR judgments come from
    ``qrels/<split>.tsv`` beside the file. Raises :class:`DatasetError`."""
    path = Path(path).expanduser()
    options = ReadOptions.of(path, None, False, fuzzy, "off")
    report = Report()
    corpus = Corpus.of(documents)
    queries = read_queries(path, corpus, split, report, options)
    report.raise_if_any(_hint(path))
    return queries


def load_dataset(
    path: str | Path,
    *,
    split: str = "test",
    reader: Mapping[str, str] | None = None,
    skip_unreadable: bool = False,
    fuzzy: float | None = None,
    cache_dir: str | Path | None = None,
    follow_links: bool = False,
    **limits: float | None,
) -> Dataset:
    """The validated dataset in directory ``path`` (project or BEIR layout, detected),
    its documents read as :class:`ReadOptions` says. Raises :class:`DatasetError` if any
    problem exists."""
    options = ReadOptions.of(
        path, reader, skip_unreadable, fuzzy, cache_dir, follow_links, **limits
    )
    dataset, problems = _scan_dataset(Path(path), split, options)
    if problems:
        raise DatasetError(problems, hint_path=str(path))
    assert dataset is not None
    return dataset


def check_dataset(path: str | Path, *, split: str = "test", **read: Any) -> list[Problem]:
    """Every problem of the dataset in directory ``path``; empty when it is valid
    (``read``: the keyword arguments of :func:`load_dataset`)."""
    return scan_dataset(path, split=split, **read)[1]


def scan_dataset(
    path: str | Path,
    *,
    split: str = "test",
    reader: Mapping[str, str] | None = None,
    skip_unreadable: bool = False,
    fuzzy: float | None = None,
    cache_dir: str | Path | None = None,
    follow_links: bool = False,
    **limits: float | None,
) -> tuple[Dataset | None, list[Problem]]:
    """``(dataset, [])`` when valid, else ``(None, every problem)``: one read for both."""
    try:
        options = ReadOptions.of(
            path, reader, skip_unreadable, fuzzy, cache_dir, follow_links, **limits
        )
    except DatasetError as e:
        return None, e.problems
    return _scan_dataset(Path(path), split, options)


def _hint(path: Path) -> str:
    return str(path if path.is_dir() else path.parent)


def _scan_dataset(
    path: Path, split: str, options: ReadOptions
) -> tuple[Dataset | None, list[Problem]]:
    # "~/data" reaches here unexpanded when quoted for Hydra: 'dataset.path="~/data"'.
    path = path.expanduser()
    report = Report()
    if not path.exists():
        report.add(path, None, "no such directory")
        return None, report.problems
    if not path.is_dir():
        report.add(
            path, None, "not a directory: a dataset is a directory with a corpus and queries.jsonl"
        )
        return None, report.problems
    corpus = read_corpus(path, report, options)
    queries = read_queries(path, corpus, split, report, options)
    if report.problems:
        return None, report.sorted()
    name = path.resolve().name
    return Dataset(name=name, documents=corpus.documents, queries=queries), []
