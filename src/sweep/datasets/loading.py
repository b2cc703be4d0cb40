"""Read a dataset (documents and evaluation queries) and check every rule of its format.

Two layouts are read, detected from the files themselves:

- project: ``corpus.jsonl`` rows ``{"doc_id", "title", "text"}``, else a ``docs/``
  folder of ``.md``/``.markdown``/``.txt`` files, else those files in the
  dataset folder itself (any letter case; hidden files and folders and other
  extensions are skipped, counted and logged), and ``queries.jsonl`` with one
  Query per line;
- BEIR: ``corpus.jsonl`` rows ``{"_id", "title", "text"}``, ``queries.jsonl`` rows
  ``{"_id", "text"}`` and document-level judgments in ``qrels/<split>.tsv``.

Nothing is half-loaded: every loader collects all problems it can find and
raises one :class:`DatasetError` whose ``str()`` is the first problem on one line.
"""

from __future__ import annotations

import json
import logging
import re
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterator, Mapping, Sequence

from sweep.core.types import Dataset, Document, Judgment, Query
from sweep.core.checks import is_int
from sweep.core.suggest import did_you_mean

__all__ = [
    "DatasetError",
    "Problem",
    "SkippedFiles",
    "check_dataset",
    "load_corpus",
    "load_dataset",
    "load_queries",
    "scan_dataset",
    "skipped_files",
]

log = logging.getLogger(__name__)

CORPUS_FILE = "corpus.jsonl"
QUERIES_FILE = "queries.jsonl"
DOCS_DIR = "docs"
#: What a dataset folder holds besides its documents.
_DATASET_FILES = (QUERIES_FILE, "qrels")
#: Document file extensions, compared in lower case (``.MD`` is read too).
DOC_SUFFIXES = (".md", ".markdown", ".txt")
_SUFFIX_LIST = "/".join(DOC_SUFFIXES)  # for messages: ".md/.markdown/.txt"
QRELS_HEADER = ("query-id", "corpus-id", "score")
_JUDGMENT_KEYS = frozenset({"doc_id", "start", "end", "grade", "quote"})
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
        return f"{self.folder}: {self.reasons()}; only {_SUFFIX_LIST} files are read"

    def reasons(self, limit: int = 4) -> str:
        """``skipped 814 files: 812 hidden (.git/ 812); 2 not .md/.markdown/.txt (.pdf 2)``."""
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
            parts.append(f"{len(self.other):,} not {_SUFFIX_LIST} ({groups(exts)})")
        n = len(self)
        return f"skipped {n:,} file{'s' if n != 1 else ''}: {'; '.join(parts)}"


def _hidden_part(relative: str) -> str:
    """The first hidden name of a path, ``.git/`` for a folder."""
    parts = relative.split("/")
    i = next(i for i, part in enumerate(parts) if part.startswith("."))
    return parts[i] + ("/" if i < len(parts) - 1 else "")


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


def load_corpus(path: str | Path) -> tuple[Document, ...]:
    """Documents of a ``corpus.jsonl`` (project or BEIR rows), a folder of ``.md``/``.markdown``/``.txt``
    files, or a dataset directory holding either. Raises :class:`DatasetError`."""
    path = Path(path).expanduser()
    report = _Report()
    documents = _read_corpus(path, report)
    report.raise_if_any(_hint(path))
    return documents.documents


def load_queries(
    path: str | Path, documents: Sequence[Document], *, split: str = "test"
) -> tuple[Query, ...]:
    """Queries of a project or BEIR ``queries.jsonl`` (or a dataset directory), checked
    against ``documents``. BEIR judgments come from ``qrels/<split>.tsv`` beside the file.
    Raises :class:`DatasetError`."""
    path = Path(path).expanduser()
    report = _Report()
    corpus = _Corpus.of(documents)
    queries = _read_queries(path, corpus, split, report)
    report.raise_if_any(_hint(path))
    return queries


def load_dataset(path: str | Path, *, split: str = "test") -> Dataset:
    """The validated dataset in directory ``path`` (project or BEIR layout, detected).
    Raises :class:`DatasetError` if any problem exists."""
    dataset, problems = _scan_dataset(Path(path), split)
    if problems:
        raise DatasetError(problems, hint_path=str(path))
    assert dataset is not None
    return dataset


def check_dataset(path: str | Path, *, split: str = "test") -> list[Problem]:
    """Every problem of the dataset in directory ``path``; empty when it is valid."""
    return _scan_dataset(Path(path), split)[1]


def scan_dataset(path: str | Path, *, split: str = "test") -> tuple[Dataset | None, list[Problem]]:
    """``(dataset, [])`` when valid, else ``(None, every problem)``: one read for both."""
    return _scan_dataset(Path(path), split)


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

    @classmethod
    def of(cls, documents: Sequence[Document], broken: frozenset[str] = frozenset()) -> "_Corpus":
        documents = tuple(documents)
        return cls(documents, {d.doc_id: d.text for d in documents}, broken)

    @classmethod
    def unreadable(cls) -> "_Corpus":
        return cls((), {}, frozenset(), missing=True)

    def is_reported(self, doc_id: str) -> bool:
        """Whether a problem already covers ``doc_id`` not being loaded."""
        return self.missing or doc_id in self.broken


def _hint(path: Path) -> str:
    return str(path if path.is_dir() else path.parent)


def _scan_dataset(path: Path, split: str) -> tuple[Dataset | None, list[Problem]]:
    # "~/data" reaches here unexpanded when quoted for Hydra: 'dataset.path="~/data"'.
    path = path.expanduser()
    report = _Report()
    if not path.exists():
        report.add(path, None, "no such directory")
        return None, report.problems
    if not path.is_dir():
        report.add(path, None, "not a directory: a dataset is a directory with a corpus and queries.jsonl")
        return None, report.problems
    corpus = _read_corpus(path, report)
    queries = _read_queries(path, corpus, split, report)
    if report.problems:
        return None, report.sorted()
    name = path.resolve().name
    return Dataset(name=name, documents=corpus.documents, queries=queries), []


# --------------------------------------------------------------------------- reading lines


def _describe(value: Any) -> str:
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


def _jsonl_objects(path: Path, report: _Report) -> Iterator[tuple[int, dict[str, Any]]]:
    for lineno, line in _text_lines(path, report):
        try:
            obj = json.loads(line, object_pairs_hook=_object_without_duplicates,
                             parse_constant=_reject_constant)
        except json.JSONDecodeError as e:
            report.add(path, lineno, f"bad JSON: {e.msg} (column {e.colno})")
            continue
        except _DuplicateKey as e:
            report.add(path, lineno, f"bad JSON: duplicate key {str(e)!r}")
            continue
        except ValueError as e:
            report.add(path, lineno, f"bad JSON: {e}")
            continue
        if not isinstance(obj, dict):
            report.add(path, lineno, f"expected a JSON object, got {_describe(obj)}")
            continue
        yield lineno, obj


def _required_str(row: Mapping[str, Any], key: str, where: tuple[Path, int], report: _Report,
                  *, what: str | None = None) -> str | None:
    """``row[key]`` if it is a non-blank string, else report and return None."""
    if key not in row:
        report.add(*where, f"missing key {key!r}")
        return None
    value = row[key]
    if not isinstance(value, str):
        report.add(*where, f"{key} must be a string, got {_describe(value)}")
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


def _read_corpus(path: Path, report: _Report) -> _Corpus:
    # One rule for every command: corpus.jsonl, else docs/, else the folder's own files.
    if path.is_dir():
        jsonl, docs = path / CORPUS_FILE, path / DOCS_DIR
        if jsonl.is_file() and docs.is_dir():
            report.add(path, None, f"both {CORPUS_FILE} and {DOCS_DIR}/ found; keep one so the corpus is unambiguous")
            return _Corpus.unreadable()
        if jsonl.is_file():
            return _read_corpus_jsonl(jsonl, report)
        if docs.is_dir():
            return _read_corpus_folder(docs, report)
        return _read_corpus_folder(path, report, dataset_files=True)
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
            report.add(*where, f"title must be a string, got {_describe(title)}")
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
        elif p.suffix.lower() in DOC_SUFFIXES:
            files.append(p)
        else:
            other.append(relative.as_posix())
    return sorted(files), SkippedFiles(str(folder), tuple(sorted(hidden)), tuple(sorted(other)))


def _read_corpus_folder(folder: Path, report: _Report, dataset_files: bool = False) -> _Corpus:
    documents: list[Document] = []
    broken: set[str] = set()
    files, skipped = _list_folder(folder, dataset_files)
    if skipped:
        log.warning("%s", skipped.summary())
    for file in files:
        doc_id = file.relative_to(folder).as_posix()
        text = _read_document_file(file, report)
        if text is None:
            broken.add(doc_id)
            continue
        if not text.strip():
            report.add(file, None, "document is empty")
            broken.add(doc_id)
            continue
        documents.append(Document(doc_id=doc_id, text=text, title=_title_of(text, file)))
    if not files:
        why = f" ({skipped.reasons()})" if skipped else ""
        if dataset_files:
            report.add(folder, None, f"no corpus: no {CORPUS_FILE}, no {DOCS_DIR}/ folder and no "
                                     f"{_SUFFIX_LIST} files in the folder itself{why}")
        else:
            report.add(folder, None, f"no {_SUFFIX_LIST} files{why}")
        return _Corpus.unreadable()
    return _Corpus.of(documents, frozenset(broken))


def _read_document_file(file: Path, report: _Report) -> str | None:
    # Bytes, not read_text(): universal newlines would turn \r\n into \n and
    # every offset after it would point at the wrong character.
    try:
        data = file.read_bytes()
    except OSError as e:
        report.add(file, None, f"cannot read file: {e.strerror or e}")
        return None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as e:
        line = data.count(b"\n", 0, e.start) + 1
        report.add(file, line, f"not valid UTF-8 (byte 0x{data[e.start]:02x})")
        return None


def _title_of(text: str, file: Path) -> str:
    # The text keeps a byte-order mark (offsets count it); the title does not.
    first = text.removeprefix("\ufeff").split("\n", 1)[0]
    if first.startswith("# ") and first[2:].strip():
        return first[2:].strip()
    return file.stem


# --------------------------------------------------------------------------- queries


def _read_queries(path: Path, corpus: _Corpus, split: str, report: _Report) -> tuple[Query, ...]:
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
    return _project_queries(file, rows, corpus, report)


def _project_queries(file: Path, rows: list[tuple[int, dict[str, Any]]], corpus: _Corpus,
                     report: _Report) -> tuple[Query, ...]:
    queries: list[Query] = []
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
            report.add(*where, f"type must be a string, got {_describe(qtype)}")
        # A reference answer (sweep.answers judges correctness against it).
        answer = row.get("answer")
        bad_answer = answer is not None and not (isinstance(answer, str) and answer.strip())
        if bad_answer:
            report.add(*where, f"answer must be a non-empty string, got {_describe(answer)}")
        relevant = _judgments(row, where, corpus, report)
        if query_id is None or text is None or relevant is None or bad_answer:
            continue
        if qtype is not None and not isinstance(qtype, str):
            continue
        queries.append(Query(query_id=query_id, query=text, relevant=relevant,
                             type=qtype or None, metadata=_metadata(row, known)))
    return tuple(queries)


def _judgments(row: Mapping[str, Any], where: tuple[Path, int], corpus: _Corpus,
               report: _Report) -> tuple[Judgment, ...] | None:
    if "relevant" not in row:
        report.add(*where, "missing key 'relevant' (use [] for a question with no answer in the corpus)")
        return None
    items = row["relevant"]
    if not isinstance(items, list):
        report.add(*where, f"relevant must be a list, got {_describe(items)}")
        return None
    judgments: list[Judgment] = []
    ok = True
    for i, item in enumerate(items):
        judgment = _judgment(item, f"relevant[{i}]", where, corpus, report)
        ok = ok and judgment is not None
        if judgment is not None:
            judgments.append(judgment)
    return tuple(judgments) if ok else None


def _judgment(item: Any, label: str, where: tuple[Path, int], corpus: _Corpus,
              report: _Report) -> Judgment | None:
    """One ``{doc_id, start?, end?, grade?, quote?}``; reports every rule it breaks."""
    def bad(message: str) -> None:
        report.add(*where, f"{label}: {message}")

    if not isinstance(item, dict):
        bad(f"expected an object, got {_describe(item)}")
        return None
    errors_before = len(report.problems)
    for key in sorted(set(item) - _JUDGMENT_KEYS):
        bad(f"unknown key {key!r} (allowed: doc_id, start, end, grade, quote)")

    doc_id = item.get("doc_id")
    text: str | None = None
    if "doc_id" not in item:
        bad("missing key 'doc_id'")
    elif not isinstance(doc_id, str):
        bad(f"doc_id must be a string, got {_describe(doc_id)}")
    elif doc_id in corpus.texts:
        text = corpus.texts[doc_id]
    elif not corpus.is_reported(doc_id):
        bad(f"unknown doc_id {doc_id!r}{_suggestion(doc_id, corpus)}")

    grade = item.get("grade", 1)
    if not is_int(grade) or grade < 0:
        bad(f"grade must be an integer >= 0, got {_describe(grade)}")
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
                bad(f"{key} must be an integer, got {_describe(value)}")
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

    if "quote" in item:
        quote = item["quote"]
        if not isinstance(quote, str):
            bad(f"quote must be a string, got {_describe(quote)}")
        elif not has_start and not has_end:
            bad("quote without start/end: offsets are required with a quote")
        elif offsets_ok and text is not None and text[start:end] != quote:
            bad(f"quote does not match the text of {doc_id!r} at {start}:{end}: "
                f"quote {_short(quote, 50)}, text {_short(text[start:end], 50)}"
                f"{_line_end_hint(text, start, end, quote)}")

    if len(report.problems) > errors_before or text is None:
        return None
    return Judgment(doc_id=doc_id, start=start if has_start else None, end=end if has_end else None,
                    grade=grade, quote=item.get("quote"))


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
