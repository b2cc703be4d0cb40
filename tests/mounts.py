"""Real filesystems for fault tests: a small tmpfs that fills up, a read-only mount.

As root, ``chmod`` makes nothing read-only and a quota is not at hand, so a full disk is a
tmpfs of a few kilobytes and a read-only cache a read-only bind mount. Where mounting is
not permitted (not root, a container without CAP_SYS_ADMIN) the test is skipped, saying
why; every mount is unmounted when the test ends, whatever happened.
"""

from __future__ import annotations

import errno
import os
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

__all__ = ["fill", "read_only", "tmpfs"]


#: What mount says where it may not mount (not root, a container without CAP_SYS_ADMIN).
_NOT_PERMITTED = ("permission denied", "not permitted", "only root", "must be superuser")


def _mount(*args: str) -> None:
    if os.geteuid() != 0:
        pytest.skip("mounting a tmpfs or a read-only bind needs root")
    proc = subprocess.run(["mount", *args], capture_output=True, text=True)
    if proc.returncode != 0:
        if any(words in proc.stderr.lower() for words in _NOT_PERMITTED):
            pytest.skip(f"mount is not permitted here: {proc.stderr.strip()}")
        pytest.fail(f"mount {' '.join(args)}: {proc.stderr.strip() or proc.returncode}")


def _unmount(path: Path) -> None:
    # Lazy: a file a failed test left open must not keep the mount (and the next test) busy.
    subprocess.run(["umount", "-l", str(path)], capture_output=True)


@contextmanager
def tmpfs(path: Path, size: str) -> Iterator[Path]:
    """A tmpfs of ``size`` (``64k``, ``1m``) mounted on ``path`` (made if missing)."""
    path.mkdir(parents=True, exist_ok=True)
    _mount("-t", "tmpfs", "-o", f"size={size},mode=0755", "tmpfs", str(path))
    try:
        yield path
    finally:
        _unmount(path)


@contextmanager
def read_only(path: Path) -> Iterator[Path]:
    """``path`` (a folder) mounted read-only on itself: reads work, every write fails with
    EROFS, for root too."""
    assert path.is_dir(), f"{path}: no folder to mount read-only"
    _mount("--bind", str(path), str(path))
    try:
        proc = subprocess.run(
            ["mount", "-o", "remount,bind,ro", str(path)], capture_output=True, text=True
        )
        if proc.returncode != 0:
            if any(words in proc.stderr.lower() for words in _NOT_PERMITTED):
                pytest.skip(f"a read-only remount is not permitted here: {proc.stderr.strip()}")
            pytest.fail(f"mount -o remount,bind,ro {path}: {proc.stderr.strip()}")
        probe = path / ".write-probe"
        try:
            probe.write_bytes(b"")
        except OSError as e:
            assert e.errno == errno.EROFS, e
        else:
            probe.unlink()
            pytest.skip(f"{path} is still writable after a read-only remount")
        yield path
    finally:
        _unmount(path)


def fill(folder: Path, leave: int = 0) -> Path:
    """Fill the filesystem of ``folder`` with one file until at most ``leave`` bytes are
    free; the file."""
    filler = folder / "filler"
    with open(filler, "wb", buffering=0) as f:
        try:
            while _free(folder) > leave:
                f.write(b"\0" * min(65536, _free(folder) - leave))
        except OSError as e:
            assert e.errno == errno.ENOSPC, e
    return filler


def _free(folder: Path) -> int:
    st = os.statvfs(folder)
    return st.f_bavail * st.f_frsize
