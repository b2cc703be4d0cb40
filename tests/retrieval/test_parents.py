"""Parent-document retrieval: parents of chunks (sections, windows), rankings mapped to them."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sweep.chunking import build_chunker
from sweep.core.tokenization import count_tokens
from sweep.core.types import Chunk, Document, Ranking
from sweep.retrieval.parents import ParentError, Parents, ParentSpec, lift_to_parents, parents_of

DOC = Document(
    "d",
    "# Guide\n\nIntro words here.\n\n## Install\n\n"
    + "Run the installer now. " * 40
    + "\n\n## Use\n\nOpen the app and press start. "
    + "More use text. " * 30,
)


def chunks_of(doc, size=32, overlap=0):
    return build_chunker(strategy="token", size=size, overlap=overlap).chunk_documents([doc])


def test_section_parents_are_the_heading_sections_chunks_lie_in():
    chunks = chunks_of(DOC)
    parents = parents_of([DOC], chunks, ParentSpec("section", None))
    install = DOC.text.index("## Install")
    use = DOC.text.index("## Use")
    for c, p in zip(chunks, (parents.passages[i] for i in parents.of_chunk)):
        assert p.start <= c.start and c.end <= p.end
        assert p.text == DOC.text[p.start : p.end]
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


@pytest.mark.parametrize(
    "mode,size",
    [("child", 5), ("window", None), ("section", 0), ("section", True), ("window", "big")],
)
def test_bad_settings_are_one_line_errors(mode, size):
    with pytest.raises(ParentError) as e:
        ParentSpec(mode, size)
    assert "\n" not in str(e.value) and "parent." in str(e.value)


def _parents(spans, text="abcdefghij" * 10):
    doc = Document("d", text)
    passages = [
        Chunk("d", i, a, b, text[a:b], count_tokens("cl100k_base", text[a:b]))
        for i, (a, b) in enumerate(spans)
    ]
    return doc, passages


def test_lift_keeps_each_parent_at_its_best_chunk_rank_and_drops_repeats():
    _, passages = _parents([(0, 10), (10, 20), (20, 30)])
    parents = Parents(passages, np.array([0, 0, 1, 1, 2]))
    ranking = Ranking(
        np.array([[3, 0, 1, 2, -1], [2, 2, 4, -1, -1]]),
        np.array([[0.9, 0.8, 0.7, 0.6, np.nan], [0.5, 0.4, 0.3, np.nan, np.nan]], dtype=np.float32),
    )
    lifted = lift_to_parents(ranking, parents)
    assert lifted.ranking.ids.tolist() == [[1, 0, -1, -1, -1], [1, 2, -1, -1, -1]]
    np.testing.assert_allclose(lifted.ranking.scores[0, :2], [0.9, 0.8])
    assert np.isnan(lifted.ranking.scores[0, 2:]).all()
    assert lifted.passages == passages  # disjoint parents: nothing cut


def test_overlapping_parents_bring_only_their_new_text():
    _, passages = _parents([(10, 30), (20, 40), (0, 50), (15, 25)])
    parents = Parents(passages, np.arange(4))
    lifted = lift_to_parents(
        Ranking(np.array([[0, 1, 2, 3]]), np.array([[4, 3, 2, 1]], dtype=np.float32)), parents
    )
    spans = [(lifted.passages[i].start, lifted.passages[i].end) for i in lifted.ranking.row(0)]
    # (20, 40) brings (30, 40); (0, 50) the text on both sides; (15, 25) nothing.
    assert spans == [(10, 30), (30, 40), (0, 10), (40, 50)]
    assert lifted.ranking.scores[0, :4].tolist() == [4, 3, 2, 2]
    for i in lifted.ranking.row(0):
        p = lifted.passages[i]
        assert (
            p.n_tokens == count_tokens("cl100k_base", p.text)
            and p.text == ("abcdefghij" * 10)[p.start : p.end]
        )


@settings(max_examples=200, deadline=None)
@given(
    st.lists(st.tuples(st.integers(0, 99), st.integers(1, 40)), min_size=1, max_size=8),
    st.lists(st.lists(st.integers(0, 11), max_size=12), min_size=1, max_size=4),
    st.lists(st.integers(0, 7), min_size=12, max_size=12),
)
def test_lifted_passages_never_repeat_text_and_cover_what_the_parents_cover(spans, rows, parent_of):
    spans = [(a, min(100, a + n)) for a, n in spans]
    _, passages = _parents(spans)
    of_chunk = np.array([p % len(passages) for p in parent_of])
    width = max(1, max(len(r) for r in rows))
    ids = np.full((len(rows), width), -1, dtype=np.int64)
    for i, r in enumerate(rows):
        r = list(dict.fromkeys(r))
        ids[i, : len(r)] = r
    scores = np.where(ids >= 0, 1.0, np.nan).astype(np.float32)
    lifted = lift_to_parents(Ranking(ids, scores), Parents(passages, of_chunk))
    for q in range(len(rows)):
        got = [lifted.passages[i] for i in lifted.ranking.row(q)]
        chars = [c for p in got for c in range(p.start, p.end)]
        assert len(chars) == len(set(chars))  # no character twice
        wanted = {c for i in ids[q][ids[q] >= 0] for c in range(*spans[of_chunk[i]])}
        assert set(chars) == wanted
