"""The ``answers`` and ``judge`` config nodes of ``sweep.answers``, checked."""

from __future__ import annotations

from dataclasses import dataclass

from sweep.core.checks import integer
from sweep.core.errors import BadInput

__all__ = ["AnswersConfig", "AnswersConfigError", "JudgeConfig"]


class AnswersConfigError(ValueError, BadInput):
    """A bad ``answers.*`` or ``judge.*`` value; one line naming the key."""


@dataclass(frozen=True)
class AnswersConfig:
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
        e = AnswersConfigError
        integer("answers.k", self.k, 1, 10_000, allow_null=True, error=e)
        integer("answers.n_boot", self.n_boot, 1, 1_000_000, error=e)
        integer("answers.n_perm", self.n_perm, 1, 10_000_000, error=e)
        integer("answers.seed", self.seed, 0, 2**31 - 1, error=e)
        for key in ("dry_run", "show_progress"):
            if not isinstance(getattr(self, key), bool):
                raise AnswersConfigError(
                    f"answers.{key} must be true or false, got {getattr(self, key)!r}"
                )


@dataclass(frozen=True)
class JudgeConfig:
    #: Write answers/judge_sample.csv with this many random verdicts to label (0: none).
    export: int = 0
    #: A labelled judge_sample.csv: report Cohen's kappa per judge.
    agreement: str | None = None

    def __post_init__(self) -> None:
        integer("judge.export", self.export, 0, 1_000_000, error=AnswersConfigError)
        if self.agreement is not None and not isinstance(self.agreement, str):
            raise AnswersConfigError(f"judge.agreement must be a path, got {self.agreement!r}")
