"""Write the text every offset indexes into: one file per document, as the reader made it.

Offsets and quotes refer to the extracted text of a PDF or a web page, not to
the file itself; people label against this text and check here what the parser
did to tables, headers and hyphenation. Each document ``D`` becomes ``OUT/D.txt``
(its exact characters, ``\\r\\n`` kept), and ``OUT/extracted.jsonl`` lists them
with their reader, title and page ranges. A folder holding that list was written
here and is rewritten; any other non-empty folder is left alone.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Mapping, Sequence

from sweep.core.files import write_text_atomic
from sweep.core.types import Document

__all__ = ["INDEX_FILE", "OutputFolderError", "write_texts"]

INDEX_FILE = "extracted.jsonl"


class OutputFolderError(ValueError):
    """An output folder that holds files this command did not write."""


@dataclass(frozen=True)
class Written:
    folder: Path
    files: tuple[Path, ...]


def write_texts(documents: Sequence[Document], out: Path) -> Written:
    """``OUT/<doc_id>.txt`` for every document, and the index. Raises
    :class:`OutputFolderError` for a folder with other files in it."""
    out = Path(out).expanduser()
    old = _previous_files(out)
    out.mkdir(parents=True, exist_ok=True)
    files = []
    rows = []
    for d in documents:
        path = out / f"{d.doc_id}.txt"
        path.parent.mkdir(parents=True, exist_ok=True)
        write_text_atomic(path, d.text)
        files.append(path)
        meta: Mapping = d.metadata if isinstance(d.metadata, Mapping) else {}
        rows.append({"doc_id": d.doc_id, "file": path.relative_to(out).as_posix(),
                     "title": d.title, "reader": meta.get("reader"),
                     "characters": len(d.text), "pages": meta.get("pages", [])})
    for stale in old - set(files):  # a document that is gone since the last run
        stale.unlink(missing_ok=True)
    write_text_atomic(out / INDEX_FILE, "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows))
    return Written(out, tuple(files))


def _previous_files(out: Path) -> set[Path]:
    """The files an earlier run wrote into ``out``; raises when ``out`` holds anything else."""
    if not out.exists():
        return set()
    if not out.is_dir():
        raise OutputFolderError(f"{out}: not a folder")
    index = out / INDEX_FILE
    if not index.is_file():
        if any(out.iterdir()):
            raise OutputFolderError(f"{out}: folder is not empty and was not written by "
                                    "sweep.extract; choose a new or empty folder")
        return set()
    files = set()
    for raw in index.read_text(encoding="utf-8").splitlines():
        try:
            name = json.loads(raw)["file"]
        except (ValueError, KeyError, TypeError):
            continue
        path = (out / name).resolve()
        if out.resolve() in path.parents:  # never outside the folder, whatever the index says
            files.add(out / name)
    return files
