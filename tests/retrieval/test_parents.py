"""Parent-document retrieval: parents of chunks (sections, windows), rankings mapped to them."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from sweep.chunking import build_chunker
from sweep.core.tokenization import count_tokens
from sweep.core.types import Document, Ranking
from sweep.retrieval.parents import ParentError, ParentSpec, lift, parents_of

DOC = Document("d", "# Guide\n\nIntro words here.\n\n## Install\n\n" + "Run the installer now. " * 40
               + "\n\n## Use\n\nOpen the app and press start. " + "More use text. " * 30)


def chunks_of(doc, size=32, overlap=0):
    return build_chunker(strategy="token", size=size, overlap=overlap).chunk_documents([doc])


def test_section_parents_are_the_heading_sections_chunks_lie_in():
    chunks = chunks_of(DOC)
    parents = parents_of([DOC], chunks, ParentSpec("section", None))
    install = DOC.text.index("## Install")
    use = DOC.text.index("## Use")
    for c, p in zip(chunks, (parents.passages[i] for i in parents.of_chunk)):
        assert p.start <= c.start and c.end <= p.end
        assert p.text == DOC.text[p.start:p.end]
        assert p.n_tokens == count_tokens("cl100k_base", p.text)
        if install <= c.start and c.end <= use:  # wholly inside one section: that section
            assert (p.start, p.end) == (install, use)
    # Chunks share parents: fewer parents than chunks, each a distinct span.
    spans = [(p.start, p.end) for p in parents.passages]
    assert len(spans) == len(set(spans)) < len(chunks)


def test_a_long_section_is_cut_to_parent_size_tokens_around_the_chunk():
    chunks = chunks_of(DOC, size=16)
    parents = parents_of([DOC], chunks, ParentSpec("section", 100))
    for c, i in zip(chunks, parents.of_chunk):
        p = parents.passages[i]
        assert p.start <= c.start and c.end <= p.end
        assert p.n_tokens <= 100 + 2  # token spans can snap by a character at each end


def test_window_parents_are_centred_and_sized():
    chunks = chunks_of(DOC, size=16)
    parents = parents_of([DOC], chunks, ParentSpec("window", 64))
    for c, i in zip(chunks, parents.of_chunk):
        p = parents.passages[i]
        assert p.start <= c.start and c.end <= p.end
        assert 60 <= p.n_tokens <= 66 or (p.start == 0 or p.end == len(DOC.text))
    # A chunk as long as the window is its own parent.
    big = chunks_of(DOC, size=128)
    own = parents_of([DOC], big, ParentSpec("window", 64))
    assert [(p.start, p.end) for p in own.passages] == [(c.start, c.end) for c in big]


def test_a_document_without_headings_is_one_section():
    doc = Document("plain", "No headings at all. " * 50)
    chunks = chunks_of(doc)
    parents = parents_of([doc], chunks, ParentSpec("section", None))
    assert [(p.start, p.end) for p in parents.passages] == [(0, len(doc.text))]
    assert set(parents.of_chunk.tolist()) == {0}


@pytest.mark.parametrize("mode,size", [("child", 5), ("window", None), ("section", 0),
                                       ("section", True), ("window", "big")])
def test_bad_settings_are_one_line_errors(mode, size):
    with pytest.raises(ParentError) as e:
        ParentSpec(mode, size)
    assert "\n" not in str(e.value) and "retrieve.parent" in str(e.value)


def test_lift_keeps_each_parent_at_its_best_chunk_rank():
    ranking = Ranking(np.array([[3, 0, 1, 2, -1], [2, 2, 4, -1, -1]]),
                      np.array([[.9, .8, .7, .6, np.nan], [.5, .4, .3, np.nan, np.nan]],
                               dtype=np.float32))
    of_chunk = np.array([0, 0, 1, 1, 2])
    lifted = lift(ranking, of_chunk)
    assert lifted.ids.tolist() == [[1, 0, -1, -1, -1], [1, 2, -1, -1, -1]]
    np.testing.assert_allclose(lifted.scores[0, :2], [.9, .8])
    assert np.isnan(lifted.scores[0, 2:]).all()


@settings(max_examples=200, deadline=None)
@given(st.lists(st.lists(st.integers(0, 19), max_size=20), min_size=1, max_size=6),
       st.lists(st.integers(0, 7), min_size=20, max_size=20))
def test_lift_never_repeats_a_parent_and_keeps_first_order(rows, parent_of):
    width = max(1, max(len(r) for r in rows))
    ids = np.full((len(rows), width), -1, dtype=np.int64)
    for i, r in enumerate(rows):
        r = list(dict.fromkeys(r))  # a retriever never returns a chunk twice
        ids[i, :len(r)] = r
    scores = np.where(ids >= 0, -np.arange(width, dtype=np.float32), np.nan).astype(np.float32)
    of_chunk = np.array(parent_of)
    lifted = lift(Ranking(ids, scores), of_chunk)
    for i in range(len(rows)):
        expected = list(dict.fromkeys(of_chunk[ids[i][ids[i] >= 0]].tolist()))
        assert lifted.row(i).tolist() == expected
