"""What each question kind asks the model, from which passages.

A :class:`TaskSource` yields one kind's tasks in a fixed order: passages in
the seeded sampling order, then the same passages again with a "variant"
prompt when more tasks are needed than there are passages (at most
``MAX_VARIANTS`` times each).

- ``fact``: one passage.
- ``adversarial``: a target passage A and its two nearest neighbours by
  embedding, B and C, which are not near copies of A.
- ``multi``: two passages that share a specific entity, in different
  documents or at least two passages apart in one.
- ``unanswerable``: a passage and its two nearest neighbours, as a sample of
  the collection's domain and vocabulary.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from sweep.generate import neighbours, prompts
from sweep.generate.passages import SentenceWindow

__all__ = ["MAX_VARIANTS", "Task", "TaskSource"]

MAX_VARIANTS = 5


@dataclass(frozen=True, slots=True)
class Task:
    """One generation request: its kind, its passages (target first) and variant."""

    kind: str
    passages: tuple[int, ...]
    variant: int = 0
    entity: str | None = None

    @property
    def evidence_passages(self) -> tuple[int, ...]:
        """The passages the quotes must come from, in quote order."""
        if self.kind == "multi":
            return self.passages[:2]
        if self.kind == "unanswerable":
            return ()
        return self.passages[:1]

    def messages(self, pool: Sequence[SentenceWindow]) -> list[dict[str, str]]:
        ps = [pool[i] for i in self.passages]
        if self.kind == "fact":
            return prompts.fact(ps[0], self.variant)
        if self.kind == "adversarial":
            return prompts.adversarial(ps[0], ps[1:], self.variant)
        if self.kind == "multi":
            return prompts.multi(ps[0], ps[1], self.entity or "", self.variant)
        if self.kind == "unanswerable":
            return prompts.unanswerable(ps, self.variant)
        raise ValueError(f"unknown kind {self.kind!r}")


class TaskSource:
    """The tasks of one kind, in order; ``take`` continues where the last call stopped."""

    def __init__(
        self,
        kind: str,
        pool: Sequence[SentenceWindow],
        order: Sequence[int],
        unit_vectors: np.ndarray | None,
        terms: tuple[list[frozenset[str]], Counter] | None = None,
    ) -> None:
        self.kind = kind
        self.pool = pool
        self.order = list(order)
        self.vectors = unit_vectors
        self.terms = terms
        self.note: str | None = None  # why the source ran dry, for the report
        self._cursor = 0
        self._variant = 0
        self._made_in_cycle = 0
        self._used_pairs: set[frozenset[int]] = set()

    @property
    def exhausted(self) -> bool:
        return self.note is not None

    def take(self, count: int) -> list[Task]:
        tasks: list[Task] = []
        while len(tasks) < count and not self.exhausted:
            if self._cursor >= len(self.order):
                if self._made_in_cycle == 0:
                    self.note = self._why_empty()
                    break
                self._variant += 1
                self._cursor = self._made_in_cycle = 0
                self._used_pairs.clear()
                if self._variant >= MAX_VARIANTS:
                    self.note = (
                        f"{len(self.pool)} passages give at most {MAX_VARIANTS} "
                        f"{self.kind} tasks each"
                    )
                    break
            target = self.order[self._cursor]
            self._cursor += 1
            task = self._task(target)
            if task is not None:
                tasks.append(task)
                self._made_in_cycle += 1
        return tasks

    def _why_empty(self) -> str:
        if self.kind == "multi":
            return (
                "no two passages in different documents (or far apart in one) share a "
                "specific name or term"
            )
        return f"the corpus has too few passages for {self.kind} questions"

    def _task(self, target: int) -> Task | None:
        if self.kind == "fact":
            return Task("fact", (target,), self._variant)
        assert self.vectors is not None
        if self.kind in ("adversarial", "unanswerable"):
            near = neighbours.distractors(target, self.vectors, k=2)
            if len(near) < 2:
                return None
            return Task(self.kind, (target, *near), self._variant)
        if self.kind == "multi":
            assert self.terms is not None
            terms, df = self.terms
            found = neighbours.multi_partner(
                target, self.pool, self.vectors, terms, df, self._used_pairs
            )
            if found is None:
                return None
            partner, entity = found
            self._used_pairs.add(frozenset((target, partner)))
            return Task("multi", (target, partner), self._variant, entity)
        raise ValueError(f"unknown kind {self.kind!r}")
