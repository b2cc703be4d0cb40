"""Measure names as values: ``recall@5``, ``ndcg@10``, ``cov_iou@5``, ``recall@512t``.

A :class:`Measure` prints and parses losslessly, so the same string is a
config value, a CSV ``metric`` cell and a dict key.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from sweep.core.checks import is_int

__all__ = [
    "COVERAGE_NAMES",
    "LEVELS",
    "MIN_COVERAGE",
    "NAMES",
    "OPTIONAL_LEVELS",
    "PER_CONFIG_NAMES",
    "RANK_NAMES",
    "Measure",
    "Primary",
    "measures_for",
    "parse_measures",
]

# Appended, never reordered: a score table stores a level as its index here.
LEVELS = ("doc", "span", "page")
#: Levels a question set may have no unit at, which summaries and tables then leave out:
#: a set without pages reads as it did before the page level existed.
OPTIONAL_LEVELS = ("page",)
#: The default share of an evidence span's characters the hits must cover before the
#: span counts as found (``eval.min_coverage``; every scoring function's default).
MIN_COVERAGE = 0.5

# Credit-based measures: defined on relevance units, so at every level.
RANK_NAMES = ("recall", "precision", "hit", "mrr", "ap", "ndcg", "complete")
# Character coverage of the evidence spans: only spans have characters.
COVERAGE_NAMES = ("cov_recall", "cov_precision", "cov_iou")
# Computed from the whole index of a configuration, no retrieval and no cut-off.
PER_CONFIG_NAMES = ("precision_omega",)
NAMES = RANK_NAMES + COVERAGE_NAMES + PER_CONFIG_NAMES

_SYNTAX = re.compile(r"(?P<name>[a-z_]+)(?:@(?P<num>[0-9]+)(?P<t>t?))?")


@dataclass(frozen=True)
class Measure:
    """One measure: ``name`` with either a cut-off ``k`` (chunks) or a token ``budget``.

    ``precision_omega`` takes neither; every other measure takes exactly one.
    """

    name: str
    k: int | None = None
    budget: int | None = None

    def __post_init__(self) -> None:
        if self.name not in NAMES:
            raise ValueError(f"unknown measure name {self.name!r}; valid names: {', '.join(NAMES)}")
        for field, value in (("k", self.k), ("budget", self.budget)):
            if value is not None and (not is_int(value) or value < 1):
                raise ValueError(f"{self.name}: {field} must be a positive integer, got {value!r}")
        if self.name in PER_CONFIG_NAMES:
            if self.k is not None or self.budget is not None:
                raise ValueError(f"{self.name} takes no cut-off (it looks at the whole index)")
        elif (self.k is None) == (self.budget is None):
            raise ValueError(
                f"{self.name} needs exactly one cut-off: k chunks ({self.name}@5) "
                f"or a token budget ({self.name}@512t)"
            )

    def __str__(self) -> str:
        if self.k is not None:
            return f"{self.name}@{self.k}"
        if self.budget is not None:
            return f"{self.name}@{self.budget}t"
        return self.name

    @classmethod
    def parse(cls, text: str) -> Measure:
        """``"recall@5"`` -> ``Measure("recall", k=5)``; ``"recall@512t"`` -> budget 512.

        Raises ``ValueError`` naming the valid measure names.
        """
        match = _SYNTAX.fullmatch(text.strip()) if isinstance(text, str) else None
        if match is None or match["name"] not in NAMES:
            raise ValueError(
                f"unknown measure {text!r}; valid names: {', '.join(NAMES)} "
                "(all but precision_omega take @k or @Bt, e.g. recall@5, ndcg@10, recall@512t)"
            )
        num = match["num"]
        if num is None:
            return cls(match["name"])
        value = int(num)
        return cls(match["name"], budget=value) if match["t"] else cls(match["name"], k=value)

    @property
    def levels(self) -> tuple[str, ...]:
        """The levels this measure exists at (coverage measures need spans)."""
        return LEVELS if self.name in RANK_NAMES else ("span",)

    @property
    def is_budget(self) -> bool:
        return self.budget is not None


def parse_measures(texts: Iterable[str]) -> list[Measure]:
    """Parse many measure strings, keeping order and dropping repeats."""
    seen: dict[Measure, None] = {}
    for text in texts:
        seen.setdefault(Measure.parse(text), None)
    return list(seen)


def measures_for(ks: Sequence[int], budgets: Sequence[int] = ()) -> list[Measure]:
    """Every measure the scorer computes at every k and budget, then ``precision_omega``.

    Ordered by name, then cut-offs as given (ks before budgets).
    """
    ks = list(dict.fromkeys(ks))
    budgets = list(dict.fromkeys(budgets))
    out = [Measure(name, k=k) for name in RANK_NAMES + COVERAGE_NAMES for k in ks]
    out += [Measure(name, budget=b) for name in RANK_NAMES + COVERAGE_NAMES for b in budgets]
    # Group by name so a table lists recall@1, recall@3, ..., recall@512t together.
    order = {name: i for i, name in enumerate(NAMES)}
    out.sort(key=lambda m: order[m.name])  # stable: cut-off order kept within a name
    out.append(Measure("precision_omega"))
    return out


@dataclass(frozen=True)
class Primary:
    """The metric settings are tested and recommended on: a level and a measure, ``span/recall@5``.

    Prints and parses losslessly, like :class:`Measure`.
    """

    level: str
    measure: Measure

    def __post_init__(self) -> None:
        if self.level not in LEVELS:
            raise ValueError(f"level must be one of {', '.join(LEVELS)}, got {self.level!r}")
        if self.level not in self.measure.levels:
            raise ValueError(
                f"{self.measure.name} exists at the {'/'.join(self.measure.levels)} level only"
            )

    def __str__(self) -> str:
        return f"{self.level}/{self.measure}"

    @property
    def metric(self) -> str:
        return str(self.measure)

    @property
    def label(self) -> str:
        """``span recall@5``: how tables and notes name it."""
        return f"{self.level} {self.metric}"

    @property
    def column(self) -> str:
        """``span.recall@5``: its column in results.csv."""
        return f"{self.level}.{self.metric}"

    @classmethod
    def parse(cls, text: str) -> Primary:
        """``"span/recall@5"`` (or ``span.recall@5``, ``page/recall@5``; no level means span).

        Raises ``ValueError`` naming the text and the problem.
        """
        raw = str(text).strip()
        level, metric = "span", raw
        for sep in ("/", "."):
            head, found, tail = raw.partition(sep)
            if found and (head in LEVELS or sep == "/"):
                level, metric = head, tail
                break
        if level not in LEVELS:
            raise ValueError(
                f"{text!r}: level must be one of {', '.join(LEVELS)} "
                "(write it as level/metric, e.g. span/recall@5 or page/recall@5)"
            )
        try:
            return cls(level, Measure.parse(metric))
        except ValueError as e:
            raise ValueError(f"{text!r}: {e}") from None
