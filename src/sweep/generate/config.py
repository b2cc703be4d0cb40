"""The ``generate`` config node as a checked value."""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from sweep.core.checks import integer, number
from sweep.core.errors import BadInput

__all__ = ["DEFAULT_KINDS", "KINDS", "GenerateConfig", "GenerateConfigError"]

#: Question kinds, in the order they are planned, written and reported.
KINDS = ("fact", "adversarial", "multi", "unanswerable")
DEFAULT_KINDS = {"fact": 0.4, "adversarial": 0.3, "multi": 0.2, "unanswerable": 0.1}


class GenerateConfigError(ValueError, BadInput):
    """A bad ``generate.*`` setting; ``str()`` names the key and the value on one line."""


@dataclass(frozen=True)
class GenerateConfig:
    n: int = 100
    kinds: Mapping[str, float] = field(default_factory=lambda: dict(DEFAULT_KINDS))
    window_tokens: int = 300
    seed: int = 0
    min_realism: int = 4
    dedup_threshold: float = 0.92
    copy_run_words: int = 8
    check_k: int = 5
    max_attempts: float = 3.0
    out: str | None = None
    overwrite: bool = False
    dry_run: bool = False
    show_progress: bool = True

    def __post_init__(self) -> None:
        integer("generate.n", self.n, 1, 1_000_000, error=GenerateConfigError)
        object.__setattr__(self, "kinds", _kinds(self.kinds))
        integer("generate.window_tokens", self.window_tokens, 20, 8192, error=GenerateConfigError)
        integer("generate.seed", self.seed, 0, 2**32 - 1, error=GenerateConfigError)
        integer("generate.min_realism", self.min_realism, 1, 5, error=GenerateConfigError)
        number(
            "generate.dedup_threshold",
            self.dedup_threshold,
            0.0,
            1.0,
            open_low=True,
            error=GenerateConfigError,
        )
        integer("generate.copy_run_words", self.copy_run_words, 0, 1000, error=GenerateConfigError)
        integer("generate.check_k", self.check_k, 1, 100, error=GenerateConfigError)
        number("generate.max_attempts", self.max_attempts, 1.0, 100.0, error=GenerateConfigError)
        for key in ("overwrite", "dry_run", "show_progress"):
            if not isinstance(getattr(self, key), bool):
                raise GenerateConfigError(
                    f"generate.{key} must be true or false, got {getattr(self, key)!r}"
                )
        if self.out is not None and (not isinstance(self.out, str) or not self.out.strip()):
            raise GenerateConfigError(f"generate.out must be a folder path, got {self.out!r}")
        if self.out is None and not self.dry_run:
            raise GenerateConfigError(
                "generate.out is required: the folder to write the "
                "evaluation set to, e.g. generate.out=my-set-synth"
            )

    def counts(self) -> dict[str, int]:
        """Questions wanted per kind: ``n`` split by the shares, largest remainders
        first, so the counts always add up to ``n``."""
        exact = {k: self.n * self.kinds.get(k, 0.0) for k in KINDS}
        counts = {k: math.floor(v) for k, v in exact.items()}
        left = self.n - sum(counts.values())
        by_remainder = sorted(KINDS, key=lambda k: (-(exact[k] - counts[k]), KINDS.index(k)))
        for k in by_remainder[:left]:
            counts[k] += 1
        return counts

    def describe(self) -> dict[str, Any]:
        return {
            "n": self.n,
            "kinds": dict(self.kinds),
            "window_tokens": self.window_tokens,
            "seed": self.seed,
            "min_realism": self.min_realism,
            "dedup_threshold": self.dedup_threshold,
            "copy_run_words": self.copy_run_words,
            "check_k": self.check_k,
            "max_attempts": self.max_attempts,
        }


def _kinds(kinds: Any) -> dict[str, float]:
    if not isinstance(kinds, Mapping) or not kinds:
        raise GenerateConfigError(
            "generate.kinds must map kinds to shares of generate.n, e.g. "
            f"{{fact: 0.5, adversarial: 0.5}}, got {kinds!r}"
        )
    shares: dict[str, float] = {}
    for kind, share in kinds.items():
        if kind not in KINDS:
            raise GenerateConfigError(
                f"generate.kinds: unknown kind {kind!r}; valid kinds: {', '.join(KINDS)}"
            )
        if (
            isinstance(share, bool)
            or not isinstance(share, (int, float))
            or not math.isfinite(share)
            or share < 0
        ):
            raise GenerateConfigError(f"generate.kinds.{kind} must be a share >= 0, got {share!r}")
        shares[kind] = float(share)
    total = sum(shares.values())
    if abs(total - 1.0) > 1e-6:
        listed = ", ".join(f"{k}={v:g}" for k, v in shares.items())
        raise GenerateConfigError(
            f"generate.kinds shares must sum to 1, got {total:g} ({listed}); "
            "set a kind to 0 to leave it out"
        )
    return {k: shares.get(k, 0.0) for k in KINDS}
