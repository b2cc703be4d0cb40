"""Read a dataset (documents and evaluation queries) and check every rule of its format.

Two layouts are read, detected from the files themselves:

- project: ``corpus.jsonl`` rows ``{"doc_id", "title", "text"}``, else a ``docs/``
  folder of documents, else the documents in the dataset folder itself: plain
  text and Markdown (``.md``, ``.txt``, ``.rst``, ...) read as they are, PDF,
  HTML, DOCX, PPTX and XLSX through a reader (:mod:`sweep.datasets.readers`;
  any letter case; hidden files and folders and other extensions are skipped,
  counted and logged), and ``queries.jsonl`` with one Query per line; evidence
  is given by offsets or by a quote, which is located in the document's text
  (:mod:`sweep.datasets.quotes`);
- BEIR: ``corpus.jsonl`` rows ``{"_id", "title", "text"}``, ``queries.jsonl`` rows
  ``{"_id", "text"}`` and document-level judgments in ``qrels/<split>.tsv``.

Nothing is half-loaded: every loader collects all problems it can find and
raises one :class:`DatasetError` whose ``str()`` is the first problem on one line.
"""

from __future__ import annotations

import hashlib
import json
import logging
import re
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterator, Mapping, Sequence

from sweep.core.cachedirs import resolve_cache_dir
from sweep.core.checks import is_int
from sweep.core.suggest import did_you_mean
from sweep.core.types import Dataset, Document, Judgment, Query, describe_readers
from sweep.datasets.extraction import extract
from sweep.datasets.quotes import Located, QuoteIndex
from sweep.datasets.readers.base import Reader, UnreadableFile
from sweep.datasets.readers.registry import format_of, resolve_readers

__all__ = [
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
    "parse_json_object",
    "scan_dataset",
    "skipped_files",
]

log = logging.getLogger(__name__)

CORPUS_FILE = "corpus.jsonl"
QUERIES_FILE = "queries.jsonl"
DOCS_DIR = "docs"
#: What a dataset folder holds besides its documents.
_DATASET_FILES = (QUERIES_FILE, "qrels", "queries.draft.jsonl")  # the last: sweep.evidence's draft
#: What a documents folder may hold, for messages (extensions: sweep.datasets.readers.registry).
_READABLE = "text, Markdown, reST, PDF, HTML, DOCX, PPTX or XLSX"
QRELS_HEADER = ("query-id", "corpus-id", "score")
# "score" is a proposal's BM25 score from sweep.evidence, kept when a proposal is moved into
# "relevant" as it is; it says nothing about relevance and is ignored.
_JUDGMENT_KEYS = frozenset({"doc_id", "start", "end", "grade", "quote", "occurrence", "context",
                            "score"})
_ALLOWED_KEYS = "doc_id, start, end, grade, quote, occurrence, context"
# difflib over every id of a big BEIR corpus would make each error slow.
_SUGGEST_LIMIT = 20_000
_UNSIGNED = re.compile(r"[0-9]+")


#: Largest relevance grade: 2^grade - 1 (eval.gain=exponential) must stay finite
#: when summed over a ranking.
MAX_GRADE = 100

@dataclass(frozen=True)
class Problem:
    """One thing wrong with an input file; ``str()`` is ``path:line: message``."""

    path: str
    line: int | None
    message: str

    def __str__(self) -> str:
        where = self.path if self.line is None else f"{self.path}:{self.line}"
        # A problem is always one line, whatever text it quotes.
        return f"{where}: {' '.join(self.message.splitlines())}"


class DatasetError(ValueError):
    """Malformed dataset. ``str()`` is one line: the first problem (and a count of the rest).

    ``problems`` holds every problem found, the first one included.
    """

    def __init__(self, problems: Problem | Sequence[Problem], *, hint_path: str | None = None):
        problems = [problems] if isinstance(problems, Problem) else list(problems)
        if not problems:
            raise ValueError("DatasetError needs at least one problem")
        self.problems: list[Problem] = problems
        message = str(problems[0])
        if len(problems) > 1:
            more = len(problems) - 1
            message += f" (and {more} more problem{'s' if more > 1 else ''}"
            message += f"; run python -m sweep.validate {hint_path})" if hint_path else ")"
        super().__init__(message)

    @property
    def problem(self) -> Problem:
        return self.problems[0]


@dataclass(frozen=True)
class SkippedFiles:
    """Files under a documents folder that are not read, by reason (paths relative to ``folder``)."""

    folder: str
    hidden: tuple[str, ...] = ()  # a name in the path starts with "."
    other: tuple[str, ...] = ()   # not a document extension

    def __len__(self) -> int:
        return len(self.hidden) + len(self.other)

    def summary(self) -> str:
        """One line: the folder, how many files were skipped and why."""
        return f"{self.folder}: {self.reasons()}; only {_READABLE} files are read"

    def reasons(self, limit: int = 4) -> str:
        """``skipped 814 files: 812 hidden (.git/ 812); 2 not a document format (.zip 2)``."""
        def groups(counts: Counter) -> str:
            ranked = sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))
            shown = [f"{name} {n:,}" for name, n in ranked[:limit]]
            return ", ".join(shown + (["..."] if len(counts) > limit else []))

        parts = []
        if self.hidden:
            tops = Counter(_hidden_part(p) for p in self.hidden)
            parts.append(f"{len(self.hidden):,} hidden ({groups(tops)})")
        if self.other:
            exts = Counter(Path(p).suffix.lower() or "(no extension)" for p in self.other)
            parts.append(f"{len(self.other):,} not a document format ({groups(exts)})")
        n = len(self)
        return f"skipped {n:,} file{'s' if n != 1 else ''}: {'; '.join(parts)}"


def _hidden_part(relative: str) -> str:
    """The first hidden name of a path, ``.git/`` for a folder."""
    parts = relative.split("/")
    i = next(i for i, part in enumerate(parts) if part.startswith("."))
    return parts[i] + ("/" if i < len(parts) - 1 else "")


@dataclass(frozen=True)
class ReadOptions:
    """How document files become text and quotes become spans.

    ``readers`` maps a format (``pdf``, ``html``, ``docx``, ...) to its reader;
    ``skip_unreadable`` leaves out files no reader can read (and the questions whose
    evidence is in them) instead of stopping; ``fuzzy`` is the similarity from which a
    quote found neither exactly nor after normalisation is accepted (None: never);
    ``cache_dir`` keeps extracted texts (None: this process only).
    """

    readers: Mapping[str, Reader] = field(default_factory=lambda: resolve_readers(None))
    skip_unreadable: bool = False
    fuzzy: float | None = None
    cache_dir: Path | None = None

    @classmethod
    def of(cls, path: Path | str, reader: Mapping[str, str] | None = None,
           skip_unreadable: bool = False, fuzzy: float | None = None,
           cache_dir: str | Path | None = None) -> "ReadOptions":
        """Options from a config's plain values; a bad one is a :class:`DatasetError`
        naming the setting. ``cache_dir`` None is the default extraction cache
        (``off`` turns it off)."""
        try:
            readers = resolve_readers(None if reader is None else dict(reader))
        except ValueError as e:
            raise DatasetError(Problem(str(path), None, f"dataset.reader: {e}")) from None
        if fuzzy is not None and (isinstance(fuzzy, bool) or not isinstance(fuzzy, (int, float))
                                  or not 0 < fuzzy <= 1):
            raise DatasetError(Problem(str(path), None, f"dataset.fuzzy must be null or a "
                                       f"similarity in (0, 1], got {fuzzy!r}"))
        if not isinstance(skip_unreadable, bool):
            raise DatasetError(Problem(str(path), None, "dataset.skip_unreadable must be true "
                                       f"or false, got {skip_unreadable!r}"))
        return cls(readers, skip_unreadable, None if fuzzy is None else float(fuzzy),
                   resolve_cache_dir(cache_dir, "extract"))


# --------------------------------------------------------------------------- public API


def skipped_files(path: str | Path) -> SkippedFiles | None:
    """What the loader skips in the documents folder of ``path`` (a dataset directory or
    the folder itself); None when the corpus is not a folder of files."""
    path = Path(path).expanduser()
    if (path / DOCS_DIR).is_dir():
        return _list_folder(path / DOCS_DIR)[1]
    if not path.is_dir() or (path / CORPUS_FILE).is_file():
        return None
    return _list_folder(path, dataset_files=True)[1]


def load_corpus(path: str | Path, *, reader: Mapping[str, str] | None = None,
                skip_unreadable: bool = False, cache_dir: str | Path | None = None,
                ) -> tuple[Document, ...]:
    """Documents of a ``corpus.jsonl`` (project or BEIR rows), a folder of document files,
    or a dataset directory holding either (``reader``: format -> reader name, see
    :class:`ReadOptions`). Raises :class:`DatasetError`."""
    path = Path(path).expanduser()
    options = ReadOptions.of(path, reader, skip_unreadable, None, cache_dir)
    report = _Report()
    documents = _read_corpus(path, report, options)
    report.raise_if_any(_hint(path))
    return documents.documents


def load_queries(
    path: str | Path, documents: Sequence[Document], *, split: str = "test",
    fuzzy: float | None = None,
) -> tuple[Query, ...]:
    """Queries of a project or BEIR ``queries.jsonl`` (or a dataset directory), checked
    against ``documents``; quotes are located in their texts. BEIR judgments come from
    ``qrels/<split>.tsv`` beside the file. Raises :class:`DatasetError`."""
    path = Path(path).expanduser()
    options = ReadOptions.of(path, None, False, fuzzy, "off")
    report = _Report()
    corpus = _Corpus.of(documents)
    queries = _read_queries(path, corpus, split, report, options)
    report.raise_if_any(_hint(path))
    return queries


def load_dataset(path: str | Path, *, split: str = "test", reader: Mapping[str, str] | None = None,
                 skip_unreadable: bool = False, fuzzy: float | None = None,
                 cache_dir: str | Path | None = None) -> Dataset:
    """The validated dataset in directory ``path`` (project or BEIR layout, detected),
    its documents read as :class:`ReadOptions` says. Raises :class:`DatasetError` if any
    problem exists."""
    options = ReadOptions.of(path, reader, skip_unreadable, fuzzy, cache_dir)
    dataset, problems = _scan_dataset(Path(path), split, options)
    if problems:
        raise DatasetError(problems, hint_path=str(path))
    assert dataset is not None
    return dataset


def check_dataset(path: str | Path, *, split: str = "test", **read: Any) -> list[Problem]:
    """Every problem of the dataset in directory ``path``; empty when it is valid
    (``read``: the keyword arguments of :func:`load_dataset`)."""
    return scan_dataset(path, split=split, **read)[1]


def scan_dataset(path: str | Path, *, split: str = "test", reader: Mapping[str, str] | None = None,
                 skip_unreadable: bool = False, fuzzy: float | None = None,
                 cache_dir: str | Path | None = None) -> tuple[Dataset | None, list[Problem]]:
    """``(dataset, [])`` when valid, else ``(None, every problem)``: one read for both."""
    try:
        options = ReadOptions.of(path, reader, skip_unreadable, fuzzy, cache_dir)
    except DatasetError as e:
        return None, e.problems
    return _scan_dataset(Path(path), split, options)


# --------------------------------------------------------------------------- machinery


class _Report:
    def __init__(self) -> None:
        self.problems: list[Problem] = []

    def add(self, path: Path | str, line: int | None, message: str) -> None:
        self.problems.append(Problem(str(path), line, message))

    def sorted(self) -> list[Problem]:
        """Problems file by file (in the order files were first named), by line within a file.

        Checks run in passes (JSON first, then cross-references), so discovery
        order is not reading order.
        """
        order: dict[str, int] = {}
        for p in self.problems:
            order.setdefault(p.path, len(order))
        return sorted(self.problems, key=lambda p: (order[p.path], p.line or 0))

    def raise_if_any(self, hint_path: str | None) -> None:
        if self.problems:
            raise DatasetError(self.sorted(), hint_path=hint_path)


@dataclass(frozen=True)
class _Corpus:
    documents: tuple[Document, ...]
    texts: Mapping[str, str]
    # Ids that exist but could not be read: judgments on them are not reported again.
    broken: frozenset[str] = frozenset()
    # No corpus could be read at all: one problem says so, not one per judgment.
    missing: bool = False
    # Unreadable files left out (dataset.skip_unreadable): questions on them are left out too.
    skipped: frozenset[str] = frozenset()
    # One index per document a quote is located in, built on first use.
    quote_indexes: dict[str, QuoteIndex] = field(default_factory=dict, compare=False)

    @classmethod
    def of(cls, documents: Sequence[Document], broken: frozenset[str] = frozenset(),
           skipped: frozenset[str] = frozenset()) -> "_Corpus":
        documents = tuple(documents)
        return cls(documents, {d.doc_id: d.text for d in documents}, broken, skipped=skipped)

    @classmethod
    def unreadable(cls) -> "_Corpus":
        return cls((), {}, frozenset(), missing=True)

    def is_reported(self, doc_id: str) -> bool:
        """Whether a problem already covers ``doc_id`` not being loaded."""
        return self.missing or doc_id in self.broken or doc_id in self.skipped

    def quote_index(self, doc_id: str) -> QuoteIndex:
        if doc_id not in self.quote_indexes:
            self.quote_indexes[doc_id] = QuoteIndex(self.texts[doc_id])
        return self.quote_indexes[doc_id]


def _hint(path: Path) -> str:
    return str(path if path.is_dir() else path.parent)


def _scan_dataset(path: Path, split: str, options: ReadOptions) -> tuple[Dataset | None, list[Problem]]:
    # "~/data" reaches here unexpanded when quoted for Hydra: 'dataset.path="~/data"'.
    path = path.expanduser()
    report = _Report()
    if not path.exists():
        report.add(path, None, "no such directory")
        return None, report.problems
    if not path.is_dir():
        report.add(path, None, "not a directory: a dataset is a directory with a corpus and queries.jsonl")
        return None, report.problems
    corpus = _read_corpus(path, report, options)
    queries = _read_queries(path, corpus, split, report, options)
    if report.problems:
        return None, report.sorted()
    name = path.resolve().name
    return Dataset(name=name, documents=corpus.documents, queries=queries), []


# --------------------------------------------------------------------------- reading lines


def describe_value(value: Any) -> str:
    """A JSON value for an error message: its JSON type and a short rendering."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    kind = {int: "number", float: "number", str: "string", list: "array", dict: "object"}.get(
        type(value), type(value).__name__)
    return f"{kind} {_short(value)}"


def _short(value: Any, limit: int = 60) -> str:
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


class _DuplicateKey(ValueError):
    pass


def _object_without_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    # json.loads silently keeps the last of two equal keys; a typo'd copy of
    # "start" would then move a span without anyone noticing.
    obj: dict[str, Any] = {}
    for key, value in pairs:
        if key in obj:
            raise _DuplicateKey(key)
        obj[key] = value
    return obj


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not valid JSON")


def _text_lines(path: Path, report: _Report) -> Iterator[tuple[int, str]]:
    """Non-blank lines of a UTF-8 text file with their 1-based numbers.

    Splits on ``\\n`` only: U+2028 and friends may appear raw inside JSON strings.
    """
    try:
        data = path.read_bytes()
    except OSError as e:
        report.add(path, None, f"cannot read file: {e.strerror or e}")
        return
    for lineno, raw in enumerate(data.split(b"\n"), 1):
        try:
            line = raw.decode("utf-8")
        except UnicodeDecodeError as e:
            report.add(path, lineno, f"not valid UTF-8 (byte 0x{raw[e.start]:02x} at byte {e.start + 1} of the line)")
            continue
        if lineno == 1:
            line = line.removeprefix("\ufeff")  # editors on Windows add a BOM
        if line.strip():
            yield lineno, line


class BadJsonLine(ValueError):
    """A line that is not one JSON object; ``str()`` says why, as a dataset problem does."""


def parse_json_object(line: str) -> dict[str, Any]:
    """One line of a JSON-lines file as an object: strict JSON (no NaN), no key twice.
    Raises :class:`BadJsonLine`."""
    try:
        obj = json.loads(line, object_pairs_hook=_object_without_duplicates,
                         parse_constant=_reject_constant)
    except json.JSONDecodeError as e:
        raise BadJsonLine(f"bad JSON: {e.msg} (column {e.colno})") from None
    except _DuplicateKey as e:
        raise BadJsonLine(f"bad JSON: duplicate key {str(e)!r}") from None
    except ValueError as e:
        raise BadJsonLine(f"bad JSON: {e}") from None
    if not isinstance(obj, dict):
        raise BadJsonLine(f"expected a JSON object, got {describe_value(obj)}")
    return obj


def _jsonl_objects(path: Path, report: _Report) -> Iterator[tuple[int, dict[str, Any]]]:
    for lineno, line in _text_lines(path, report):
        try:
            yield lineno, parse_json_object(line)
        except BadJsonLine as e:
            report.add(path, lineno, str(e))


def _required_str(row: Mapping[str, Any], key: str, where: tuple[Path, int], report: _Report,
                  *, what: str | None = None) -> str | None:
    """``row[key]`` if it is a non-blank string, else report and return None."""
    if key not in row:
        report.add(*where, f"missing key {key!r}")
        return None
    value = row[key]
    if not isinstance(value, str):
        report.add(*where, f"{key} must be a string, got {describe_value(value)}")
        return None
    if not value.strip():
        report.add(*where, f"{what or key} is empty")
        return None
    return value


def _metadata(row: Mapping[str, Any], known: frozenset[str] | set[str]) -> dict[str, Any]:
    meta: dict[str, Any] = {}
    nested = row.get("metadata")
    if isinstance(nested, dict):
        meta.update(nested)
    meta.update((k, v) for k, v in row.items() if k not in known and k != "metadata")
    if nested is not None and not isinstance(nested, dict):
        meta["metadata"] = nested
    return meta


# --------------------------------------------------------------------------- corpus


def _read_corpus(path: Path, report: _Report, options: ReadOptions) -> _Corpus:
    # One rule for every command: corpus.jsonl, else docs/, else the folder's own files.
    if path.is_dir():
        jsonl, docs = path / CORPUS_FILE, path / DOCS_DIR
        if jsonl.is_file() and docs.is_dir():
            report.add(path, None, f"both {CORPUS_FILE} and {DOCS_DIR}/ found; keep one so the corpus is unambiguous")
            return _Corpus.unreadable()
        if jsonl.is_file():
            return _read_corpus_jsonl(jsonl, report)
        if docs.is_dir():
            return _read_corpus_folder(docs, report, options)
        return _read_corpus_folder(path, report, options, dataset_files=True)
    if path.is_file():
        return _read_corpus_jsonl(path, report)
    report.add(path, None, "no such file or directory")
    return _Corpus.unreadable()


def _read_corpus_jsonl(path: Path, report: _Report) -> _Corpus:
    documents: list[Document] = []
    first_line: dict[str, int] = {}
    broken: set[str] = set()
    problems_before = len(report.problems)
    id_key: str | None = None  # "doc_id" (project) or "_id" (BEIR), fixed by the first row
    for lineno, row in _jsonl_objects(path, report):
        where = (path, lineno)
        if id_key is None:
            id_key = "_id" if "_id" in row and "doc_id" not in row else "doc_id"
        doc_id = _required_str(row, id_key, where, report)
        if doc_id is None:
            continue
        if doc_id in first_line:
            report.add(*where, f"duplicate {id_key} {doc_id!r} (first at line {first_line[doc_id]})")
            continue
        first_line[doc_id] = lineno
        title = row.get("title", "")
        title_ok = title is None or isinstance(title, str)
        if not title_ok:
            report.add(*where, f"title must be a string, got {describe_value(title)}")
        text = _required_str(row, "text", where, report, what=f"text of {doc_id!r}")
        if text is None or not title_ok:
            broken.add(doc_id)
            continue
        documents.append(Document(doc_id=doc_id, text=text, title=title or "",
                                  metadata=_metadata(row, {id_key, "title", "text"})))
    if not first_line:
        if len(report.problems) == problems_before:
            report.add(path, None, "no documents")
        return _Corpus.unreadable()
    return _Corpus.of(documents, frozenset(broken))


def _list_folder(folder: Path, dataset_files: bool = False) -> tuple[list[Path], SkippedFiles]:
    """Document files under ``folder`` in path order, and the files skipped there.
    ``dataset_files``: the folder is the dataset's own, so its questions (``queries.jsonl``,
    ``qrels/``) are not documents, and not reported as skipped either."""
    files: list[Path] = []
    hidden: list[str] = []
    other: list[str] = []
    for p in folder.rglob("*"):
        if not p.is_file():
            continue
        relative = p.relative_to(folder)
        if dataset_files and relative.parts[0] in _DATASET_FILES:
            continue
        if any(part.startswith(".") for part in relative.parts):
            hidden.append(relative.as_posix())
        elif format_of(p.name) is not None:
            files.append(p)
        else:
            other.append(relative.as_posix())
    return sorted(files), SkippedFiles(str(folder), tuple(sorted(hidden)), tuple(sorted(other)))


def _read_corpus_folder(folder: Path, report: _Report, options: ReadOptions,
                        dataset_files: bool = False) -> _Corpus:
    documents: list[Document] = []
    broken: set[str] = set()
    unreadable: list[Problem] = []
    files, skipped = _list_folder(folder, dataset_files)
    if skipped:
        log.warning("%s", skipped.summary())
    for file in files:
        doc_id = file.relative_to(folder).as_posix()
        fmt = format_of(file.name)
        assert fmt is not None  # _list_folder keeps readable formats only
        document = _read_document_file(file, doc_id, fmt, options, report, unreadable)
        if document is None:
            broken.add(doc_id)
            continue
        documents.append(document)
    if not files:
        why = f" ({skipped.reasons()})" if skipped else ""
        if dataset_files:
            report.add(folder, None, f"no corpus: no {CORPUS_FILE}, no {DOCS_DIR}/ folder and no "
                                     f"{_READABLE} files in the folder itself{why}")
        else:
            report.add(folder, None, f"no {_READABLE} files{why}")
        return _Corpus.unreadable()
    if unreadable and options.skip_unreadable:
        shown = "; ".join(str(p) for p in unreadable[:3]) + ("; ..." if len(unreadable) > 3 else "")
        log.warning("%s: skipped %d unreadable file%s (dataset.skip_unreadable=true): %s", folder,
                    len(unreadable), "s" if len(unreadable) != 1 else "", shown)
        if not documents:
            report.add(folder, None, f"no readable documents: all {len(unreadable)} files are unreadable")
            return _Corpus.unreadable()
        skipped_ids = frozenset(Path(p.path).relative_to(folder).as_posix() for p in unreadable)
        return _Corpus.of(documents, frozenset(broken) - skipped_ids, skipped_ids)
    report.problems.extend(unreadable)
    readers = describe_readers(documents)
    if readers:
        log.info("%s: %d documents read (%s)", folder, len(documents), readers)
    return _Corpus.of(documents, frozenset(broken))


def _read_document_file(file: Path, doc_id: str, fmt: str, options: ReadOptions, report: _Report,
                        unreadable: list[Problem]) -> Document | None:
    """One file as a Document; None when it cannot be read (the reason is in ``unreadable``
    for files a reader refuses, in ``report`` for a file the system cannot open)."""
    try:
        data = file.read_bytes()
    except OSError as e:
        report.add(file, None, f"cannot read file: {e.strerror or e}")
        return None
    digest = hashlib.sha256(data).hexdigest()
    if fmt == "text":
        text = _decode_text(file, data, unreadable)
        if text is None:
            return None
        _warn_if_markup(file, text)
        meta = {"format": "text", "reader": "text", "source_sha256": digest}
        return Document(doc_id=doc_id, text=text, title=_title_of(text, file), metadata=meta)
    reader = options.readers[fmt]
    if not data.strip():
        unreadable.append(Problem(str(file), None, "empty file"))
        return None
    try:
        extracted = extract(data, file.name, reader, options.cache_dir, digest)
    except UnreadableFile as e:
        unreadable.append(Problem(str(file), None, f"{e} (reader {reader.name})"))
        return None
    except Exception as e:  # noqa: BLE001 - a parser library's own error on a damaged file
        unreadable.append(Problem(str(file), None, f"reader {reader.name} failed: "
                                  f"{type(e).__name__}: {e}"))
        return None
    if not extracted.text.strip():
        unreadable.append(Problem(str(file), None, f"no text: reader {reader.name} found none"))
        return None
    meta = {"format": fmt, "reader": reader.name, "source_sha256": digest,
            "pages": [list(p) for p in extracted.pages]}
    return Document(doc_id=doc_id, text=extracted.text, title=extracted.title or file.stem,
                    metadata=meta)


def _decode_text(file: Path, data: bytes, unreadable: list[Problem]) -> str | None:
    # Bytes, not read_text(): universal newlines would turn \r\n into \n and
    # every offset after it would point at the wrong character.
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as e:
        line = data.count(b"\n", 0, e.start) + 1
        unreadable.append(Problem(str(file), line, f"not valid UTF-8 (byte 0x{data[e.start]:02x})"))
        return None
    if not text.strip():
        unreadable.append(Problem(str(file), None, "document is empty"))
        return None
    return text


_TAG = re.compile(r"<[A-Za-z!/][^<>]{0,400}>")


def _warn_if_markup(file: Path, text: str) -> None:
    """A web page saved as ``.txt`` would be indexed tags and all; say so."""
    head = text[:4096].lstrip("\ufeff \t\r\n").lower()
    looks_html = head.startswith(("<!doctype html", "<html"))
    if not looks_html and "<" in text:
        sample = text[:200_000]
        tags = sum(len(m.group()) for m in _TAG.finditer(sample))
        looks_html = tags > 0.2 * len(sample)
    if looks_html:
        log.warning("%s: looks like HTML markup; rename it to .html so it is read as a web page "
                    "(main text only), or it is indexed tags and all", file)


def _title_of(text: str, file: Path) -> str:
    # The text keeps a byte-order mark (offsets count it); the title does not.
    first = text.removeprefix("\ufeff").split("\n", 1)[0]
    if first.startswith("# ") and first[2:].strip():
        return first[2:].strip()
    return file.stem


# --------------------------------------------------------------------------- queries


def _read_queries(path: Path, corpus: _Corpus, split: str, report: _Report,
                  options: ReadOptions) -> tuple[Query, ...]:
    file = path / QUERIES_FILE if path.is_dir() else path
    if not file.is_file():
        if file.exists():
            report.add(file, None, "not a file")
        elif path.is_dir():
            report.add(file, None, f"no such file: the questions to evaluate go there, one JSON "
                                   "object per line (see the README, 'Your own documents and "
                                   "questions'), or have an LLM write a set: python -m "
                                   f"sweep.generate dataset.path={path} generate.out=NEW_FOLDER "
                                   "llm.base_url=URL llm.model=NAME")
        else:
            report.add(file, None, "no such file")
        return ()
    problems_before = len(report.problems)
    rows = list(_jsonl_objects(file, report))
    if not rows:
        if len(report.problems) == problems_before:
            report.add(file, None, "no queries")
        return ()
    first = rows[0][1]
    if "_id" in first and "query_id" not in first:
        return _beir_queries(file, rows, corpus, split, report)
    return _project_queries(file, rows, corpus, report, options)


class _OnSkippedFile(Exception):
    """A question whose evidence is in a file left out by ``dataset.skip_unreadable``."""


def _project_queries(file: Path, rows: list[tuple[int, dict[str, Any]]], corpus: _Corpus,
                     report: _Report, options: ReadOptions) -> tuple[Query, ...]:
    queries: list[Query] = []
    left_out = 0
    first_line: dict[str, int] = {}
    known = {"query_id", "query", "relevant", "type"}
    for lineno, row in rows:
        where = (file, lineno)
        query_id = _required_str(row, "query_id", where, report)
        if query_id is not None:
            if query_id in first_line:
                report.add(*where, f"duplicate query_id {query_id!r} (first at line {first_line[query_id]})")
                query_id = None
            else:
                first_line[query_id] = lineno
        text = _required_str(row, "query", where, report, what="query text")
        qtype = row.get("type")
        if qtype is not None and not isinstance(qtype, str):
            report.add(*where, f"type must be a string, got {describe_value(qtype)}")
        # A reference answer (sweep.answers judges correctness against it).
        answer = row.get("answer")
        bad_answer = answer is not None and not (isinstance(answer, str) and answer.strip())
        if bad_answer:
            report.add(*where, f"answer must be a non-empty string, got {describe_value(answer)}")
        try:
            relevant = _judgments(row, where, corpus, report, options)
        except _OnSkippedFile:
            left_out += 1
            continue
        if query_id is None or text is None or relevant is None or bad_answer:
            continue
        if qtype is not None and not isinstance(qtype, str):
            continue
        queries.append(Query(query_id=query_id, query=text, relevant=relevant,
                             type=qtype or None, metadata=_metadata(row, known)))
    if left_out:
        log.warning("%s: left out %d question%s whose evidence is in a skipped unreadable file",
                    file, left_out, "s" if left_out != 1 else "")
    return tuple(queries)


def _judgments(row: Mapping[str, Any], where: tuple[Path, int], corpus: _Corpus,
               report: _Report, options: ReadOptions) -> tuple[Judgment, ...] | None:
    if "relevant" not in row:
        if "proposed" in row:
            report.add(*where, "not labelled yet: move the right passages of 'proposed' into "
                               "'relevant' (a list), then delete 'proposed'")
        else:
            report.add(*where, "missing key 'relevant' (use [] for a question with no answer in "
                               "the corpus; python -m sweep.evidence proposes passages)")
        return None
    items = row["relevant"]
    if not isinstance(items, list):
        report.add(*where, f"relevant must be a list, got {describe_value(items)}")
        return None
    judgments: list[Judgment] = []
    ok = True
    if any(isinstance(item, dict) and item.get("doc_id") in corpus.skipped for item in items):
        raise _OnSkippedFile
    for i, item in enumerate(items):
        judgment = _judgment(item, f"relevant[{i}]", where, corpus, report, options)
        ok = ok and judgment is not None
        if judgment is not None:
            judgments.append(judgment)
    return tuple(judgments) if ok else None


def _judgment(item: Any, label: str, where: tuple[Path, int], corpus: _Corpus,
              report: _Report, options: ReadOptions) -> Judgment | None:
    """One ``{doc_id, start?, end?, grade?, quote?, occurrence?, context?}``; reports every
    rule it breaks. A quote without offsets is located in the document's text."""
    def bad(message: str) -> None:
        report.add(*where, f"{label}: {message}")

    if not isinstance(item, dict):
        bad(f"expected an object, got {describe_value(item)}")
        return None
    errors_before = len(report.problems)
    for key in sorted(set(item) - _JUDGMENT_KEYS):
        bad(f"unknown key {key!r} (allowed: {_ALLOWED_KEYS})")

    doc_id = item.get("doc_id")
    text: str | None = None
    if "doc_id" not in item:
        bad("missing key 'doc_id'")
    elif not isinstance(doc_id, str):
        bad(f"doc_id must be a string, got {describe_value(doc_id)}")
    elif doc_id in corpus.texts:
        text = corpus.texts[doc_id]
    elif not corpus.is_reported(doc_id):
        bad(f"unknown doc_id {doc_id!r}{_suggestion(doc_id, corpus)}")

    grade = item.get("grade", 1)
    if not is_int(grade) or grade < 0:
        bad(f"grade must be an integer >= 0, got {describe_value(grade)}")
    elif grade > MAX_GRADE:
        bad(f"grade {grade} is larger than {MAX_GRADE} (exponential gain 2^grade would overflow)")

    has_start, has_end = "start" in item, "end" in item
    start, end = item.get("start"), item.get("end")
    offsets_ok = False
    if has_start != has_end:
        bad(f"{'start' if has_start else 'end'} without {'end' if has_start else 'start'}: "
            "give both offsets for a span, or neither for a whole-document judgment")
    elif has_start:
        offsets_ok = True
        for key, value in (("start", start), ("end", end)):
            if not is_int(value):
                bad(f"{key} must be an integer, got {describe_value(value)}")
                offsets_ok = False
        if offsets_ok:
            if start < 0:
                bad(f"start {start} is negative")
                offsets_ok = False
            elif start >= end:
                bad(f"empty span: start {start} >= end {end}")
                offsets_ok = False
            elif text is not None and end > len(text):
                bad(f"span {start}:{end} is outside the text of {doc_id!r} ({len(text)} characters)")
                offsets_ok = False

    located: str | None = None
    hints = _hints(item, bad)
    hinted = hints is not None and any(h is not None for h in hints)
    if "quote" not in item and hinted:
        bad("occurrence and context choose among the places a quote appears; give a quote")
    if "quote" in item:
        quote = item["quote"]
        if not isinstance(quote, str):
            bad(f"quote must be a string, got {describe_value(quote)}")
        elif not has_start and not has_end:
            if not quote.strip():
                bad("quote is empty")
            elif text is not None and hints is not None:
                found = corpus.quote_index(doc_id).locate(
                    quote, occurrence=hints[0], context=hints[1], fuzzy=options.fuzzy)
                if isinstance(found, Located):
                    start, end, located = found.start, found.end, found.how
                else:
                    fuzzy = (" (dataset.fuzzy=0.9 accepts close matches)"
                             if options.fuzzy is None and found.reason == "not found" else "")
                    bad(f"quote not located in {doc_id!r}: {found.message()}{fuzzy}")
        elif hinted:
            bad("occurrence and context are for a quote without offsets; these offsets already "
                "say where it is")
        elif offsets_ok and text is not None and text[start:end] != quote:
            bad(f"quote does not match the text of {doc_id!r} at {start}:{end}: "
                f"quote {_short(quote, 50)}, text {_short(text[start:end], 50)}"
                f"{_line_end_hint(text, start, end, quote)}")

    if len(report.problems) > errors_before or text is None:
        return None
    if located is not None:
        return Judgment(doc_id=doc_id, start=start, end=end, grade=grade, quote=item["quote"],
                        occurrence=hints[0], context=hints[1], located=located)
    return Judgment(doc_id=doc_id, start=start if has_start else None, end=end if has_end else None,
                    grade=grade, quote=item.get("quote"))


def _hints(item: Mapping[str, Any], bad) -> tuple[int | None, str | None] | None:
    """``(occurrence, context)`` of a judgment, None when either is malformed (reported)."""
    occurrence, context = item.get("occurrence"), item.get("context")
    ok = True
    if occurrence is not None and (not is_int(occurrence) or occurrence < 1):
        bad(f"occurrence must be an integer >= 1 (1 is the first place the quote appears), "
            f"got {describe_value(occurrence)}")
        ok = False
    if context is not None and not (isinstance(context, str) and context.strip()):
        bad(f"context must be a few words near the quote, got {describe_value(context)}")
        ok = False
    return (occurrence, context) if ok else None


def _line_end_hint(text: str, start: int, end: int, quote: str) -> str:
    """Why a quote misses when the document has Windows line endings: offsets counted in
    a copy read with universal newlines (``open(path).read()`` turns ``\r\n`` into
    ``\n``), or a quote copied with ``\n`` where the file has ``\r\n``."""
    if "\r" not in text:
        return ""
    if text.replace("\r\n", "\n")[start:end] == quote:
        return ("; the file has Windows line endings (\\r\\n) and these offsets fit its text "
                "with \\n only: compute offsets on the text read with open(path, "
                "encoding='utf-8', newline='')")
    crlf = quote.replace("\r\n", "\n").replace("\n", "\r\n")
    if text.startswith(crlf, start):
        return ("; they differ only in line endings: the file has \\r\\n where the quote "
                "has \\n; copy the quote from the text read with open(path, encoding='utf-8', "
                "newline='')")
    return ""


def _suggestion(doc_id: str, corpus: _Corpus) -> str:
    if len(corpus.texts) > _SUGGEST_LIMIT:
        return ""
    return did_you_mean(doc_id, corpus.texts, cutoff=0.75)


# --------------------------------------------------------------------------- BEIR queries


def _beir_queries(file: Path, rows: list[tuple[int, dict[str, Any]]], corpus: _Corpus,
                  split: str, report: _Report) -> tuple[Query, ...]:
    texts: dict[str, tuple[str, dict[str, Any]]] = {}
    first_line: dict[str, int] = {}
    for lineno, row in rows:
        where = (file, lineno)
        query_id = _required_str(row, "_id", where, report)
        text = _required_str(row, "text", where, report, what="query text")
        if query_id is None:
            continue
        if query_id in first_line:
            report.add(*where, f"duplicate _id {query_id!r} (first at line {first_line[query_id]})")
            continue
        first_line[query_id] = lineno
        if text is not None:
            texts[query_id] = (text, _metadata(row, {"_id", "text"}))

    qrels = file.parent / "qrels" / f"{split}.tsv"
    judged = _read_qrels(qrels, set(first_line), corpus, report)
    # A BEIR queries.jsonl holds the queries of every split; the split's qrels
    # say which of them are evaluated.
    return tuple(
        Query(query_id=qid, query=texts[qid][0], relevant=tuple(judged[qid]), metadata=texts[qid][1])
        for qid in first_line if qid in judged and qid in texts
    )


def _read_qrels(path: Path, query_ids: set[str], corpus: _Corpus,
                report: _Report) -> dict[str, list[Judgment]]:
    if not path.is_file():
        report.add(path, None, "no such file (BEIR queries need qrels/<split>.tsv; choose it with dataset.split=NAME, or --split NAME for sweep.validate and sweep.score)")
        return {}
    judged: dict[str, list[Judgment]] = {}
    first_line: dict[tuple[str, str], int] = {}
    rows = 0
    for lineno, line in _text_lines(path, report):
        line = line.rstrip("\r\n")
        # BEIR writes tabs; hand-made files often use spaces.
        fields = [f.strip() for f in (line.split("\t") if "\t" in line else line.split())]
        if rows == 0 and tuple(f.lower() for f in fields) == QRELS_HEADER:
            continue
        rows += 1
        if len(fields) != 3:
            report.add(path, lineno, f"expected 3 tab-separated columns (query-id, corpus-id, score), got {len(fields)}")
            continue
        qid, doc_id, score = fields
        ok = True
        if qid not in query_ids:
            report.add(path, lineno, f"unknown query-id {qid!r} (not in queries.jsonl)")
            ok = False
        if doc_id not in corpus.texts:
            if not corpus.is_reported(doc_id):
                report.add(path, lineno, f"unknown corpus-id {doc_id!r}{_suggestion(doc_id, corpus)}")
            ok = False
        grade = int(score) if _UNSIGNED.fullmatch(score) else -1
        if grade < 0:
            report.add(path, lineno, f"score must be an integer >= 0, got {score!r}")
            ok = False
        elif grade > MAX_GRADE:
            report.add(path, lineno, f"score {grade} is larger than {MAX_GRADE} (exponential gain "
                                     "2^grade would overflow)")
            ok = False
        key = (qid, doc_id)
        if key in first_line:
            report.add(path, lineno, f"duplicate judgment of {doc_id!r} for query {qid!r} (first at line {first_line[key]})")
            continue
        first_line[key] = lineno
        if ok:
            judged.setdefault(qid, []).append(Judgment(doc_id=doc_id, grade=grade))
    if rows == 0:
        report.add(path, None, "no judgments")
    return judged
