"""Result files are replaced whole, and nothing but the named file is touched."""

from __future__ import annotations

import os

import pytest

from sweep.core.files import write_text_atomic


def test_a_file_is_replaced_whole_and_a_users_file_beside_it_is_untouched(tmp_path):
    out = tmp_path / "chunks.jsonl"
    mine = tmp_path / "chunks.jsonl.tmp"  # a user's own file with the obvious temporary name
    mine.write_text("my notes\n")
    out.write_text("old\n")
    write_text_atomic(out, "new\n")
    assert out.read_text() == "new\n" and mine.read_text() == "my notes\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["chunks.jsonl", "chunks.jsonl.tmp"]
    mask = os.umask(0)
    os.umask(mask)
    assert out.stat().st_mode & 0o777 == 0o666 & ~mask


def test_a_failed_write_names_the_file_and_leaves_nothing_behind(tmp_path):
    folder = tmp_path / "out"
    folder.mkdir()
    with pytest.raises(OSError) as e:
        write_text_atomic(folder, "text")  # a folder cannot be replaced by a file
    assert e.value.filename == str(folder)
    assert list(tmp_path.iterdir()) == [folder] and not list(folder.iterdir())
