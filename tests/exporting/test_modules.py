"""Export's pure parts: the modules it writes for each framework, their measured agreement,
the Hydra file and the chunk records."""

from __future__ import annotations

import runpy

import pytest
from omegaconf import OmegaConf

from sweep.chunking import build_chunker
from sweep.core.types import Document
from sweep.exporting.agreement import measure_agreement
from sweep.exporting.chunks import check_offsets, chunk_records
from sweep.exporting.hydrafile import hydra_yaml
from sweep.exporting.modules import render_module
from sweep.store.chunkfile import ChunkOffsets

TEXT = ("# Guide\n\n## Setup\n\nPlug the sensor in. Wait for the green ring; it takes about "
        "ninety seconds on first boot.\n\n## Calibration\n\n" + "Zero the gas channel in clean "
        "air, then span it with the reference bottle. " * 12)
DOCS = [Document("guide.md", TEXT), Document("short.md", "One line only.")]


def _own(strategy: str, size: int = 32, overlap: int = 0, **extra) -> dict:
    return {"chunk": {"_target_": "sweep.chunking.build_chunker", "strategy": strategy,
                      "size": size, "overlap": overlap, "tokenizer": "cl100k_base",
                      "prefix": "none", **extra},
            "embed": {"_target_": "sweep.embedding.embedder.SentenceTransformerEmbedder",
                      "model": "m", "cache_dir": "/c"}}


def _offsets(strategy: str, size: int = 32, overlap: int = 0) -> list[ChunkOffsets]:
    chunker = build_chunker(strategy, size=size, overlap=overlap)
    return [ChunkOffsets(c.chunk_id, c.doc_id, c.start, c.end, c.n_tokens)
            for d in DOCS for c in chunker.chunk(d)]


def _load(source: str, tmp_path):
    path = tmp_path / "m.py"
    path.write_text(source)
    return runpy.run_path(str(path))["splitter"]


@pytest.mark.parametrize("to", ["langchain", "chonkie"])
def test_the_token_strategy_has_an_exact_equivalent(to, tmp_path):
    rendered = render_module(_own("token", 32, 8), to)
    splitter = _load(rendered.source, tmp_path)
    agreement = measure_agreement(splitter, rendered.framework, rendered.call, DOCS,
                                  _offsets("token", 32, 8))
    assert agreement.identical == 2 and agreement.close and agreement.share == 1.0


@pytest.mark.parametrize("strategy", ["sentence", "paragraph", "recursive", "markdown"])
@pytest.mark.parametrize("to", ["langchain", "llamaindex", "chonkie"])
def test_every_strategy_gets_a_runnable_module_whose_agreement_is_measured(strategy, to, tmp_path):
    rendered = render_module(_own(strategy), to)
    splitter = _load(rendered.source, tmp_path)
    agreement = measure_agreement(splitter, rendered.framework, rendered.call, DOCS,
                                  _offsets(strategy))
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
    config = {"chunk": {"_target_": "sweep.chunking.build_framework_chunker",
                        "framework": "chonkie", "call": {},
                        "splitter": {"_target_": "chonkie.RecursiveChunker", "chunk_size": 64,
                                     "tokenizer": {"_target_": "sweep.core.tokenization.get_encoding",
                                                   "name": "cl100k_base"}}}}
    rendered = render_module(config, "chonkie")
    assert "splitter = RecursiveChunker(chunk_size=64, tokenizer=_encoding('cl100k_base'))" \
        in rendered.source
    with pytest.raises(ValueError, match="cannot translate one framework's splitter"):
        render_module(config, "langchain")


def test_a_partial_function_is_rendered_as_functools_partial():
    config = {"chunk": {"_target_": "sweep.chunking.build_framework_chunker",
                        "framework": "semchunk", "call": {"overlap": 16},
                        "splitter": {"_target_": "semchunk.chunkerify",
                                     "tokenizer_or_token_counter": "cl100k_base",
                                     "chunk_size": 64}}}
    rendered = render_module(config, "semchunk")
    assert "chunkerify(tokenizer_or_token_counter='cl100k_base', chunk_size=64)" in rendered.source
    assert "{'overlap': 16}" in rendered.source and rendered.call == {"overlap": 16}


def test_chunk_records_carry_text_headings_and_pages():
    docs = {"guide.md": DOCS[0],
            "paged.pdf": Document("paged.pdf", "page one text\fpage two text",
                                  metadata={"pages": [[0, 14], [14, 27]]})}
    offsets = _offsets("token")[:3] + [ChunkOffsets("paged.pdf#0", "paged.pdf", 5, 20, 4)]
    records = list(chunk_records(docs, offsets))
    assert all(r["text"] == docs[r["doc_id"]].text[r["start"]:r["end"]] for r in records)
    assert records[0]["headings"] == ["Guide"] and records[-1]["pages"] == "1-2"
    assert check_offsets(docs, offsets) is None
    assert "is not in the dataset" in check_offsets({}, offsets)
    bad = [ChunkOffsets("short.md#0", "guide.md", 0, len(TEXT) + 5, 1)]
    assert "outside" in check_offsets(docs, bad)


def test_the_hydra_file_names_its_rerun_command_and_keeps_the_choices(tmp_path):
    out = tmp_path / "chosen.yaml"
    config = {**_own("token", 128), "runtime": {"cache_dir": "/x"}, "name": "sweep"}
    text = hydra_yaml(config, {"chunk": "token", "dataset": "kestrel"}, out, "job 3")
    assert text.startswith("# job 3\n# Rerun it: python -m sweep --config-dir ")
    data = OmegaConf.create(text)
    assert list(data.defaults) == ["config", {"override dataset": "kestrel"},
                                   {"override chunk": "token"}, "_self_"]
    assert data.chunk.size == 128 and "runtime" not in data


def test_a_class_method_target_and_positional_arguments_become_a_runnable_module(tmp_path):
    config = {"chunk": {"_target_": "sweep.chunking.build_framework_chunker",
                        "framework": "langchain", "prefix": "none", "splitter": {
                            "_target_": "langchain_text_splitters.RecursiveCharacterTextSplitter"
                                        ".from_tiktoken_encoder",
                            "encoding_name": "cl100k_base", "chunk_size": 32,
                            "chunk_overlap": 0}}}
    rendered = render_module(config, "langchain")
    assert "from langchain_text_splitters import RecursiveCharacterTextSplitter" in rendered.source
    splitter = _load(rendered.source, tmp_path)
    assert splitter.split_text(TEXT)[0].startswith("# Guide")
    config = {"chunk": {"_target_": "sweep.chunking.build_framework_chunker",
                        "framework": "semchunk", "prefix": "none", "splitter": {
                            "_target_": "semchunk.chunkerify", "_args_": ["cl100k_base", 24]}}}
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
    text = hydra_yaml(_own("token", 128), {"chunk": "token"}, out, "job 0",
                      ["~chunk.splitter.chunk_size"])
    assert (f"--config-dir '{out.parent.resolve()}' --config-name chosen "
            "'~chunk.splitter.chunk_size'\n") in text
