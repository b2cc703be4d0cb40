"""``embed.backend=auto``: the rule that picks a runtime (pure, with hypothesis), the kept
choice (a file a later sweep reads, a damaged one probed again), and the real probe of the
bundled MiniLM with torch against OpenVINO on the bundled corpus's own texts."""

from __future__ import annotations

import json
import logging
import sys
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from sweep.datasets.bundled import bundled_corpus
from sweep.datasets.loading import load_dataset
from sweep.embedding import autobackend
from sweep.embedding.autobackend import (
    MARGIN,
    MIN_COSINE,
    MIN_OVERLAP,
    BackendChoice,
    Measured,
    Runtime,
    pick_runtime,
    probe,
    runtime_agreement,
    spread,
)
from sweep.embedding.embedder import SentenceTransformerEmbedder
from sweep.embedding.errors import EmbedderError
from sweep.embedding.torch_backend import TorchBackend


@pytest.fixture(autouse=True)
def _fresh_memo(monkeypatch):
    """Each test starts with no choice made in this process (a kept file is another matter)."""
    monkeypatch.setattr(autobackend, "_CHOICES", {})
    monkeypatch.setattr(autobackend, "_SAID", set())


# -- the rule ----------------------------------------------------------------------

rates = st.floats(min_value=0.1, max_value=1000, allow_nan=False)
candidates = st.builds(
    Measured,
    backend=st.sampled_from(["openvino", "onnx", "onnx-int8"]),
    precision=st.sampled_from(["f32", "bf16", "int8"]),
    texts_per_s=st.one_of(st.none(), rates),
    min_cosine=st.one_of(st.none(), st.floats(min_value=0.99, max_value=1.0)),
    overlap=st.one_of(st.none(), st.floats(min_value=0.9, max_value=1.0)),
    problem=st.one_of(st.none(), st.just("not installed")),
)


@given(torch_rate=rates, others=st.lists(candidates, max_size=4))
def test_auto_picks_the_fastest_faithful_runtime_or_torch(torch_rate, others):
    reference = Measured("torch", "fp32", torch_rate, 1.0, 1.0)
    chosen = pick_runtime([reference, *others])
    faithful = [m for m in others if m.faithful]
    if chosen is reference:
        # Nothing faithful beats torch by the margin.
        assert all(m.texts_per_s < MARGIN * torch_rate for m in faithful)
    else:
        assert chosen.faithful
        assert chosen.min_cosine >= MIN_COSINE and chosen.overlap >= MIN_OVERLAP
        assert chosen.texts_per_s >= MARGIN * torch_rate
        assert chosen.texts_per_s == max(m.texts_per_s for m in faithful)


@given(st.lists(st.text(max_size=3), max_size=300), st.integers(min_value=1, max_value=100))
def test_spread_keeps_order_and_both_ends(items, limit):
    got = spread(items, limit)
    assert len(got) == min(len(items), limit)
    it = iter(items)
    assert all(any(x == y for y in it) for x in got)  # a subsequence, in order
    if items:
        assert got[0] == items[0]
        assert got[-1] == items[-1] or limit == 1


def _unit(rows: np.ndarray) -> np.ndarray:
    return rows / np.linalg.norm(rows, axis=1, keepdims=True)


def test_agreement_of_identical_vectors_is_perfect():
    rng = np.random.default_rng(0)
    texts, queries = _unit(rng.normal(size=(30, 8))), _unit(rng.normal(size=(12, 8)))
    assert runtime_agreement((texts, queries), (texts.copy(), queries.copy())) == pytest.approx(
        (1, 1)
    )


def test_agreement_sees_a_moved_vector_and_a_reordered_top_10():
    rng = np.random.default_rng(1)
    texts, queries = _unit(rng.normal(size=(40, 8))), _unit(rng.normal(size=(10, 8)))
    moved = texts.copy()
    moved[3] = -moved[3]
    cosine, _ = runtime_agreement((texts, queries), (moved, queries))
    assert cosine == pytest.approx(-1)
    # Every question's 11th text swapped into its top 10: one of ten changes each time.
    scores = queries @ texts.T
    order = np.argsort(-scores, axis=1)
    pushed = queries.copy()
    for i in range(len(queries)):
        pushed[i] = _unit((queries[i] + 0.6 * texts[order[i, 10]])[None])[0]
    _, overlap = runtime_agreement((texts, queries), (texts, pushed))
    assert overlap < 1.0


def _runtime(name, vectors_of, precision="f32", fail=None):
    def load():
        if fail:
            raise RuntimeError(fail)

    return Runtime(name, load, vectors_of, lambda: precision)


def _vectors(seed):
    def encode(texts):
        rows = []
        for t in texts:
            g = np.random.default_rng(abs(hash(t)) % 2**32)
            rows.append(g.normal(size=16))
        v = _unit(np.array(rows))
        if seed:  # a runtime that moves every vector a little, differently per text
            noise = np.random.default_rng(seed).normal(size=v.shape)
            v = _unit(v + 0.05 * noise)
        return v

    return encode


def test_a_runtime_that_moves_vectors_is_refused_and_says_why():
    texts = [f"chunk {i}" for i in range(40)]
    found = probe(
        _runtime("torch", _vectors(0), "fp32"),
        [_runtime("openvino", _vectors(7), "bf16")],
        texts,
        [f"question {i}" for i in range(20)],
    )
    assert found.choice.backend == "torch"
    assert "openvino (bf16) moves vectors to a cosine of" in found.choice.line()
    # torch's vectors of what was sampled come back, to be kept.
    assert found.texts == texts and found.text_vectors.shape == (40, 16)
    assert found.query_vectors.shape == (20, 16)


def test_a_runtime_inside_the_margin_leaves_torch_and_the_line_gives_its_speed():
    measured = (
        Measured("torch", "fp32", 20.0, 1.0, 1.0),
        Measured("openvino", "f32", 20.4, 1.0, 1.0),
    )
    chosen = pick_runtime(measured)
    choice = BackendChoice(
        chosen.backend, chosen.precision, measured, 48, 96, "2026-12-06 03:10 UTC", "x"
    )
    assert choice.line() == (
        "backend auto → torch (fp32): openvino (f32) ran at 1.02× torch here, below the "
        "1.05× worth switching for; probed 2026-12-06 03:10 UTC"
    )


def test_a_runtime_that_cannot_load_is_left_out_with_its_reason():
    found = probe(
        _runtime("torch", _vectors(0), "fp32"),
        [_runtime("openvino", _vectors(0), fail="no CPU plugin\nsecond line")],
        ["a", "b", "c"],
        [],
    )
    assert found.choice.backend == "torch"
    assert found.choice.line().startswith(
        "backend auto → torch (fp32): openvino (f32): no CPU plugin"
    )
    assert "\n" not in found.choice.line()
    assert found.choice.queries == 0  # the chunks stood in for questions


def test_a_choice_survives_its_file_and_a_damaged_file_is_probed_again(tmp_path, caplog):
    choice = BackendChoice(
        "openvino",
        "bf16",
        (
            Measured("torch", "fp32", 10.0, 1.0, 1.0),
            Measured("openvino", "bf16", 30.0, 0.99996, 0.998),
        ),
        64,
        96,
        "2026-12-06 02:10 UTC",
        "Xeon, 2 logical CPUs; instruction sets: avx2, amx_bf16",
    )
    assert choice.line() == (
        "backend auto → openvino (bf16): 3.00× torch on this CPU, cosine ≥ 0.99996, "
        "top-10 overlap 0.998 on 96 questions; probed 2026-12-06 02:10 UTC"
    )
    autobackend.keep_choice(tmp_path, "k1", choice)
    autobackend._CHOICES.clear()
    assert autobackend.kept_choice(tmp_path, "k1") == choice
    for damaged in ("{", '{"format": 1, "backend": "openvino"}', '{"format": 2}', "[]"):
        autobackend._CHOICES.clear()
        (tmp_path / "auto" / "k2.json").write_text(damaged, encoding="utf-8")
        with caplog.at_level(logging.WARNING):
            assert autobackend.kept_choice(tmp_path, "k2") is None
        assert "k2.json" in caplog.text and "probed again" in caplog.text
    bad = choice.to_json() | {"backend": "tensorrt"}
    with pytest.raises(ValueError):
        BackendChoice.from_json(bad)
    with pytest.raises(ValueError):
        BackendChoice.from_json(
            choice.to_json()
            | {"measured": [{"backend": "torch", "precision": "fp32", "texts_per_s": float("nan")}]}
        )


# -- the embedder ------------------------------------------------------------------


def emb(cache: Path, **kw) -> SentenceTransformerEmbedder:
    return SentenceTransformerEmbedder(
        backend="auto", cache_dir=str(cache), show_progress=False, **kw
    )


def test_auto_on_a_gpu_or_with_late_chunking_is_torch_without_a_probe(tmp_path):
    assert emb(tmp_path, late=True).backend == "torch"
    assert emb(tmp_path, device="cuda").backend == "torch"


@pytest.mark.parametrize("value", [-1, 1.5, "1000", True])
def test_bad_probe_min_texts_is_one_line(tmp_path, value):
    with pytest.raises(
        EmbedderError, match="embed.probe_min_texts must be a whole number >= 0 or null"
    ):
        emb(tmp_path, probe_min_texts=value)


def test_the_texts_a_probe_needs_depend_on_whether_the_cpu_computes_bfloat16(monkeypatch):
    from sweep.core import cpu

    for flags, want in (
        (("avx2", "avx512f", "avx512_bf16"), autobackend.PROBE_MIN_TEXTS_BF16),
        (("avx2", "amx_bf16"), autobackend.PROBE_MIN_TEXTS_BF16),
        (("avx2",), autobackend.PROBE_MIN_TEXTS_OTHER),
        ((), autobackend.PROBE_MIN_TEXTS_OTHER),  # not an x86 CPU, or unreadable
    ):
        monkeypatch.setattr(autobackend, "instruction_sets", lambda f=flags: f)
        assert autobackend.default_probe_min_texts() == want
    assert cpu.INSTRUCTION_SETS[0] == "avx2"


def test_too_few_texts_run_torch_for_the_whole_sweep(tmp_path, caplog):
    e = emb(tmp_path / "cache")
    with caplog.at_level(logging.INFO):
        e.embed_documents(["one chunk", "another chunk"])
    minimum = autobackend.default_probe_min_texts()
    assert e.backend == "torch" and e.backend_choice.below == minimum
    assert (
        f"backend auto → torch (fp32): 2 distinct texts to embed, fewer than the {minimum}"
        in caplog.text
    )
    # A later job of the same sweep (a new process) reads the decision: still torch,
    # whatever it embeds.
    autobackend._CHOICES.clear()
    later = emb(tmp_path / "cache")
    later.embed_documents([f"chunk {i}" for i in range(5)])
    assert later.backend == "torch"
    assert json.loads(later.identity)["backend"] == "torch"


def test_a_decision_for_want_of_texts_is_made_again_for_a_later_sweeps_texts(tmp_path):
    emb(tmp_path / "cache", probe_min_texts=50).embed_documents(["a", "b"])
    autobackend._CHOICES.clear()
    later = emb(tmp_path / "cache", probe_min_texts=50)
    choice = later.choose_backend([f"chunk {i}" for i in range(20)], ["a question"])
    # This sweep's count, not the 2 texts the kept record was made for.
    assert (choice.backend, choice.texts, choice.below) == ("torch", 21, 50)
    assert "21 distinct texts to embed, fewer than the 50" in choice.line()


def test_with_the_cache_off_a_choice_is_kept_in_the_process_only(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    e = SentenceTransformerEmbedder(backend="auto", cache_dir="off", show_progress=False)
    e.embed_documents(["one", "two"])
    assert e.backend == "torch"
    assert not list((tmp_path / "xdg").rglob("*.json"))


def test_asked_before_any_text_auto_is_torch_for_that_embedder_alone(tmp_path):
    e = emb(tmp_path / "cache")
    assert e.precision == "fp32" and e.backend == "torch"
    # Nothing kept: a sweep that then offers its corpus still decides on it.
    assert not (tmp_path / "cache" / "onnx" / "auto").exists()
    assert emb(tmp_path / "cache").backend == "auto"


@pytest.fixture(scope="module")
def kestrel():
    data = load_dataset(bundled_corpus("kestrel"))
    chunks = [d.text[i : i + 600] for d in data.documents for i in range(0, len(d.text), 600)]
    return chunks, [q.query for q in data.queries]


@pytest.mark.e2e
def test_the_probe_measures_the_real_runtimes_and_a_rerun_loads_no_model(
    tmp_path, kestrel, caplog, monkeypatch
):
    chunks, questions = kestrel
    first = emb(tmp_path / "cache", probe_min_texts=10)
    with caplog.at_level(logging.INFO):
        choice = first.choose_backend(chunks, questions)
    assert choice is not None and choice.measured_here
    by_name = {m.backend: m for m in choice.measured}
    assert set(by_name) == {"torch", "openvino"}
    assert by_name["openvino"].problem is None
    # OpenVINO computes in float32 on an AVX2 CPU and in bfloat16 where the CPU has it;
    # either way it keeps torch's vectors (measured: cosine >= 0.99996).
    assert by_name["openvino"].min_cosine >= MIN_COSINE
    assert choice.backend == pick_runtime(choice.measured).backend == first.backend
    assert choice.texts == autobackend.PROBE_TEXTS and choice.queries == autobackend.PROBE_QUERIES
    lines = [r.getMessage() for r in caplog.records if r.getMessage().startswith("backend auto")]
    assert lines == [choice.line()]
    # The chosen runtime's vectors of the sampled chunks are in the cache already.
    sampled = spread(list(dict.fromkeys(chunks)), autobackend.PROBE_TEXTS)
    assert first.cached(sampled) is not None
    assert json.loads(first.identity)["backend"] == choice.backend

    # A later sweep (a new process) reads the kept choice: no probe, no model.
    autobackend._CHOICES.clear()
    monkeypatch.setattr(TorchBackend, "load", lambda self: pytest.fail("torch was loaded"))
    again = emb(tmp_path / "cache", probe_min_texts=10)
    assert again.choose_backend(chunks, questions) == choice
    assert again.backend == choice.backend
    assert again.cached(sampled) is not None  # same namespace: the same vectors
    assert again.cache_namespace == first.cache_namespace


@pytest.mark.e2e
def test_a_runtime_that_is_not_installed_leaves_torch_and_says_why(
    tmp_path, kestrel, caplog, monkeypatch
):
    chunks, questions = kestrel
    monkeypatch.setitem(sys.modules, "openvino", None)
    e = emb(tmp_path / "cache", probe_min_texts=10)
    with caplog.at_level(logging.INFO):
        choice = e.choose_backend(chunks[:20], questions[:10])
    assert choice.backend == "torch"
    assert (
        "): embed.backend=openvino needs the 'openvino' package, which is not "
        "installed: pip install openvino; probed " in choice.line()
    )
    assert sum("backend auto → torch" in r.getMessage() for r in caplog.records) == 1
