"""Late chunking: the window, assembly and pooling helpers (properties, no model), then
``SentenceTransformerEmbedder.embed_late`` with the real bundled MiniLM (marked e2e)."""

from __future__ import annotations

import json
from itertools import pairwise

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sweep.core.types import Chunk, Document
from sweep.embedding.embedder import SentenceTransformerEmbedder
from sweep.embedding.errors import EmbedderError
from sweep.embedding.late import assemble, pool, windows


def emb(cache_dir, **kw) -> SentenceTransformerEmbedder:
    return SentenceTransformerEmbedder(cache_dir=str(cache_dir), show_progress=False, **kw)


def chunks_of(doc: Document, parts: list[tuple[int, int]]) -> list[Chunk]:
    return [Chunk(doc.doc_id, i, s, e, doc.text[s:e], e - s) for i, (s, e) in enumerate(parts)]


# -- windows ------------------------------------------------------------------------------


@st.composite
def window_settings(draw) -> tuple[int, int, int]:
    width = draw(st.integers(1, 300))
    return draw(st.integers(0, 2000)), width, draw(st.integers(0, width - 1))


@settings(deadline=None)
@given(window_settings())
def test_windows_cover_every_token_with_the_stated_overlap(setting):
    n, width, overlap = setting
    spans = windows(n, width, overlap)
    if n == 0:
        assert spans == []
        return
    assert spans[0][0] == 0 and spans[-1][1] == n
    assert all(0 < b - a <= width for a, b in spans)
    for (a0, b0), (a1, b1) in pairwise(spans):
        assert a1 > a0 and b1 > b0
        assert b0 - a1 == overlap  # shared tokens, so consecutive windows leave no gap
    if n <= width:
        assert spans == [(0, n)]


@pytest.mark.parametrize(
    "n, width, overlap", [(10, 4, 4), (10, 4, 5), (10, 4, -1), (10, 0, 0), (-1, 4, 1)]
)
def test_windows_reject_bad_settings(n, width, overlap):
    with pytest.raises(ValueError):
        windows(n, width, overlap)


# -- assemble -----------------------------------------------------------------------------


@given(window_settings())
@settings(max_examples=60, deadline=None)
def test_assemble_takes_each_token_from_its_deepest_window(setting):
    n, width, overlap = setting
    spans = windows(n, width, overlap)
    # Window i says "i" for every token: the result shows which window each token came from.
    vectors = [np.full((b - a, 1), i, dtype=np.float32) for i, (a, b) in enumerate(spans)]
    got = assemble(n, spans, vectors)
    if n == 0:  # no windows, so no width either
        assert got.shape[0] == 0
        return
    got = got[:, 0]
    for t in range(n):
        best, best_score = -1, -1
        for i, (a, b) in enumerate(spans):
            if a <= t < b:
                score = min(t - a if a > 0 else n + 1, b - 1 - t if b < n else n + 1)
                if score > best_score:
                    best, best_score = i, score
        assert got[t] == best


def test_assemble_switches_windows_in_the_middle_of_the_overlap():
    spans = windows(12, 8, 4)  # (0, 8), (4, 12)
    vectors = [np.full((b - a, 1), i, dtype=np.float32) for i, (a, b) in enumerate(spans)]
    # Tokens 4..7 are shared: 4 and 5 sit deeper in window 0, 6 and 7 in window 1 (5 ties).
    assert assemble(12, spans, vectors)[:, 0].tolist() == [0] * 6 + [1] * 6


def test_assemble_rejects_a_gap_or_a_misfit():
    with pytest.raises(ValueError, match="uncovered"):
        assemble(4, [(0, 2)], [np.zeros((2, 3), np.float32)])
    with pytest.raises(ValueError, match="does not fit"):
        assemble(4, [(0, 4)], [np.zeros((3, 3), np.float32)])


# -- pool ---------------------------------------------------------------------------------


@st.composite
def tokens_and_spans(draw):
    """Tokens as a tokenizer gives them: in order, non-empty, not overlapping."""
    n = draw(st.integers(1, 30))
    offsets, pos = [], 0
    for _ in range(n):
        pos += draw(st.integers(0, 3))  # whitespace between tokens
        length = draw(st.integers(1, 6))
        offsets.append((pos, pos + length))
        pos += length
    end = pos + 3
    spans = draw(
        st.lists(
            st.tuples(st.integers(0, end), st.integers(0, end)).map(lambda p: (min(p), max(p))),
            min_size=1,
            max_size=10,
        )
    )
    d = draw(st.integers(1, 4))
    vectors = np.random.default_rng(draw(st.integers(0, 2**32 - 1))).normal(size=(n, d))
    return np.array(offsets), vectors.astype(np.float32), spans


def naive_pool(offsets, vectors, spans):
    out = []
    for s, e in spans:
        inside = [i for i, (a, b) in enumerate(offsets) if a < e and b > s]
        if not inside:  # the nearest token, the one before on a tie
            gaps = [max(a - e, s - b) for a, b in offsets]
            inside = [min(range(len(offsets)), key=lambda i: (gaps[i], i))]
        out.append(vectors[inside].mean(axis=0))
    return np.array(out)


@settings(deadline=None)
@given(tokens_and_spans())
def test_pool_is_the_mean_over_overlapping_tokens(data):
    offsets, vectors, spans = data
    got = pool(offsets, vectors, spans)
    assert got.dtype == np.float32 and got.shape == (len(spans), vectors.shape[1])
    assert np.allclose(got, naive_pool(offsets, vectors, spans), atol=1e-5)


@settings(deadline=None)
@given(tokens_and_spans())
def test_pool_of_one_token_is_that_token(data):
    offsets, vectors, _ = data
    assert np.array_equal(pool(offsets, vectors, [tuple(o) for o in offsets]), vectors)


def test_pool_of_spans_no_token_touches_takes_the_nearest():
    offsets = np.array([[0, 3], [4, 7], [12, 15]])
    vectors = np.arange(6, dtype=np.float32).reshape(3, 2)
    got = pool(offsets, vectors, [(8, 10), (10, 11), (9, 10), (7, 7), (15, 20), (0, 0)])
    assert got.tolist() == [[2, 3], [4, 5], [2, 3], [2, 3], [4, 5], [0, 1]]
    assert pool(offsets, vectors, []).shape == (0, 2)
    with pytest.raises(ValueError, match="no tokens"):
        pool(np.zeros((0, 2)), np.zeros((0, 2)), [(0, 1)])


# -- settings -----------------------------------------------------------------------------


def test_late_needs_the_torch_backend(tmp_path):
    with pytest.raises(EmbedderError) as err:
        emb(tmp_path, late=True, backend="onnx")
    assert "backend=torch" in str(err.value) and "\n" not in str(err.value)
    assert not emb(tmp_path, backend="onnx").late  # off, any backend will do


@pytest.mark.parametrize(
    "kw, words",
    [
        ({"late": "yes"}, "embed.late must"),
        ({"late_overlap": -1}, "embed.late_overlap"),
        ({"late_overlap": 1.5}, "embed.late_overlap"),
        ({"late_overlap": True}, "embed.late_overlap"),
    ],
)
def test_bad_late_settings(tmp_path, kw, words):
    with pytest.raises(EmbedderError, match=words):
        emb(tmp_path, **kw)


def test_chunks_must_belong_to_the_documents_given(tmp_path):
    doc = Document("d", "some text")
    e = emb(tmp_path, late=True)
    with pytest.raises(EmbedderError, match="none of the documents"):
        e.embed_late([doc], [Chunk("other", 0, 0, 4, "some", 1)])
    with pytest.raises(EmbedderError, match="outside its document"):
        e.embed_late([doc], [Chunk("d", 0, 5, 40, "text", 1)])
    with pytest.raises(EmbedderError, match="twice"):
        e.embed_late([doc, doc], [])


def test_identity_says_late_only_when_on(tmp_path):
    assert "late" not in json.loads(emb(tmp_path).identity)
    assert json.loads(emb(tmp_path, late=True).identity)["late"] is True
    assert emb(tmp_path, late=True).identity != emb(tmp_path, late=True, late_overlap=32).identity


# -- the real model -----------------------------------------------------------------------

SHORT = Document(
    "short",
    "The pump in hall B failed on Monday. It needs a new seal, "
    "said the technician who inspected it.",
)
SHORT_PARTS = [(0, 36), (37, 95)]

LONG = Document(
    "long",
    " ".join(
        f"Report {i}: the {['pump', 'valve', 'boiler', 'fan', 'heater'][i % 5]} in building "
        f"{chr(65 + i % 7)} was checked by {['Ana', 'Bo', 'Cy'][i % 3]}, who found "
        f"{['no fault', 'a worn seal', 'a loose bolt', 'rust'][i % 4]} on day {i}."
        for i in range(45)
    ),
)


@pytest.mark.e2e
def test_short_document_equals_the_models_own_token_embeddings(tmp_path):
    e = emb(tmp_path, late=True, normalize=False)
    got = e.embed_late([SHORT], chunks_of(SHORT, SHORT_PARTS))
    assert got.dtype == np.float32 and got.shape == (2, 384)
    model = e._ensure_model()
    tokens = np.asarray(model.encode(SHORT.text, output_value="token_embeddings"))[1:-1]
    enc = model.tokenizer(SHORT.text, add_special_tokens=False, return_offsets_mapping=True)
    offsets = np.array(enc["offset_mapping"])
    assert len(offsets) == len(tokens)
    for (s, t), row in zip(SHORT_PARTS, got):
        inside = (offsets[:, 0] < t) & (offsets[:, 1] > s)
        assert np.allclose(row, tokens[inside].mean(axis=0), atol=1e-4)


@pytest.mark.e2e
def test_document_prefix_is_read_but_not_pooled(tmp_path):
    prefix = "passage: "
    e = emb(tmp_path, late=True, normalize=False, document_prefix=prefix)
    got = e.embed_late([SHORT], chunks_of(SHORT, SHORT_PARTS))
    model = e._ensure_model()
    tokens = np.asarray(model.encode(prefix + SHORT.text, output_value="token_embeddings"))[1:-1]
    enc = model.tokenizer(
        prefix + SHORT.text, add_special_tokens=False, return_offsets_mapping=True
    )
    offsets = np.array(enc["offset_mapping"]) - len(prefix)
    for (s, t), row in zip(SHORT_PARTS, got):
        inside = (offsets[:, 0] < t) & (offsets[:, 1] > s)
        assert np.allclose(row, tokens[inside].mean(axis=0), atol=1e-4)
    plain = emb(tmp_path, late=True, normalize=False).embed_late(
        [SHORT], chunks_of(SHORT, SHORT_PARTS)
    )
    assert not np.allclose(plain, got, atol=1e-3)


@pytest.mark.e2e
def test_long_document_is_read_in_windows_and_every_chunk_gets_a_unit_vector(tmp_path):
    e = emb(tmp_path, late=True)
    n_tokens = len(e._ensure_model().tokenizer(LONG.text, add_special_tokens=False)["input_ids"])
    assert n_tokens > 800
    assert len(windows(n_tokens, e.max_seq_length - 2, e.late_overlap)) >= 4
    parts = [(a, min(a + 150, len(LONG.text))) for a in range(0, len(LONG.text), 150)]
    got = e.embed_late([LONG], chunks_of(LONG, parts))
    assert got.shape == (len(parts), 384)
    assert np.isfinite(got).all() and np.allclose(np.linalg.norm(got, axis=1), 1, atol=1e-5)
    assert len({row.tobytes() for row in got}) == len(parts)


@pytest.mark.e2e
def test_late_vector_differs_from_the_plain_one_yet_is_close(tmp_path):
    e = emb(tmp_path, late=True)
    chunks = chunks_of(SHORT, SHORT_PARTS)
    late = e.embed_late([SHORT], chunks)
    plain = e.embed_documents([c.text for c in chunks])
    cosine = (late * plain).sum(axis=1)
    assert (cosine < 0.999).all() and (cosine > 0.5).all(), cosine


@pytest.mark.e2e
def test_warm_rerun_embeds_nothing_and_returns_the_same_vectors(tmp_path):
    docs = [SHORT, LONG, Document("blank", "   \n  ")]
    chunks = (
        chunks_of(SHORT, SHORT_PARTS)
        + chunks_of(LONG, [(0, 120), (2000, 2300)])
        + chunks_of(docs[2], [(0, 6)])
    )
    first = emb(tmp_path, late=True)
    v1 = first.embed_late(docs, chunks + chunks[:2])  # repeats are embedded once
    s = first.stats
    assert (s.requested, s.unique, s.cache_misses, s.embedded) == (7, 5, 5, 5) and s.seconds > 0
    assert v1[5:].tobytes() == v1[:2].tobytes()
    assert np.isfinite(v1).all()  # the whitespace document's chunk too
    second = emb(tmp_path, late=True)
    v2 = second.embed_late(docs, chunks)
    s = second.stats
    assert (s.cache_hits, s.cache_misses, s.embedded, s.seconds) == (5, 0, 0, 0.0)
    assert v2.tobytes() == v1[:5].tobytes()
    # Only the document with a new chunk goes through the model; a new overlap is a miss.
    third = emb(tmp_path, late=True)
    third.embed_late(docs, chunks + chunks_of(SHORT, [(0, 20)]))
    assert (third.stats.cache_hits, third.stats.embedded) == (5, 1)
    other = emb(tmp_path, late=True, late_overlap=32)
    other.embed_late(docs, chunks)
    assert other.stats.cache_hits == 0


@pytest.mark.e2e
def test_overlap_as_wide_as_the_window_is_an_embedder_error(tmp_path):
    e = emb(tmp_path, late=True, max_seq_length=16, late_overlap=14)
    with pytest.raises(EmbedderError, match="late_overlap=14"):
        e.embed_late([SHORT], chunks_of(SHORT, SHORT_PARTS))
    assert emb(tmp_path, late=True).embed_late([SHORT], []).shape == (0, 384)


@pytest.mark.e2e
def test_a_model_that_is_not_mean_pooled_is_refused_in_one_line(tmp_path):
    from sentence_transformers import SentenceTransformer, models

    from sweep.embedding.errors import LateChunkingUnsupported
    from sweep.embedding.late import check_mean_pooled as _check_mean_pooled
    from sweep.embedding.models import resolve_model

    transformer = models.Transformer(resolve_model("sentence-transformers/all-MiniLM-L6-v2"))
    dim = transformer.get_word_embedding_dimension()
    mean = SentenceTransformer(
        modules=[transformer, models.Pooling(dim, pooling_mode="mean"), models.Normalize()],
        device="cpu",
    )
    _check_mean_pooled(mean, "mean")  # the bundled model's own shape: fine
    for modules, says in (
        ([models.Pooling(dim, pooling_mode="cls")], "without mean pooling"),
        (
            [models.Pooling(dim, pooling_mode="mean"), models.Dense(dim, 16)],
            "Transformer -> Pooling -> Dense",
        ),
    ):
        model = SentenceTransformer(modules=[transformer, *modules], device="cpu")
        with pytest.raises(LateChunkingUnsupported) as e:
            _check_mean_pooled(model, "odd")
        assert says in str(e.value) and "\n" not in str(e.value)
