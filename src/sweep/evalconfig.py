"""How a sweep scores and compares its settings: the ``eval`` config node, checked once.

``conf`` builds it with ``_target_`` (its defaults are the dataclass's, registered
by :func:`sweep.config.register_configs`, so they live here only). A bad value
fails in ``__post_init__`` with one line naming the key, before any work starts:
it would fail every job alike, or worse, print conclusions computed from nonsense.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any, Mapping, Sequence

from sweep.measures import Measure, Primary, measures_for

__all__ = ["EvalConfig", "EvalConfigError"]

_MAX_INT = 2**31 - 1


class EvalConfigError(ValueError):
    """A bad ``eval.*`` value; ``str()`` is one line naming the key."""


def _int_tuple(key: str, value: Any, example: str, *, required: bool) -> tuple[int, ...]:
    # A tuple, a list or an OmegaConf ListConfig (a Sequence too); never a lone number.
    items = list(value) if isinstance(value, Sequence) and not isinstance(value, str) else None
    if items is None or (required and not items) or not all(
            isinstance(v, int) and not isinstance(v, bool) and 0 < v <= _MAX_INT for v in items):
        raise EvalConfigError(f"eval.{key} must be a list of positive integers, e.g. {example}, "
                              f"got {value!r}")
    return tuple(dict.fromkeys(int(v) for v in items))


def _number(key: str, value: Any, *, integer: bool, low: float, high: float,
            open_low: bool = False) -> Any:
    ok = isinstance(value, (int, float)) and not isinstance(value, bool)
    if integer:
        ok = ok and isinstance(value, int)
    if not ok or not (low < value if open_low else low <= value) or value > high:
        lo = f"({low}" if open_low else f"[{low}"
        kind = "an integer" if integer else "a number"
        raise EvalConfigError(f"eval.{key} must be {kind} in {lo}, {high}], got {value!r}")
    return value


@dataclass(frozen=True)
class EvalConfig:
    """Scoring (SPEC §2) and the paired comparison of settings.

    Every metric is computed at every ``k`` and ``budgets`` entry; ``table_k``
    picks the printed columns; ``primary`` is the metric settings are tested
    and recommended on.
    """

    k: tuple[int, ...] = (1, 3, 5, 10)
    budgets: tuple[int, ...] = (256, 512, 1024)
    gain: str = "linear"
    min_coverage: float = 0.5
    table_k: tuple[int, ...] = (5,)
    primary: str = "span/recall@5"
    n_boot: int = 1000
    seed: int = 0
    alpha: float = 0.05
    n_perm: int = 10_000
    # Keys that only change what is printed, never a score or a verdict.
    _PRESENTATION = ("table_k",)

    def __post_init__(self) -> None:
        ks = _int_tuple("k", self.k, "[1,3,5,10]", required=True)
        budgets = _int_tuple("budgets", self.budgets, "[256,512,1024]", required=False)
        table_k = _int_tuple("table_k", self.table_k, "[5]", required=False)
        if not set(table_k) <= set(ks):
            raise EvalConfigError(f"eval.table_k {list(table_k)} must be among eval.k {list(ks)}")
        if self.gain not in ("linear", "exponential"):
            raise EvalConfigError(f"eval.gain must be linear or exponential, got {self.gain!r}")
        _number("min_coverage", self.min_coverage, integer=False, low=0, high=1, open_low=True)
        _number("alpha", self.alpha, integer=False, low=0, high=1, open_low=True)
        _number("n_boot", self.n_boot, integer=True, low=1, high=1_000_000)
        _number("n_perm", self.n_perm, integer=True, low=1, high=10_000_000)
        _number("seed", self.seed, integer=True, low=0, high=_MAX_INT)
        try:
            primary = Primary.parse(str(self.primary))
        except ValueError as e:
            raise EvalConfigError(f"eval.primary {e}") from None
        m = primary.measure
        if m.k is not None and m.k not in ks:
            raise EvalConfigError(f"eval.primary {self.primary!r}: k={m.k} is not in eval.k {list(ks)}")
        if m.budget is not None and m.budget not in budgets:
            raise EvalConfigError(f"eval.primary {self.primary!r}: budget {m.budget} is not in "
                                  f"eval.budgets {list(budgets)}")
        for name, value in (("k", ks), ("budgets", budgets), ("table_k", table_k),
                            ("primary", str(primary)), ("min_coverage", float(self.min_coverage)),
                            ("alpha", float(self.alpha))):
            object.__setattr__(self, name, value)

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

    def with_primary(self, primary: str) -> "EvalConfig":
        return dataclasses.replace(self, primary=primary)

    def to_dict(self) -> dict[str, Any]:
        return {f.name: (list(v) if isinstance(v := getattr(self, f.name), tuple) else v)
                for f in dataclasses.fields(self)}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> "EvalConfig":
        names = {f.name for f in dataclasses.fields(cls)}
        unknown = sorted(set(data) - names - {"_target_"})
        if unknown:
            raise EvalConfigError(f"unknown eval key {unknown[0]!r}; valid keys: "
                                  f"{', '.join(sorted(names))}")
        return cls(**{k: v for k, v in data.items() if k in names})

    def comparable_with(self, other: "EvalConfig") -> bool:
        """Whether rows scored with ``self`` and ``other`` may be tested against each other."""
        return self.scoring_key() == other.scoring_key()

    def scoring_key(self) -> tuple[tuple[str, Any], ...]:
        """Every setting that changes a score or a verdict, as a hashable value."""
        return tuple((f.name, getattr(self, f.name)) for f in dataclasses.fields(self)
                     if f.name not in self._PRESENTATION)
