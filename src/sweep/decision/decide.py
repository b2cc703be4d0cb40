"""What to decide from a sweep: which settings the evaluation set can tell apart, and the pick.

Rows are tested against each other only when they were scored on the same
evaluation set (by content: :meth:`Dataset.fingerprint`) with the same scoring
settings (the ``eval.*`` keys that change a score); each such group gets its own best
setting, paired tests (Holm-corrected) and recommendation. A setting that ran
but whose per-query scores are missing is marked untested, never counted as
worse, and the recommendation says so.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field

from sweep.core.evalconfig import EvalConfig
from sweep.core.measures import Primary
from sweep.core.settings import setting_label, varied_settings
from sweep.decision.significance import Comparison, Recommendation, compare_to_best, recommend
from sweep.scoring.perquery import PerQueryScores
from sweep.scoring.table import ScoreTable
from sweep.store.row import DatasetInfo, Row

__all__ = [
    "PICK_MARK",
    "SMALL_EVAL_SET",
    "Decision",
    "Group",
    "SweepDecision",
    "decide",
    "group_rows",
    "holm_correction",
    "same_cost_check",
    "verdict_text",
]

#: Below this many compared queries the test can only see large differences: say so.
SMALL_EVAL_SET = 30
#: Appended to the recommended setting's verdict (``≈ best (p=0.84), recommended``), so the
#: pick is marked in every table and not only the best.
PICK_MARK = "recommended"


@dataclass(frozen=True)
class Group:
    """Rows that may be tested against each other: one dataset content, one scoring setup."""

    number: int
    jobs: tuple[int, ...]
    dataset: DatasetInfo | None
    eval: EvalConfig
    label: str = ""  # how it differs from the other groups; empty when there is one group


@dataclass(frozen=True)
class Decision:
    """One group's ok settings tested against its best on the primary metric, and the pick."""

    group: Group
    primary: Primary
    comparisons: Mapping[int, Comparison] = field(default_factory=dict)
    untested: tuple[int, ...] = ()
    recommendation: Recommendation | None = None
    #: The tested settings' per-query primary metric.
    scores: PerQueryScores = field(default_factory=lambda: PerQueryScores.from_mapping({}))
    notes: tuple[str, ...] = ()
    n_compared: int = 0
    #: For every setting that ties with the best: how many questions would tell them apart.
    needed: tuple[str, ...] = ()
    #: Whether the pick (made at k chunks) also holds when every setting reads the same
    #: number of tokens (:func:`same_cost_check`); empty without budgets or a pick.
    same_cost: str = ""

    @property
    def caption(self) -> str:
        """The line under the printed table: the correction its ``vs best`` p carries, and why
        ``sweep.check`` can say otherwise of a pair; empty when nothing was tested."""
        if len(self.comparisons) < 2:
            return ""
        m = len(self.comparisons) - 1
        head = f"{self.group.label}: " if self.group.label else ""
        if m < 2:
            return f"{head}vs best: {holm_correction(m)}, the p sweep.check gives that pair."
        return (
            f"{head}vs best: {holm_correction(m)}; sweep.check tests one pair unadjusted, "
            f"so its p for a pair can be up to {m} times smaller."
        )

    @property
    def recommendation_body(self) -> str:
        """The pick and why, without the ``Recommendation:`` head; empty without a pick."""
        if self.recommendation is None:
            return ""
        text = self.recommendation.reason
        if self.same_cost:
            text += f" {self.same_cost}"
        if self.n_compared < SMALL_EVAL_SET:
            text += f" Only {self.n_compared} queries back this: a weak pick."
        return text

    @property
    def recommendation_text(self) -> str:
        if self.recommendation is None:
            return ""
        head = f"Recommendation ({self.group.label})" if self.group.label else "Recommendation"
        return f"{head}: {self.recommendation_body}"

    @property
    def indistinguishable(self) -> bool:
        """Two or more settings were tested and none is significantly worse than the best."""
        return len(self.comparisons) > 1 and all(
            c.verdict != "worse" for c in self.comparisons.values()
        )

    @property
    def undecided_text(self) -> str:
        """When no setting could be told from the best, the sentence said before any pick."""
        if not self.indistinguishable:
            return ""
        head = f"{self.group.label}: these" if self.group.label else "These"
        text = (
            f"{head} {self.n_compared} questions cannot tell the settings apart: none "
            f"differs significantly from the best on {self.primary.label}"
        )
        needed = [c.n_needed for c in self.comparisons.values() if c.n_needed is not None]
        if not needed:
            return text + ", and they show no difference that more such questions could confirm."
        # The smallest number is the one for the clearest difference seen: fewer questions
        # than that cannot separate any two settings, even if every difference is real.
        return (
            text + f"; about {min(needed):,} would be needed to confirm even the clearest "
            "difference seen (the smallest of the per-setting estimates); the pick below "
            "only breaks the tie on cost."
        )

    @property
    def chosen_job(self) -> int | None:
        """The setting whose queries are read worst first: the recommended one, else the best."""
        if self.recommendation is not None:
            return self.recommendation.job
        best = [c.job for c in self.comparisons.values() if c.verdict == "best"]
        return best[0] if best else next(iter(self.scores), None)


@dataclass(frozen=True)
class SweepDecision:
    decisions: tuple[Decision, ...]
    notes: tuple[str, ...] = ()

    def of(self, job: int) -> Decision | None:
        return next((d for d in self.decisions if job in d.group.jobs), None)

    def comparison(self, job: int) -> Comparison | None:
        d = self.of(job)
        return None if d is None else d.comparisons.get(job)

    def verdict(self, row: Row) -> str:
        """``best`` / ``≈ best (p=0.43)`` / ``worse (p=0.002)`` / ``untested``; ``–`` when not ok.

        The recommended setting's verdict ends in ``, recommended`` (:data:`PICK_MARK`).
        """
        if not row.ok:
            return "–"
        d = self.of(row.job)
        if d is not None and row.job in d.untested:
            return "untested"
        text = verdict_text(self.comparison(row.job))
        return f"{text}, {PICK_MARK}" if self.is_pick(row.job) else text

    def is_pick(self, job: int) -> bool:
        """Whether ``job`` is its group's recommended setting."""
        d = self.of(job)
        return d is not None and d.recommendation is not None and d.recommendation.job == job

    @property
    def primary(self) -> Primary | None:
        """The primary metric, when every group has the same one."""
        found = {d.primary for d in self.decisions}
        return found.pop() if len(found) == 1 else None


def holm_correction(m: int) -> str:
    """How the ``vs best`` p-values were corrected: ``p Holm-adjusted over 5 comparisons with
    the best``."""
    return f"p Holm-adjusted over {m} comparison{'s' if m != 1 else ''} with the best"


def check_difference(m: int) -> str:
    """Why ``sweep.check`` can judge a pair of this table differently: it tests one planned
    pair, unadjusted, so its p is the table's p before Holm's correction over ``m``."""
    if m < 2:
        return (
            "python -m sweep.check tests one planned pair without adjustment; with one "
            "comparison here, its p for the same pair is this one."
        )
    return (
        f"python -m sweep.check tests one planned pair (a baseline against a new run) "
        f"without adjustment: for the same pair its p is p_value, up to {m} times smaller, "
        "so it can find a significant drop where this column says ≈ best."
    )


def _p(p: float) -> str:
    if p < 0.001:
        return "<0.001"
    return f"={p:.3f}" if p < 0.01 else f"={p:.2f}"


def verdict_text(c: Comparison | None) -> str:
    """``best`` / ``≈ best (p=0.43)`` / ``worse (p=0.002)``; p Holm-adjusted."""
    if c is None:
        return "–"
    if c.verdict == "best":
        return "best"
    return f"{'≈ best' if c.verdict == 'tie' else 'worse'} (p{_p(c.p_holm)})"


def group_rows(rows: Sequence[Row]) -> list[Group]:
    """Rows grouped by dataset content and scoring settings, in order of first job."""
    keyed: dict[tuple, list[Row]] = {}
    for r in rows:
        fp = r.dataset.key if r.dataset else None
        keyed.setdefault((fp, r.eval.scoring_key()), []).append(r)
    members = list(keyed.values())
    if len(members) == 1:
        first = members[0][0]
        return [Group(1, tuple(r.job for r in members[0]), first.dataset, first.eval)]
    names = {m[0].dataset.name if m[0].dataset else None for m in members}
    fingerprints = {m[0].dataset.key if m[0].dataset else None for m in members}
    groups = []
    for number, m in enumerate(members, 1):
        first = m[0]
        parts = []
        if len(fingerprints) > 1 and first.dataset is not None:
            # Two different sets may share a name: then the content hash tells them apart.
            same_name = len(names) < len(fingerprints)
            parts.append(
                f"dataset {first.dataset.name}"
                + (f" #{first.dataset.key[:8]}" if same_name else "")
            )
        own = dict(first.eval.scoring_key())
        parts += [
            f"eval.{k}={v}"
            for k, v in own.items()
            if any(dict(o[0].eval.scoring_key())[k] != v for o in members if o is not m)
        ]
        groups.append(
            Group(
                number,
                tuple(r.job for r in m),
                first.dataset,
                first.eval,
                ", ".join(parts) or f"group {number}",
            )
        )
    return groups


def decide(rows: Sequence[Row], tables: Mapping[int, ScoreTable]) -> SweepDecision:
    """Test every ok setting against its group's best on ``eval.primary``; pick the cheapest tie.

    ``tables`` holds the per-query scores of the ok jobs that saved them.
    """
    groups = group_rows(rows)
    keys = varied_settings([r.settings for r in rows])
    labels = {r.job: setting_label(r.settings, keys) for r in rows}
    by_job = {r.job: r for r in rows}
    decisions = tuple(_decide_group(g, [by_job[j] for j in g.jobs], tables, labels) for g in groups)
    notes: tuple[str, ...] = ()
    if len(groups) > 1:
        parts = "; ".join(f"{g.label}: job(s) {', '.join(map(str, g.jobs))}" for g in groups)
        notes = (
            f"These rows were scored on different evaluation sets or with different scoring "
            f"settings, so they are never tested against each other: each group has its own "
            f"best and recommendation ({parts}).",
        )
    return SweepDecision(decisions, notes)


def _decide_group(
    group: Group, rows: Sequence[Row], tables: Mapping[int, ScoreTable], labels: Mapping[int, str]
) -> Decision:
    ev = group.eval
    primary = ev.primary_metric
    ok = [r for r in rows if r.ok]
    scores = PerQueryScores.from_tables(tables, primary.level, primary.metric, [r.job for r in ok])
    untested = tuple(r.job for r in ok if r.job not in scores)
    if len(ok) < 2:
        note = ("One setting ran: nothing to compare it with.",) if ok else ()
        return Decision(group, primary, untested=untested, scores=scores, notes=note)
    notes = []
    if untested:
        notes.append(
            f"untested: no per-query {primary.label} for "
            f"{', '.join(labels[j] for j in untested)}: left out of the significance test "
            "and the recommendation."
        )
    if len(scores) < 2:
        notes.append(
            f"Significance needs per-query {primary.label} of at least two settings; "
            "is it among the scored metrics (eval.k, eval.budgets)?"
        )
        return Decision(group, primary, untested=untested, scores=scores, notes=tuple(notes))
    try:
        comparisons = compare_to_best(
            scores, alpha=ev.alpha, n_perm=ev.n_perm, seed=ev.seed, power=ev.power
        )
    except ValueError as e:
        notes.append(f"No significance test: {e}.")
        return Decision(group, primary, untested=untested, scores=scores, notes=tuple(notes))
    n_common = len(scores.common()[0])
    m = len(comparisons) - 1
    notes.append(
        f"vs best: each setting against the best on {primary.label}, paired over the "
        f"{n_common} queries scored in every setting (randomization test, {ev.n_perm:,} "
        f"sign flips, seed {ev.seed}), {holm_correction(m)} (p_holm in results.csv; "
        f"p_value is the p before it); ≈ best: p ≥ {ev.alpha:g}, not distinguishable "
        f"from the best. {check_difference(m)}"
    )
    if n_common < SMALL_EVAL_SET:
        notes.append(
            f"Only {n_common} queries are compared: only large differences can be told "
            "apart, so ≈ best is weak evidence that two settings are equal. More "
            "queries sharpen the test."
        )
    needed = _questions_needed(comparisons, labels, n_common, ev)
    cost_k = ev.cost_k
    by_job = {r.job: r for r in ok}
    cost = costs(by_job, scores, ev)
    best_mean = max(c.mean for c in comparisons)
    above = [
        f"{labels[j]} ({m:.3f})"
        for j in untested
        if (m := by_job[j].mean(primary.level, primary.metric)) is not None and m > best_mean
    ]
    rec = recommend(
        comparisons,
        cost,
        metric=primary.label,
        labels=labels,
        untested=[labels[j] for j in untested],
    )
    if rec is None:
        notes.append(
            "No recommendation: the settings as good as the best saved no token cost "
            f"(tokens@{cost_k}, n_chunks)."
        )
    if above:
        notes.append(
            f"Not tested, with a higher mean {primary.label} than the best tested setting: "
            f"{', '.join(above)}; rerun it before deciding."
        )
    same_cost = (
        same_cost_check(rec.job, tables, [c.job for c in comparisons], labels, ev)
        if rec is not None
        else ""
    )
    return Decision(
        group,
        primary,
        {c.job: c for c in comparisons},
        untested,
        rec,
        scores,
        tuple(notes),
        n_common,
        needed,
        same_cost,
    )


def same_cost_check(
    pick: int,
    tables: Mapping[int, ScoreTable],
    jobs: Sequence[int],
    labels: Mapping[int, str],
    ev: EvalConfig,
) -> str:
    """Whether a pick made at k chunks holds when every setting reads the same tokens.

    At a cut-off k, a setting of longer chunks (whole pages, 1024 tokens) hands the LLM
    more text for the same k, so it may win only by reading more. Every token budget of
    ``eval.budgets`` is tested like the primary (each setting against that budget's best,
    paired, Holm-adjusted): the sentence says the pick holds at every budget, or names the
    budget and the setting that beats it there. Empty when the primary is itself a budget
    (every setting already reads the same) or no budget was scored.
    """
    primary = ev.primary_metric
    if primary.measure.budget is not None or primary.measure.k is None or not ev.budgets:
        return ""
    lost: list[str] = []
    checked: list[str] = []
    for budget in ev.budgets:
        metric = f"{primary.measure.name}@{budget}t"
        scores = PerQueryScores.from_tables(tables, primary.level, metric, jobs)
        if pick not in scores or len(scores) < 2:
            continue
        try:
            comparisons = compare_to_best(
                scores, alpha=ev.alpha, n_perm=ev.n_perm, seed=ev.seed, power=ev.power
            )
        except ValueError:
            continue
        checked.append(f"{budget}t")
        mine = next(c for c in comparisons if c.job == pick)
        if mine.verdict == "worse":
            best = next(c for c in comparisons if c.verdict == "best")
            lost.append(
                f"at {budget} tokens per query {labels.get(best.job, f'job {best.job}')} is "
                f"better ({primary.level} {metric}: {best.mean:.3f} vs {mine.mean:.3f}, "
                f"Holm-adjusted p{_p(mine.p_holm)})"
            )
    if not checked:
        return ""
    if lost:
        return (
            f"At equal cost it does not hold: {'; '.join(lost)}. The pick is best at "
            f"k={primary.measure.k} chunks, where settings of longer chunks read more tokens."
        )
    return (
        f"It holds at equal cost too: best or not distinguishable from the best at every "
        f"token budget ({', '.join(checked)} per query)."
    )


def costs(
    rows: Mapping[int, Row], jobs: Iterable[int], ev: EvalConfig
) -> dict[int, tuple[float, float, float]]:
    """What the recommendation minimises, per job: tokens read per query, then chunks in the
    index, then chunks re-ranked per query. With a budget primary every setting fills the
    same budget: the index decides."""
    primary = ev.primary_metric
    out = {}
    for j in jobs:
        st = rows[j].stats
        tokens = (
            float(primary.measure.budget)
            if primary.measure.budget is not None
            else st.tokens(ev.cost_k)
        )
        if tokens is not None and st.n_chunks:
            out[j] = (tokens, float(st.n_chunks), float(st.rerank_candidates))
    return out


def pick(scores: PerQueryScores, rows: Mapping[int, Row], ev: EvalConfig) -> int | None:
    """The job a decision on just these per-query scores would recommend (else its best)."""
    if len(scores) < 2:
        return next(iter(scores), None)
    comparisons = compare_to_best(
        scores, alpha=ev.alpha, n_perm=ev.n_perm, seed=ev.seed, power=ev.power
    )
    rec = recommend(comparisons, costs(rows, scores, ev))
    return rec.job if rec else next(c.job for c in comparisons if c.verdict == "best")


def _questions_needed(
    comparisons: Sequence[Comparison], labels: Mapping[int, str], n_have: int, ev: EvalConfig
) -> tuple[str, ...]:
    """``size=512 overlap=64 vs best: a difference of 0.057 would need about 420 questions;
    you have 167`` for every tie, then how the number is computed."""
    ties = sorted((c for c in comparisons if c.verdict == "tie"), key=lambda c: c.diff)
    if not ties:
        return ()
    lines = []
    for c in ties:
        if c.n_needed is None:
            lines.append(
                f"{labels[c.job]} vs best: no difference observed, so no number of "
                "questions would tell them apart."
            )
        else:
            lines.append(
                f"{labels[c.job]} vs best: a difference of {abs(c.diff):.3f} would need "
                f"about {c.n_needed:,} questions; you have {n_have}."
            )
    m = len(comparisons) - 1
    lines.append(
        f"Questions needed: for a paired test at α = {ev.alpha:g}/{m} (Holm's strictest "
        f"step over {m} comparison(s)) to detect the observed difference with "
        f"{ev.power:.0%} power; normal approximation from the standard deviation of the "
        "per-query differences, so read it as an estimate."
    )
    return tuple(lines)
