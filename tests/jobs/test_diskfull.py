"""A disk that fills while a sweep runs (issue 41, item 7): one line naming the file, the
finished rows kept, their tables and report.html written where they still fit.

Real full disks: a tmpfs of a few hundred kilobytes (tests/mounts.py), and /dev/full for a
log file. The sweeps retrieve with BM25, so no embedding model is loaded.
"""

from __future__ import annotations

import csv
import json
import logging
import os
import subprocess
import sys
from pathlib import Path

import pytest
from omegaconf import OmegaConf

from mounts import fill, tmpfs
from paths import ROOT

NO_SPACE = "No space left on device"


def _sweep(tmp_path: Path, folder: Path, *overrides: str) -> subprocess.CompletedProcess:
    cmd = [
        sys.executable,
        "-m",
        "sweep",
        f"runtime.cache_dir={tmp_path / 'cache'}",
        f"hydra.sweep.dir={folder}",
        "runtime.show_progress=false",
        "eval.n_boot=50",
        "retrieve=bm25",
        *overrides,
    ]
    return subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=600)


def _said(proc: subprocess.CompletedProcess) -> list[str]:
    """What the sweep said on stderr besides its log lines."""
    return [line for line in proc.stderr.splitlines() if line and not line.startswith("[")]


def _jobs_in(results_csv: Path) -> list[str]:
    with open(results_csv, newline="", encoding="utf-8") as f:
        return [r["job"] for r in csv.DictReader(f)]


def _no_traceback(proc: subprocess.CompletedProcess) -> None:
    assert "Traceback" not in proc.stderr and "Logging error" not in proc.stderr, proc.stderr[
        -3000:
    ]


def test_a_job_that_finds_the_disk_full_stops_the_sweep_and_the_finished_rows_get_their_report(
    tmp_path,
):
    # Job 0 (64-token chunks) and its tables fit in 7 MB; job 1 (512) writes a 4.5 MB
    # hits.jsonl that does not, and job 2 would not either. The trial's sweep printed Hydra's
    # traceback here and wrote no report.html.
    with tmpfs(tmp_path / "disk", "7m") as disk:
        sweep = disk / "sweep"
        proc = _sweep(tmp_path, sweep, "dataset=kestrel", "chunk.size=64,512,128")
        _no_traceback(proc)
        assert proc.returncode == 1
        said = _said(proc)
        assert said[0] == f"sweep: error: cannot write {sweep / '1' / 'hits.jsonl'}: {NO_SPACE}"
        assert said[1:] == [
            f"sweep: 1 setting(s): 1 ok finished before the disk filled; they "
            f"are kept in {sweep}/ (results.md and results.csv, report.html, "
            "<job>/row.json)"
        ]
        assert json.loads((sweep / "0" / "row.json").read_text())["status"] == "ok"
        # The job that found the disk full left no row and no half file; job 2 never ran.
        assert not (sweep / "1" / "row.json").exists() and not (sweep / "1" / "hits.jsonl").exists()
        assert not (sweep / "2").exists()
        assert _jobs_in(sweep / "results.csv") == ["0"]
        assert (sweep / "report.html").read_text(encoding="utf-8").rstrip().endswith("</html>")
        assert "64" in proc.stdout  # the finished row's table


def test_a_full_disk_in_hydras_job_setup_is_one_line(tmp_path):
    # Room for multirun.yaml, none for the first job's .hydra/config.yaml: Hydra writes it,
    # before any code of sweep's runs in the job.
    with tmpfs(tmp_path / "disk", "64k") as disk:
        sweep = disk / "sweep"
        fill(disk, leave=8192)
        proc = _sweep(tmp_path, sweep, "dataset=tiny", "chunk.size=32,64")
        _no_traceback(proc)
        assert proc.returncode == 1
        assert _said(proc) == [
            f"sweep: error: cannot write {sweep / '0' / '.hydra' / 'config.yaml'}: {NO_SPACE}",
            f"sweep: no setting had finished; nothing to report in {sweep}",
        ]


def test_a_full_disk_in_a_joblib_workers_job_setup_is_one_line(tmp_path):
    # The job runs in a worker process; what stops it must reach the launching process.
    import importlib.util
    import re

    if importlib.util.find_spec("hydra_plugins.hydra_joblib_launcher") is None:
        pytest.skip("hydra/launcher=joblib needs hydra-joblib-launcher")
    with tmpfs(tmp_path / "disk", "64k") as disk:
        sweep = disk / "sweep"
        fill(disk, leave=12288)  # multirun.yaml and prewarm.json fit, a job's config not
        proc = _sweep(
            tmp_path,
            sweep,
            "dataset=tiny",
            "chunk.size=32,64",
            "hydra/launcher=joblib",
            "hydra.launcher.n_jobs=2",
        )
        _no_traceback(proc)
        assert proc.returncode == 1
        said = [line for line in _said(proc) if line.startswith("sweep:")]
        assert re.fullmatch(
            f"sweep: error: cannot write {re.escape(str(sweep))}/[01]/.hydra/"
            f"config.yaml: {NO_SPACE}",
            said[0],
        ), said
        assert said[1:] == [f"sweep: no setting had finished; nothing to report in {sweep}"]


def test_a_disk_full_before_the_first_job_is_one_line(tmp_path):
    with tmpfs(tmp_path / "disk", "64k") as disk:
        sweep = disk / "sweep"
        fill(disk)
        proc = _sweep(tmp_path, sweep, "dataset=tiny", "chunk.size=32,64")
        _no_traceback(proc)
        assert proc.returncode == 1
        assert _said(proc)[0] == f"sweep: error: cannot write {sweep / 'multirun.yaml'}: {NO_SPACE}"


def test_a_disk_that_fills_while_the_pictures_are_drawn_keeps_every_row_and_the_tables(tmp_path):
    # Both jobs and their tables fit in 500 KB; the pictures and report.html (800 KB) do not.
    with tmpfs(tmp_path / "disk", "500k") as disk:
        sweep = disk / "sweep"
        proc = _sweep(tmp_path, sweep, "dataset=tiny", "chunk.size=32,64")
        _no_traceback(proc)
        assert proc.returncode == 1
        said = _said(proc)
        assert said[0].startswith(f"sweep: error: cannot write {sweep}/") and said[0].endswith(
            NO_SPACE
        )
        assert said[1].startswith(
            f"sweep: 2 setting(s): 2 ok finished before the disk filled; they are kept in {sweep}/"
        )
        assert "report.html could not be written" in said[1] and NO_SPACE in said[1]
        assert len(said) == 2
        assert _jobs_in(sweep / "results.csv") == ["0", "1"]  # written before the pictures
        assert not (sweep / "report.html").exists()
        assert not list(sweep.rglob("*.tmp*"))  # no half picture holding the space


def test_a_job_log_that_cannot_be_written_says_so_once_per_job(tmp_path):
    # Every line of a log on a full disk gave a "--- Logging error ---" traceback.
    proc = _sweep(
        tmp_path,
        tmp_path / "sweep",
        "dataset=tiny",
        "chunk.size=32,64",
        "hydra.job_logging.handlers.file.filename=/dev/full",
    )
    _no_traceback(proc)
    assert proc.returncode == 0
    warned = [line for line in proc.stderr.splitlines() if "cannot write the log" in line]
    assert (
        warned
        == [
            f"[{w[1:9]}][WARNING] cannot write the log /dev/full ({NO_SPACE}); it goes "
            "on on the terminal only"
            for w in warned
        ]
        and len(warned) == 2
    )
    assert _jobs_in(tmp_path / "sweep" / "results.csv") == ["0", "1"]


def test_the_job_log_file_goes_quiet_after_one_warning(caplog, capsys):
    from sweep.jobs.diskfull import JobLogFile

    handler = JobLogFile("/dev/full")
    logger = logging.getLogger("test_diskfull.quiet")
    logger.addHandler(handler)
    try:
        with caplog.at_level(logging.INFO):
            for i in range(3):
                logger.info("line %d", i)
    finally:
        logger.removeHandler(handler)
        handler.close()
    warnings = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert warnings == [
        f"cannot write the log /dev/full ({NO_SPACE}); it goes on on the terminal only"
    ]
    assert "Logging error" not in capsys.readouterr().err


def test_hydras_job_setup_on_a_full_disk_raises_disk_full_naming_the_file(tmp_path):
    import hydra.core.utils as hydra_utils

    from sweep.jobs.diskfull import DiskFull, guard_job_setup

    guard_job_setup()
    guard_job_setup()  # once is enough: wrapping twice would not change a thing
    assert getattr(hydra_utils._save_config, "_sweep_guarded", False)
    with tmpfs(tmp_path / "disk", "64k") as disk:
        fill(disk)
        cfg = OmegaConf.create({"text": "x" * 10_000})
        with pytest.raises(DiskFull) as e:
            hydra_utils._save_config(cfg, "config.yaml", disk / ".hydra")
    assert str(e.value) == f"cannot write {disk / '.hydra' / 'config.yaml'}: {NO_SPACE}"
    assert isinstance(e.value, BaseException) and not isinstance(e.value, Exception)


def test_other_errors_of_hydras_job_setup_are_left_alone(tmp_path):
    import hydra.core.utils as hydra_utils

    from sweep.jobs.diskfull import DiskFull, guard_job_setup

    guard_job_setup()
    afile = tmp_path / "a file"
    afile.write_text("")
    with pytest.raises(OSError) as e:  # not a full disk: not the sweep's to stop
        hydra_utils._save_config(OmegaConf.create({}), "config.yaml", afile)
    assert not isinstance(e.value, DiskFull) and os.path.exists(afile)


def test_the_guard_passes_every_argument_of_another_hydras_job_setup(tmp_path, monkeypatch):
    # A Hydra whose _save_config takes another argument still gets it (and its result);
    # a Hydra without one is left as it is.
    import hydra.core.utils as hydra_utils

    from sweep.jobs.diskfull import DiskFull, guard_job_setup

    seen = []

    def save(cfg, filename, output_dir, *, sort_keys=False):
        seen.append((filename, output_dir, sort_keys))
        if filename == "full.yaml":
            raise OSError(28, "No space left on device")
        return "written"

    monkeypatch.setattr(hydra_utils, "_save_config", save)
    guard_job_setup()
    assert hydra_utils._save_config({}, "config.yaml", tmp_path, sort_keys=True) == "written"
    assert seen == [("config.yaml", tmp_path, True)]
    with pytest.raises(DiskFull, match=f"cannot write {tmp_path / 'full.yaml'}"):
        hydra_utils._save_config({}, filename="full.yaml", output_dir=tmp_path)
    monkeypatch.delattr(hydra_utils, "_save_config")
    guard_job_setup()  # nothing to guard: no error
