"""Writing result files so that a reader never sees half of one, reading only regular files
(and, in a sweep folder, only files inside it), writing only into folders of sweep's own,
and naming a file after data (a doc_id) without ever leaving its folder."""

from __future__ import annotations

import errno
import hashlib
import json
import os
import re
import stat
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path, PurePosixPath, PureWindowsPath
from typing import Any, BinaryIO, TypeVar

from sweep.core.errors import BadInput

__all__ = [
    "NAME_MAX_BYTES",
    "NotRegularFile",
    "UnsafeName",
    "file_kind",
    "folder_inside",
    "jsonl_records",
    "name_problem",
    "not_utf8",
    "path_inside",
    "read_regular_bytes",
    "regular_file",
    "write_atomic",
    "write_text_atomic",
]

_T = TypeVar("_T")

#: The longest file name (one path segment, in UTF-8 bytes) Linux, macOS and Windows take.
NAME_MAX_BYTES = 255

# NUL and the other control characters (C0, DEL, C1): a doc_id holding one cannot be a
# file name everywhere, and would print as a line break or a terminal escape.
_CONTROL = re.compile("[\x00-\x1f\x7f-\x9f]")
# The bidi controls (marks, embeddings, overrides, isolates): a file name holding one shows
# otherwise than it is (``txt.exe`` read backwards as ``exe.txt``) in a listing or a message.
_BIDI = re.compile("[\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]")


class NotRegularFile(OSError, ValueError, BadInput):
    """A path that is not what sweep may read or write there: a folder, FIFO, socket or
    device where a regular file was expected, a file of a sweep folder that leads out of it
    through a link, a link or a file where sweep writes into a folder of its own.

    Both an ``OSError`` and a ``ValueError``: every command already turns one or the other
    into its one-line bad-input error, wherever it reads.
    """

    def __str__(self) -> str:
        return f"{self.filename}: {self.strerror}" if self.filename else str(self.strerror)


class UnsafeName(ValueError, BadInput):
    """A name from data (a doc_id) that would leave the folder a file is written into."""


def file_kind(mode: int) -> str:
    """What a ``st_mode`` is, for a message: ``a FIFO``, ``a folder``, ``a regular file``."""
    for test, kind in (
        (stat.S_ISREG, "a regular file"),
        (stat.S_ISDIR, "a folder"),
        (stat.S_ISFIFO, "a FIFO"),
        (stat.S_ISSOCK, "a socket"),
        (stat.S_ISCHR, "a character device"),
        (stat.S_ISBLK, "a block device"),
        (stat.S_ISLNK, "a symbolic link"),
    ):
        if test(mode):
            return kind
    return "not a regular file"


def name_problem(name: str) -> str | None:
    """Why ``name`` (a doc_id) cannot name a file under a folder, None when it can: it is
    absolute, has a ``..`` segment (``/`` or ``\\`` separated), or holds NUL, another
    control character or a bidi control (U+202E and its kin, which make a name show
    otherwise than it is). ``a/b.md`` and ``https://host/page`` are fine."""
    if _CONTROL.search(name):
        return "holds a control character (NUL, a line break, an escape, ...)"
    if _BIDI.search(name):
        return (
            "holds a bidirectional control character (U+200E, U+200F, U+202A-U+202E, "
            "U+2066-U+2069 or U+061C), which shows a name otherwise than it is"
        )
    if (
        PurePosixPath(name).is_absolute()
        or PureWindowsPath(name).is_absolute()
        or name.startswith("\\")
    ):
        return "is an absolute path"
    if ".." in re.split(r"[/\\]", name):
        return "has a '..' segment"
    return None


def path_inside(folder: Path, name: str, suffix: str = "") -> Path:
    """``folder/<name><suffix>``, where ``name`` comes from data: raises :class:`UnsafeName`
    when it could leave ``folder`` (:func:`name_problem`, or a link on the way out). A segment
    longer than a file name may be is shortened to its start and a hash of it, so every name
    can be written and two long names never share a file."""
    why = name_problem(name)
    if why is not None:
        raise UnsafeName(f"{name!r} {why}")
    parts = [p for p in name.split("/") if p not in ("", ".")]  # doc_ids use "/"
    if not parts:
        raise UnsafeName(f"{name!r} names no file")
    parts[-1] += suffix
    path = Path(folder).joinpath(
        *(_fitting(p, suffix if i == len(parts) - 1 else "") for i, p in enumerate(parts))
    )
    # A link inside the folder (sub -> /etc) would lead outside it: resolve and check.
    root = Path(folder).resolve()
    if root not in path.resolve().parents:
        raise UnsafeName(f"{name!r} leads outside {folder} (through a link)")
    return path


def _fitting(part: str, suffix: str) -> str:
    """``part`` when it fits a file name, else its start, ``~`` and a hash of all of it."""
    if len(part.encode("utf-8", "surrogatepass")) <= NAME_MAX_BYTES:
        return part
    digest = hashlib.sha256(part.encode("utf-8", "surrogatepass")).hexdigest()[:16]
    return f"{_cut(part, NAME_MAX_BYTES - len(f'~{digest}{suffix}'.encode()))}~{digest}{suffix}"


def _cut(name: str, limit: int) -> str:
    """The longest start of ``name`` that is at most ``limit`` bytes of UTF-8."""
    return name.encode("utf-8", "surrogatepass")[:limit].decode("utf-8", "ignore")


def regular_file(path: Path, inside: Path | None = None) -> Path | None:
    """``path`` when it is a regular file (or a link to one), None when nothing is there;
    a FIFO, socket, device or folder is a :class:`NotRegularFile` naming it. The gate
    before a file of a sweep folder (input from anyone) is opened: a FIFO there would
    block a command forever, a device be read without end.

    ``inside`` is the sweep folder the file belongs to: a path that resolves outside it (a
    link in the file's place, or in a job folder's place, leading out) is refused too,
    whether or not its target exists, and nothing of the target is read: a link to
    ``/proc/self/environ`` must not show the environment in an error. The folder itself
    may be reached through a link the user named (``outputs/latest``): both are compared
    resolved."""
    if inside is not None:
        real, root = os.path.realpath(path), os.path.realpath(inside)
        if os.path.commonpath([real, root]) != root or real == root:
            why = (
                "is a link leading out of the sweep folder"
                if os.path.islink(path)
                else "leads out of the sweep folder through a link"
            )
            raise NotRegularFile(errno.EXDEV, why, str(path))
    try:
        mode = os.stat(path).st_mode
    except FileNotFoundError:
        return None
    except OSError as e:  # a link loop, a name too long: named, not a traceback
        raise NotRegularFile(e.errno, f"cannot be read ({e.strerror})", str(path)) from None
    if stat.S_ISREG(mode):
        return path
    raise _not_regular(path, mode)


def folder_inside(folder: Path, inside: Path, *, make: bool = True) -> Path:
    """``folder`` (``plots/``, ``answers/``), a folder of the sweep folder ``inside`` that
    sweep writes into, made when absent (``make=False``: only checked, for a command that
    must refuse before it does any work). Each folder on the way from ``inside`` must be a
    real folder: a link (wherever it leads) or anything else in its place is a
    :class:`NotRegularFile` and stays as it is, never followed and never deleted, so that
    nothing is written outside the sweep folder nor into a folder sweep did not make."""
    folder, inside = Path(folder), Path(inside)
    current = inside
    for part in folder.relative_to(inside).parts:
        current = current / part
        try:
            if make:
                os.mkdir(current)
            mode = os.lstat(current).st_mode
        except FileExistsError:  # a folder of an earlier run, or whatever else is there
            mode = os.lstat(current).st_mode
        except FileNotFoundError:  # only looked at (make=False): made when written
            return folder
        except OSError as e:
            raise OSError(e.errno, e.strerror, str(current)) from None
        if not stat.S_ISDIR(mode):
            raise NotRegularFile(
                errno.ENOTDIR,
                f"is {file_kind(mode)}, not a folder: sweep "
                "writes only into a folder of its own there, and leaves this "
                "as it is",
                str(current),
            )
    return folder


def read_regular_bytes(path: Path | str, limit: int | None = None) -> bytes:
    """The bytes of ``path`` when it is a regular file (a link to one is followed), at most
    ``limit`` of them. A FIFO, socket, device or folder raises :class:`NotRegularFile`
    without blocking: the file is opened non-blocking and checked before anything is read."""
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0)
    try:
        fd = os.open(path, flags)
    except IsADirectoryError:
        raise NotRegularFile(errno.EISDIR, "is a folder, not a regular file", str(path)) from None
    with os.fdopen(fd, "rb") as f:
        mode = os.fstat(fd).st_mode
        if not stat.S_ISREG(mode):
            raise _not_regular(path, mode)
        if limit is None:
            return f.read()
        # Python sets aside what read() asks for before reading (a limit of a terabyte failed
        # with MemoryError): ask for what the file holds and a byte more, to see it grew,
        # then for any more a megabyte at a time.
        data = f.read(min(limit, os.fstat(fd).st_size + 1))
        while len(data) < limit and (more := f.read(min(limit - len(data), 1 << 20))):
            data += more
        return data


def not_utf8(path: Path | str, data: bytes | None = None) -> str:
    """``path:3: not UTF-8 text (a byte 0xff)``: where a file stops being UTF-8, the one
    way every reader says it. ``data`` is the file's bytes (read again when not given: a
    decoder reading in blocks counts from its own block)."""
    data = read_regular_bytes(path) if data is None else data
    try:
        data.decode("utf-8")
    except UnicodeDecodeError as e:
        line = data.count(b"\n", 0, e.start) + 1
        return f"{path}:{line}: not UTF-8 text (a byte 0x{data[e.start]:02x})"
    return f"{path}: not UTF-8 text"


def jsonl_records(
    path: Path, parse: Callable[[Any], _T], error: type[Exception], what: str, malformed: str
) -> Iterator[_T]:
    """Each non-blank line of the JSON Lines file ``path`` (of a sweep folder: input from
    anyone), parsed by ``parse``. A line that is not UTF-8, not JSON, nested thousands deep
    (never ``what``: damage), missing a key or otherwise not one (``malformed``) raises
    ``error`` naming the file, the line and the problem. ``path`` must be a regular file
    (:func:`regular_file` first)."""
    with open(path, "rb") as f:  # decoded line by line: an error names its line
        for line, raw in enumerate(f, start=1):
            try:
                text = raw.decode("utf-8")
            except UnicodeDecodeError:
                raise error(not_utf8(path)) from None
            if not text.strip():
                continue
            try:
                yield parse(json.loads(text))
            except json.JSONDecodeError as e:
                raise error(f"{path}:{line}: bad JSON: {e.msg}") from None
            except RecursionError:
                raise error(f"{path}:{line}: nested too deeply to be {what}") from None
            except KeyError as e:
                raise error(f"{path}:{line}: missing key {e.args[0]!r}") from None
            except (TypeError, ValueError, AttributeError) as e:
                raise error(f"{path}:{line}: {malformed}: {e}") from None


def write_text_atomic(path: Path, text: str) -> Path:
    """Write ``text`` (UTF-8) as :func:`write_atomic` does. A lone surrogate (a folder
    name that is not UTF-8, as Python decodes one) has no UTF-8: it is written as its
    code, ``\\udcff``, as a message shows it."""
    return write_atomic(path, lambda f: f.write(text.encode("utf-8", "backslashreplace")))


def write_atomic(path: Path, write: Callable[[BinaryIO], object]) -> Path:
    """Call ``write`` with a temporary file beside ``path`` (open for binary writing), then
    rename it into place.

    A job killed mid-write, or a report rebuilt while a sweep is running,
    then finds either the old file or the new one, never a truncated one. The
    temporary file is created new under a unique name (``mkstemp``: never a file or
    link that was there, so no file of the user's is ever overwritten but ``path``,
    and a link planted under a guessable name leads nowhere) and is gone afterwards,
    also when the write fails; an error names ``path``. Only a regular file is
    replaced: a folder, FIFO, socket or device at ``path`` raises
    :class:`NotRegularFile` and stays as it is (a link is replaced, never followed).
    """
    path = Path(path)
    _refuse_special(path)
    try:
        fd, tmp = tempfile.mkstemp(
            dir=path.parent, prefix=f".{_cut(path.name, 200)}.", suffix=".tmp"
        )
    except OSError as e:
        raise OSError(e.errno, e.strerror, str(path)) from None
    try:
        with os.fdopen(fd, "wb") as f:
            write(f)
        os.chmod(tmp, _NEW_FILE_MODE)  # as an ordinary new file, not mkstemp's 0600
        os.replace(tmp, path)
    except OSError as e:
        raise OSError(e.errno, e.strerror, str(path)) from None
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)
    return path


def _refuse_special(path: Path) -> None:
    """A device node or FIFO a user named as the output (``--force``) is not a file to replace."""
    try:
        mode = path.stat().st_mode
    except OSError:  # absent (or a dangling link, which is replaced like a file)
        return
    if not stat.S_ISREG(mode):
        raise _not_regular(path, mode, ": only a regular file is replaced")


def _not_regular(path: Path | str, mode: int, why: str = ", not a regular file") -> NotRegularFile:
    """The one error for a path that is not a regular file, whichever check found it."""
    return NotRegularFile(
        errno.EISDIR if stat.S_ISDIR(mode) else errno.EINVAL,
        f"is {file_kind(mode)}{why}",
        str(path),
    )


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


_NEW_FILE_MODE = 0o666 & ~_umask()
