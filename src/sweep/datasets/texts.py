"""Write the text every offset indexes into: one file per document, as the reader made it.

Offsets and quotes refer to the extracted text of a PDF or a web page, not to
the file itself; people label against this text and check here what the parser
did to tables, headers and hyphenation. Each document ``D`` becomes ``OUT/D.txt``
(its exact characters, ``\\r\\n`` kept), and ``OUT/extracted.jsonl`` lists them
with their reader, title, page ranges and page labels. A folder holding that list was
written here and is rewritten; any other non-empty folder is left alone. A doc_id names a
file inside ``OUT`` only: one that would leave it is refused, one too long for a file
name is shortened (the list says which file holds which document).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from sweep.core.errors import BadInput
from sweep.core.files import UnsafeName, path_inside, write_text_atomic
from sweep.core.messages import visible
from sweep.core.types import Document

__all__ = ["INDEX_FILE", "OutputFolderError", "write_texts"]

INDEX_FILE = "extracted.jsonl"


class OutputFolderError(ValueError, BadInput):
    """An output folder that holds files this command did not write, or a document whose
    text cannot be written into it."""


@dataclass(frozen=True)
class Written:
    folder: Path
    files: tuple[Path, ...]


def write_texts(documents: Sequence[Document], out: Path) -> Written:
    """``OUT/<doc_id>.txt`` for every document, and the index. Raises
    :class:`OutputFolderError` for a folder with other files in it, or a document whose
    file cannot be written (named, in one line).

    Every name stays inside ``OUT``: a doc_id that would leave it (``../x``, ``/etc/x``)
    is refused, and a name too long for the file system is shortened (the index says
    which file holds which document). The index is written before the texts, so a run
    that stops half-way leaves a folder the next run recognises and rewrites."""
    out = Path(out).expanduser()
    old = _previous_files(out)
    out.mkdir(parents=True, exist_ok=True)
    paths = _text_paths(documents, out)
    rows = []
    for d, path in zip(documents, paths):
        meta: Mapping = d.metadata if isinstance(d.metadata, Mapping) else {}
        rows.append(
            {
                "doc_id": d.doc_id,
                "file": path.relative_to(out).as_posix(),
                "title": d.title,
                "reader": meta.get("reader"),
                "characters": len(d.text),
                "pages": meta.get("pages", []),
                # (the labels a page judgment may name, where the document prints them)
                **({"page_labels": meta["page_labels"]} if meta.get("page_labels") else {}),
            }
        )
    for stale in old - set(paths):  # a document that is gone since the last run
        if stale.is_file() or stale.is_symlink():
            stale.unlink()
    write_text_atomic(
        out / INDEX_FILE, "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows)
    )
    for d, path in zip(documents, paths):
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            write_text_atomic(path, d.text)
        except OSError as e:
            raise OutputFolderError(
                f"{visible(path)}: cannot write the text of document "
                f"{visible(repr(d.doc_id))}: {e.strerror or e}"
            ) from None
    return Written(out, tuple(paths))


def _text_paths(documents: Sequence[Document], out: Path) -> list[Path]:
    """Where each document's text goes; refuses a doc_id that would leave ``out`` and two
    documents that would share a file."""
    paths: list[Path] = []
    owner: dict[Path, str] = {}
    for d in documents:
        try:
            path = path_inside(out, d.doc_id, ".txt")
        except UnsafeName as e:
            raise OutputFolderError(
                f"{visible(out)}: document {visible(e)}: its text is not written outside the folder"
            ) from None
        if path in owner:
            raise OutputFolderError(
                f"{visible(path)}: documents {visible(repr(owner[path]))} "
                f"and {visible(repr(d.doc_id))} would share this file"
            )
        owner[path] = d.doc_id
        paths.append(path)
    return paths


def _previous_files(out: Path) -> set[Path]:
    """The files an earlier run wrote into ``out``; raises when ``out`` holds anything else."""
    if not out.exists():
        return set()
    if not out.is_dir():
        raise OutputFolderError(f"{visible(out)}: not a folder")
    index = out / INDEX_FILE
    if not index.is_file():
        if any(out.iterdir()):
            raise OutputFolderError(
                f"{visible(out)}: folder is not empty and was not written by "
                "sweep.extract; choose a new or empty folder"
            )
        return set()
    files = set()
    for raw in index.read_text(encoding="utf-8", errors="replace").splitlines():
        try:
            name = json.loads(raw)["file"]
        except (ValueError, KeyError, TypeError):
            continue
        try:  # never outside the folder, whatever the index says
            files.add(path_inside(out, str(name)))
        except UnsafeName:
            continue
    return files
