"""End to end: the same sweep on Hydra's basic, joblib, submitit and Ray launchers.

Every launcher must give the serial sweep's rows: every metric, interval and
decision (timings and cache counters aside). Parallel launchers prewarm the
cache, so their jobs embed nothing and the model loads once. Ctrl-C and a
killed worker keep every finished row in the table.
"""

from __future__ import annotations

import csv
import importlib.util
import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from interrupting import INTERRUPTED
from paths import ROOT

pytestmark = pytest.mark.e2e

#: (32, 48) is an invalid setting (overlap >= size): a row that fails under every launcher.
GRID = ("chunk.size=32,64", "chunk.overlap=0,48")
LOADED = "Loading SentenceTransformer model"


def _cmd(tmp: Path, name: str, *overrides: str) -> list[str]:
    return [
        sys.executable,
        "-m",
        "sweep",
        "dataset=tiny",
        f"runtime.cache_dir={tmp / (name + '-cache')}",
        f"hydra.sweep.dir={tmp / name}",
        "runtime.show_progress=false",
        "eval.n_boot=200",
        *overrides,
    ]


def _env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != "HF_HUB_OFFLINE"}
    env["RAY_DEDUP_LOGS"] = "0"  # every job's log lines, not "[repeated 3x]"
    return env


def _sweep(
    tmp: Path, name: str, *overrides: str, timeout: int = 600
) -> subprocess.CompletedProcess:
    return subprocess.run(
        _cmd(tmp, name, *overrides),
        cwd=ROOT,
        env=_env(),
        capture_output=True,
        text=True,
        timeout=timeout,
    )


def _warm_rerun(tmp: Path, *overrides: str) -> subprocess.CompletedProcess:
    """Sweep ``b`` with sweep ``a``'s cache; retime=false: a time the cold run kept under
    load is not retimed if the load fell."""
    return _sweep(
        tmp, "b", *overrides, "runtime.retime=false", f"runtime.cache_dir={tmp / 'a-cache'}"
    )


def _frame(folder: Path) -> pd.DataFrame:
    return pd.read_csv(folder / "results.csv").sort_values("job").reset_index(drop=True)


#: Where the runs may differ: wall times and latencies (and when and under what load they
#: were taken), memory peaks, the command line (cache folder), and what was cached before
#: (a parallel sweep's jobs find every vector prewarmed).
_NOT_COMPARED = re.compile(
    r"(_s$|_ms$|_mb$|^latency_(measured_at|load|cpus)$|^overrides$|"
    r"^embedded$|^cache_hits$|^cache_misses$)"
)
#: Rank-based numbers: equal to the last digit.
_EXACT = re.compile(
    r"^(doc|span)\.|^(status|error|vs_best|diff_from_best|p_value|p_holm|"
    r"n_needed|n_chunks|n_vectors|notes)$"
)


def assert_same_rows(got: pd.DataFrame, want: pd.DataFrame) -> None:
    """Every column but timings and cache counters equal; raw similarity scores (the
    abstention threshold) may differ in the 7th digit, because the model embeds a text in
    a batch of another length when the cache was filled in another order."""
    assert list(got.columns) == list(want.columns)
    assert list(got["job"]) == list(want["job"])
    for col in want.columns:
        if _NOT_COMPARED.search(col):
            continue
        a, b = got[col], want[col]
        if _EXACT.search(col) or not pd.api.types.is_float_dtype(b):
            pd.testing.assert_series_equal(a, b, check_names=False, obj=col)
        else:
            np.testing.assert_allclose(
                a.to_numpy(float), b.to_numpy(float), rtol=1e-5, atol=1e-6, err_msg=col
            )


@pytest.fixture(scope="module")
def serial(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("serial")
    proc = _sweep(tmp, "basic", *GRID)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert not (tmp / "basic" / "prewarm.json").exists()  # one process: nothing to prewarm
    return tmp / "basic"


def _has(module: str) -> bool:
    return importlib.util.find_spec(module) is not None


LAUNCHERS = [
    pytest.param(
        ("hydra/launcher=joblib", "hydra.launcher.n_jobs=2"),
        id="joblib",
        marks=pytest.mark.skipif(
            not _has("hydra_plugins.hydra_joblib_launcher"), reason="pip install -e '.[joblib]'"
        ),
    ),
    pytest.param(
        ("hydra/launcher=submitit_local",),
        id="submitit_local",
        marks=pytest.mark.skipif(
            not _has("hydra_plugins.hydra_submitit_launcher"), reason="pip install -e '.[slurm]'"
        ),
    ),
    pytest.param(
        (
            "hydra/launcher=ray",
            "+hydra.launcher.ray.init.num_cpus=2",
            "+hydra.launcher.ray.init.include_dashboard=false",
        ),
        id="ray",
        marks=pytest.mark.skipif(
            not _has("hydra_plugins.hydra_ray_launcher"), reason="pip install -e '.[ray]'"
        ),
    ),
]


@pytest.mark.parametrize("launcher", LAUNCHERS)
def test_every_launcher_gives_the_serial_table_and_embeds_each_text_once(
    tmp_path, serial, launcher
):
    proc = _sweep(tmp_path, "parallel", *GRID, *launcher)
    assert proc.returncode == 0, proc.stderr[-3000:]
    folder = tmp_path / "parallel"
    got, want = _frame(folder), _frame(serial)
    assert list(got["status"]) == ["ok", "invalid", "ok", "ok"]
    assert_same_rows(got, want)
    assert (folder / "results.md").read_text().count("\n| ") == (
        serial / "results.md"
    ).read_text().count("\n| ")
    pq, pq_serial = pd.read_csv(folder / "per_query.csv"), pd.read_csv(serial / "per_query.csv")
    pd.testing.assert_frame_equal(
        pq[["job", "query_id", "level", "metric"]],
        pq_serial[["job", "query_id", "level", "metric"]],
    )
    # Prewarm (on by default under a parallel launcher): the grid's distinct texts were
    # embedded once, before the jobs, with one model load; the jobs only read the cache.
    report = json.loads((folder / "prewarm.json").read_text())
    (group,) = report["groups"]
    assert group["settings"] == 3  # the invalid setting cannot be chunked
    assert group["cached"] == 0 and group["embedded"] == group["texts"] > 0
    assert group["model_loads"] == 1
    # The serial sweep embedded each distinct text once too: the same texts.
    assert group["texts"] == int(want["embedded"].fillna(0).sum())
    assert int(got["embedded"].fillna(0).sum()) == 0
    assert float(got["model_load_s"].fillna(0).sum()) == 0.0
    log = proc.stdout + proc.stderr
    assert log.count(LOADED) == 1, log[-3000:]
    assert f"need {group['texts']} distinct texts: 0 cached, {group['texts']} embedded" in log


def test_a_warm_prewarm_embeds_nothing_and_loads_no_model(tmp_path):
    first = _sweep(
        tmp_path, "a", "chunk.size=32,64", "hydra/launcher=joblib", "hydra.launcher.n_jobs=2"
    )
    assert first.returncode == 0, first.stderr[-3000:]
    # The query encodes for the latency columns were timed once, by the prewarm pass with
    # the model it had loaded, and kept in the cache; no job loaded the model.
    assert (first.stdout + first.stderr).count(LOADED) == 1
    assert not (tmp_path / "a" / "query_encode_ms.json").exists()
    assert _frame(tmp_path / "a")["latency_p50_ms"].gt(0).all()
    # Warm, latency columns included, nothing needs the model at all (retime=false: the
    # machine's load may have changed since, and a time kept under load would be retimed).
    again = subprocess.run(
        _cmd(
            tmp_path,
            "b",
            "chunk.size=32,64",
            "hydra/launcher=joblib",
            "hydra.launcher.n_jobs=2",
            "runtime.retime=false",
        )
        + [f"runtime.cache_dir={tmp_path / 'a-cache'}"],
        cwd=ROOT,
        env=_env(),
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert again.returncode == 0, again.stderr[-3000:]
    (group,) = json.loads((tmp_path / "b" / "prewarm.json").read_text())["groups"]
    assert group["embedded"] == 0 and group["cached"] == group["texts"] > 0
    assert group["model_loads"] == 0 and LOADED not in again.stdout + again.stderr
    assert _frame(tmp_path / "b")["latency_p50_ms"].gt(0).all()


def test_a_warm_rerun_loads_no_model_and_says_so(tmp_path):
    cold = _sweep(tmp_path, "a", "chunk.size=32,64")
    assert cold.returncode == 0, cold.stderr[-3000:]
    assert "an embedding model was loaded 1 time(s)" in cold.stderr, cold.stderr[-3000:]
    inodes = [p.stat().st_ino for p in sorted((tmp_path / "a-cache" / "figures").iterdir())]
    warm = _warm_rerun(tmp_path, "chunk.size=32,64")
    assert warm.returncode == 0, warm.stderr[-3000:]
    log = warm.stdout + warm.stderr
    assert LOADED not in log and "query encode" not in log
    assert (
        "embedding: 0 text(s) embedded; no embedding model loaded (vectors and query "
        "timings came from the cache)"
    ) in log
    a, b = _frame(tmp_path / "a"), _frame(tmp_path / "b")
    assert (b["embedded"] == 0).all() and (b["model_load_s"] == 0).all()
    assert b["latency_p50_ms"].gt(0).all()
    pd.testing.assert_series_equal(a["span.recall@5"], b["span.recall@5"])
    # The report's pictures show the same values: copied from the cache, not drawn again
    # (a picture drawn again would be kept again, as a new file).
    assert {p.name: p.read_bytes() for p in (tmp_path / "a" / "plots").iterdir()} == {
        p.name: p.read_bytes() for p in (tmp_path / "b" / "plots").iterdir()
    }
    kept = sorted((tmp_path / "a-cache" / "figures").iterdir())
    assert len(kept) == len(list((tmp_path / "a" / "plots").iterdir())) >= 5
    assert [p.stat().st_ino for p in kept] == inodes


def test_backend_auto_measures_once_says_what_it_chose_and_a_rerun_reads_it(tmp_path):
    # The tiny corpus has too few texts for a probe to pay off; embed.probe_min_texts=10
    # has it measure anyway, as a real corpus would.
    auto = ("chunk.size=32,64", "embed.probe_min_texts=10")
    cold = _sweep(tmp_path, "a", *auto)
    assert cold.returncode == 0, cold.stderr[-3000:]
    lines = [ln for ln in cold.stderr.splitlines() if "backend auto → " in ln]
    assert len(lines) == 1, cold.stderr[-3000:]
    chosen = lines[0].split("backend auto → ", 1)[1].split(" ", 1)[0]
    assert chosen in ("torch", "openvino")
    assert "probed 20" in lines[0] and "\n" not in lines[0]
    # The plan line comes after the choice, and names the backend that runs.
    plan = next(ln for ln in cold.stderr.splitlines() if "plan: " in ln and "setting(s)" in ln)
    assert f"({chosen}, cpu)" in plan
    a = _frame(tmp_path / "a")
    assert (a["embed.backend"] == chosen).all()  # the backend that ran, not "auto"
    md = (tmp_path / "a" / "results.md").read_text(encoding="utf-8")
    assert f"queries encoded by {chosen}" in md
    # Counted: the probe loaded the model (and the jobs used it).
    assert "no embedding model loaded" not in cold.stderr
    kept = list((tmp_path / "a-cache" / "onnx" / "auto").glob("*.json"))
    assert len(kept) == 1 and json.loads(kept[0].read_text())["backend"] == chosen

    warm = _warm_rerun(tmp_path, *auto)
    assert warm.returncode == 0, warm.stderr[-3000:]
    log = warm.stdout + warm.stderr
    said = [
        ln.split("backend auto → ", 1)[1]
        for ln in warm.stderr.splitlines()
        if "backend auto → " in ln
    ]
    # The kept choice, said again with the figures and the date it was measured.
    assert said == [lines[0].split("backend auto → ", 1)[1]]
    assert LOADED not in log and "measuring torch against" not in log
    assert "no embedding model loaded" in log
    b = _frame(tmp_path / "b")
    pd.testing.assert_series_equal(a["span.recall@5"], b["span.recall@5"])


def test_prewarm_can_be_turned_off_and_on(tmp_path):
    off = _sweep(
        tmp_path,
        "off",
        "chunk.size=32,64",
        "hydra/launcher=joblib",
        "hydra.launcher.n_jobs=2",
        "runtime.prewarm=false",
    )
    assert off.returncode == 0, off.stderr[-3000:]
    assert not (tmp_path / "off" / "prewarm.json").exists()
    assert "runtime.prewarm" not in _frame(tmp_path / "off").columns  # not a setting
    on = _sweep(tmp_path, "on", "chunk.size=32,64", "runtime.prewarm=true")  # basic launcher
    assert on.returncode == 0, on.stderr[-3000:]
    (group,) = json.loads((tmp_path / "on" / "prewarm.json").read_text())["groups"]
    assert group["embedded"] == group["texts"] and _frame(tmp_path / "on")["embedded"].sum() == 0


def test_a_bad_prewarm_value_stops_the_sweep_with_one_line(tmp_path):
    proc = _sweep(tmp_path, "bad", "chunk.size=32,64", "runtime.prewarm=sometimes", timeout=120)
    assert proc.returncode == 2
    assert (
        "sweep: error: runtime.prewarm must be true, false or auto, got 'sometimes'" in proc.stderr
    )
    assert "Traceback" not in proc.stderr and not (tmp_path / "bad").exists()


def _children(pid: int) -> list[int]:
    try:
        text = Path(f"/proc/{pid}/task/{pid}/children").read_text()
    except OSError:
        return []
    return [int(c) for c in text.split()]


def _loky_workers(pid: int) -> list[int]:
    out = []
    for child in _children(pid):
        try:
            cmdline = Path(f"/proc/{child}/cmdline").read_bytes().replace(b"\0", b" ")
        except OSError:
            continue
        if b"popen_loky" in cmdline:
            out.append(child)
    return out


def _start_long_joblib_sweep(tmp_path: Path) -> tuple[subprocess.Popen, Path]:
    folder = tmp_path / "long"
    cmd = _cmd(
        tmp_path,
        "long",
        "chunk.size=16,24,32,40,48,56,64,96",
        "chunk.overlap=0,8",
        "hydra/launcher=joblib",
        "hydra.launcher.n_jobs=2",
    )
    proc = subprocess.Popen(
        cmd, cwd=ROOT, env=_env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    deadline = time.monotonic() + 300
    while len(list(folder.glob("*/row.json"))) < 2:
        assert proc.poll() is None and time.monotonic() < deadline, proc.communicate()[1][-3000:]
        time.sleep(0.05)
    return proc, folder


def _table_jobs(folder: Path) -> list[int]:
    with open(folder / "results.csv", newline="") as f:
        return sorted(int(r["job"]) for r in csv.DictReader(f))


def _saved_jobs(folder: Path) -> list[int]:
    return sorted(int(p.parent.name) for p in folder.glob("*/row.json"))


def test_ctrl_c_under_joblib_keeps_every_finished_row(tmp_path):
    proc, folder = _start_long_joblib_sweep(tmp_path)
    workers = _loky_workers(proc.pid)
    assert workers
    proc.send_signal(signal.SIGINT)
    _out, err = proc.communicate(timeout=120)
    assert proc.returncode in INTERRUPTED, err[-3000:]
    assert "finished before the interrupt" in err and "Traceback" not in err
    saved = _saved_jobs(folder)
    assert 2 <= len(saved) < 16 and _table_jobs(folder) == saved
    time.sleep(1)
    assert not [w for w in workers if Path(f"/proc/{w}").exists()], "workers left running"


def test_a_killed_worker_fails_only_its_own_job(tmp_path):
    proc, folder = _start_long_joblib_sweep(tmp_path)
    workers = _loky_workers(proc.pid)
    assert workers
    os.kill(workers[0], signal.SIGKILL)
    _out, err = proc.communicate(timeout=600)
    assert proc.returncode == 0, err[-3000:]
    assert "Traceback" not in err and "TerminatedWorkerError" not in err
    # Every setting has its row; the one whose worker was killed (none, if the kill found
    # the worker between two jobs) says so.
    assert _saved_jobs(folder) == _table_jobs(folder) == list(range(16))
    rows = pd.read_csv(folder / "results.csv")
    failed = rows[rows["status"] == "failed"]
    assert len(failed) <= 1 and (rows["status"] != "invalid").all()
    assert all("worker process died" in str(e) for e in failed["error"])


def test_a_job_whose_process_dies_gets_a_failed_row_and_the_others_run(tmp_path):
    env = dict(
        _env(), PYTHONPATH=os.pathsep.join([str(ROOT / "tests"), os.environ.get("PYTHONPATH", "")])
    )
    cmd = _cmd(
        tmp_path,
        "dies",
        "chunk.size=32,48,64,96",
        "hydra/launcher=joblib",
        "hydra.launcher.n_jobs=2",
        "chunk._target_=dying.build_dying_chunker",
        "+chunk.die_at=48",
        "runtime.prewarm=false",
    )
    proc = subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "Traceback" not in proc.stderr
    rows = _frame(tmp_path / "dies")
    assert list(rows["chunk.size"]) == [32, 48, 64, 96]
    assert list(rows["status"]) == ["ok", "failed", "ok", "ok"]
    assert "its worker process died (exit code 137)" in rows["error"][1], rows["error"][1]
    assert "4 setting(s): 3 ok, 1 failed" in proc.stdout
