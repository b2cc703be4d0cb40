"""What ``python -m sweep.validate`` does: check a dataset against every rule of its
format and, when it is valid, describe it.

Every problem is printed as ``path:line: message`` on stderr (status 1). A valid
dataset gets the files of ``docs/`` that were not read, how its quotes were located
(each one when asked; a copy of the questions with their offsets when asked), and the
numbers that decide whether chunking will matter on it: document and span lengths in
tokens, and how many evidence spans a fixed-size token chunker would cut in two.
"""

from __future__ import annotations

import logging
import sys
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from sweep.chunking import BaseChunker, build_chunker
from sweep.core.messages import VisibleFormatter, one_line, visible
from sweep.core.types import Dataset
from sweep.datasets.loading import QUERIES_FILE, scan_dataset, skipped_files
from sweep.datasets.located import page_report, quote_report, write_offsets
from sweep.datasets.statistics import compute_statistics, format_statistics
from sweep.pipeline.languages import chars_per_token, corpus_languages, describe_mix

__all__ = ["language_line", "validate"]


@contextmanager
def _collected_warnings() -> Iterator[list[str]]:
    """The loader's log lines, kept instead of logged (names in them escaped, as in a log)."""
    lines: list[str] = []
    handler = logging.Handler()
    shown = VisibleFormatter()
    handler.emit = lambda record: lines.append(shown.format(record))
    loader_log = logging.getLogger("sweep.datasets")
    level, propagate = loader_log.level, loader_log.propagate
    loader_log.setLevel(logging.WARNING)
    loader_log.propagate = False
    loader_log.addHandler(handler)
    try:
        yield lines
    finally:
        loader_log.removeHandler(handler)
        loader_log.setLevel(level)
        loader_log.propagate = propagate


def _token_chunker(size: int) -> BaseChunker:
    return build_chunker(strategy="token", size=size, overlap=0)


def validate(
    directory: Path,
    *,
    split: str = "test",
    reading: Mapping[str, Any] | None = None,
    each_quote: bool = False,
    offsets_to: Path | None = None,
) -> int:
    """Check the dataset in ``directory`` and print what was found; the exit status (0 valid,
    1 not). ``offsets_to``: a new file for a copy of the questions whose quotes carry their
    offsets. ``reading``: the document readers' options (``sweep.cli.argtypes``)."""
    # The loader's warnings are printed with the result instead; the files it skipped
    # by extension are said once, by skipped_files below.
    with _collected_warnings() as warnings:
        dataset, problems = scan_dataset(directory, split=split, **(reading or {}))
    if problems:
        for problem in problems:
            print(problem, file=sys.stderr)
        if len(problems) > 1:
            print(f"{len(problems)} problems", file=sys.stderr)
        return 1
    assert dataset is not None

    try:
        stats = compute_statistics(dataset, make_chunker=_token_chunker)
    except (ImportError, ValueError) as e:
        # Validation passed; only the statistics could not be computed.
        print(
            f"{visible(directory)}: valid, but statistics failed: {one_line(e, squeeze=False)}",
            file=sys.stderr,
        )
        return 1
    splits = f", split {split}" if (directory.expanduser() / "qrels").is_dir() else ""
    print(f"{visible(directory)}: valid ({visible(dataset.name)}{splits})")
    skipped = skipped_files(directory, follow_links=bool((reading or {}).get("follow_links")))
    if skipped:
        print(skipped.summary())
    for line in warnings:
        if not skipped or line != skipped.summary():
            print(one_line(line, squeeze=False))
    queries_file = directory.expanduser() / QUERIES_FILE
    for line in quote_report(dataset, queries_file, each=each_quote):
        print(one_line(line, squeeze=False))  # query ids and file names are data
    for line in page_report(dataset):
        print(line)
    if offsets_to is not None:
        added = write_offsets(dataset, queries_file, offsets_to)
        print(f"{visible(offsets_to)}: {added} quotes written with their offsets")
    print(language_line(dataset))
    print()
    print(format_statistics(stats))
    return 0


def language_line(dataset: Dataset) -> str:
    """``languages: documents ja 93% en 7% · questions ja 100% · characters per cl100k
    token: ja 1.05, en 4.3``: what model the corpus needs, and how far sizes in tokens
    tuned on English carry to it."""
    languages = corpus_languages(dataset)
    ratios = chars_per_token(d.text for d in dataset.documents)
    shown = ", ".join(f"{lang} {r:.{2 if r < 10 else 1}f}" for lang, r in ratios.items())
    return (
        f"languages: documents {describe_mix(languages.documents, percent=True)} · questions "
        f"{describe_mix(languages.questions, percent=True)} · characters per cl100k token: "
        f"{shown or '–'}"
    )
