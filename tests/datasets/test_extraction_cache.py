"""The extraction cache when it cannot be written (issue 41, item 11): read, not written,
and said once, like every cache of sweep's (``sweep.core.cachedirs``)."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest

from documents import write_docx, write_html, write_pdf
from sweep.datasets import extraction
from sweep.datasets.loading import load_dataset


@pytest.fixture(autouse=True)
def _fresh_memo():
    extraction._memo.clear()
    yield
    extraction._memo.clear()


def _folder(root: Path) -> Path:
    docs = root / "docs"
    docs.mkdir(parents=True)
    write_pdf(docs / "manual.pdf", [["# Handbook", "Badges are printed at the front desk."]])
    write_html(
        docs / "guide.html", "Office guide", ["# Office guide", "The office opens at 08:00."]
    )
    write_docx(docs / "travel.docx", ["# Travel", "Book EU flights 14 days ahead."])
    (root / "queries.jsonl").write_text(
        '{"query_id": "q1", "query": "Where are badges printed?", '
        '"relevant": [{"doc_id": "manual.pdf", "quote": "Badges are printed at the front desk."}]}\n',
        encoding="utf-8",
    )
    return root


def _warnings(caplog) -> list[str]:
    return [r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING]


def test_a_read_only_cache_is_read_and_says_once_it_is_not_written(tmp_path, caplog):
    from mounts import read_only

    folder = _folder(tmp_path / "set")
    cache = tmp_path / "cache"
    cache.mkdir()
    with read_only(cache), caplog.at_level(logging.WARNING):
        first = load_dataset(folder, cache_dir=cache)  # three files to cache, none written
    assert _warnings(caplog) == [
        f"extraction cache: cannot write {cache} (Read-only file system); "
        "it is read, not written, for the rest of this run"
    ]
    assert list(cache.iterdir()) == []
    # Warm and read-only: every text is read from it, nothing said.
    extraction._memo.clear()
    warm = tmp_path / "warm"
    assert load_dataset(folder, cache_dir=warm) == first
    assert len(list(warm.rglob("*.json"))) == 3
    caplog.clear()
    extraction._memo.clear()
    with read_only(warm), caplog.at_level(logging.WARNING):
        assert load_dataset(folder, cache_dir=warm) == first
    assert _warnings(caplog) == []


def test_a_full_cache_says_once_which_folder_and_why(tmp_path, caplog):
    from mounts import fill, tmpfs

    folder = _folder(tmp_path / "set")
    with tmpfs(tmp_path / "cache", "64k") as cache:
        fill(cache)
        with caplog.at_level(logging.WARNING):
            load_dataset(folder, cache_dir=cache)
        assert not list(cache.rglob("*.tmp"))
    assert _warnings(caplog) == [
        f"extraction cache: cannot write {cache} (No space left on "
        "device); it is read, not written, for the rest of this run"
    ]


# --------------------------------------------------------------------------- damaged entries


def _entry(cache: Path) -> Path:
    (entry,) = cache.rglob("*.json")
    return entry


def test_an_entry_nested_past_the_recursion_limit_is_read_again(tmp_path, caplog):
    # json.loads of "[[[[..." raises RecursionError, which the cache's reader did not expect:
    # a damaged entry gave a traceback instead of a re-read.
    from sweep.datasets.readers.registry import reader_for

    data = b"# Note\n\nBadges are printed at the front desk.\n"
    reader, cache = reader_for("text", "text"), tmp_path / "cache"
    first = extraction.extract(data, "note.md", reader, cache)
    _entry(cache).write_text("[" * 200_000, encoding="utf-8")
    extraction._memo.clear()
    with caplog.at_level(logging.WARNING):
        assert extraction.extract(data, "note.md", reader, cache) == first
    assert "extraction cache: ignoring" in caplog.text and "recursion" in caplog.text
    extraction._memo.clear()
    assert extraction.extract(data, "note.md", reader, cache) == first  # (written again, whole)
    assert _entry(cache).read_text(encoding="utf-8").startswith("{")


def test_lone_surrogates_a_damaged_entry_holds_are_counted_where_they_are(tmp_path, caplog):
    # The count was the text's, else the title's: one in a heading only said "0 lone surrogate
    # code points".
    import json

    from sweep.datasets.readers.registry import reader_for

    data = b"# Note\n\nBadges are printed at the front desk.\n"
    reader, cache = reader_for("text", "text"), tmp_path / "cache"
    extraction.extract(data, "note.md", reader, cache)
    entry = json.loads(_entry(cache).read_text(encoding="utf-8"))
    entry["headings"] = [[1, "No\ud800te", 0]]
    _entry(cache).write_text(json.dumps(entry), encoding="utf-8")  # (\ud800 written escaped)
    extraction._memo.clear()
    with caplog.at_level(logging.WARNING):
        extracted = extraction.extract(data, "note.md", reader, cache)
    assert extracted.headings[0].title == "No\ufffdte"
    assert _warnings(caplog) == [
        "note.md: 1 lone surrogate code point (U+D800 to U+DFFF, no character; "
        "a font's broken Unicode map) read as U+FFFD"
    ]
