"""How a sweep scores and compares its settings: the ``eval`` config node, checked once.

``conf/eval/default.yaml`` builds it with ``_target_``; its values are the dataclass's
defaults, declared here (tests/core/test_evalconfig.py keeps the two equal). A bad value
fails in ``__post_init__`` with one line naming the key, before any work starts:
it would fail every job alike, or worse, print conclusions computed from nonsense.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from sweep.core.checks import integer, number
from sweep.core.errors import BadInput
from sweep.core.measures import MIN_COVERAGE, Measure, Primary, measures_for

__all__ = ["EvalConfig", "EvalConfigError"]

_MAX_INT = 2**31 - 1


class EvalConfigError(ValueError, BadInput):
    """A bad ``eval.*`` value; ``str()`` is one line naming the key."""


def _int_tuple(key: str, value: Any, example: str, *, required: bool) -> tuple[int, ...]:
    # A tuple, a list or an OmegaConf ListConfig (a Sequence too); never a lone number.
    items = list(value) if isinstance(value, Sequence) and not isinstance(value, str) else None
    if (
        items is None
        or (required and not items)
        or not all(
            isinstance(v, int) and not isinstance(v, bool) and 0 < v <= _MAX_INT for v in items
        )
    ):
        raise EvalConfigError(
            f"eval.{key} must be a list of positive integers, e.g. {example}, got {value!r}"
        )
    return tuple(dict.fromkeys(int(v) for v in items))


@dataclass(frozen=True)
class EvalConfig:
    """Scoring and the paired comparison of settings.

    Every metric is computed at every ``k`` and ``budgets`` entry; ``table_k``
    picks the printed columns; ``primary`` is the metric settings are tested
    and recommended on.
    """

    k: tuple[int, ...] = (1, 3, 5, 10)
    budgets: tuple[int, ...] = (256, 512, 1024)
    gain: str = "linear"
    min_coverage: float = MIN_COVERAGE
    table_k: tuple[int, ...] = (5,)
    primary: str = "span/recall@5"
    n_boot: int = 1000
    seed: int = 0
    alpha: float = 0.05
    n_perm: int = 10_000
    #: Power at which "questions needed" is computed for settings that tie with the best.
    power: float = 0.8
    #: Queries timed one at a time for the latency_p50_ms/latency_p95_ms columns (0: none).
    latency_queries: int = 32
    #: The metric that fits each query type (a fact: is the first hit right, mrr; two-hop:
    #: are both passages in, complete), shown beside the primary in the type breakdown:
    #: a name (its k is the primary's) or a full measure (``mrr@1``); ``"*"``: every other type.
    type_metrics: Any = (
        ("fact", "mrr"),
        ("multi", "complete"),
        ("graded", "ndcg"),
        ("*", "recall"),
    )
    #: Types whose two-hop failures are classified; null: every query with two or more
    #: evidence spans (also what a dataset without types gets).
    twohop_types: Any = ("multi",)
    # Keys that only change what is printed, never a score or a verdict.
    _PRESENTATION = ("table_k", "type_metrics", "twohop_types", "power", "latency_queries")

    def __post_init__(self) -> None:
        ks = _int_tuple("k", self.k, "[1,3,5,10]", required=True)
        budgets = _int_tuple("budgets", self.budgets, "[256,512,1024]", required=False)
        table_k = _int_tuple("table_k", self.table_k, "[5]", required=False)
        if not set(table_k) <= set(ks):
            raise EvalConfigError(f"eval.table_k {list(table_k)} must be among eval.k {list(ks)}")
        if self.gain not in ("linear", "exponential"):
            raise EvalConfigError(f"eval.gain must be linear or exponential, got {self.gain!r}")
        e = EvalConfigError
        number("eval.min_coverage", self.min_coverage, 0, 1, open_low=True, error=e)
        number("eval.alpha", self.alpha, 0, 1, open_low=True, error=e)
        number("eval.power", self.power, 0, 0.999, open_low=True, error=e)
        integer("eval.latency_queries", self.latency_queries, 0, 1_000_000, error=e)
        integer("eval.n_boot", self.n_boot, 1, 1_000_000, error=e)
        integer("eval.n_perm", self.n_perm, 1, 10_000_000, error=e)
        integer("eval.seed", self.seed, 0, _MAX_INT, error=e)
        try:
            primary = Primary.parse(str(self.primary))
        except ValueError as e:
            raise EvalConfigError(f"eval.primary {e}") from None
        m = primary.measure
        if m.k is not None and m.k not in ks:
            raise EvalConfigError(
                f"eval.primary {self.primary!r}: k={m.k} is not in eval.k {list(ks)}"
            )
        if m.budget is not None and m.budget not in budgets:
            raise EvalConfigError(
                f"eval.primary {self.primary!r}: budget {m.budget} is not in "
                f"eval.budgets {list(budgets)}"
            )
        type_metrics = self._type_metrics(primary, ks, budgets)
        twohop = self.twohop_types
        if twohop is not None:
            if isinstance(twohop, str) or not all(isinstance(t, str) for t in twohop):
                raise EvalConfigError(
                    f"eval.twohop_types must be a list of query types or null, got {twohop!r}"
                )
            twohop = tuple(twohop)
        for name, value in (
            ("type_metrics", type_metrics),
            ("twohop_types", twohop),
            ("k", ks),
            ("budgets", budgets),
            ("table_k", table_k),
            ("primary", str(primary)),
            ("min_coverage", float(self.min_coverage)),
            ("alpha", float(self.alpha)),
            ("power", float(self.power)),
        ):
            object.__setattr__(self, name, value)

    def _type_metrics(
        self, primary: Primary, ks: tuple[int, ...], budgets: tuple[int, ...]
    ) -> tuple[tuple[str, str], ...]:
        raw = self.type_metrics
        pairs = list(raw.items()) if isinstance(raw, Mapping) else list(raw or ())
        out = []
        for pair in pairs:
            if not (
                isinstance(pair, Sequence)
                and len(pair) == 2
                and all(isinstance(x, str) for x in pair)
            ):
                raise EvalConfigError(
                    f"eval.type_metrics must map query types to metric names, "
                    f"e.g. {{fact: mrr, multi: complete}}, got {raw!r}"
                )
            t, name = pair
            try:
                measure = self._type_measure(name, primary)
            except ValueError as e:
                raise EvalConfigError(f"eval.type_metrics.{t}: {e}") from None
            if (measure.k is not None and measure.k not in ks) or (
                measure.budget is not None and measure.budget not in budgets
            ):
                raise EvalConfigError(
                    f"eval.type_metrics.{t}: {measure} is not scored (its k or "
                    "budget is not in eval.k / eval.budgets)"
                )
            if primary.level not in measure.levels:
                raise EvalConfigError(
                    f"eval.type_metrics.{t}: {measure.name} does not exist at the "
                    f"{primary.level} level of the primary metric"
                )
            out.append((t, name))
        return tuple(out)

    @staticmethod
    def _type_measure(name: str, primary: Primary) -> Measure:
        if "@" in name:
            return Measure.parse(name)
        m = primary.measure
        return Measure(name, k=m.k, budget=m.budget) if name != "precision_omega" else Measure(name)

    def type_metric(self, query_type: str | None) -> str | None:
        """The metric (``mrr@5``) that fits a query type, at the primary's level."""
        mapping = dict(self.type_metrics)
        name = mapping.get(query_type) if query_type is not None else None
        name = name or mapping.get("*")
        return None if name is None else str(self._type_measure(name, self.primary_metric))

    @property
    def primary_metric(self) -> Primary:
        return Primary.parse(self.primary)

    @property
    def measures(self) -> list[Measure]:
        return measures_for(self.k, self.budgets)

    @property
    def cost_k(self) -> int:
        """The k whose retrieved tokens are a setting's reading cost: the primary's, else the
        largest printed k."""
        m = self.primary_metric.measure
        return m.k if m.k is not None else max(self.table_k or self.k)

    def with_primary(self, primary: str) -> EvalConfig:
        return dataclasses.replace(self, primary=primary)

    def to_dict(self) -> dict[str, Any]:
        out = {
            f.name: (list(v) if isinstance(v := getattr(self, f.name), tuple) else v)
            for f in dataclasses.fields(self)
        }
        out["type_metrics"] = dict(self.type_metrics)
        return out

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> EvalConfig:
        names = {f.name for f in dataclasses.fields(cls)}
        unknown = sorted(set(data) - names - {"_target_"})
        if unknown:
            raise EvalConfigError(
                f"unknown eval key {unknown[0]!r}; valid keys: {', '.join(sorted(names))}"
            )
        return cls(**{k: v for k, v in data.items() if k in names})

    def comparable_with(self, other: EvalConfig) -> bool:
        """Whether rows scored with ``self`` and ``other`` may be tested against each other."""
        return self.scoring_key() == other.scoring_key()

    def scoring_key(self) -> tuple[tuple[str, Any], ...]:
        """Every setting that changes a score or a verdict, as a hashable value."""
        return tuple(
            (f.name, getattr(self, f.name))
            for f in dataclasses.fields(self)
            if f.name not in self._PRESENTATION
        )
