"""Chunk options compose from the Hydra config: plain overrides reach every strategy's options."""

from __future__ import annotations

import inspect

import numpy as np
import pytest
from hydra import compose, initialize_config_dir
from hydra.utils import instantiate

from sweep.chunking import SemanticChunker, TokenChunker
from sweep.chunking.base import strategies
from sweep.chunking.factory import strategy_options
from sweep.hydrakit.config import CONF_DIR, register

register()
# sweep's own strategies; the framework presets (langchain, ...) have their own tests
PRESETS = sorted(
    p.stem
    for p in (CONF_DIR / "chunk").glob("*.yaml")
    if "build_framework_chunker" not in p.read_text() and "base/framework" not in p.read_text()
)


def _chunk(overrides: list[str]):
    with initialize_config_dir(config_dir=str(CONF_DIR), version_base="1.3"):
        return compose(config_name="config", overrides=overrides).chunk


def _embed(texts: list[str]) -> np.ndarray:
    return np.ones((len(texts), 4))


def test_semantic_options_are_plain_overrides() -> None:
    # Issue 17 item 8: this raised Hydra's "Key 'breakpoint_percentile' is not in struct".
    node = _chunk(
        [
            "chunk=semantic",
            "chunk.breakpoint_percentile=75",
            "chunk.buffer_size=0",
            "chunk.min_unit_tokens=8",
        ]
    )
    chunker = instantiate(node, embed_fn=_embed)
    assert isinstance(chunker, SemanticChunker)
    assert (chunker.breakpoint_percentile, chunker.buffer_size, chunker.min_unit) == (75.0, 0, 8)
    assert chunker.notes == ()


def test_strategy_key_alone_gives_the_semantic_chunker_and_its_options() -> None:
    # chunk=token (the default preset) with chunk.strategy=semantic: the same
    # chunker as chunk=semantic, options included, so a strategy sweep can tune them.
    node = _chunk(["chunk.strategy=semantic", "chunk.min_unit_tokens=8"])
    chunker = instantiate(node, embed_fn=_embed)
    assert isinstance(chunker, SemanticChunker) and chunker.min_unit == 8
    assert (
        instantiate(_chunk(["chunk=semantic"]), embed_fn=_embed).settings
        == instantiate(_chunk(["chunk.strategy=semantic"]), embed_fn=_embed).settings
    )


def test_an_option_of_another_strategy_is_reported_not_an_error() -> None:
    chunker = instantiate(
        _chunk(["chunk=token", "chunk.breakpoint_percentile=75"]), embed_fn=_embed
    )
    assert isinstance(chunker, TokenChunker)
    assert chunker.notes == ("option breakpoint_percentile=75 is ignored by strategy 'token'",)


@pytest.mark.parametrize("preset", PRESETS)
def test_every_preset_carries_every_option_at_the_code_default(preset: str) -> None:
    node = _chunk([f"chunk={preset}"])
    declared = {k: default for k, (_, default) in strategy_options().items()}
    assert {k: node[k] for k in declared} == declared
    # each option's default is its own strategy's keyword parameter's
    owners = {k: strategies()[name].cls for k, (name, _) in strategy_options().items()}
    assert {
        k: inspect.signature(cls.__init__).parameters[k].default for k, cls in owners.items()
    } == declared
    chunker = instantiate(node, embed_fn=_embed)
    assert chunker.strategy == preset and chunker.notes == ()
