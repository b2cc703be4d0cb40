"""The real configs compose, and every group's nodes instantiate."""

from __future__ import annotations

from pathlib import Path

import pytest
from hydra import compose, initialize_config_dir
from hydra.utils import get_method
from omegaconf import OmegaConf

from sweep.config import CONF_DIR, ROOT, register_resolvers

register_resolvers()


def _options(group: str) -> list[str]:
    return sorted(p.stem for p in (CONF_DIR / group).glob("*.yaml"))


def _compose(overrides: list[str] = ()) -> OmegaConf:
    with initialize_config_dir(config_dir=str(CONF_DIR), version_base="1.3"):
        return compose(config_name="config", overrides=list(overrides), return_hydra_config=True)


def test_top_level_conf_is_the_package_conf():
    assert (ROOT / "conf").resolve() == CONF_DIR.resolve()


def test_default_config_is_multirun_on_the_bundled_corpus():
    cfg = _compose()
    assert cfg.hydra.mode.name == "MULTIRUN"
    assert Path(cfg.dataset.path) == ROOT / "corpora" / "kestrel"
    assert cfg.chunk.strategy == "token" and cfg.chunk.tokenizer == "cl100k_base"
    assert list(cfg.eval.k) == [1, 3, 5, 10]


@pytest.mark.parametrize("group", ["dataset", "chunk", "embed", "index", "retrieve"])
def test_every_option_of_every_group_has_an_importable_target(group):
    for option in _options(group):
        cfg = _compose([f"{group}={option}"])
        node = cfg[group]
        assert "_target_" in node, f"{group}/{option} has no _target_"
        assert callable(get_method(node._target_))


@pytest.mark.parametrize("strategy", ["sentence", "paragraph", "recursive", "markdown", "semantic"])
def test_strategy_presets_inherit_the_token_settings(strategy):
    cfg = _compose([f"chunk={strategy}"])
    assert cfg.chunk.strategy == strategy
    assert cfg.chunk.size == 256 and cfg.chunk.tokenizer == "cl100k_base"


@pytest.mark.parametrize("experiment", ["grid", "strategies"])
def test_experiments_compose_and_name_the_sweep(experiment):
    cfg = _compose([f"experiment={experiment}"])
    assert cfg.name == experiment
    assert cfg.hydra.sweeper.params


def test_index_and_retriever_instantiate():
    from hydra.utils import instantiate

    for option in _options("index"):
        index = instantiate(_compose([f"index={option}"]).index)
        assert hasattr(index, "build") and hasattr(index, "search")
    retriever = instantiate(_compose().retrieve)
    assert hasattr(retriever, "retrieve")


def test_chunker_instantiates_from_config():
    from hydra.utils import instantiate

    chunker = instantiate(_compose(["chunk.size=64", "chunk.overlap=16"]).chunk)
    assert hasattr(chunker, "chunk")


def test_job_settings_name_every_overridden_key():
    from sweep.__main__ import job_settings

    overrides = ["chunk.size=64", "embed.max_seq_length=128", "dataset=tiny",
                 "embed.cache_dir=/tmp/x", "hydra.sweep.dir=/tmp/y"]
    cfg = _compose(overrides[:3])
    settings = job_settings(cfg, overrides)
    assert settings["chunk.size"] == 64 and settings["embed.max_seq_length"] == 128
    assert settings["dataset"] == "tiny"
    assert "embed.cache_dir" not in settings and "hydra.sweep.dir" not in settings
