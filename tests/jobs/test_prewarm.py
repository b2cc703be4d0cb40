"""Prewarm (sweep.jobs.prewarm): the grid's texts embedded once, before the jobs."""

from __future__ import annotations

import json

import pytest
from hydra import compose, initialize_config_dir

from sweep.embedding.rates import RATES_NAME, EmbedRate
from sweep.hydrakit.config import CONF_DIR, register
from sweep.hydrakit.devices import Launch, Machine
from sweep.jobs.job import ConfigError, build_stages, embedder_node, load_job_dataset, run_job
from sweep.jobs.prewarm import (
    GroupPlan,
    GroupReport,
    Plan,
    PrewarmReport,
    collect_grid,
    duration,
    embed_spread,
    plan_of,
    prewarm_grid,
    wanted,
)

register()
PARALLEL = Launch("joblib", {"n_jobs": 2}, 4)


@pytest.mark.parametrize(
    "value,launch,expected",
    [
        ("auto", Launch(), False),
        ("auto", PARALLEL, True),
        ("auto", Launch("joblib", {"n_jobs": 1}, 4), False),
        ("auto", Launch("submitit_slurm", {}, 4), True),
        (None, PARALLEL, True),
        (True, Launch(), True),
        ("true", Launch(), True),
        (False, PARALLEL, False),
        ("off", PARALLEL, False),
    ],
)
def test_when_prewarm_is_on(value, launch, expected):
    assert wanted(value, launch, cores=2) is expected


@pytest.mark.parametrize("value", ["sometimes", 3, "", [True]])
def test_a_bad_prewarm_value_is_a_config_error(value):
    with pytest.raises(ConfigError, match="runtime.prewarm must be true, false or auto, got"):
        wanted(value, PARALLEL, cores=2)


def test_the_report_adds_up():
    rep = PrewarmReport(
        4,
        (
            GroupReport("m", "cpu", 3, 40, 10, 30, 5, 1, 2.0, 3.0),
            GroupReport("n", "cpu", 1, 7, 7, 0),
        ),
        {3: "invalid"},
        0.1,
        5.0,
    )
    assert rep.texts == 47 and rep.embedded == 35
    body = json.loads(rep.to_json())
    assert body["texts"] == 47 and body["skipped"] == {"3": "invalid"}
    assert body["groups"][0]["sentences_embedded"] == 5


def test_an_estimate_needs_a_measured_speed_and_says_how_long():
    unknown = GroupPlan("m", "torch", "cpu", 6, texts=1000, cached=250)
    assert unknown.missing == 750 and unknown.estimate_s is None
    known = GroupPlan(
        "m",
        "torch",
        "cpu",
        6,
        1000,
        250,
        30_000,
        EmbedRate(texts=100, tokens=4000, seconds=2.0, load_s=10.0),
    )
    assert known.estimate_s == pytest.approx(30_000 / 2000 + 10.0)
    done = GroupPlan("m", "torch", "cpu", 6, 1000, 1000)
    assert done.estimate_s == 0.0
    lines = Plan(6, ("kestrel",), ("dataset.path=/d",), (unknown, known, done)).lines()
    assert lines[0] == "plan: 6 job(s) on kestrel; every job with dataset.path=/d"
    assert "1000 distinct texts to embed, 25% cached; no time estimate yet" in lines[1]
    assert lines[2].endswith(
        "cached; embedding them should take about 25 s (50 texts/s "
        "measured here before, a model load of 10 s included)"
    )
    assert lines[3].endswith("100% cached; nothing to embed")


@pytest.mark.parametrize(
    "seconds,text", [(0.4, "0 s"), (45, "45 s"), (200, "3 min 20 s"), (3900, "1 h 05 min")]
)
def test_durations_read_as_people_say_them(seconds, text):
    assert duration(seconds) == text


def _jobs(cache, *extra):
    return [
        ["dataset=tiny", f"runtime.cache_dir={cache}", "runtime.show_progress=false", *extra, o]
        for o in ("chunk.size=48", "chunk.size=96")
    ]


@pytest.mark.e2e
def test_semantic_chunking_is_prewarmed_too(tmp_path):
    """The semantic strategy embeds sentences to cut; prewarm chunks with the embedder,
    so a job embeds nothing at all, not even its sentences."""
    jobs = _jobs(tmp_path / "cache", "chunk=semantic")
    with initialize_config_dir(str(CONF_DIR), version_base="1.3"):
        rep = prewarm_grid("config", jobs, PARALLEL, tmp_path / "sweep", machine=Machine(2))
        (group,) = rep.groups
        assert group.settings == 2 and group.sentences_embedded > 0
        assert group.embedded == group.texts - group.cached > 0
        assert (
            json.loads((tmp_path / "sweep" / "prewarm.json").read_text())["groups"][0][
                "sentences_embedded"
            ]
            == group.sentences_embedded
        )
        for num, overrides in enumerate(jobs):
            cfg = compose("config", overrides=overrides)
            row = run_job(cfg, tmp_path / "sweep" / str(num), num, overrides, {})
            assert row.ok and row.stats.embedded == 0 and row.stats.cache_misses == 0
        # A second prewarm finds everything: nothing to embed.
        again = prewarm_grid("config", jobs, PARALLEL, None, machine=Machine(2))
        assert again.groups[0].embedded == 0 and again.groups[0].sentences_embedded == 0


@pytest.mark.e2e
def test_prewarm_skips_invalid_settings_and_disabled_caches(tmp_path):
    jobs = _jobs(tmp_path / "cache") + [
        ["dataset=tiny", "chunk.size=32", "chunk.overlap=40", f"runtime.cache_dir={tmp_path}"],
        ["dataset=tiny", "chunk.size=32", "runtime.cache_dir=off"],
        ["dataset=tiny", "chunk.size=32", "runtime.prewarm=false"],
    ]
    with initialize_config_dir(str(CONF_DIR), version_base="1.3"):
        rep = prewarm_grid("config", jobs, PARALLEL, None, machine=Machine(2))
    assert sorted(rep.skipped) == [2, 3]
    assert "overlap" in rep.skipped[2] and "cache_dir is off" in rep.skipped[3]
    assert [g.settings for g in rep.groups] == [2]
    with initialize_config_dir(str(CONF_DIR), version_base="1.3"):
        assert prewarm_grid("config", jobs[:2], Launch(), None, machine=Machine(2)) is None


@pytest.mark.e2e
def test_prewarm_spreads_over_worker_processes(tmp_path):
    """One process per device (GPUs in practice; two CPU processes here): each embeds its
    share into the shared cache, no text twice, and a job afterwards embeds nothing."""
    cache = tmp_path / "cache"
    with initialize_config_dir(str(CONF_DIR), version_base="1.3"):
        # The model named: an embed=auto node is the embedder's only once a job resolves it.
        cfg = compose("config", overrides=[*_jobs(cache)[0], "embed=minilm"])
        stages = build_stages(cfg)
        dataset = load_job_dataset(cfg.dataset)
        docs = list(
            dict.fromkeys(
                c.embedding_input for c in stages.chunker.chunk_documents(dataset.documents)
            )
        )
        queries = list(dict.fromkeys(q.query for q in dataset.queries))
        node = embedder_node(cfg)
        parts = embed_spread(node, docs, queries, ["cpu", "cpu"])
        assert len(parts) == 2 and all(p["embedded"] > 0 for p in parts)
        assert sum(p["embedded"] for p in parts) == len(docs) + len(queries)
        fresh = build_stages(cfg).embedder
        fresh.embed_documents(docs)
        fresh.embed_queries(queries)
        assert fresh.stats.embedded == 0 and fresh.stats.cache_hits == len(docs) + len(queries)


@pytest.mark.e2e
def test_the_plan_counts_the_grids_texts_and_estimates_only_from_a_measured_speed(tmp_path):
    cache = tmp_path / "cache"
    jobs = _jobs(cache, "eval.latency_queries=0")  # no query timing: not what is tested here
    with initialize_config_dir(str(CONF_DIR), version_base="1.3"):
        wanted_texts, first_job = set(), set()
        for overrides in jobs:  # the grid's texts, counted here independently
            cfg = compose("config", overrides=overrides)
            dataset = load_job_dataset(cfg.dataset)
            texts = {
                c.embedding_input
                for c in build_stages(cfg).chunker.chunk_documents(dataset.documents)
            } | {q.query for q in dataset.queries}
            wanted_texts |= texts
            first_job = first_job or texts
        plan = plan_of(collect_grid("config", jobs, Launch(), machine=Machine(2)))
        (group,) = plan.groups
        assert plan.jobs == 2 and plan.datasets == ("tiny",)
        assert "dataset=tiny" in plan.shared and "chunk.size=48" not in plan.shared
        assert (group.settings, group.texts, group.cached) == (2, len(wanted_texts), 0)
        assert group.estimate_s is None and "no time estimate yet" in plan.lines()[1]
        assert not (cache / RATES_NAME).exists()
        # One job runs: its texts are cached and the embedder's speed is kept.
        cfg = compose("config", overrides=jobs[0])
        row = run_job(cfg, tmp_path / "sweep" / "0", 0, jobs[0], {})
        rates = json.loads((cache / RATES_NAME).read_text())
        assert sum(r["texts"] for r in rates.values()) >= row.stats.embedded > 0
        plan = plan_of(collect_grid("config", jobs, Launch(), machine=Machine(2)))
        (group,) = plan.groups
        assert group.cached == len(first_job) < group.texts
        assert group.rate is not None and group.estimate_s > 0
        assert "should take about" in plan.lines()[1]
        assert f"{100 * len(first_job) / len(wanted_texts):.0f}% cached" in plan.lines()[1]


CALLED = []


def _recording_chunker(**options):
    """A chunker of the user's own: records that it was built (in this process)."""
    from sweep.chunking import build_chunker

    CALLED.append(options["size"])
    return build_chunker(**options)


@pytest.mark.parametrize("prewarm, runs_here", [("auto", False), ("false", False), ("true", True)])
def test_a_chunker_of_ones_own_runs_ahead_of_its_job_only_when_prewarming_is_asked(
    tmp_path, prewarm, runs_here
):
    # A crash, a hang or a mishandled Ctrl-C in it would otherwise stop the whole sweep
    # before its first job; sweep's own chunkers are counted in the plan either way.
    CALLED.clear()
    own = [f"chunk._target_={__name__}._recording_chunker", f"runtime.prewarm={prewarm}"]
    with initialize_config_dir(str(CONF_DIR), version_base="1.3"):
        grid = collect_grid("config", _jobs(tmp_path / "cache", *own), Launch(), machine=Machine(2))
        assert bool(CALLED) == runs_here
        assert len(grid.unplanned) == (0 if runs_here else 2)
        plan = plan_of(
            collect_grid(
                "config",
                _jobs(tmp_path / "cache", f"runtime.prewarm={prewarm}"),
                Launch(),
                machine=Machine(2),
            )
        )
        assert plan.groups[0].settings == 2 and plan.unplanned == 0
