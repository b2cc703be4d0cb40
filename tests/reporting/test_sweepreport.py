"""``sweep.reporting.sweepreport``: everything a report renders, read once from a sweep folder
written through sweep's own types (tests/sweepdirs.py, no model)."""

from __future__ import annotations

import numpy as np
import pytest

from sweep.decision.agreement import HAND_WRITTEN, SYNTHETIC
from sweep.reporting.sweepreport import build_report
from sweepdirs import TYPES, base, make_grid, make_job


def _grid(folder, **kw):
    """Job 1 finds everything: the best, and the recommended setting."""
    return make_grid(
        folder, {(64, 0): base(), (128, 0): np.ones(60), (256, 16): base(seed=1)}, **kw
    )


def test_a_folder_without_rows_has_no_report(tmp_path):
    assert build_report(tmp_path) is None
    (tmp_path / "0").mkdir()
    (tmp_path / "0" / "resolved_config.yaml").write_text("a: 1\n")
    assert build_report(tmp_path) is None


def test_rows_labels_and_the_frame(tmp_path):
    _grid(tmp_path)
    make_job(tmp_path, 3, 512, 0, None, status="failed", error="RuntimeError: boom")
    rep = build_report(str(tmp_path))  # a str is fine
    assert rep.sweep_dir == tmp_path
    assert [r.job for r in rep.rows] == [0, 1, 2, 3] and [r.job for r in rep.ok] == [0, 1, 2]
    assert rep.keys == ("chunk.size", "chunk.overlap")
    assert rep.labels == {
        0: "size=64 overlap=0",
        1: "size=128 overlap=0",
        2: "size=256 overlap=16",
        3: "size=512 overlap=0",
    }
    assert rep.row(3).status == "failed" and rep.row(1).settings["chunk.size"] == 128
    with pytest.raises(StopIteration):
        rep.row(99)
    assert list(rep.frame["job"]) == [0, 1, 2, 3]
    assert list(rep.frame["status"]) == ["ok", "ok", "ok", "failed"]


def test_a_setting_that_varies_besides_size_and_overlap_is_a_key(tmp_path):
    make_job(tmp_path, 0, 64, 0, base(), settings={"embed.model": "a"})
    make_job(tmp_path, 1, 64, 0, base(), settings={"embed.model": "b"})
    rep = build_report(tmp_path)
    assert "embed.model" in rep.keys and rep.labels[0] != rep.labels[1]
    assert rep.labels[0].startswith("size=64 overlap=0")


def test_the_group_view_of_the_chosen_setting(tmp_path):
    _grid(tmp_path)
    rep = build_report(tmp_path)
    (view,) = rep.groups
    d = view.decision
    assert d is rep.decision.decisions[0] and d.chosen_job == 1
    assert view.worst_setting == "size=128 overlap=0"
    # Worst first: the chosen setting's 60 queries, lowest score, then hardest across settings.
    assert len(view.worst) == 60
    keys = [(w.value, w.across_mean, w.query_id) for w in view.worst]
    assert keys == sorted(keys)
    b0, b2 = base(), base(seed=1)
    for w in view.worst:
        i = int(w.query_id[1:])
        assert w.value == 1.0
        assert w.across_mean == pytest.approx((b0[i] + 1.0 + b2[i]) / 3)
        assert (w.across_min, w.across_max) == (min(b0[i], b2[i]), 1.0)
        assert w.trace.query_id == w.query_id and w.trace.hits[0].n_tokens == 128  # job 1's
    # By query type: each job's mean over the queries of each type.
    br = view.breakdown
    assert br.jobs == (0, 1, 2) and br.types == tuple(sorted(TYPES)) and br.counts == (20, 20, 20)
    for j, t in enumerate(br.types):
        idx = [i for i in range(60) if TYPES[i % 3] == t]
        assert br.means[0, j] == pytest.approx(b0[idx].mean())
        assert br.means[1, j] == 1.0
    # Each type on its own metric: these rows have no mrr@5 (fact) or complete@5 (multi)
    # scores, so only adversarial, on the fallback recall@5 (the primary), is shown.
    tm = view.type_metrics
    assert (tm.types, tm.metrics, tm.counts) == (("adversarial",), ("recall@5",), (20,))
    np.testing.assert_allclose(tm.means[:, 0], br.means[:, br.types.index("adversarial")])
    assert view.agreement is None  # every question has the same (no) source


def test_without_query_types_there_is_no_breakdown(tmp_path):
    _grid(tmp_path, types=None)
    (view,) = build_report(tmp_path).groups
    assert view.breakdown is None and view.type_metrics is None and len(view.worst) == 60


def test_synthetic_and_hand_written_questions_are_compared(tmp_path):
    sources = [SYNTHETIC if i % 2 else "hand" for i in range(60)]
    _grid(tmp_path, sources=sources)
    (view,) = build_report(tmp_path).groups
    a = view.agreement
    assert a is not None and a.names == (SYNTHETIC, HAND_WRITTEN) and a.n_queries == (30, 30)
    everything_synthetic = tmp_path / "s"
    _grid(everything_synthetic, sources=[SYNTHETIC] * 60)
    assert build_report(everything_synthetic).groups[0].agreement is None


def test_rows_of_two_evaluation_sets_make_two_groups_each_with_its_own_pick(tmp_path):
    make_job(tmp_path, 0, 64, 0, base(), fingerprint="a" * 16)
    make_job(tmp_path, 1, 128, 0, np.ones(60), fingerprint="a" * 16)
    make_job(tmp_path, 2, 64, 0, np.ones(60), fingerprint="b" * 16)
    make_job(tmp_path, 3, 128, 0, base(), fingerprint="b" * 16)
    rep = build_report(tmp_path)
    assert len(rep.groups) == 2
    picks = {v.decision.group.dataset.fingerprint[0]: v.decision.chosen_job for v in rep.groups}
    assert picks == {"a": 1, "b": 2}
    assert {v.worst_setting for v in rep.groups} == {rep.labels[1], rep.labels[2]}


def test_without_the_chosen_settings_traces_types_come_from_another_job(tmp_path):
    _grid(tmp_path)
    (tmp_path / "1" / "hits.jsonl").unlink()
    (view,) = build_report(tmp_path).groups
    assert view.decision.chosen_job == 1
    assert view.breakdown is not None and view.breakdown.types == tuple(sorted(TYPES))
    assert len(view.worst) == 60 and all(w.trace is None for w in view.worst)


def test_a_sweep_whose_every_job_failed_still_reads(tmp_path):
    make_job(tmp_path, 0, 64, 64, None, status="invalid", error="ValueError: overlap")
    make_job(tmp_path, 1, 64, 0, None, status="failed", error="RuntimeError: boom")
    rep = build_report(tmp_path)
    assert rep is not None and rep.ok == [] and len(rep.rows) == 2
    assert all(not v.decision.scores and v.breakdown is None and v.worst == () for v in rep.groups)
