"""Passages: sentence windows of the documents, sampled in proportion to length."""

from __future__ import annotations

from collections import Counter
from itertools import pairwise

import pytest

from paths import ROOT
from sweep.core.tokenization import count_tokens
from sweep.core.types import Document
from sweep.datasets.loading import load_corpus
from sweep.generate.passages import cut_passages, sampling_order


@pytest.fixture(scope="module")
def kestrel():
    return load_corpus(ROOT / "corpora" / "kestrel" / "docs")


def test_windows_are_exact_slices_within_the_size(kestrel):
    docs = {d.doc_id: d for d in kestrel}
    passages = cut_passages(kestrel, 300)
    assert len(passages) > len(kestrel)
    for i, p in enumerate(passages):
        assert p.index == i
        assert docs[p.doc_id].text[p.start : p.end] == p.text
        assert p.n_tokens == count_tokens("cl100k_base", p.text) <= 300
    # Windows of one document do not overlap and keep reading order.
    by_doc: dict[str, list] = {}
    for p in passages:
        by_doc.setdefault(p.doc_id, []).append(p)
    for ps in by_doc.values():
        assert [p.position for p in ps] == list(range(len(ps)))
        assert all(a.end <= b.start for a, b in pairwise(ps))
    # About the size asked for: most windows are well over half of it.
    sizes = sorted(p.n_tokens for p in passages)
    assert sizes[len(sizes) // 2] >= 200


def test_window_size_does_not_depend_on_any_chunk_setting(kestrel):
    assert cut_passages(kestrel[:3], 300) == cut_passages(kestrel[:3], 300)
    assert cut_passages(kestrel[:3], 100) != cut_passages(kestrel[:3], 300)


def test_a_short_document_keeps_its_only_passage():
    docs = [Document("short.md", "Tiny note."), Document("long.md", "A sentence here. " * 200)]
    passages = cut_passages(docs, 100)
    assert [p.doc_id for p in passages].count("short.md") == 1


def test_order_is_reproducible_and_differs_by_seed_and_kind(kestrel):
    passages = cut_passages(kestrel, 300)
    a = sampling_order(passages, 0, "fact")
    assert a == sampling_order(passages, 0, "fact")
    assert sorted(a) == list(range(len(passages)))
    assert a != sampling_order(passages, 1, "fact")
    assert a != sampling_order(passages, 0, "multi")


def test_documents_are_sampled_in_proportion_to_their_length():
    docs = [
        Document("long.md", "This is one sentence of the long one. " * 600),
        Document("short.md", "This is one sentence of the short one. " * 150),
    ]
    passages = cut_passages(docs, 100)
    tokens = Counter()
    for p in passages:
        tokens[p.doc_id] += p.n_tokens
    share = tokens["long.md"] / sum(tokens.values())
    picked = Counter()
    for seed in range(200):
        for i in sampling_order(passages, seed, "fact")[:5]:
            picked[passages[i].doc_id] += 1
    assert abs(picked["long.md"] / sum(picked.values()) - share) < 0.05
