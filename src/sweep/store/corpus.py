"""The documents a sweep read, kept in its folder: ``corpus/<fingerprint>.jsonl``.

report.html's explorer shows any document with any setting's chunk boundaries, and
any question's evidence in its document. A report is rebuilt from the folder alone
(``sweep.report DIR``), often on another machine or from a CI baseline, so the texts
travel with the folder: the dataset's paths in a saved config are never followed (a
folder from a pull request could name any file on the reader's machine, whose text
would end up in a page that gets mailed).

One JSON object per line: ``doc_id``, ``text`` (None for a document past
``KEPT_CHARS``: documents with evidence are kept first), ``n_chars``, ``pages``
(a paged document's character range per page), ``page_labels`` (the label each page
prints, where the document has them) and ``language``.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from sweep.core.errors import BadInput
from sweep.core.files import folder_inside, jsonl_records, regular_file, write_text_atomic
from sweep.core.text.languages import detect_language
from sweep.core.types import Dataset, Document
from sweep.datasets.pages import document_page_labels

__all__ = [
    "CORPUS_FOLDER",
    "KEPT_CHARS",
    "CorpusError",
    "KeptDocument",
    "keep_documents",
    "kept_documents_path",
    "read_kept_documents",
]

CORPUS_FOLDER = "corpus"
#: Characters of document text a folder keeps (about 20-60 MB): enough for the corpora
#: sweep is run on whole; past it, the documents that hold evidence come first.
KEPT_CHARS = 20_000_000
# A fingerprint as DatasetInfo writes it; anything else in a row.json names no file here.
_FINGERPRINT = re.compile(r"[0-9a-f]{8,64}")


class CorpusError(ValueError, BadInput):
    """A corpus file that cannot be read; ``str()`` names the file, line and problem."""


@dataclass(frozen=True)
class KeptDocument:
    doc_id: str
    text: str | None  # None: not kept (past KEPT_CHARS)
    n_chars: int
    pages: tuple[tuple[int, int], ...] | None
    language: str
    page_labels: tuple[str, ...] = ()  # one per page, where the document has labels


def kept_documents_path(sweep_dir: Path, fingerprint: str) -> Path | None:
    """Where the texts of the dataset with this fingerprint are kept; None for a value
    that is no fingerprint (a row.json is input from anyone: never a path)."""
    if not _FINGERPRINT.fullmatch(fingerprint or ""):
        return None
    return Path(sweep_dir) / CORPUS_FOLDER / f"{fingerprint}.jsonl"


def _pages(metadata: Mapping[str, Any]) -> list[list[int]] | None:
    pages = metadata.get("pages") if isinstance(metadata, Mapping) else None
    return [[int(a), int(b)] for a, b in pages] if pages else None


def _labels(document: Document) -> dict[str, list[str]]:
    labels = document_page_labels(document)
    return {"page_labels": list(labels)} if labels else {}


def keep_documents(sweep_dir: Path, dataset: Dataset, fingerprint: str) -> Path | None:
    """Keep the dataset's texts in the sweep folder, once: the first job writes them, the
    others (the same fingerprint, the same texts) find them there."""
    path = kept_documents_path(sweep_dir, fingerprint)
    if path is None or path.exists():
        return None
    folder_inside(path.parent, Path(sweep_dir))
    with_evidence = {j.doc_id for q in dataset.queries for j in q.relevant if j.grade > 0}
    budget = KEPT_CHARS
    kept = set()
    for d in sorted(dataset.documents, key=lambda d: d.doc_id not in with_evidence):
        if len(d.text) <= budget:
            kept.add(d.doc_id)
            budget -= len(d.text)
    lines = [
        json.dumps(
            {
                "doc_id": d.doc_id,
                "text": d.text if d.doc_id in kept else None,
                "n_chars": len(d.text),
                "pages": _pages(d.metadata),
                "language": detect_language(d.text[:2000]),
                **_labels(d),
            },
            ensure_ascii=False,
        )
        for d in dataset.documents
    ]
    return write_text_atomic(path, "\n".join(lines) + "\n")


def _document(obj: Any) -> KeptDocument:
    if not isinstance(obj, dict):
        raise TypeError("not an object")
    text = obj.get("text")
    if text is not None and not isinstance(text, str):
        raise TypeError("text is not a string")
    pages = obj.get("pages")
    labels = obj.get("page_labels") or []
    if not isinstance(labels, list) or (labels and len(labels) != len(pages or ())):
        raise TypeError("page_labels is not one label per page")
    return KeptDocument(
        str(obj["doc_id"]),
        text,
        int(obj.get("n_chars", len(text or ""))),
        None if not pages else tuple((int(a), int(b)) for a, b in pages),
        str(obj.get("language") or ""),
        tuple(str(label) for label in labels),
    )


def read_kept_documents(path: Path, inside: Path | None = None) -> list[KeptDocument]:
    """The kept documents of one dataset; [] when the folder kept none (a sweep written
    before documents were kept)."""
    if regular_file(path, inside=inside) is None:
        return []
    return list(jsonl_records(path, _document, CorpusError, "a document", "malformed document"))
