"""Result files are replaced whole, and nothing but the named file is touched."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from sweep.core.files import NotRegularFile, regular_file, write_text_atomic


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


# -- only regular files are replaced or read -----------------------------------------------


def _special_files(folder):
    """A FIFO, a socket, a character device (when this user may make one) and a folder."""
    import socket
    import stat

    made = {"fifo": folder / "fifo"}
    os.mkfifo(made["fifo"])
    made["socket"] = folder / "sock"
    sock = socket.socket(socket.AF_UNIX)
    sock.bind(str(made["socket"]))
    sock.close()
    try:  # /dev/null's numbers: a harmless device
        os.mknod(folder / "null", 0o666 | stat.S_IFCHR, os.makedev(1, 3))
        made["device"] = folder / "null"
    except PermissionError:
        pass
    made["folder"] = folder / "dir"
    made["folder"].mkdir()
    return made


def test_only_a_regular_file_is_replaced(tmp_path):
    # `sweep.export --force --out /dev/...` or a FIFO named as the output: refused, left as it was.
    from sweep.core.files import NotRegularFile

    made = _special_files(tmp_path)
    for kind, path in made.items():
        before = path.lstat()
        with pytest.raises(NotRegularFile) as e:
            write_text_atomic(path, "text")
        assert e.value.filename == str(path) and "regular file" in e.value.strerror, kind
        after = path.lstat()
        assert (after.st_mode, after.st_ino) == (before.st_mode, before.st_ino), kind
    link = tmp_path / "link-to-fifo"
    link.symlink_to(made["fifo"])
    with pytest.raises(NotRegularFile):
        write_text_atomic(link, "text")
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(
        [p.name for p in made.values()] + [link.name]
    )  # no temporary file left
    if "device" not in made:
        pytest.skip("os.mknod is not permitted here: the device case was not run")


def test_reading_a_fifo_is_refused_without_blocking(tmp_path):
    # Nothing ever writes to this FIFO: a reader that opened it for reading would wait forever.
    # In a subprocess with a timeout, so that a regression fails instead of hanging the suite.
    import subprocess
    import sys

    fifo = tmp_path / "queries.jsonl"
    os.mkfifo(fifo)
    code = (
        "import sys\nfrom sweep.core.files import NotRegularFile, read_regular_bytes\n"
        "try:\n    read_regular_bytes(sys.argv[1])\nexcept NotRegularFile as e:\n"
        "    print(e.strerror)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code, str(fifo)], capture_output=True, text=True, timeout=60
    )
    assert done.stdout.strip() == "is a FIFO, not a regular file", done.stderr
    regular = tmp_path / "a.txt"
    regular.write_bytes(b"a\r\nb")
    from sweep.core.files import read_regular_bytes

    assert read_regular_bytes(regular) == b"a\r\nb"


# -- names from data stay inside their folder ----------------------------------------------


@pytest.mark.parametrize(
    "name",
    [
        "../victim",
        "/etc/victim",
        "a/../../victim",
        "..\\victim",
        "a\x00b",
        "a\nb",
        "\x1b[2Jx",
        "C:\\victim",
        "..",
        # bidi controls: a file shown otherwise than it is named
        "report_\u202etxt.exe",
        "a\u2066b",
        "a\u200fb",
        "a\u061cb",
    ],
)
def test_a_name_that_could_leave_the_folder_is_refused(tmp_path, name):
    from sweep.core.files import UnsafeName, name_problem, path_inside

    assert name_problem(name) is not None
    with pytest.raises(UnsafeName):
        path_inside(tmp_path / "out", name, ".txt")


@pytest.mark.parametrize(
    ("name", "relative"),
    [
        ("a/b.md", "a/b.md.txt"),
        ("https://host/page", "https:/host/page.txt"),
        ("notes..md", "notes..md.txt"),
        ("x:1", "x:1.txt"),
    ],
)
def test_an_ordinary_name_is_a_file_inside_the_folder(tmp_path, name, relative):
    from sweep.core.files import name_problem, path_inside

    assert name_problem(name) is None
    assert path_inside(tmp_path, name, ".txt") == tmp_path / relative


def test_a_link_inside_the_folder_does_not_lead_out_of_it(tmp_path):
    from sweep.core.files import UnsafeName, path_inside

    out, elsewhere = tmp_path / "out", tmp_path / "elsewhere"
    out.mkdir()
    elsewhere.mkdir()
    (out / "sub").symlink_to(elsewhere)
    with pytest.raises(UnsafeName, match="link"):
        path_inside(out, "sub/victim", ".txt")


def test_a_name_too_long_for_a_file_is_shortened_and_written(tmp_path):
    # 253 characters plus ".txt" is past the 255 bytes a file name may have.
    from sweep.core.files import NAME_MAX_BYTES, path_inside

    long_a, long_b = "a" * 253, "a" * 252 + "b"
    paths = [path_inside(tmp_path, name, ".txt") for name in (long_a, long_b, "é" * 200)]
    assert len(set(paths)) == 3  # two names with one start never share a file
    for path in paths:
        assert len(path.name.encode()) <= NAME_MAX_BYTES and path.name.endswith(".txt")
        write_text_atomic(path, "text")
        assert path.read_text() == "text"
    assert sorted(tmp_path.iterdir()) == sorted(paths)


def test_regular_file_names_anything_else_and_opens_nothing(tmp_path):
    import socket

    (tmp_path / "plain").write_text("x")
    (tmp_path / "link").symlink_to(tmp_path / "plain")
    assert regular_file(tmp_path / "plain") == tmp_path / "plain"
    assert regular_file(tmp_path / "link") == tmp_path / "link"
    assert regular_file(tmp_path / "missing") is None
    os.mkfifo(tmp_path / "fifo")
    (tmp_path / "folder").mkdir()
    server = socket.socket(socket.AF_UNIX)
    server.bind(str(tmp_path / "sock"))
    (tmp_path / "loop").symlink_to(tmp_path / "loop")
    for name, kind in (
        ("fifo", "is a FIFO"),
        ("folder", "is a folder"),
        ("sock", "is a socket"),
        ("loop", "cannot be read"),
    ):
        with pytest.raises(NotRegularFile) as e:
            regular_file(tmp_path / name)
        # an OSError for the commands that map those, a ValueError for the report's
        assert isinstance(e.value, OSError) and isinstance(e.value, ValueError)
        assert str(e.value).startswith(f"{tmp_path / name}: {kind}")
    server.close()
    with pytest.raises(NotRegularFile, match="is a character device"):
        regular_file(Path("/dev/zero"))


# -- a sweep folder's files stay inside it -------------------------------------------------


def _sweep_with_links(tmp_path):
    """A sweep folder with a job folder, and a file outside it that links point at."""
    sweep, outside = tmp_path / "sweep", tmp_path / "outside"
    (sweep / "0").mkdir(parents=True)
    outside.mkdir()
    (outside / "secret.csv").write_text("OPENAI_API_KEY=sk-secret\n")
    (sweep / "0" / "per_query.csv").write_text("query_id,level,metric,value\n")
    return sweep, outside


def test_a_link_leading_out_of_the_sweep_folder_is_refused_wherever_it_is(tmp_path):
    sweep, outside = _sweep_with_links(tmp_path)
    (sweep / "0" / "hits.jsonl").symlink_to(outside / "secret.csv")  # in the file's place
    (sweep / "0" / "gone.csv").symlink_to(outside / "missing.csv")  # dangling, out
    (sweep / "1").symlink_to(outside)  # in a job folder's place
    (sweep / "1b").symlink_to(outside, target_is_directory=True)
    for path, why in (
        (sweep / "0" / "hits.jsonl", "is a link leading out of the sweep folder"),
        (sweep / "0" / "gone.csv", "is a link leading out of the sweep folder"),
        (sweep / "1" / "secret.csv", "leads out of the sweep folder through a link"),
        (sweep / "1b" / "missing.csv", "leads out of the sweep folder through a link"),
    ):
        with pytest.raises(NotRegularFile) as e:
            regular_file(path, inside=sweep)
        assert str(e.value) == f"{path}: {why}"
        assert isinstance(e.value, OSError) and isinstance(e.value, ValueError)
    # Without the folder to stay in, a link is followed as before.
    assert regular_file(sweep / "0" / "hits.jsonl") == sweep / "0" / "hits.jsonl"


def test_links_inside_the_sweep_folder_and_a_link_to_the_folder_itself_are_fine(tmp_path):
    sweep, _ = _sweep_with_links(tmp_path)
    (sweep / "0" / "alias.csv").symlink_to("per_query.csv")  # a link that stays inside
    (sweep / "2").symlink_to("0")
    latest = tmp_path / "latest"  # outputs/latest -> the sweep: the folder the user named
    latest.symlink_to(sweep)
    for path, inside in (
        (sweep / "0" / "alias.csv", sweep),
        (sweep / "2" / "per_query.csv", sweep),
        (latest / "0" / "per_query.csv", latest),
        (latest / "0" / "alias.csv", latest),
    ):
        assert regular_file(path, inside=inside) == path
    assert regular_file(latest / "0" / "missing.csv", inside=latest) is None


def test_a_folder_sweep_writes_into_is_its_own_or_refused_and_left_as_it_is(tmp_path):
    from sweep.core.files import folder_inside

    sweep, outside = _sweep_with_links(tmp_path)
    assert folder_inside(sweep / "plots", sweep) == sweep / "plots"  # made
    assert (sweep / "plots").is_dir() and not (sweep / "plots").is_symlink()
    assert folder_inside(sweep / "plots", sweep) == sweep / "plots"  # there already: fine
    assert folder_inside(sweep / "answers", sweep, make=False) == sweep / "answers"
    assert not (sweep / "answers").exists()  # only looked at
    (sweep / "answers").symlink_to(outside)  # a link to a folder elsewhere
    (sweep / "inner").symlink_to(sweep / "0")  # even one to a folder inside
    (sweep / "dangling").symlink_to(tmp_path / "nowhere")
    (sweep / "file").write_text("mine")
    for name, kind in (
        ("answers", "a symbolic link"),
        ("inner", "a symbolic link"),
        ("dangling", "a symbolic link"),
        ("file", "a regular file"),
    ):
        for make in (True, False):
            with pytest.raises(NotRegularFile) as e:
                folder_inside(sweep / name / "sub", sweep, make=make)
            assert str(e.value).startswith(f"{sweep / name}: is {kind}, not a folder")
    assert (sweep / "answers").is_symlink() and sorted(os.listdir(outside)) == ["secret.csv"]
    assert not (tmp_path / "nowhere").exists() and (sweep / "file").read_text() == "mine"


def test_write_atomic_writes_bytes_whole_through_a_new_file(tmp_path):
    from sweep.core.files import write_atomic

    out = tmp_path / "picture.png"
    assert write_atomic(out, lambda f: f.write(b"\x89PNG")) == out
    assert out.read_bytes() == b"\x89PNG"

    def fails(f):
        f.write(b"half")
        raise OSError(28, "No space left on device")

    with pytest.raises(OSError) as e:
        write_atomic(out, fails)
    assert e.value.filename == str(out) and out.read_bytes() == b"\x89PNG"
    assert os.listdir(tmp_path) == ["picture.png"]  # no temporary left holding space


def test_a_lock_file_that_is_a_link_or_special_is_refused_and_never_followed(tmp_path):
    from sweep.core.folderlock import LOCK_NAME, locked

    target = tmp_path / "created_by_lock"
    folder = tmp_path / "sweep"
    folder.mkdir()
    (folder / LOCK_NAME).symlink_to(target)  # dangling: opened, it made the target outside
    with (
        pytest.raises(NotRegularFile, match=f"{LOCK_NAME}: is a symbolic link, not a regular file"),
        locked(folder),
    ):
        pass
    assert not target.exists() and (folder / LOCK_NAME).is_symlink()
    (folder / LOCK_NAME).unlink()
    os.mkfifo(folder / LOCK_NAME)
    with pytest.raises(NotRegularFile, match="is a FIFO, not a regular file"), locked(folder):
        pass
    (folder / LOCK_NAME).unlink()
    with locked(folder):  # absent: made, a regular file of its own
        assert (folder / LOCK_NAME).is_file() and not (folder / LOCK_NAME).is_symlink()
