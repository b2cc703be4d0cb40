"""One sweep setting's chunker from its plain settings: the ``_target_`` of the chunk
config group. The strategies, what ``overlap`` means to each and their options are the
registry's (:func:`sweep.chunking.base.strategies`): each strategy declares them where
it is defined."""

from __future__ import annotations

from typing import Any

from sweep.chunking.base import BaseChunker, UnknownChunkSetting, strategies
from sweep.core.suggest import did_you_mean
from sweep.core.tokenization import DEFAULT_TOKENIZER, MODEL_TOKENIZER

# OVERLAP_MEANING and STRATEGIES are made on first use (the module's __getattr__)
__all__ = ["OVERLAP_MEANING", "STRATEGIES", "build_chunker", "strategies_help", "strategy_options"]  # noqa: F822

#: The settings every strategy takes (build_chunker's own parameters).
_SETTINGS = ("strategy", "size", "overlap", "tokenizer", "prefix")


def strategy_options() -> dict[str, tuple[str, Any]]:
    """Every strategy option: name -> (the strategy that takes it, its default)."""
    return {
        name: (s.name, default)
        for s in strategies().values()
        for name, default in s.options.items()
    }


def strategies_help() -> str:
    """The strategies and their options' defaults, for ``python -m sweep --help``."""
    lines = [f"Chunk strategies (chunk.strategy): {', '.join(strategies())}."]
    for s in strategies().values():
        if s.options:
            shown = ", ".join(f"chunk.{k} {v}" for k, v in s.options.items())
            lines.append(f"Options of {s.name}: {shown}.")
    lines.append(
        f"Sizes count tokens of chunk.tokenizer (default {DEFAULT_TOKENIZER}; "
        f"{MODEL_TOKENIZER}: the embedding model's own)."
    )
    return "\n".join(lines)


def __getattr__(name: str) -> Any:
    # Read from the registry when asked, not at import: the registry imports every module
    # of sweep.chunking, which must not happen while this package is still being imported.
    if name == "STRATEGIES":
        return tuple(strategies())
    if name == "OVERLAP_MEANING":
        return {n: s.overlap for n, s in strategies().items()}
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def build_chunker(
    strategy: str = "token",
    size: int = 256,
    overlap: int = 0,
    tokenizer: str = DEFAULT_TOKENIZER,
    prefix: str = "none",
    embed_fn: Any = None,
    **settings: Any,
) -> BaseChunker:
    """Build the chunker for one sweep setting (the ``_target_`` of the chunk config group).

    ``embed_fn`` is handed to a strategy that embeds text itself (``semantic``);
    ``settings`` are strategy options (``breakpoint_percentile``, ``buffer_size``,
    ``min_unit_tokens`` for ``semantic``).
    Options given for another strategy with a non-default value are kept in
    ``notes``. Invalid settings raise ``ChunkingSettingsError`` (a ValueError).
    """
    known = strategies()
    found = known.get(strategy)
    if found is None:
        names = tuple(known)
        raise UnknownChunkSetting(
            f"unknown chunk strategy {strategy!r}{did_you_mean(str(strategy), names)}; "
            f"valid: {', '.join(names)}"
        )
    every = strategy_options()
    unknown = sorted(set(settings) - set(every))
    if unknown:
        keys = sorted(_SETTINGS + tuple(every))
        raise UnknownChunkSetting(
            f"unknown chunk setting {unknown[0]!r}{did_you_mean(unknown[0], keys)}; "
            f"valid: {', '.join(keys)}"
        )
    mine = {k: v for k, v in settings.items() if k in found.options}
    ignored = [
        f"option {k}={v!r} is ignored by strategy {strategy!r}"
        for k, v in sorted(settings.items())
        if k not in found.options and v != every[k][1]
    ]
    if found.takes_embed_fn:
        mine["embed_fn"] = embed_fn
    chunker = found.cls(size=size, overlap=overlap, tokenizer=tokenizer, prefix=prefix, **mine)
    chunker.notes = chunker.notes + tuple(ignored)
    return chunker
