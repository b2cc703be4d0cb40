"""``embed=auto``: composed from the real configs, resolved for a corpus's language mix."""

from __future__ import annotations

import shutil

from hydra import compose, initialize_config_dir
from omegaconf import OmegaConf

from sweep.hydrakit.config import CONF_DIR, register
from sweep.jobs.embedchoice import resolve_embed
from sweep.pipeline.languages import CorpusLanguages

register()

ENGLISH = CorpusLanguages({"en": 1.0}, {"en": 1.0})
JAPANESE = CorpusLanguages({"ja": 0.93, "en": 0.07}, {"ja": 1.0})
#: A second node, as conf/embed/multilingual.yaml composes under ``other``.
OTHER = {"_target_": "somewhere.MultilingualEmbedder", "batch_size": 64}


def _compose(*overrides: str):
    with initialize_config_dir(config_dir=str(CONF_DIR), version_base="1.3"):
        return compose(config_name="config", overrides=list(overrides))


def _with_other(cfg):
    """The config as composed once conf/embed/multilingual.yaml is there."""
    cfg = cfg.copy()
    OmegaConf.set_struct(cfg, False)
    cfg.embed.other = OmegaConf.create(OTHER)
    return cfg


def test_auto_is_the_default_and_is_minilm_with_a_choice_to_make():
    cfg = _compose()
    assert cfg.embed.choice == "auto"
    minilm = OmegaConf.to_container(_compose("embed=minilm").embed)
    body = OmegaConf.to_container(cfg.embed)
    body.pop("choice"), body.pop("other", None)
    assert body == minilm


def test_an_english_corpus_runs_exactly_the_minilm_node():
    cfg, chosen = resolve_embed(_with_other(_compose()), ENGLISH)
    assert chosen is not None and chosen.name == "minilm"
    assert (
        chosen.line == "embed auto → minilm: the corpus is 100% in Latin letters (mostly English)"
    )
    assert OmegaConf.to_container(cfg.embed) == OmegaConf.to_container(
        _compose("embed=minilm").embed
    )


def test_a_japanese_corpus_runs_the_multilingual_node_and_says_so():
    composed = _with_other(_compose())
    cfg, chosen = resolve_embed(composed, JAPANESE)
    assert chosen is not None and chosen.name == "multilingual"
    assert chosen.line == "embed auto → multilingual: the corpus is 93% Japanese"
    assert OmegaConf.to_container(cfg.embed) == OTHER
    assert composed.embed.choice == "auto"  # the job's config is a copy; the given one stays


def test_without_the_multilingual_node_minilm_runs_and_the_line_says_why():
    composed = _compose()
    OmegaConf.set_struct(composed, False)
    composed.embed.pop("other", None)  # as composed where conf/embed/multilingual.yaml is not
    cfg, chosen = resolve_embed(composed, JAPANESE)
    assert chosen is not None and chosen.name == "minilm"
    assert "the corpus is 93% Japanese" in chosen.line and "minilm runs" in chosen.line
    assert cfg.embed.model == "sentence-transformers/all-MiniLM-L6-v2"
    assert "choice" not in cfg.embed and "other" not in cfg.embed


def test_a_model_named_on_the_command_line_is_kept():
    cfg, chosen = resolve_embed(_with_other(_compose("embed.model=intfloat/e5-small-v2")), JAPANESE)
    assert chosen is not None and cfg.embed.model == "intfloat/e5-small-v2"
    assert chosen.line == "embed auto → intfloat/e5-small-v2: embed.model names it"


def test_embed_minilm_forces_minilm():
    composed = _compose("embed=minilm")
    cfg, chosen = resolve_embed(composed, JAPANESE)
    assert chosen is None and cfg is composed


def test_the_multilingual_node_composes_under_other_when_its_file_is_there(tmp_path):
    """conf/embed/auto.yaml takes conf/embed/multilingual.yaml, optional, under ``other``;
    ``embed=minilm`` takes neither."""
    conf = tmp_path / "conf"
    shutil.copytree(CONF_DIR, conf)
    (conf / "embed" / "multilingual.yaml").write_text(
        "_target_: somewhere.MultilingualEmbedder\nbatch_size: 64\n", encoding="utf-8"
    )
    with initialize_config_dir(config_dir=str(conf), version_base="1.3"):
        auto = compose(config_name="config")
        minilm = compose(config_name="config", overrides=["embed=minilm"])
    assert OmegaConf.to_container(auto.embed.other) == OTHER
    assert "other" not in minilm.embed and "choice" not in minilm.embed
    cfg, chosen = resolve_embed(auto, JAPANESE)
    assert chosen is not None and OmegaConf.to_container(cfg.embed) == OTHER
