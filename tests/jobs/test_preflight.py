"""``sweep.jobs.preflight``: the grid, the folder, and the checks before the first job."""

import pytest

from sweep.core.progress import job_label, set_total
from sweep.jobs import preflight
from sweep.jobs.job import ConfigError


def test_job_label():
    set_total(6)
    assert job_label(0) == "[1/6]"
    set_total(None)
    assert job_label(2) == "[3]"


def test_a_folder_that_holds_a_sweep_is_refused(tmp_path):
    preflight.check_folder(tmp_path / "new")  # does not exist: fine
    preflight.check_folder(tmp_path)  # empty: fine
    (tmp_path / "0").mkdir()
    (tmp_path / "0" / "row.json").write_text("{}")
    with pytest.raises(ConfigError, match=r"already holds a sweep \(1 row\(s\)\)"):
        preflight.check_folder(tmp_path)


def test_a_folder_with_anything_in_it_is_refused_and_named(tmp_path):
    (tmp_path / "notes.txt").write_text("mine")
    with pytest.raises(ConfigError, match=r"is not empty \(notes.txt\)"):
        preflight.check_folder(tmp_path)
    for name in ("a", "b", "c"):
        (tmp_path / name).mkdir()
    with pytest.raises(ConfigError, match=r"is not empty \(a/, b/, c/ and 1 more\)"):
        preflight.check_folder(tmp_path)


def test_an_unused_folder_is_removed_but_nothing_else(tmp_path):
    run = tmp_path / "run"
    (run / "0" / ".hydra").mkdir(parents=True)
    (run / "multirun.yaml").write_text("x")
    (run / "0" / "resolved_config.yaml").write_text("x")
    (run / "0" / "__main__.log").write_text("x")
    # What prewarm, the latency timing and the locks leave before the first row.
    for name in ("prewarm.json", "query_encode_ms.json", ".sweep.lock", ".encode-times.lock"):
        (run / name).write_text("x")
    preflight.discard_if_unused(run)
    assert not run.exists()
    kept = tmp_path / "kept"
    (kept / "0").mkdir(parents=True)
    (kept / "multirun.yaml").write_text("x")
    (kept / "notes.txt").write_text("mine")
    preflight.discard_if_unused(kept)
    assert (kept / "notes.txt").exists() and not (kept / "multirun.yaml").exists()
    used = tmp_path / "used"
    (used / "0").mkdir(parents=True)
    (used / "0" / "row.json").write_text("{}")
    preflight.discard_if_unused(used)
    assert (used / "0" / "row.json").exists()


def test_fresh_dir_never_hands_out_a_folder_twice(tmp_path):
    from sweep.hydrakit.config import fresh_dir

    base = tmp_path / "outputs" / "sweep" / "2026-12-01_10-00-00"
    got = [fresh_dir(str(base)) for _ in range(3)]
    assert got == [str(base), f"{base}-2", f"{base}-3"]
    assert all(
        (tmp_path / "outputs" / "sweep" / p).is_dir()
        for p in ("2026-12-01_10-00-00", "2026-12-01_10-00-00-2", "2026-12-01_10-00-00-3")
    )
