"""The ``answers`` and ``judge`` config nodes of ``sweep.answers``, checked."""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["AnswersConfigError", "AnswersSettings", "JudgeSettings"]


class AnswersConfigError(ValueError):
    """A bad ``answers.*`` or ``judge.*`` value; one line naming the key."""


@dataclass(frozen=True)
class AnswersSettings:
    #: Chunks handed to the model per query; null: the sweep's primary k.
    k: int | None = None
    #: Count the requests the run would send; send nothing.
    dry_run: bool = False
    show_progress: bool = True
    #: Bootstrap and test seed.
    seed: int = 0
    n_boot: int = 1000
    n_perm: int = 10_000

    def __post_init__(self) -> None:
        if self.k is not None and (isinstance(self.k, bool) or not isinstance(self.k, int) or self.k < 1):
            raise AnswersConfigError(f"answers.k must be a positive integer or null, got {self.k!r}")
        for key in ("n_boot", "n_perm"):
            v = getattr(self, key)
            if isinstance(v, bool) or not isinstance(v, int) or v < 1:
                raise AnswersConfigError(f"answers.{key} must be a positive integer, got {v!r}")
        if isinstance(self.seed, bool) or not isinstance(self.seed, int) or self.seed < 0:
            raise AnswersConfigError(f"answers.seed must be an integer >= 0, got {self.seed!r}")
        for key in ("dry_run", "show_progress"):
            if not isinstance(getattr(self, key), bool):
                raise AnswersConfigError(f"answers.{key} must be true or false, got {getattr(self, key)!r}")


@dataclass(frozen=True)
class JudgeSettings:
    #: Write answers/judge_sample.csv with this many random verdicts to label (0: none).
    export: int = 0
    #: A labelled judge_sample.csv: report Cohen's kappa per judge.
    agreement: str | None = None

    def __post_init__(self) -> None:
        if isinstance(self.export, bool) or not isinstance(self.export, int) or self.export < 0:
            raise AnswersConfigError(f"judge.export must be an integer >= 0, got {self.export!r}")
        if self.agreement is not None and not isinstance(self.agreement, str):
            raise AnswersConfigError(f"judge.agreement must be a path, got {self.agreement!r}")
