"""The documents of a dataset: a ``corpus.jsonl`` (project or BEIR rows), else a
``docs/`` folder, else the documents in the dataset folder itself.

Plain text and Markdown (``.md``, ``.txt``, ``.rst``, ...) are read as they are; PDF,
HTML, DOCX, PPTX and XLSX through a reader (:mod:`sweep.datasets.readers`, any letter
case); hidden files and folders and other extensions are skipped, counted and logged.
Only regular files are read (a FIFO, socket or device is skipped, counted and logged,
never opened); links to files and folders are followed while they stay inside the
dataset folder, and skipped and counted when they leave it (unless
``dataset.follow_links=true``).
"""

from __future__ import annotations

import codecs
import hashlib
import logging
import os
import re
import stat
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from sweep.core.cachedirs import resolve_cache_dir_of
from sweep.core.files import NotRegularFile, file_kind, name_problem
from sweep.core.messages import visible
from sweep.core.types import Document, describe_readers
from sweep.datasets.extraction import extract
from sweep.datasets.pages import document_page_labels, document_pages
from sweep.datasets.problems import (
    DatasetError,
    Problem,
    Report,
    describe_value,
    jsonl_objects,
    metadata_of,
    required_str,
)
from sweep.datasets.quotes import QuoteIndex
from sweep.datasets.readers.base import Reader, UnreadableFile
from sweep.datasets.readers.limits import ReadLimits, read_document
from sweep.datasets.readers.registry import format_of, resolve_readers

__all__ = [
    "CORPUS_FILE",
    "DOCS_DIR",
    "DOC_ID_RULE",
    "Corpus",
    "ReadOptions",
    "SkippedFiles",
    "list_folder",
    "read_corpus",
]

log = logging.getLogger(__name__)

CORPUS_FILE = "corpus.jsonl"
DOCS_DIR = "docs"
#: What a dataset folder holds besides its documents: its questions, their judgments and
#: the draft sweep.evidence writes.
DATASET_FILES = ("queries.jsonl", "qrels", "queries.draft.jsonl")
#: Why a doc_id is refused (after what is wrong with it): files are named after doc_ids.
DOC_ID_RULE = (
    "a doc_id must be a relative name without '..' segments, control characters "
    "or bidi controls (sweep.extract names a file after it)"
)
#: What a documents folder may hold, for messages (extensions: sweep.datasets.readers.registry).
_READABLE = "text, Markdown, reST, PDF, HTML, DOCX, PPTX or XLSX"


@dataclass(frozen=True)
class SkippedFiles:
    """Files under a documents folder that are not read, by reason (paths relative to ``folder``)."""

    folder: str
    hidden: tuple[str, ...] = ()  # a name in the path starts with "."
    other: tuple[str, ...] = ()  # not a document extension
    special: tuple[str, ...] = ()  # a FIFO, socket, device, dangling link, link up the tree
    outside: tuple[str, ...] = ()  # a link that leaves the dataset folder

    def __len__(self) -> int:
        return len(self.hidden) + len(self.other) + len(self.special) + len(self.outside)

    def summary(self) -> str:
        """One line: the folder, how many files were skipped and why."""
        follow = (
            "; dataset.follow_links=true (--follow-links) follows links that leave the "
            "dataset folder"
            if self.outside
            else ""
        )
        return f"{visible(self.folder)}: {self.reasons()}; only {_READABLE} files are read{follow}"

    def reasons(self, limit: int = 4) -> str:
        """``skipped 814 files: 812 hidden (.git/ 812); 2 not a document format (.zip 2)``."""

        def groups(counts: Counter) -> str:
            ranked = sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))
            shown = [f"{visible(name)} {n:,}" for name, n in ranked[:limit]]
            return ", ".join(shown + (["..."] if len(counts) > limit else []))

        def names(paths: tuple[str, ...]) -> str:
            shown = [visible(p) for p in paths[:limit]]
            return ", ".join(shown + (["..."] if len(paths) > limit else []))

        parts = []
        if self.hidden:
            tops = Counter(_hidden_part(p) for p in self.hidden)
            parts.append(f"{len(self.hidden):,} hidden ({groups(tops)})")
        if self.other:
            exts = Counter(Path(p).suffix.lower() or "(no extension)" for p in self.other)
            parts.append(f"{len(self.other):,} not a document format ({groups(exts)})")
        if self.special:
            parts.append(f"{len(self.special):,} not a regular file ({names(self.special)})")
        if self.outside:
            parts.append(
                f"{len(self.outside):,} link{'s' if len(self.outside) != 1 else ''} "
                f"leaving the dataset folder ({names(self.outside)})"
            )
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
    ``cache_dir`` keeps extracted texts (None: this process only); ``follow_links`` also
    reads links under the documents folder that lead outside the dataset folder; ``limits``
    is the most one file may cost to read.
    """

    readers: Mapping[str, Reader] = field(default_factory=lambda: resolve_readers(None))
    skip_unreadable: bool = False
    fuzzy: float | None = None
    cache_dir: Path | None = None
    follow_links: bool = False
    limits: ReadLimits = ReadLimits()

    @classmethod
    def of(
        cls,
        path: Path | str,
        reader: Mapping[str, str] | None = None,
        skip_unreadable: bool = False,
        fuzzy: float | None = None,
        cache_dir: str | Path | None = None,
        follow_links: bool = False,
        **limits: float | None,
    ) -> ReadOptions:
        """Options from a config's plain values; a bad one is a :class:`DatasetError`
        naming the setting. ``cache_dir`` None is the default extraction cache
        (``off`` turns it off); ``limits``: ``max_file_mb=...`` and the others of
        :class:`~sweep.datasets.readers.limits.ReadLimits` (None: the default)."""
        try:
            readers = resolve_readers(None if reader is None else dict(reader))
        except ValueError as e:
            raise DatasetError(Problem(str(path), None, f"dataset.reader: {e}")) from None
        try:
            read_limits = ReadLimits.of(**limits)
        except ValueError as e:
            raise DatasetError(Problem(str(path), None, str(e))) from None
        if fuzzy is not None and (
            isinstance(fuzzy, bool) or not isinstance(fuzzy, (int, float)) or not 0 < fuzzy <= 1
        ):
            raise DatasetError(
                Problem(
                    str(path),
                    None,
                    f"dataset.fuzzy must be null or a similarity in (0, 1], got {fuzzy!r}",
                )
            )
        for key, value in (("skip_unreadable", skip_unreadable), ("follow_links", follow_links)):
            if not isinstance(value, bool):
                raise DatasetError(
                    Problem(str(path), None, f"dataset.{key} must be true or false, got {value!r}")
                )
        return cls(
            readers,
            skip_unreadable,
            None if fuzzy is None else float(fuzzy),
            resolve_cache_dir_of(cache_dir, "extract"),
            follow_links,
            read_limits,
        )


@dataclass(frozen=True)
class Corpus:
    """The documents read, and what the questions' checks need to know about them."""

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
    # Every paged document's pages and page labels, built on first use.
    page_tables: dict[str, tuple[tuple[tuple[int, int], ...], tuple[str, ...]]] = field(
        default_factory=dict, compare=False
    )

    @classmethod
    def of(
        cls,
        documents: Sequence[Document],
        broken: frozenset[str] = frozenset(),
        skipped: frozenset[str] = frozenset(),
    ) -> Corpus:
        documents = tuple(documents)
        return cls(documents, {d.doc_id: d.text for d in documents}, broken, skipped=skipped)

    @classmethod
    def unreadable(cls) -> Corpus:
        return cls((), {}, frozenset(), missing=True)

    def is_reported(self, doc_id: str) -> bool:
        """Whether a problem already covers ``doc_id`` not being loaded."""
        return self.missing or doc_id in self.broken or doc_id in self.skipped

    def pages(self, doc_id: str) -> tuple[tuple[tuple[int, int], ...], tuple[str, ...]]:
        """The pages of document ``doc_id`` (each one's ``(start, end)``) and their labels;
        both empty for a document without pages, the labels for one without labels."""
        if not self.page_tables:
            for d in self.documents:
                pages = document_pages(d)
                if pages:
                    self.page_tables[d.doc_id] = (pages, document_page_labels(d))
            self.page_tables.setdefault("", ((), ()))  # (built: "" is no doc_id)
        return self.page_tables.get(doc_id, ((), ()))

    def quote_index(self, doc_id: str) -> QuoteIndex:
        if doc_id not in self.quote_indexes:
            self.quote_indexes[doc_id] = QuoteIndex(self.texts[doc_id])
        return self.quote_indexes[doc_id]


def read_corpus(path: Path, report: Report, options: ReadOptions) -> Corpus:
    # One rule for every command: corpus.jsonl, else docs/, else the folder's own files.
    if path.is_dir():
        jsonl, docs = path / CORPUS_FILE, path / DOCS_DIR
        if jsonl.is_file() and docs.is_dir():
            report.add(
                path,
                None,
                f"both {CORPUS_FILE} and {DOCS_DIR}/ found; keep one so the corpus is unambiguous",
            )
            return Corpus.unreadable()
        if jsonl.is_file():
            return _read_corpus_jsonl(jsonl, report)
        if os.path.lexists(jsonl):  # a FIFO, a folder, a dangling link: never opened
            report.add(jsonl, None, f"{_kind(jsonl)}, not a regular file")
            return Corpus.unreadable()
        if docs.is_dir():
            return _read_corpus_folder(docs, report, options, root=path)
        return _read_corpus_folder(path, report, options, dataset_files=True)
    if path.is_file():
        return _read_corpus_jsonl(path, report)
    if os.path.lexists(path):
        report.add(path, None, f"{_kind(path)}: neither a folder nor a regular file")
        return Corpus.unreadable()
    report.add(path, None, "no such file or directory")
    return Corpus.unreadable()


def _kind(path: Path) -> str:
    """``is a FIFO``, ``is a dangling link``: what a path that is no regular file is."""
    try:
        return f"is {file_kind(path.stat().st_mode)}"
    except OSError:
        return "is a dangling link"


def _read_corpus_jsonl(path: Path, report: Report) -> Corpus:
    documents: list[Document] = []
    first_line: dict[str, int] = {}
    broken: set[str] = set()
    problems_before = len(report.problems)
    id_key: str | None = None  # "doc_id" (project) or "_id" (BEIR), fixed by the first row
    for lineno, row in jsonl_objects(path, report):
        where = (path, lineno)
        if id_key is None:
            id_key = "_id" if "_id" in row and "doc_id" not in row else "doc_id"
        doc_id = required_str(row, id_key, where, report)
        if doc_id is None:
            continue
        if not report.first_time(first_line, doc_id, where, f"{id_key} {doc_id!r}"):
            continue
        unsafe = name_problem(doc_id)
        if unsafe is not None:  # sweep.extract names a file after it
            report.add(*where, f"{id_key} {doc_id!r} {unsafe}: {DOC_ID_RULE}")
            broken.add(doc_id)
            continue
        title = row.get("title", "")
        title_ok = title is None or isinstance(title, str)
        if not title_ok:
            report.add(*where, f"title must be a string, got {describe_value(title)}")
        text = required_str(row, "text", where, report, what=f"text of {doc_id!r}")
        if text is None or not title_ok:
            broken.add(doc_id)
            continue
        documents.append(
            Document(
                doc_id=doc_id,
                text=text,
                title=title or "",
                metadata=metadata_of(row, {id_key, "title", "text"}),
            )
        )
    if not first_line:
        if len(report.problems) == problems_before:
            report.add(path, None, "no documents")
        return Corpus.unreadable()
    return Corpus.of(documents, frozenset(broken))


def list_folder(
    folder: Path,
    dataset_files: bool = False,
    *,
    root: Path | None = None,
    follow_links: bool = False,
) -> tuple[list[Path], SkippedFiles]:
    """Document files under ``folder`` in path order, and the files skipped there.
    ``dataset_files``: the folder is the dataset's own, so its questions (``queries.jsonl``,
    ``qrels/``) are not documents, and not reported as skipped either.

    Only regular files are documents: a FIFO, socket or device is skipped (never opened,
    so it cannot block). A link (to a file or a folder) is followed when it stays inside
    ``root`` (the dataset folder; default ``folder``) or ``folder``, else skipped, unless
    ``follow_links``."""
    listing = _Listing(
        dataset_files, follow_links, {os.path.realpath(folder), os.path.realpath(root or folder)}
    )
    listing.walk(folder, (), hidden=False, above=frozenset({os.path.realpath(folder)}))
    return sorted(listing.files), SkippedFiles(
        str(folder),
        *(
            tuple(sorted(names))
            for names in (listing.hidden, listing.other, listing.special, listing.outside)
        ),
    )


@dataclass
class _Listing:
    """What :func:`list_folder` finds while it walks."""

    dataset_files: bool
    follow_links: bool
    inside: set[str]  # the real folders a link may lead into
    files: list[Path] = field(default_factory=list)
    hidden: list[str] = field(default_factory=list)
    other: list[str] = field(default_factory=list)
    special: list[str] = field(default_factory=list)
    outside: list[str] = field(default_factory=list)

    def walk(
        self, directory: Path, parts: tuple[str, ...], hidden: bool, above: frozenset[str]
    ) -> None:
        try:
            entries = sorted(os.scandir(directory), key=lambda e: e.name)
        except OSError:  # a folder that cannot be listed is skipped, and counted
            self.special.append(("/".join(parts) or ".") + "/")
            return
        for entry in entries:
            self.visit(entry, parts + (entry.name,), hidden or entry.name.startswith("."), above)

    def visit(
        self, entry: os.DirEntry, parts: tuple[str, ...], hidden: bool, above: frozenset[str]
    ) -> None:
        relative = "/".join(parts)
        if self.dataset_files and parts[0] in DATASET_FILES:
            return
        link = entry.is_symlink()
        real = os.path.realpath(entry.path) if link else None
        if link and not hidden and not self.follow_links and not self._stays_inside(real):
            self.outside.append(relative)
            return
        try:
            mode = os.stat(entry.path).st_mode  # through a link: what it points at
        except OSError:  # a dangling link
            (self.hidden if hidden else self.special).append(relative)
            return
        if stat.S_ISDIR(mode):
            real = real or os.path.realpath(entry.path)
            if any(_within(walked, real) for walked in above):  # a link up: a cycle
                self.special.append(relative)
                return
            if not (link and hidden):  # hidden links are counted, not walked
                self.walk(Path(entry.path), parts, hidden, above | {real})
            else:
                self.hidden.append(relative)
        elif hidden:
            self.hidden.append(relative)
        elif not stat.S_ISREG(mode):
            self.special.append(relative)
        elif format_of(entry.name) is not None:
            self.files.append(Path(entry.path))
        else:
            self.other.append(relative)

    def _stays_inside(self, real: str | None) -> bool:
        return real is not None and any(_within(real, root) for root in self.inside)


def _within(path: str, folder: str) -> bool:
    """Whether real path ``path`` is ``folder`` or under it."""
    return path == folder or path.startswith(folder.rstrip(os.sep) + os.sep)


def _read_corpus_folder(
    folder: Path,
    report: Report,
    options: ReadOptions,
    dataset_files: bool = False,
    root: Path | None = None,
) -> Corpus:
    documents: list[Document] = []
    broken: set[str] = set()
    unreadable: list[Problem] = []
    files, skipped = list_folder(
        folder, dataset_files, root=root, follow_links=options.follow_links
    )
    if skipped:
        log.warning("%s", skipped.summary())
    for file in files:
        doc_id = file.relative_to(folder).as_posix()
        unsafe = name_problem(doc_id)  # a doc_id names a file in sweep.extract's output
        if unsafe is not None:
            unreadable.append(Problem(str(file), None, f"the file's name {unsafe}; rename it"))
            broken.add(doc_id)
            continue
        fmt = format_of(file.name)
        assert fmt is not None  # list_folder keeps readable formats only
        document = _read_document_file(file, doc_id, fmt, options, report, unreadable)
        if document is None:
            broken.add(doc_id)
            continue
        documents.append(document)
    if not files:
        why = f" ({skipped.reasons()})" if skipped else ""
        if dataset_files:
            report.add(
                folder,
                None,
                f"no corpus: no {CORPUS_FILE}, no {DOCS_DIR}/ folder and no "
                f"{_READABLE} files in the folder itself{why}",
            )
        else:
            report.add(folder, None, f"no {_READABLE} files{why}")
        return Corpus.unreadable()
    if unreadable and options.skip_unreadable:
        shown = "; ".join(str(p) for p in unreadable[:3]) + ("; ..." if len(unreadable) > 3 else "")
        log.warning(
            "%s: skipped %d unreadable file%s (dataset.skip_unreadable=true): %s",
            folder,
            len(unreadable),
            "s" if len(unreadable) != 1 else "",
            shown,
        )
        if not documents:
            report.add(
                folder, None, f"no readable documents: all {len(unreadable)} files are unreadable"
            )
            return Corpus.unreadable()
        skipped_ids = frozenset(Path(p.path).relative_to(folder).as_posix() for p in unreadable)
        return Corpus.of(documents, frozenset(broken) - skipped_ids, skipped_ids)
    report.problems.extend(unreadable)
    readers = describe_readers(documents)
    if readers:
        log.info("%s: %d documents read (%s)", folder, len(documents), readers)
    return Corpus.of(documents, frozenset(broken))


def _read_document_file(
    file: Path,
    doc_id: str,
    fmt: str,
    options: ReadOptions,
    report: Report,
    unreadable: list[Problem],
) -> Document | None:
    """One file as a Document; None when it cannot be read (the reason is in ``unreadable``
    for files a reader refuses, in ``report`` for a file the system cannot open)."""
    try:
        data = read_document(file, options.limits)  # a regular file only: never blocks
    except NotRegularFile as e:  # a FIFO put here since the folder was listed
        unreadable.append(Problem(str(file), None, e.strerror))
        return None
    except UnreadableFile as e:  # larger than dataset.max_file_mb
        unreadable.append(Problem(str(file), None, str(e)))
        return None
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
    if not data.removeprefix(codecs.BOM_UTF8).strip():  # a byte-order mark alone is empty too
        unreadable.append(Problem(str(file), None, "empty file"))
        return None
    try:
        extracted = extract(data, str(file), reader, options.cache_dir, digest, options.limits)
    except UnreadableFile as e:
        unreadable.append(Problem(str(file), None, f"{e} (reader {reader.name})"))
        return None
    except Exception as e:  # noqa: BLE001 - a parser library's own error on a damaged file
        unreadable.append(
            Problem(str(file), None, f"reader {reader.name} failed: {type(e).__name__}: {e}")
        )
        return None
    if not extracted.text.strip():
        unreadable.append(Problem(str(file), None, f"no text: reader {reader.name} found none"))
        return None
    meta = {
        "format": fmt,
        "reader": reader.name,
        "source_sha256": digest,
        "pages": [list(p) for p in extracted.pages],
    }
    if extracted.page_labels:  # (a format or file without labels numbers its pages 1 to n)
        meta["page_labels"] = list(extracted.page_labels)
    return Document(
        doc_id=doc_id, text=extracted.text, title=extracted.title or file.stem, metadata=meta
    )


def _decode_text(file: Path, data: bytes, unreadable: list[Problem]) -> str | None:
    # Bytes, not read_text(): universal newlines would turn \r\n into \n and
    # every offset after it would point at the wrong character.
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as e:
        line = data.count(b"\n", 0, e.start) + 1
        unreadable.append(Problem(str(file), line, f"not valid UTF-8 (byte 0x{data[e.start]:02x})"))
        return None
    if not text.removeprefix("\ufeff").strip():  # a byte-order mark alone is empty too
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
        log.warning(
            "%s: looks like HTML markup; rename it to .html so it is read as a web page "
            "(main text only), or it is indexed tags and all",
            file,
        )


def _title_of(text: str, file: Path) -> str:
    # The text keeps a byte-order mark (offsets count it); the title does not.
    first = text.removeprefix("\ufeff").split("\n", 1)[0]
    if first.startswith("# ") and first[2:].strip():
        return first[2:].strip()
    return file.stem
