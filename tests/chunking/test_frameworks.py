"""Framework splitters as chunkers: every adapter gives the framework's own chunks, located
exactly in each document; a splitter that rewrites or reorders text makes the setting
invalid."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest
from hydra import compose, initialize_config_dir

from paths import ROOT
from sweep.chunking import UnlocatableChunks, build_framework_chunker
from sweep.chunking.frameworks import missing_package
from sweep.core.types import Document
from sweep.hydrakit.config import build_node, register
from sweep.jobs.job import load_job_dataset

CONF = ROOT / "src" / "sweep" / "conf"


def _compose(*overrides: str):
    register()
    with initialize_config_dir(config_dir=str(CONF), version_base="1.3"):
        return compose("config", overrides=list(overrides))


@pytest.fixture(scope="module")
def kestrel():
    return load_job_dataset(_compose().dataset)


def _own_texts(out) -> list[str]:
    texts = [
        (p if isinstance(p, str) else getattr(p, "text", None) or p.get_content()).strip()
        for p in out
    ]
    return [t for t in texts if t]


# -- locating ------------------------------------------------------------------------------

# -- each framework on the bundled corpus ------------------------------------------------

PRESETS = [
    ("langchain", "chunk.size=800", "chunk.overlap=200"),
    ("langchain", "chunk.size=1600", "chunk.overlap=0"),
    ("langchain_token",),
    ("llamaindex",),
    ("llamaindex", "chunk.splitter._target_=llama_index.core.node_parser.TokenTextSplitter"),
    ("chonkie",),
    ("chonkie", "chunk.splitter._target_=chonkie.TokenChunker", "+chunk.splitter.chunk_overlap=32"),
    ("semchunk", "chunk.overlap=32"),
]


@pytest.mark.parametrize("preset", PRESETS, ids=lambda p: " ".join(p))
def test_every_chunk_is_the_frameworks_own_chunk_at_its_exact_offsets(preset, kestrel):
    cfg = _compose(f"chunk={preset[0]}", *preset[1:])
    chunker = build_node(cfg.chunk, embed_fn=None)
    chunks = chunker.chunk_documents(kestrel.documents)
    for doc in kestrel.documents:
        mine = [c for c in chunks if c.doc_id == doc.doc_id]
        theirs = chunker.split(doc.text)
        assert [c.text for c in mine] == _own_texts(theirs), doc.doc_id
        assert all(doc.text[c.start : c.end] == c.text for c in mine)
        # chonkie says where its chunks start: sweep's located offsets agree with it
        starts = [
            p.start_index + len(p.text) - len(p.text.lstrip())
            for p in theirs
            if getattr(p, "start_index", None) is not None and p.text.strip()
        ]
        if starts:
            assert [c.start for c in mine] == starts, doc.doc_id
    assert chunker.target_size == cfg.chunk.size


def test_the_rows_settings_are_the_splitters_own():
    cfg = _compose("chunk=langchain", "chunk.size=800")
    assert (cfg.chunk.strategy, cfg.chunk.size, cfg.chunk.overlap) == (
        "langchain_text_splitters.RecursiveCharacterTextSplitter",
        800,
        200,
    )
    cfg = _compose("chunk=semchunk", "chunk.overlap=16")
    assert (cfg.chunk.strategy, cfg.chunk.size, cfg.chunk.overlap) == ("semchunk", 256, 16)


@pytest.mark.parametrize(
    "preset, size, overlap, unit",
    [
        ("langchain", 300, 30, "characters"),
        ("langchain_token", 64, 8, "tokens"),
        ("llamaindex", 64, 8, "tokens"),
        ("semchunk", 64, 8, "tokens"),
        ("chonkie", 64, 0, "tokens"),
    ],
)
def test_chunk_size_and_overlap_are_the_splitters_own_in_its_unit(preset, size, overlap, unit):
    chunker = build_node(
        _compose(f"chunk={preset}", f"chunk.size={size}", f"chunk.overlap={overlap}").chunk,
        embed_fn=None,
    )
    assert (chunker.size, chunker.overlap, chunker.target_size) == (size, overlap, size)
    assert chunker.size_unit == unit
    # the splitter itself was built with them: its chunks fit the size in its own unit
    text = " ".join(f"word{i}." for i in range(400))
    assert all(chunker.length(c.text) <= size for c in chunker.chunk(Document("d", text)))


def test_chonkies_default_tokenizer_sizes_in_characters():
    chunker = build_node(
        _compose("chunk=chonkie", "~chunk.splitter.tokenizer", "chunk.size=300").chunk,
        embed_fn=None,
    )
    assert chunker.size_unit == "characters" and chunker.length("abc def") == 7


def test_a_splitter_built_with_another_size_than_chunk_size_is_refused():
    from sweep.chunking import UnknownChunkSetting

    # a config of the user's own that gives the splitter its size itself
    cfg = _compose("chunk=langchain", "chunk.size=500")
    cfg.chunk.splitter.chunk_size = 800
    with pytest.raises(
        UnknownChunkSetting,
        match=r"chunk.size \(500\) is not the size "
        r"chunk.splitter builds \(800\)",
    ):
        build_node(cfg.chunk, embed_fn=None)


def test_an_overlap_the_splitter_does_not_take_makes_the_setting_invalid_not_the_sweep():
    from sweep.chunking import ChunkingSettingsError, UnknownChunkSetting

    with pytest.raises(
        ChunkingSettingsError, match="chunk.overlap=32 does not apply to chonkie.RecursiveChunker"
    ) as err:
        build_node(_compose("chunk=chonkie", "chunk.overlap=32").chunk, embed_fn=None)
    assert not isinstance(err.value, UnknownChunkSetting)


def test_langchains_token_splitter_on_cl100k_base_needs_no_download():
    # TokenTextSplitter asks tiktoken for cl100k_base by name; sweep routes it to the
    # bundled ranks (tiktoken would fetch the file from the network, which is not here).
    from langchain_text_splitters import TokenTextSplitter

    import sweep.chunking.frameworks  # noqa: F401  (routes the encodings)

    assert TokenTextSplitter(encoding_name="cl100k_base", chunk_size=4, chunk_overlap=0).split_text(
        "one two three four five"
    ) == ["one two three four", " five"]


def test_a_function_of_ones_own_is_a_chunker(kestrel):
    import splitters

    chunker = build_framework_chunker("callable", splitters.paragraphs, strategy="paragraphs")
    chunks = chunker.chunk_documents(kestrel.documents[:5])
    assert chunks and all(
        kestrel.documents[0].text[c.start : c.end] == c.text
        for c in chunks
        if c.doc_id == kestrel.documents[0].doc_id
    )
    assert chunker.target_size is None


def test_a_splitter_that_rewrites_text_makes_the_setting_invalid_with_the_count_and_an_example():
    import splitters

    docs = [
        Document("a.md", "First line.\nOK\n\n3 is a digit\n"),
        Document("b.md", "nothing to shout about\n"),
    ]
    chunker = build_framework_chunker("callable", splitters.shouting, strategy="shouting")
    with pytest.raises(UnlocatableChunks) as e:
        chunker.chunk_documents(docs)
    assert str(e.value).startswith(
        "3 of 4 chunks returned by shouting are not in their document's text"
    )
    assert "the first, in 'a.md': 'FIRST LINE.'" in str(e.value)


def test_a_splitter_that_repeats_or_reorders_chunks_is_named_for_that_not_for_rewriting():
    import splitters

    docs = [Document("a.md", "One.\n\nTwo.\n\nThree.\n")]
    chunker = build_framework_chunker("callable", splitters.backwards, strategy="backwards")
    with pytest.raises(UnlocatableChunks) as e:
        chunker.chunk_documents(docs)
    assert str(e.value).startswith(
        "2 of 3 chunks returned by backwards repeat an earlier chunk or come out of document order"
    )
    assert "rewrites" not in str(e.value)


def test_a_splitter_that_returns_no_list_is_named():
    import splitters
    from sweep.chunking import ChunkingSettingsError

    chunker = build_framework_chunker("callable", splitters.not_a_list, strategy="not_a_list")
    with pytest.raises(ChunkingSettingsError, match="not_a_list returned str, not a list"):
        chunker.chunk_documents([Document("a.md", "text")])


def test_a_framework_that_is_not_installed_is_named_with_its_pip_command():
    node = {"framework": "langchain", "splitter": {"_target_": "no_such_splitters.Splitter"}}
    assert missing_package(node) == (
        "chunk=langchain needs no_such_splitters (no_such_splitters.Splitter), which is not "
        "installed: pip install langchain-text-splitters (or, in sweep's checkout, "
        'pip install -e ".[frameworks]" for all of them)'
    )
    assert (
        missing_package(
            {
                "framework": "langchain",
                "splitter": {"_target_": "langchain_text_splitters.TokenTextSplitter"},
            }
        )
        is None
    )


# -- as a sweep ----------------------------------------------------------------------------


def _sweep(tmp_path, *overrides):
    env = dict(
        os.environ,
        HF_HUB_OFFLINE="1",
        PYTHONPATH=os.pathsep.join([str(ROOT / "tests"), os.environ.get("PYTHONPATH", "")]),
    )
    return subprocess.run(
        [
            sys.executable,
            "-m",
            "sweep",
            "dataset=tiny",
            f"runtime.cache_dir={tmp_path / 'cache'}",
            "runtime.show_progress=false",
            *overrides,
        ],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )


def test_a_rewriting_splitter_gets_an_invalid_row_naming_the_count_and_the_first_chunk(tmp_path):
    import csv

    proc = _sweep(
        tmp_path,
        "chunk=callable",
        "chunk.splitter._target_=splitters.shouting",
        "hydra.sweep.dir=a",
    )
    assert proc.returncode == 1 and "Traceback" not in proc.stderr
    with open(tmp_path / "a" / "results.csv", newline="") as f:
        (row,) = list(csv.DictReader(f))
    assert row["status"] == "invalid"
    assert "chunks returned by splitters.shouting are not in their document's text" in row["error"]


def test_a_missing_framework_stops_the_sweep_with_the_pip_command(tmp_path):
    proc = _sweep(
        tmp_path,
        "chunk=langchain",
        "chunk.splitter._target_=no_such_splitters.Splitter",
        "embed.model=/nonexistent",
        "hydra.sweep.dir=a",
    )
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
    assert "pip install langchain-text-splitters" in proc.stderr
    assert not (tmp_path / "a").exists()


@pytest.mark.parametrize(
    "overrides,says",
    [
        (("chunk=callable",), "chunk.splitter._target_ is not set: chunk=callable needs it"),
        (
            (
                "chunk=langchain",
                "chunk.splitter._target_=langchain_text_splitters.RecursiveCharacterTextSplittr",
            ),
            "Error loading 'langchain_text_splitters.RecursiveCharacterTextSplittr'",
        ),
    ],
)
def test_a_splitter_that_cannot_be_built_stops_the_sweep_in_one_line(tmp_path, overrides, says):
    proc = _sweep(tmp_path, *overrides, "embed.model=/nonexistent", "hydra.sweep.dir=a")
    errors = [line for line in proc.stderr.splitlines() if "error" in line]
    assert proc.returncode == 2 and len(errors) == 1 and says in errors[0], proc.stderr
    assert "Traceback" not in proc.stderr and not (tmp_path / "a").exists()


def test_a_framework_splitter_and_sweeps_own_chunker_share_one_size_grid_and_one_pick(tmp_path):
    import csv

    # chunk.size applies to every chunker that has one: token windows of 128/256 tokens,
    # LangChain's splitter at 128/256 characters. At 128 characters the preset's 200
    # characters of overlap do not fit: that one cell is an invalid row, said up front.
    proc = _sweep(
        tmp_path,
        "chunk=token,langchain",
        "chunk.size=128,256",
        "eval.n_boot=200",
        "eval.latency_queries=0",
        "hydra.sweep.dir=a",
    )
    assert proc.returncode == 0 and "Traceback" not in proc.stderr, proc.stderr[-3000:]
    assert "1 of 4 settings cannot run" in proc.stderr
    with open(tmp_path / "a" / "results.csv", newline="") as f:
        rows = {
            (r["chunk.strategy"].rsplit(".", 1)[-1], r["chunk.size"]): r for r in csv.DictReader(f)
        }
    lc = "RecursiveCharacterTextSplitter"
    assert {k: r["status"] for k, r in rows.items()} == {
        (lc, "128"): "invalid",
        (lc, "256"): "ok",
        ("token", "128"): "ok",
        ("token", "256"): "ok",
    }
    assert "chunk overlap (200) than chunk size (128)" in rows[(lc, "128")]["error"]
    assert rows[(lc, "256")]["chunk.unit"] == "characters"
    assert rows[("token", "256")]["chunk.unit"] == "tokens (cl100k_base)"
    # one table, the unit beside the size, and one recommendation across both chunkers
    header = next(line for line in proc.stdout.splitlines() if line.startswith("strategy"))
    assert header.split()[:4] == ["strategy", "size", "unit", "overlap"]
    assert proc.stdout.count("recommended") == 1 and proc.stdout.count("Recommendation:") == 1


def test_a_size_a_function_of_ones_own_is_not_given_makes_the_setting_invalid():
    import functools

    import splitters
    from sweep.chunking import ChunkingSettingsError, UnknownChunkSetting

    # chunk=token,callable chunk.size=128,256: the function takes no size, so its cells
    # would say 128 and 256 and chunk alike
    with pytest.raises(
        ChunkingSettingsError, match="chunk.size=128 does not apply to paragraphs"
    ) as err:
        build_framework_chunker("callable", splitters.paragraphs, strategy="paragraphs", size=128)
    assert not isinstance(err.value, UnknownChunkSetting)
    with pytest.raises(ChunkingSettingsError, match="chunk.overlap=16 does not apply"):
        build_framework_chunker("callable", splitters.paragraphs, strategy="paragraphs", overlap=16)
    given = functools.partial(splitters.paragraphs, chunk_size=128)
    assert build_framework_chunker("callable", given, strategy="p", size=128).target_size == 128
