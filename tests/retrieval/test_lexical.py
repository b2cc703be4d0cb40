"""BM25 retrieval (``sweep.retrieval.lexical``) against a brute-force BM25 written out here."""

from __future__ import annotations

import math
from collections import Counter

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sweep.core.protocols import Retriever
from sweep.core.types import Chunk
from sweep.retrieval.lexical import BM25Retriever, Tokenizer, top_by_score

CORPUS = [
    "The meal allowance is 45 euros per day for travel inside the EU.",
    "Rail travel is preferred over flights for trips under 500 km.",
    "Sensor calibration must be repeated yearly; calibration drift is logged.",
    "The battery lasts 5 years. Replace the battery when the sensor reports low power.",
    "Travel expenses are approved by the manager within 10 days.",
    "Flights need approval; rail tickets do not.",
    "",
    "Calibration, calibration, calibration: the sensor team repeats it.",
]
QUERIES = [
    "how long does the battery last",
    "rail or flights for travel",
    "sensor calibration",
    "meal allowance euros",
    "unknownword",
    "the",
    "approval of travel expenses",
]


def chunks_of(texts):
    return [Chunk("d", i, 0, len(t), t, max(1, len(t.split()))) for i, t in enumerate(texts)]


def brute_force_bm25(docs_terms, query_terms, k1, b):
    """Lucene's BM25, every chunk scored, each distinct query term once."""
    n = len(docs_terms)
    avgdl = sum(len(d) for d in docs_terms) / n
    df = Counter(t for d in docs_terms for t in set(d))
    out = []
    for d in docs_terms:
        tf = Counter(d)
        s = 0.0
        for t in dict.fromkeys(query_terms):
            if tf[t]:
                idf = math.log(1 + (n - df[t] + 0.5) / (df[t] + 0.5))
                s += idf * tf[t] / (tf[t] + k1 * (1 - b + b * len(d) / avgdl))
        out.append(s)
    return np.array(out)


def expected_order(scores, n):
    """Score descending (equal within float32 rounding), then position."""
    return sorted(range(len(scores)), key=lambda i: (-round(scores[i], 5), i))[:n]


@pytest.mark.parametrize("k1,b", [(1.5, 0.75), (0.9, 0.4), (2.0, 1.0), (1.2, 0.0)])
@pytest.mark.parametrize("stemmer,stopwords", [("english", "en"), ("none", "none")])
def test_bm25_equals_a_brute_force_bm25(k1, b, stemmer, stopwords):
    bm25 = BM25Retriever(k1=k1, b=b, stemmer=stemmer, stopwords=stopwords)
    chunks = chunks_of(CORPUS)
    bm25.index(chunks)
    terms = [bm25.tokenize(t) for t in CORPUS]
    got_scores = bm25.scores(QUERIES)
    ranking = bm25.retrieve(QUERIES, None, len(CORPUS))
    for i, q in enumerate(QUERIES):
        want = brute_force_bm25(terms, bm25.tokenize(q), k1, b)
        np.testing.assert_allclose(got_scores[i], want, rtol=1e-5, atol=1e-6)
        assert ranking.row(i).tolist() == expected_order(want, len(CORPUS)), q
        np.testing.assert_allclose(ranking.scores[i], want[ranking.row(i)], rtol=1e-5, atol=1e-6)


words = st.sampled_from(["alpha", "beta", "gamma", "delta", "rail", "rails", "the", "a", "5"])


@settings(max_examples=40, deadline=None)
@given(
    docs=st.lists(st.lists(words, max_size=12).map(" ".join), min_size=1, max_size=12),
    query=st.lists(words, min_size=1, max_size=4).map(" ".join),
    k=st.integers(1, 15),
)
def test_bm25_equals_brute_force_on_random_corpora(docs, query, k):
    bm25 = BM25Retriever()
    bm25.index(chunks_of(docs))
    want = brute_force_bm25([bm25.tokenize(d) for d in docs], bm25.tokenize(query), 1.5, 0.75)
    got = bm25.retrieve([query], None, k)
    assert got.row(0).tolist() == expected_order(want, k)
    assert got.depth == min(k, len(docs))


def test_tokenizer_lowercases_drops_stopwords_and_stems():
    assert Tokenizer()("The Sensors were CALIBRATED, v2 at 45 €.") == [
        "sensor",
        "were",
        "calibr",
        "v2",
        "45",
    ]
    assert Tokenizer(stemmer="none", stopwords="none")("The Sensors") == ["the", "sensors"]
    assert Tokenizer(stemmer="none", stopwords=["sensors"])("The Sensors") == ["the"]


def test_a_query_sharing_no_term_scores_zero_everywhere_and_ranks_by_position():
    bm25 = BM25Retriever()
    bm25.index(chunks_of(CORPUS))
    r = bm25.retrieve(["zzz qqq", "the and of"], None, 3)
    assert r.ids.tolist() == [[0, 1, 2], [0, 1, 2]] and not r.scores.any()


def test_a_corpus_without_a_single_term_still_ranks():
    bm25 = BM25Retriever()
    bm25.index(chunks_of(["", "...", "the a an"]))
    assert bm25.retrieve(["anything"], None, 5).ids.tolist() == [[0, 1, 2]]


def test_bm25_needs_no_vectors_ignores_the_index_group_and_honours_depth():
    bm25 = BM25Retriever(depth=4, index=object())
    assert isinstance(bm25, Retriever) and bm25.needs_vectors is False
    bm25.index(chunks_of(CORPUS), None)
    assert bm25.retrieve(["battery"], None, 1).depth == 4
    assert bm25.retrieve(["battery"], None, 1).ids[0, 0] == 3


def test_bm25_reads_the_heading_prefix_a_chunk_is_embedded_with():
    plain = Chunk("d", 0, 0, 4, "body", 1)
    prefixed = Chunk("e", 0, 0, 4, "body", 1, embed_text="Travel policy\n\nbody")
    bm25 = BM25Retriever()
    bm25.index([plain, prefixed])
    assert bm25.retrieve(["travel policy"], None, 1).ids.tolist() == [[1]]


@pytest.mark.parametrize(
    "kwargs,match",
    [
        ({"k1": -1}, "retrieve.k1"),
        ({"b": 1.5}, "retrieve.b"),
        ({"b": "x"}, "retrieve.b"),
        ({"stemmer": "klingon"}, "retrieve.stemmer"),
        ({"stopwords": "fr"}, "retrieve.stopwords"),
        ({"stopwords": [1, 2]}, "retrieve.stopwords"),
        ({"depth": 0}, "retrieve.depth"),
    ],
)
def test_bad_bm25_settings_name_their_key(kwargs, match):
    with pytest.raises(ValueError, match=match):
        BM25Retriever(**kwargs)


def test_bad_k_and_a_single_string():
    bm25 = BM25Retriever()
    bm25.index(chunks_of(CORPUS))
    with pytest.raises(ValueError, match="k must be"):
        bm25.retrieve(["q"], None, 0)
    with pytest.raises(ValueError, match="single string"):
        bm25.retrieve("battery", None, 1)


def test_top_by_score_breaks_ties_by_position():
    scores = np.array([[1.0, 3.0, 3.0, 0.0], [0.0, 0.0, 0.0, 0.0]], dtype=np.float32)
    r = top_by_score(scores, 3)
    assert r.ids.tolist() == [[1, 2, 0], [0, 1, 2]]
    assert r.scores.tolist() == [[3.0, 3.0, 1.0], [0.0, 0.0, 0.0]]
