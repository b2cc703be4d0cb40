"""Prewarm (sweep.jobs.prewarm): the grid's texts embedded once, before the jobs."""

from __future__ import annotations

import json

import pytest
from hydra import compose, initialize_config_dir

from sweep.jobs.config import CONF_DIR, register
from sweep.jobs.devices import Launch, Machine
from sweep.jobs.job import ConfigError, build_stages, embedder_node, load_dataset, run_job
from sweep.jobs.prewarm import PrewarmReport, GroupReport, embed_spread, prewarm_grid, wanted

register()
PARALLEL = Launch("joblib", {"n_jobs": 2}, 4)


@pytest.mark.parametrize("value,launch,expected", [
    ("auto", Launch(), False),
    ("auto", PARALLEL, True),
    ("auto", Launch("joblib", {"n_jobs": 1}, 4), False),
    ("auto", Launch("submitit_slurm", {}, 4), True),
    (None, PARALLEL, True),
    (True, Launch(), True),
    ("true", Launch(), True),
    (False, PARALLEL, False),
    ("off", PARALLEL, False),
])
def test_when_prewarm_is_on(value, launch, expected):
    assert wanted(value, launch, cores=2) is expected


@pytest.mark.parametrize("value", ["sometimes", 3, "", [True]])
def test_a_bad_prewarm_value_is_a_config_error(value):
    with pytest.raises(ConfigError, match="runtime.prewarm must be true, false or auto, got"):
        wanted(value, PARALLEL, cores=2)


def test_the_report_adds_up():
    rep = PrewarmReport(4, (GroupReport("m", "cpu", 3, 40, 10, 30, 5, 1, 2.0, 3.0),
                            GroupReport("n", "cpu", 1, 7, 7, 0)), {3: "invalid"}, 0.1, 5.0)
    assert rep.texts == 47 and rep.embedded == 35
    body = json.loads(rep.to_json())
    assert body["texts"] == 47 and body["skipped"] == {"3": "invalid"}
    assert body["groups"][0]["sentences_embedded"] == 5


def _jobs(cache, *extra):
    return [["dataset=tiny", f"runtime.cache_dir={cache}", "runtime.show_progress=false", *extra, o]
            for o in ("chunk.size=48", "chunk.size=96")]


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
        assert json.loads((tmp_path / "sweep" / "prewarm.json").read_text())["groups"][0][
            "sentences_embedded"] == group.sentences_embedded
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
        cfg = compose("config", overrides=_jobs(cache)[0])
        stages = build_stages(cfg)
        dataset = load_dataset(cfg.dataset)
        docs = list(dict.fromkeys(c.embedding_input
                                  for c in stages.chunker.chunk_documents(dataset.documents)))
        queries = list(dict.fromkeys(q.query for q in dataset.queries))
        node = embedder_node(cfg)
        parts = embed_spread(node, docs, queries, ["cpu", "cpu"])
        assert len(parts) == 2 and all(p["embedded"] > 0 for p in parts)
        assert sum(p["embedded"] for p in parts) == len(docs) + len(queries)
        fresh = build_stages(cfg).embedder
        fresh.embed_documents(docs)
        fresh.embed_queries(queries)
        assert fresh.stats.embedded == 0 and fresh.stats.cache_hits == len(docs) + len(queries)
