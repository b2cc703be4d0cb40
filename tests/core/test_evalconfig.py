"""``sweep.core.evalconfig``: the eval node validates itself, with one-line errors."""

import pytest

from sweep.core.evalconfig import EvalConfig, EvalConfigError
from sweep.core.measures import Primary


def test_defaults_and_lists_become_tuples():
    ev = EvalConfig(k=[5, 1, 5], budgets=[512])
    assert ev.k == (5, 1) and ev.budgets == (512,) and ev.primary == "span/recall@5"
    assert ev.primary_metric == Primary.parse("span/recall@5") and ev.cost_k == 5
    assert EvalConfig.from_dict(ev.to_dict()) == ev


@pytest.mark.parametrize(
    "kwargs,words",
    [
        ({"primary": "span/recal@5"}, "recal"),
        ({"primary": "span/recall@7"}, "k=7 is not in eval.k"),
        ({"primary": "span/recall@300t"}, "budget 300 is not in eval.budgets"),
        ({"primary": "doc/cov_iou@5"}, "span level only"),
        ({"k": [0, 5]}, "positive"),
        ({"k": 5}, "eval.k must be a list"),
        ({"k": []}, "eval.k must be a list"),
        ({"budgets": [0]}, "e.g. [256,512,1024]"),
        ({"table_k": [7]}, "eval.table_k"),
        ({"n_perm": -5}, "eval.n_perm"),
        ({"alpha": 2}, "eval.alpha"),
        ({"n_boot": 0}, "eval.n_boot"),
        ({"n_boot": 2.5}, "an integer"),
        ({"gain": "cubic"}, "gain"),
        ({"min_coverage": 0}, "eval.min_coverage"),
        ({"seed": -1}, "eval.seed"),
        ({"latency_queries": -1}, "eval.latency_queries"),
        ({"latency_queries": "all"}, "an integer"),
    ],
)
def test_bad_values_fail_with_one_line_naming_the_key(kwargs, words):
    with pytest.raises(EvalConfigError) as e:
        EvalConfig(**kwargs)
    assert words in str(e.value) and "\n" not in str(e.value)


def test_unknown_keys_are_named():
    with pytest.raises(EvalConfigError, match="unknown eval key 'kk'"):
        EvalConfig.from_dict({"kk": [5]})


def test_table_k_does_not_change_what_is_comparable():
    assert EvalConfig(table_k=(1,)).comparable_with(EvalConfig())
    assert not EvalConfig(min_coverage=0.3).comparable_with(EvalConfig())


@pytest.mark.parametrize(
    "text,level,metric",
    [
        ("span/recall@5", "span", "recall@5"),
        ("doc.ndcg@10", "doc", "ndcg@10"),
        ("recall@512t", "span", "recall@512t"),
        ("span/cov_iou@5", "span", "cov_iou@5"),
        ("page/recall@5", "page", "recall@5"),
        ("page.ndcg@512t", "page", "ndcg@512t"),
    ],
)
def test_primary_parses_and_prints(text, level, metric):
    p = Primary.parse(text)
    assert (p.level, p.metric, p.label, p.column) == (
        level,
        metric,
        f"{level} {metric}",
        f"{level}.{metric}",
    )
    assert Primary.parse(str(p)) == p


@pytest.mark.parametrize(
    "text,problem",
    [
        ("chapter/recall@5", "level must be one of doc, span, page"),
        ("span/recall", "needs exactly one cut-off"),
        ("page/cov_recall@5", "span level only"),
        ("doc/cov_iou@5", "span level only"),
        ("span/foo@5", "unknown measure"),
    ],
)
def test_bad_primary_is_one_line_naming_the_problem(text, problem):
    with pytest.raises(ValueError) as e:
        Primary.parse(text)
    assert problem in str(e.value) and "\n" not in str(e.value)


def test_type_metrics_map_types_to_the_primary_k():
    ev = EvalConfig(primary="doc/recall@10")
    assert ev.type_metric("fact") == "mrr@10" and ev.type_metric("multi") == "complete@10"
    assert ev.type_metric("whatever") == "recall@10" and ev.type_metric(None) == "recall@10"
    ev = EvalConfig(type_metrics={"fact": "mrr@1", "*": "ndcg"})
    assert ev.type_metric("fact") == "mrr@1" and ev.type_metric("multi") == "ndcg@5"
    assert EvalConfig(type_metrics={}).type_metric("fact") is None
    # Presentation only: never splits the rows into groups that cannot be compared.
    assert EvalConfig(type_metrics={"*": "ndcg"}).comparable_with(EvalConfig())


@pytest.mark.parametrize(
    "kwargs,words",
    [
        ({"type_metrics": {"fact": "mrrr"}}, "eval.type_metrics.fact: unknown measure"),
        ({"type_metrics": {"fact": "mrr@7"}}, "mrr@7 is not scored"),
        (
            {"type_metrics": {"fact": "cov_iou"}, "primary": "doc/recall@5"},
            "does not exist at the doc level",
        ),
        ({"type_metrics": "mrr"}, "must map query types to metric names"),
        ({"twohop_types": "multi"}, "eval.twohop_types must be a list"),
    ],
)
def test_bad_type_settings(kwargs, words):
    with pytest.raises(EvalConfigError) as e:
        EvalConfig(**kwargs)
    assert words in str(e.value)


def test_a_page_primary_is_a_config_value():
    ev = EvalConfig(primary="page/recall@5")
    assert ev.primary_metric == Primary("page", ev.primary_metric.measure)
    assert ev.primary_metric.column == "page.recall@5"
    assert EvalConfig(primary="page.recall@5").primary == "page/recall@5"
    assert ev.type_metric("fact") == "mrr@5"
    with pytest.raises(ValueError, match="cov_iou exists at the span level only"):
        EvalConfig(primary="page/cov_iou@5")
