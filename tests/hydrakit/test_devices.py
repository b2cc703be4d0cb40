"""Devices and CPU threads per job under each launcher (sweep.hydrakit.devices)."""

from __future__ import annotations

import os

import pytest
from hypothesis import given
from hypothesis import strategies as st
from omegaconf import OmegaConf

from sweep.hydrakit import devices
from sweep.hydrakit.devices import Launch, Machine


def test_joblib_splits_the_cores_between_the_jobs_that_run_at_once():
    two = Launch("joblib", {"n_jobs": 2}, n_jobs=6)
    assert devices.concurrent_jobs(two, 2) == 2
    assert devices.cpu_threads(two, 2) == 1  # two jobs on two cores: one thread each
    assert devices.cpu_threads(two, 8) == 4


def test_joblib_negative_n_jobs_counts_from_the_cores_and_the_grid_caps_it():
    assert devices.concurrent_jobs(Launch("joblib", {"n_jobs": -1}, 100), 16) == 16
    assert devices.concurrent_jobs(Launch("joblib", {"n_jobs": -2}, 100), 16) == 15
    # A 6-job grid on 64 cores runs 6 at once, each with 10 threads, not 64 jobs' worth of 1.
    small = Launch("joblib", {"n_jobs": -1}, n_jobs=6)
    assert devices.concurrent_jobs(small, 64) == 6 and devices.cpu_threads(small, 64) == 10
    assert devices.concurrent_jobs(Launch("joblib", {"n_jobs": None}), 8) == 1


def test_submitit_local_starts_every_job_at_once():
    launch = Launch("submitit_local", {"cpus_per_task": None}, n_jobs=4)
    assert devices.concurrent_jobs(launch, 8) == 4 and devices.cpu_threads(launch, 8) == 2


def test_scheduled_jobs_use_what_the_scheduler_gave_them():
    ray = Launch("ray", {"ray": {"init": {}, "remote": {"num_cpus": 3}}}, n_jobs=10)
    assert devices.cpu_threads(ray, 12) == 3 and devices.concurrent_jobs(ray, 12) == 4
    assert devices.cpu_threads(Launch("ray", {"ray": {"remote": {}}}), 12) == 1
    assert devices.cpu_threads(Launch("submitit_slurm", {"cpus_per_task": 8}), 64) == 8
    assert devices.cpu_threads(Launch("submitit_slurm", {"cpus_per_task": None}), 64) is None


def test_the_basic_launcher_leaves_threads_alone():
    assert devices.cpu_threads(Launch(), 8) is None
    assert devices.concurrent_jobs(Launch("basic", {}, 12), 8) == 1


@given(st.integers(1, 256), st.integers(-8, 64), st.integers(1, 500))
def test_threads_never_oversubscribe_the_cores(cores, n_jobs, grid):
    launch = Launch("joblib", {"n_jobs": n_jobs}, grid)
    threads = devices.cpu_threads(launch, cores)
    jobs = devices.concurrent_jobs(launch, cores)
    assert 1 <= jobs <= grid and threads >= 1
    assert jobs * threads <= max(cores, jobs)  # at least one thread each, never more than the cores


def test_auto_device_spreads_parallel_jobs_over_the_gpus():
    four = Machine(cores=32, cuda=4)
    assert [devices.pick_device("auto", j, 8, four) for j in range(6)] == [
        "cuda:0",
        "cuda:1",
        "cuda:2",
        "cuda:3",
        "cuda:0",
        "cuda:1",
    ]
    assert devices.pick_device("auto", 5, 1, four) == "cuda:0"  # one job at a time: the first
    assert devices.pick_device("auto", 3, 4, Machine(8)) == "cpu"
    assert devices.pick_device("auto", 3, 4, Machine(8, mps=True)) == "mps"
    assert devices.pick_device("cuda:1", 0, 4, four) == "cuda:1"  # an explicit choice stays


def test_place_under_each_launcher():
    four = Machine(cores=8, cuda=4)
    joblib = Launch("joblib", {"n_jobs": 4}, 8)
    assert devices.place("auto", 6, joblib, four) == devices.Placement("cuda:2", 2)
    # A Ray task or SLURM job sees only its own GPUs: the first visible one is its own.
    ray = Launch("ray", {"ray": {"remote": {"num_gpus": 1}}}, 8)
    assert devices.place("auto", 6, ray, Machine(8, cuda=1)).device == "cuda:0"
    assert devices.place("cpu", 6, Launch(), four) == devices.Placement("cpu", None)


def test_is_parallel():
    assert not devices.is_parallel(Launch(), 8)
    assert not devices.is_parallel(Launch("joblib", {"n_jobs": 1}, 6), 8)
    assert devices.is_parallel(Launch("joblib", {"n_jobs": 2}, 6), 8)
    assert not devices.is_parallel(Launch("joblib", {"n_jobs": 2}, 1), 8)  # a grid of one
    assert devices.is_parallel(Launch("submitit_slurm", {}, 6), 8)
    assert devices.is_parallel(Launch("ray", {}, None), 8)


def test_launch_of_reads_hydras_config(monkeypatch):
    monkeypatch.setenv(devices.JOBS_ENV, "6")
    hydra = OmegaConf.create(
        {
            "runtime": {"choices": {"hydra/launcher": "joblib"}},
            "launcher": {"n_jobs": 2, "folder": "${nowhere}"},
        }
    )
    launch = devices.launch_of(hydra)
    assert launch == Launch("joblib", {"n_jobs": 2, "folder": "${nowhere}"}, 6)
    monkeypatch.delenv(devices.JOBS_ENV)
    assert devices.launch_of(OmegaConf.create({})) == Launch()


def test_apply_threads_sets_torch_faiss_and_the_environment(monkeypatch):
    import faiss
    import torch

    for name in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS"):
        monkeypatch.delenv(name, raising=False)
    before = torch.get_num_threads(), faiss.omp_get_max_threads()
    try:
        devices.apply_threads(1)
        assert torch.get_num_threads() == 1 and faiss.omp_get_max_threads() == 1
        assert os.environ["OMP_NUM_THREADS"] == "1"
    finally:
        torch.set_num_threads(before[0])
        faiss.omp_set_num_threads(before[1])
    devices.apply_threads(None)
    assert torch.get_num_threads() == before[0]


def test_this_machine_without_a_gpu_driver_is_not_probed_through_torch():
    m = devices.machine()
    assert m.cores >= 1
    if not os.path.exists("/proc/driver/nvidia/version"):
        assert m.cuda == 0


@pytest.mark.parametrize("n_jobs", ["two", True])
def test_a_non_numeric_n_jobs_counts_as_one(n_jobs):
    assert devices.concurrent_jobs(Launch("joblib", {"n_jobs": n_jobs}, 4), 8) == 1
