"""A cache that cannot be written is read, not written, and said once (issue 41, item 11)."""

from __future__ import annotations

import logging

from sweep.core import cachedirs


def _warnings(caplog) -> list[str]:
    return [r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING]


def test_a_read_only_mount_is_seen_before_any_write_and_said_once(tmp_path, caplog):
    from mounts import read_only

    root = tmp_path / "cache"
    (root / "figures").mkdir(parents=True)
    assert cachedirs.check_writable("embedding", root) and not cachedirs.read_only(root)
    with read_only(root), caplog.at_level(logging.WARNING):
        assert not cachedirs.check_writable("embedding", root)
        assert not cachedirs.check_writable("embedding", root)
        # What is kept inside it is read-only too, and not said again.
        assert cachedirs.read_only(root / "figures")
        cachedirs.note_unwritable("figure", root / "figures", OSError(30, "Read-only file system"))
    assert _warnings(caplog) == [
        f"embedding cache: cannot write {root} (Read-only file system); "
        "it is read, not written, for the rest of this run"
    ]
    assert not cachedirs.read_only(tmp_path / "another cache")


def test_a_folder_that_does_not_exist_yet_is_writable_until_a_write_fails(tmp_path, caplog):
    folder = tmp_path / "new" / "cache"
    assert cachedirs.check_writable("llm", folder)
    with caplog.at_level(logging.WARNING):
        cachedirs.note_unwritable("llm", folder, OSError(28, "No space left on device", "x"))
        cachedirs.note_unwritable("llm", folder, OSError(28, "No space left on device", "y"))
    assert _warnings(caplog) == [
        f"llm cache: cannot write {folder} (No space left on device); "
        "it is read, not written, for the rest of this run"
    ]
    assert not cachedirs.check_writable("llm", folder)
