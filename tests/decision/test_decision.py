"""``sweep.decision.decide``: paired tests against the best, groups of comparable rows, the pick."""

import numpy as np

from sweep.core.measures import Primary
from sweep.decision.decide import decide, group_rows
from sweep.reporting.frames import per_query_tables
from sweep.reporting.sweepreport import build_report
from sweep.reporting.tables import results_markdown
from sweep.store.row import load_rows
from sweepdirs import GRID, base, make_grid, make_job, score_table


def _decide(path):
    rows = load_rows(path)
    return decide(rows, per_query_tables(rows))


def test_identical_settings_are_never_worse(tmp_path):
    make_grid(tmp_path, {so: base() for so in GRID})
    d = _decide(tmp_path)
    (only,) = d.decisions
    assert sorted(c.verdict for c in only.comparisons.values()) == ["best"] + ["tie"] * 5
    assert all(c.p_holm == 1.0 for c in only.comparisons.values())
    md = results_markdown(build_report(tmp_path))
    assert "worse" not in md and md.count("≈ best (p=1.00)") == 5
    assert "(95%, 100 resamples, seed 0)" in md


def test_a_strongly_better_setting_makes_every_other_worse(tmp_path):
    scores = {so: base() for so in GRID}
    scores[(128, 16)] = np.ones(60)
    make_grid(tmp_path, scores)
    rep = build_report(tmp_path)
    verdicts = {rep.labels[j]: c.verdict for j, c in rep.decision.decisions[0].comparisons.items()}
    assert verdicts.pop("size=128 overlap=16") == "best" and set(verdicts.values()) == {"worse"}
    assert (
        "Recommendation: size=128 overlap=16 has the best span recall@5 (1.000) and every "
        "other setting is significantly worse."
    ) in results_markdown(rep)


def test_recommendation_is_the_cheapest_setting_as_good_as_the_best(tmp_path):
    b = base()
    scores = {so: b.copy() for so in GRID}
    better = b.copy()
    better[np.flatnonzero(b == 0)[:2]] = 1  # two queries more: not a real difference
    scores[(256, 0)] = better
    make_grid(tmp_path, scores)
    rep = build_report(tmp_path)
    text = results_markdown(rep)
    # Best is size=256 (1280 tokens at k=5); size=64 reads 320 tokens and is as good;
    # of the two size=64 rows, overlap=0 has fewer chunks.
    assert (
        "Recommendation: size=64 overlap=0 is not distinguishable from the best, "
        "size=256 overlap=0, on span recall@5"
    ) in text
    assert "retrieves 320 tokens per query instead of 1280" in text
    d = rep.decision.decisions[0]
    assert d.recommendation.job == 0 and d.comparisons[4].verdict == "best"


def test_with_a_budget_primary_the_smaller_index_wins_among_ties(tmp_path):
    make_grid(tmp_path, {so: base() for so in GRID}, primary="span/recall@512t")
    rep = build_report(tmp_path)
    d = rep.decision.decisions[0]
    assert d.primary == Primary("span", Primary.parse("recall@512t").measure)
    # At 512 tokens size=256 gets half the recall of the smaller sizes (see make_job): worse.
    verdicts = {rep.labels[j]: c.verdict for j, c in d.comparisons.items()}
    assert verdicts["size=256 overlap=0"] == verdicts["size=256 overlap=16"] == "worse"
    # The rest tie and fill the same budget: the smallest index wins (size=128 overlap=0, 78 chunks).
    assert rep.labels[d.recommendation.job] == "size=128 overlap=0"
    assert (
        "at the same 512 tokens per query needs 78 chunks in the index instead of 156"
        in d.recommendation.reason
    )


def test_a_pick_from_few_queries_says_it_is_weak(tmp_path):
    make_grid(tmp_path, {so: base(10) for so in GRID})
    d = _decide(tmp_path).decisions[0]
    assert set(d.comparisons) == set(range(6)) and d.n_compared == 10
    text = results_markdown(build_report(tmp_path))
    assert (
        "Only 10 queries back this: a weak pick." in text and "Only 10 queries are compared" in text
    )


def test_a_row_without_per_query_scores_is_untested_and_never_called_worse(tmp_path):
    # Issue 17: a kill between row.json and per_query.csv; the untested row has the highest mean.
    make_grid(tmp_path, {(64, 0): base(), (128, 0): np.zeros(60)})
    make_job(tmp_path, 2, 256, 0, np.ones(60), scores=False)
    rep = build_report(tmp_path)
    d = rep.decision.decisions[0]
    assert d.untested == (2,) and 2 not in d.comparisons
    assert rep.decision.verdict(rep.row(2)) == "untested"
    text = results_markdown(rep)
    assert "every other tested setting is significantly worse" in text
    assert "every other setting is significantly worse" not in text
    assert "Not tested (no per-query scores): size=256" in text
    assert "with a higher mean span recall@5 than the best tested setting: size=256" in text


def test_rows_of_two_datasets_are_decided_apart(tmp_path):
    # dataset=tiny,kestrel: each dataset has its own best and its own recommendation.
    make_job(
        tmp_path,
        0,
        64,
        0,
        base(),
        dataset="tiny",
        fingerprint="1" * 16,
        settings={"dataset": "tiny"},
    )
    make_job(
        tmp_path,
        1,
        128,
        0,
        np.ones(60),
        dataset="tiny",
        fingerprint="1" * 16,
        settings={"dataset": "tiny"},
    )
    make_job(
        tmp_path,
        2,
        64,
        0,
        base(seed=3),
        dataset="kestrel",
        fingerprint="2" * 16,
        settings={"dataset": "kestrel"},
    )
    make_job(
        tmp_path,
        3,
        128,
        0,
        base(seed=3),
        dataset="kestrel",
        fingerprint="2" * 16,
        settings={"dataset": "kestrel"},
    )
    rep = build_report(tmp_path)
    assert [g.jobs for g in group_rows(rep.rows)] == [(0, 1), (2, 3)]
    tiny, kestrel = rep.decision.decisions
    assert tiny.group.label == "dataset tiny" and kestrel.group.label == "dataset kestrel"
    assert tiny.comparisons[1].verdict == "best" and tiny.comparisons[0].verdict == "worse"
    assert {c.verdict for c in kestrel.comparisons.values()} == {"best", "tie"}
    text = results_markdown(rep)
    assert "Recommendation (dataset tiny):" in text and "Recommendation (dataset kestrel):" in text
    assert "never tested against each other" in text


def test_rows_scored_with_different_eval_settings_are_never_tested_together(tmp_path):
    make_job(tmp_path, 0, 64, 0, base(), min_coverage=0.3, settings={"eval.min_coverage": 0.3})
    make_job(tmp_path, 1, 64, 0, np.ones(60), min_coverage=1.0, settings={"eval.min_coverage": 1.0})
    rep = build_report(tmp_path)
    assert [d.group.label for d in rep.decision.decisions] == [
        "eval.min_coverage=0.3",
        "eval.min_coverage=1.0",
    ]
    assert all(len(d.comparisons) == 0 for d in rep.decision.decisions)
    assert "One setting ran" in results_markdown(rep)


def test_per_query_files_without_the_primary_metric_give_a_note(tmp_path):
    make_grid(tmp_path, {so: base() for so in GRID[:2]})
    for job in (0, 1):
        score_table({"ndcg@5": base()}).write_csv(tmp_path / str(job) / "per_query.csv")
    text = results_markdown(build_report(tmp_path))
    assert "Significance needs per-query span recall@5 of at least two settings" in text


def test_ties_say_how_many_questions_would_tell_them_apart(tmp_path):
    b = base()
    near = b.copy()
    near[np.flatnonzero(b)[:3]] = 0
    make_grid(tmp_path, {(64, 0): b, (128, 0): near, (256, 0): b.copy()})
    rep = build_report(tmp_path)
    d = rep.decision.decisions[0]
    (c,) = [c for c in d.comparisons.values() if c.job == 1]
    assert c.verdict == "tie" and c.n_needed is not None
    text = "\n".join(d.needed)
    assert (
        f"size=128 overlap=0 vs best: a difference of {abs(c.diff):.3f} would need about "
        f"{c.n_needed:,} questions; you have 60."
    ) in text
    assert "size=256 overlap=0 vs best: no difference observed" in text
    assert "normal approximation" in text and "α = 0.05/2" in text
    from sweep.reporting.frames import frame
    from sweep.reporting.tables import terminal_text

    df = frame(rep.rows, rep.decision)
    assert (
        list(df["n_needed"].isna()) == [True, False, True] and df.loc[1, "n_needed"] == c.n_needed
    )
    assert text in terminal_text(rep)


def test_a_pick_that_wins_only_by_reading_more_tokens_is_said_to_fail_at_equal_cost(tmp_path):
    # size=256 finds everything at k=5, but at 256 tokens it fits a quarter of a chunk's
    # worth (make_job: recall@Bt = recall * min(1, B / (4 * size))), so the small sizes
    # beat it there: the pick at k must not be called best at the same cost.
    scores = {so: base() for so in GRID}
    scores[(256, 0)] = np.ones(60)
    make_grid(tmp_path, scores)
    d = build_report(tmp_path).decision.decisions[0]
    assert d.recommendation is not None
    assert d.same_cost.startswith("At equal cost it does not hold: at 256 tokens per query ")
    assert "span recall@256t" in d.same_cost and "The pick is best at k=5 chunks" in d.same_cost
    assert d.same_cost in d.recommendation_text


def test_a_pick_that_holds_at_every_budget_says_so(tmp_path):
    scores = {so: base() for so in GRID}
    scores[(64, 0)] = np.ones(60)  # the smallest chunks: every budget fits their k
    make_grid(tmp_path, scores)
    d = build_report(tmp_path).decision.decisions[0]
    assert d.same_cost == (
        "It holds at equal cost too: best or not distinguishable from the best at every "
        "token budget (256t, 512t, 1024t per query)."
    )


def test_a_budget_primary_needs_no_equal_cost_check(tmp_path):
    make_grid(tmp_path, {so: base() for so in GRID}, primary="span/recall@512t")
    assert build_report(tmp_path).decision.decisions[0].same_cost == ""
