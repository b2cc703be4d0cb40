"""``sweep.core.settings``: which config keys tell settings apart, and how they are labelled."""

from hydra import compose, initialize_config_dir

from sweep.core.settings import format_value, job_settings, label, setting_label, varied_settings
from sweep.hydrakit.config import CONF_DIR, register

register()


def test_job_settings_name_every_overridden_key_and_group_choices():
    overrides = [
        "chunk.size=64",
        "embed.max_seq_length=128",
        "dataset=tiny",
        "index=hnsw",
        "runtime.cache_dir=/tmp/x",
        "hydra.sweep.dir=/tmp/y",
    ]
    with initialize_config_dir(config_dir=str(CONF_DIR), version_base="1.3"):
        cfg = compose(config_name="config", overrides=overrides[:4])
    settings = job_settings(
        cfg, overrides, {"dataset": "tiny", "index": "hnsw", "retrieve": "dense"}
    )
    assert settings["chunk.size"] == 64 and settings["embed.max_seq_length"] == 128
    assert settings["dataset"] == "tiny" and settings["index"] == "hnsw"
    assert "index._target_" not in settings
    assert "runtime.cache_dir" not in settings and "hydra.sweep.dir" not in settings


def test_a_framework_splitters_size_and_overlap_are_its_size_and_overlap_columns_only():
    overrides = [
        "chunk=langchain",
        "chunk.size=800",
        "chunk.overlap=0",
        "chunk.splitter.separators=[x]",
    ]
    with initialize_config_dir(config_dir=str(CONF_DIR), version_base="1.3"):
        cfg = compose(
            config_name="config", overrides=overrides[:3] + ["+chunk.splitter.separators=[x]"]
        )
    settings = job_settings(cfg, overrides, {"chunk": "langchain"})
    assert (settings["chunk.size"], settings["chunk.overlap"], settings["chunk"]) == (
        800,
        0,
        "langchain",
    )
    assert cfg.chunk.splitter.chunk_size == 800 and cfg.chunk.splitter.chunk_overlap == 0
    assert (
        "chunk.splitter.chunk_size" not in settings
        and "chunk.splitter.chunk_overlap" not in settings
    )
    assert settings["chunk.splitter.separators"] == ["x"]


def test_the_unit_stands_next_to_the_size_when_it_varies_or_is_not_tokens():
    token = {
        "chunk.size": 128,
        "chunk.overlap": 0,
        "chunk.strategy": "token",
        "chunk.unit": "tokens",
    }
    chars = {
        **token,
        "chunk.strategy": "RecursiveCharacterTextSplitter",
        "chunk.unit": "characters",
    }
    assert varied_settings([token, chars]) == [
        "chunk.strategy",
        "chunk.size",
        "chunk.unit",
        "chunk.overlap",
    ]
    assert varied_settings([chars]) == ["chunk.size", "chunk.unit", "chunk.overlap"]
    assert varied_settings([token]) == ["chunk.size", "chunk.overlap"]
    assert label("chunk.unit") == "unit"


def test_varied_settings_in_table_order_with_size_and_overlap_always():
    rows = [
        {"chunk.size": 1, "chunk.overlap": 0, "chunk.strategy": "a", "x.y": 1},
        {"chunk.size": 1, "chunk.overlap": 0, "chunk.strategy": "b", "x.y": 2},
    ]
    assert varied_settings(rows) == ["chunk.strategy", "chunk.size", "chunk.overlap", "x.y"]
    assert varied_settings(rows[:1]) == ["chunk.size", "chunk.overlap"]


def test_a_bm25_row_that_embedded_nothing_never_makes_the_backend_a_column():
    # With embed.backend=auto a row names the runtime that ran; a BM25 row ran none and
    # keeps "auto", which says nothing against the dense rows' torch.
    rows = [
        {"chunk.size": 1, "chunk.overlap": 0, "embed.backend": "torch", "retrieve": "dense"},
        {"chunk.size": 1, "chunk.overlap": 0, "embed.backend": "auto", "retrieve": "bm25"},
    ]
    assert "embed.backend" not in varied_settings(rows)
    rows.append({**rows[0], "embed.backend": "openvino"})  # two runtimes did run
    assert "embed.backend" in varied_settings(rows)


def test_labels_and_values():
    assert (
        label("chunk.size") == "size" and label("retrieve") == "retriever" and label("x.y") == "x.y"
    )
    assert format_value("/models/bge-small-en/") == "bge-small-en"
    assert format_value(None) == "–" and format_value(0.5) == "0.5"
    assert (
        setting_label({"chunk.size": 256, "chunk.overlap": 0}, ["chunk.size", "chunk.overlap"])
        == "size=256 overlap=0"
    )
