"""A dataset's unlabelled questions and their candidate evidence, written as a draft to confirm.

The draft is the questions file again, one JSON line per question in the same
order: a question that had ``relevant`` is copied as it was; every other one gets
``"proposed": [{"doc_id", "quote", "score", "start", "end"}, ...]`` and no
``relevant``, so the loader refuses it until someone has chosen its evidence.
"""

from __future__ import annotations

import errno
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path

from sweep.core.files import write_text_atomic
from sweep.core.text.passages import passages_of
from sweep.core.types import Document
from sweep.datasets.loading import (
    CORPUS_FILE,
    DOCS_DIR,
    QUERIES_FILE,
    DatasetError,
    Problem,
    load_corpus,
)
from sweep.evidence.proposals import propose_from
from sweep.evidence.questions import draft_text, read_questions

__all__ = ["DRAFT_FILE", "EvidenceDraft", "describe_draft", "draft_evidence", "draft_path"]

#: The draft's name in the dataset folder, unless told otherwise.
DRAFT_FILE = "queries.draft.jsonl"


@dataclass(frozen=True)
class EvidenceDraft:
    """What :func:`draft_evidence` did. ``out`` is None when no question needed evidence
    (nothing is written then); ``left_out`` names the questions file when the dataset
    reads it as a document too (it was left out of the candidates)."""

    out: Path | None
    questions: Path
    proposed: int
    labelled: int
    unmatched: tuple[str, ...]
    documents: int
    passages: int
    left_out: str | None = None


def draft_path(dataset: str | Path, out: str | Path | None = None) -> Path:
    """Where the draft goes: ``out``, else ``DATASET/queries.draft.jsonl``."""
    return Path(out).expanduser() if out is not None else Path(dataset).expanduser() / DRAFT_FILE


def draft_evidence(
    dataset: str | Path,
    questions: str | Path | None = None,
    out: str | Path | None = None,
    *,
    top: int = 3,
    overwrite: bool = False,
    reader: Mapping[str, str] | None = None,
    skip_unreadable: bool = False,
    follow_links: bool = False,
    progress: Callable[[str], None] | None = None,
    **limits: float | None,
) -> EvidenceDraft:
    """Propose ``top`` passages of ``dataset``'s documents for each question of
    ``questions`` (default ``DATASET/queries.jsonl``) without evidence, and write the
    draft to :func:`draft_path` atomically. An existing draft is replaced only with
    ``overwrite`` (FileExistsError), the questions file never (``reader``,
    ``skip_unreadable`` and the reading ``limits``: as :func:`load_corpus` reads). Bad input
    raises :class:`DatasetError`."""
    say = progress or (lambda message: None)
    dataset = Path(dataset).expanduser()
    if not dataset.is_dir():
        what = "no such folder" if not dataset.exists() else "not a folder: give the dataset folder"
        raise DatasetError(Problem(str(dataset), None, what))
    questions_file = (
        Path(questions).expanduser() if questions is not None else dataset / QUERIES_FILE
    )
    target = draft_path(dataset, out)
    if target.exists() and _same_file(target, questions_file):
        raise DatasetError(
            Problem(str(target), None, "is the questions file: write the draft to another file")
        )
    if target.exists() and not overwrite:
        raise FileExistsError(errno.EEXIST, "file exists", str(target))
    if questions is None and not questions_file.is_file():
        raise DatasetError(
            Problem(
                str(questions_file),
                None,
                "no such file: give the questions "
                "with --questions FILE (one per line, or JSON lines)",
            )
        )
    asked = read_questions(questions_file)
    todo = [q for q in asked if not q.labelled]
    labelled = len(asked) - len(todo)
    if not todo:
        return EvidenceDraft(None, questions_file, 0, labelled, (), 0, 0)
    say(f"reading the documents of {dataset}")
    documents = load_corpus(
        dataset, reader=reader, skip_unreadable=skip_unreadable, follow_links=follow_links, **limits
    )
    documents, left_out = _without_questions_file(dataset, documents, questions_file)
    if not documents:
        raise DatasetError(Problem(str(dataset), None, "no documents besides the questions file"))
    passages = [p for d in documents for p in passages_of(d)]
    say(f"ranking {len(passages)} passages of {len(documents)} documents for {len(todo)} questions")
    proposals = propose_from(passages, todo, top, texts={d.doc_id: d.text for d in documents})
    proposed = {p.query_id: [c.as_json() for c in p.candidates] for p in proposals}
    target.parent.mkdir(parents=True, exist_ok=True)
    write_text_atomic(target, draft_text(asked, proposed))
    return EvidenceDraft(
        target,
        questions_file,
        len(todo),
        labelled,
        tuple(p.query_id for p in proposals if not p.candidates),
        len(documents),
        len(passages),
        left_out,
    )


def _same_file(a: Path, b: Path) -> bool:
    try:
        return a.samefile(b)
    except OSError:
        return False


def _without_questions_file(
    dataset: Path,
    documents: tuple[Document, ...],
    questions: Path,
) -> tuple[tuple[Document, ...], str | None]:
    """A questions list kept in a dataset whose documents are the folder's own files is
    read as a document too; it is no candidate evidence."""
    if (dataset / CORPUS_FILE).is_file() or (dataset / DOCS_DIR).is_dir():
        return documents, None
    try:
        doc_id = questions.resolve().relative_to(dataset.resolve()).as_posix()
    except ValueError:
        return documents, None
    kept = tuple(d for d in documents if d.doc_id != doc_id)
    return kept, (doc_id if len(kept) < len(documents) else None)


def describe_draft(draft: EvidenceDraft, dataset: str | Path) -> list[str]:
    """The summary to print: what was proposed, where the draft is, and what to do next."""
    if draft.out is None:
        return [
            (
                f"{draft.questions}: all {draft.labelled} questions have evidence already; "
                "nothing to propose (python -m sweep.validate checks them)"
            )
        ]
    plural = "s" if draft.proposed != 1 else ""
    first = (
        f"{draft.out}: proposed evidence for {draft.proposed} question{plural} from "
        f"{draft.passages} passages of {draft.documents} document"
        f"{'s' if draft.documents != 1 else ''}"
    )
    if draft.labelled:
        first += f"; {draft.labelled} already had evidence, copied as they were"
    lines = [first]
    if draft.unmatched:
        shown = ", ".join(draft.unmatched[:5]) + (", ..." if len(draft.unmatched) > 5 else "")
        lines.append(
            f"{len(draft.unmatched)} share no word with any passage ({shown}): "
            'find their evidence by hand, or give "relevant": [] if the documents '
            "do not answer them"
        )
    if draft.left_out:
        lines.append(
            f"note: {draft.left_out} is in the dataset folder, so the sweep reads it as "
            "a document; it was no candidate here, but move it out of the folder"
        )
    queries = Path(dataset) / QUERIES_FILE
    lines.append(
        'Next: in each question, set "keep": true on the right proposals (a quote '
        'may be cut down to the sentence that answers), or give "relevant": [] when '
        "none answers."
    )
    accept = f"python -m sweep.evidence {dataset} --accept" + (
        "" if draft.out == draft_path(dataset) else f" {draft.out}"
    )
    if queries.exists():  # --accept never replaces a file: the questions go beside it
        beside = queries.with_name("queries.accepted.jsonl")
        lines.append(f"Then: {accept} --out {beside}, and move it over {queries} when it is right")
    else:
        lines.append(f"Then: {accept} && python -m sweep.validate {dataset}")
    return lines
