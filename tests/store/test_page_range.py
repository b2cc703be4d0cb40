"""Traces say on which pages of a PDF a chunk or a span lies."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from sweep.core.types import Document
from sweep.store.traces import page_range

PAGED = Document("m.pdf", "a" * 30, metadata={"pages": [[0, 10], [12, 20], [22, 30]]})


def test_a_span_on_one_page_two_pages_or_none():
    assert page_range(PAGED, 2, 8) == "1"
    assert page_range(PAGED, 5, 15) == "1-2"
    assert page_range(PAGED, 0, 30) == "1-3"
    assert page_range(PAGED, 10, 12) is None  # the break between pages
    assert page_range(Document("a.md", "text"), 0, 4) is None


@given(st.integers(0, 29), st.integers(1, 30))
def test_the_range_names_pages_that_overlap_the_span(a, b):
    start, end = min(a, b - 1), max(a + 1, b)
    got = page_range(PAGED, start, end)
    on = [n for n, (s, e) in enumerate(PAGED.metadata["pages"], 1) if s < end and start < e]
    assert got == (None if not on else str(on[0]) if len(on) == 1 else f"{on[0]}-{on[-1]}")
