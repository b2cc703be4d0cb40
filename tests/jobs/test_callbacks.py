"""``sweep.jobs.callbacks``: the Hydra callback run in the launching process: the checks before
the first job (one line and exit 2 on bad input, no folder left behind), what the jobs inherit,
and the report when the sweep ends. Driven with real composed configs (no model)."""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pytest
from hydra import compose, initialize_config_dir
from omegaconf import OmegaConf

from sweep.core import progress
from sweep.hydrakit import devices
from sweep.hydrakit.config import CONF_DIR, fresh_dir, made_here, register
from sweep.jobs import job as jobmod
from sweep.jobs.callbacks import SweepCallback, SweepRun
from sweepdirs import base, make_grid, make_job

register()


@pytest.fixture(autouse=True)
def state():
    """The command's run, which the callback Hydra makes reports to: a fresh one a test."""
    with SweepRun().running() as run:
        yield run


@pytest.fixture(autouse=True)
def _isolated(monkeypatch):
    """The progress total, the jobs' environment variable and the loaded datasets are
    process globals: each test starts from fresh ones."""
    monkeypatch.setattr(progress, "_total", None)
    monkeypatch.setattr(jobmod, "_datasets", {})
    monkeypatch.delenv(devices.JOBS_ENV, raising=False)
    monkeypatch.delenv(progress.SHARED_ENV, raising=False)


@pytest.fixture
def hydra_cfg():
    """``make(folder, task, params=None)``: the config Hydra hands the callback, with the
    command line's overrides and the sweeper's params; Hydra stays initialized for the
    callback's own compose calls."""
    with initialize_config_dir(config_dir=str(CONF_DIR), version_base="1.3"):

        def make(folder: Path, task: list[str], params: dict | None = None):
            fixed = [o for o in task if "," not in o]  # compose refuses sweep values
            cfg = compose(
                config_name="config",
                return_hydra_config=True,
                overrides=fixed + [f"hydra.sweep.dir={folder}", f"hydra.run.dir={folder}"],
            )
            OmegaConf.set_readonly(cfg, False)
            cfg.hydra.overrides.task = list(task)
            cfg.hydra.sweeper.params = params or {}
            return cfg

        yield make


def _one_error_line(capsys) -> str:
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1, err
    assert err[0].startswith("sweep: error: ")
    return err[0]


# --------------------------------------------------------------------------- fail


def test_fail_is_one_line_and_exit_2(state, capsys):
    with pytest.raises(SystemExit) as e:
        state.fail("dataset: nope")
    assert e.value.code == 2
    assert _one_error_line(capsys) == "sweep: error: dataset: nope"


def test_fail_shows_each_problem_on_its_line_with_data_escaped(state, capsys):
    # A config error quoting data (a value, a path) must not drive the terminal.
    with pytest.raises(SystemExit):
        state.fail("dataset.path: /data/\x1b[2Jevil\u202e: not found\nchunk.size: -1")
    assert capsys.readouterr().err.splitlines() == [
        "sweep: error: dataset.path: /data/\\x1b[2Jevil\\u202e: not found",
        "sweep: error: chunk.size: -1",
    ]


def test_fail_removes_a_folder_this_sweep_made_but_keeps_a_users_empty_one(state, tmp_path, capsys):
    ours = Path(fresh_dir(str(tmp_path / "ours")))
    (ours / "multirun.yaml").write_text("x: 1\n")  # what Hydra writes before the first job
    state.own_folder = True
    with pytest.raises(SystemExit):
        state.fail("bad", ours)
    assert not ours.exists()
    theirs = tmp_path / "theirs"
    theirs.mkdir()
    (theirs / "multirun.yaml").write_text("x: 1\n")
    state.own_folder = False
    with pytest.raises(SystemExit):
        state.fail("bad", theirs)
    assert theirs.is_dir() and list(theirs.iterdir()) == []  # emptied of sweep's file, kept


def test_fail_never_removes_a_folder_with_a_row(state, tmp_path, capsys):
    make_job(tmp_path / "s", 0, 64, 0, base(10))
    state.own_folder = True
    with pytest.raises(SystemExit):
        state.fail("bad", tmp_path / "s")
    assert (tmp_path / "s" / "0" / "row.json").exists()


# --------------------------------------------------------------------------- start


def test_multirun_start_expands_the_grid_with_the_sweepers_params(
    state, tmp_path, hydra_cfg, capsys
):
    folder = Path(fresh_dir(str(tmp_path / "sweep")))
    # The command line names chunk.size: the experiment's chunk.size values do not apply,
    # its chunk.overlap values do: 2 sizes x 3 overlaps.
    cfg = hydra_cfg(
        folder,
        ["dataset=tiny", "chunk.size=32,64"],
        {"chunk.size": "128,256,512", "chunk.overlap": "0,4,8"},
    )
    SweepCallback().on_multirun_start(cfg)
    assert state.sweep_dir == folder and state.own_folder
    assert progress.job_label(0) == "[1/6]"
    assert os.environ[devices.JOBS_ENV] == "6"  # what the workers inherit
    assert not (folder / "prewarm.json").exists()  # one job at a time: nothing to prewarm
    assert capsys.readouterr().err == ""
    assert len(jobmod._datasets) == 1  # the dataset was loaded and checked, once


def test_the_plan_comes_before_the_first_job_and_says_shared_overrides_once(
    tmp_path, hydra_cfg, caplog
):
    folder = Path(fresh_dir(str(tmp_path / "sweep")))
    cache = tmp_path / "cache"
    cfg = hydra_cfg(folder, ["dataset=tiny", f"runtime.cache_dir={cache}", "chunk.size=32,64"])
    caplog.set_level("INFO", logger="sweep")
    SweepCallback().on_multirun_start(cfg)
    plan = [r.getMessage() for r in caplog.records if r.getMessage().startswith("plan: ")]
    assert (
        plan[0] == f"plan: 2 job(s) on tiny; every job with dataset=tiny runtime.cache_dir={cache}"
    )
    assert "2 setting(s):" in plan[1] and "0% cached; no time estimate yet" in plan[1]
    # What the plan said, the job lines leave out.
    assert (
        progress.job_overrides(["dataset=tiny", f"runtime.cache_dir={cache}", "chunk.size=32"])
        == "chunk.size=32"
    )
    assert not cache.exists()  # only looked at: nothing embedded, no model loaded


def test_run_start_is_a_sweep_of_one(state, tmp_path, hydra_cfg):
    folder = tmp_path / "run"
    SweepCallback().on_run_start(hydra_cfg(folder, ["dataset=tiny", "chunk.size=48"]))
    assert state.sweep_dir == folder and progress.job_label(0) == "[1/1]"
    assert os.environ[devices.JOBS_ENV] == "1"
    assert state.own_folder  # it did not exist: Hydra makes it for this run


def test_a_bad_dataset_stops_before_any_job_and_leaves_no_folder(tmp_path, hydra_cfg, capsys):
    folder = Path(fresh_dir(str(tmp_path / "sweep")))
    assert made_here(folder)
    cfg = hydra_cfg(
        folder, ["dataset=tiny", f"dataset.path={tmp_path / 'missing'}", "chunk.size=32,64"]
    )
    with pytest.raises(SystemExit) as e:
        SweepCallback().on_multirun_start(cfg)
    assert e.value.code == 2
    line = _one_error_line(capsys)
    assert "missing" in line and "Traceback" not in line
    assert not folder.exists()


def test_a_grid_that_cannot_run_at_all_is_one_line(tmp_path, hydra_cfg, capsys):
    folder = Path(fresh_dir(str(tmp_path / "sweep")))
    cfg = hydra_cfg(folder, ["dataset=tiny", "chunk.size=32", "chunk.overlap=32,40"])
    with pytest.raises(SystemExit):
        SweepCallback().on_multirun_start(cfg)
    line = _one_error_line(capsys)
    assert "no setting of this sweep can run" in line and "1 more setting(s)" in line
    assert not folder.exists()


def test_a_folder_holding_another_sweep_is_refused_and_left_alone(tmp_path, hydra_cfg, capsys):
    folder = tmp_path / "old"
    make_grid(folder, {(64, 0): base(10), (128, 0): base(10)})
    before = sorted(p.relative_to(folder) for p in folder.rglob("*"))
    with pytest.raises(SystemExit) as e:
        SweepCallback().on_multirun_start(hydra_cfg(folder, ["dataset=tiny", "chunk.size=32"]))
    assert e.value.code == 2
    assert "already holds a sweep (2 row(s))" in _one_error_line(capsys)
    assert sorted(p.relative_to(folder) for p in folder.rglob("*")) == before


def test_a_bad_prewarm_value_is_one_line_and_removes_the_folder(tmp_path, hydra_cfg, capsys):
    folder = Path(fresh_dir(str(tmp_path / "sweep")))
    cfg = hydra_cfg(folder, ["dataset=tiny", "chunk.size=32,64", "runtime.prewarm=sometimes"])
    with pytest.raises(SystemExit):
        SweepCallback().on_multirun_start(cfg)
    assert "runtime.prewarm must be true, false or auto, got 'sometimes'" in _one_error_line(capsys)
    assert not folder.exists()


# --------------------------------------------------------------------------- end


def test_the_end_writes_the_report_and_keeps_it_for_the_exit_status(
    state, tmp_path, hydra_cfg, capsys
):
    folder = tmp_path / "done"
    make_grid(folder, {(64, 0): base(20), (128, 0): np.ones(20)}, n_boot=50)
    make_job(folder, 2, 256, 256, None, status="invalid", error="ValueError: overlap")
    SweepCallback().on_multirun_end(hydra_cfg(folder, []))
    rep = state.report
    assert state.finished and rep is not None and len(rep.rows) == 3
    assert (folder / "results.csv").exists() and (folder / "report.html").exists()
    out = capsys.readouterr().out
    assert "3 setting(s): 2 ok, 1 invalid" in out


def test_the_end_of_a_run_without_a_finished_job_says_so(state, tmp_path, hydra_cfg, capsys):
    folder = tmp_path / "empty"
    folder.mkdir()
    SweepCallback().on_run_end(hydra_cfg(folder, []))
    assert state.finished and state.report is None
    assert f"sweep: no setting finished; nothing to report in {folder}" in capsys.readouterr().err
    assert not (folder / "results.csv").exists()
