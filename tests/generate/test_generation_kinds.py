"""Which passages each kind of question uses: distractors, multi-hop partners, task order."""

from __future__ import annotations

from collections import Counter

import numpy as np

from sweep.generate import neighbours
from sweep.generate.kinds import MAX_VARIANTS, Task, TaskSource
from sweep.generate.passages import SentenceWindow


def passage(i: int, doc: str, position: int, text: str) -> SentenceWindow:
    return SentenceWindow(
        index=i,
        doc_id=doc,
        title=doc,
        position=position,
        start=0,
        end=len(text),
        text=text,
        n_tokens=len(text.split()),
    )


def unit(rows) -> np.ndarray:
    return neighbours.normalize_rows(np.array(rows, dtype=np.float32))


POOL = [
    passage(0, "a.md", 0, "The AQ-200 sensor warms up for ninety seconds."),
    passage(1, "a.md", 1, "Calibrate every six months."),
    passage(2, "a.md", 2, "The AQ-200 battery lasts two years in Lisbon."),
    passage(3, "b.md", 0, "Lisbon staff book travel through the desk."),
    passage(4, "c.md", 0, "Denver staff book travel through the desk."),
]
VECTORS = unit([[1, 0, 0], [0.9, 0.3, 0], [0.8, 0.2, 0.5], [0, 1, 0.2], [0, 0.99, 0.21]])


def test_distractors_are_nearest_neighbours_but_never_near_copies():
    assert neighbours.distractors(0, VECTORS, k=2) == [1, 2]
    # 3 and 4 are near copies (cosine above NEAR_COPY): neither is the other's distractor.
    assert 4 not in neighbours.distractors(3, VECTORS, k=2)
    assert 3 not in neighbours.distractors(4, VECTORS, k=2)


def test_entity_terms_skip_sentence_words_and_keep_names_and_codes():
    terms = neighbours.entity_terms("The AQ-200 in Lisbon. When WX10 fails, call Kestrel. It 3rd.")
    assert {"AQ-200", "Lisbon", "WX10", "Kestrel"} <= terms
    assert not {"The", "When", "It"} & terms


def test_multi_partner_shares_a_specific_entity_and_is_far_enough():
    terms, df = neighbours.term_frequencies(POOL)
    # 0 and 1 are neighbours in one document (too close); 2 is two passages
    # away and shares AQ-200.
    assert neighbours.multi_partner(0, POOL, VECTORS, terms, df, set()) == (2, "AQ-200")
    # Passage 2 (a.md) and 3 (b.md) share Lisbon; 2's nearest far partner is 0 via AQ-200.
    partner, entity = neighbours.multi_partner(3, POOL, VECTORS, terms, df, set())
    assert (partner, entity) == (2, "Lisbon")
    assert neighbours.multi_partner(1, POOL, VECTORS, terms, df, set()) is None
    # A pair already used is not used again.
    assert neighbours.multi_partner(0, POOL, VECTORS, terms, df, {frozenset((0, 2))}) is None


def test_top_k_is_ranked_with_ties_broken_by_index():
    vectors = unit([[1, 0], [1, 0], [0, 1]])
    assert neighbours.top_k(np.array([1, 0], np.float32), vectors, 2) == [0, 1]


def test_fact_tasks_cycle_with_variants_up_to_the_limit():
    source = TaskSource("fact", POOL, [2, 0, 1, 3, 4], None)
    first = source.take(3)
    assert [t.passages for t in first] == [(2,), (0,), (1,)] and {t.variant for t in first} == {0}
    rest = source.take(100)
    assert len(first) + len(rest) == len(POOL) * MAX_VARIANTS
    assert Counter(t.variant for t in first + rest) == {v: len(POOL) for v in range(MAX_VARIANTS)}
    assert source.exhausted and "at most" in source.note
    assert source.take(1) == []


def test_multi_source_runs_dry_with_a_reason_when_nothing_pairs():
    lonely = [passage(0, "a.md", 0, "Nothing named here."), passage(1, "b.md", 0, "Nor here.")]
    source = TaskSource(
        "multi", lonely, [0, 1], unit([[1, 0], [0, 1]]), neighbours.term_frequencies(lonely)
    )
    assert source.take(5) == [] and "share a specific name" in source.note


def test_adversarial_and_unanswerable_tasks_carry_two_neighbours():
    for kind in ("adversarial", "unanswerable"):
        (task,) = TaskSource(kind, POOL, [0], VECTORS).take(1)
        assert task == Task(kind, (0, 1, 2), 0)
    assert Task("multi", (0, 2), 0, "AQ-200").evidence_passages == (0, 2)
    assert Task("adversarial", (0, 1, 2)).evidence_passages == (0,)
    assert Task("unanswerable", (0, 1, 2)).evidence_passages == ()


def test_every_prompt_starts_with_its_task_line_and_holds_its_passages():
    tasks = [
        Task("fact", (0,)),
        Task("adversarial", (0, 1, 2), 1),
        Task("multi", (0, 2), 0, "AQ-200"),
        Task("unanswerable", (3, 4, 0)),
    ]
    expected = [
        "fact-question",
        "adversarial-question",
        "multi-hop-question",
        "unanswerable-question",
    ]
    for task, kind in zip(tasks, expected):
        system, user = task.messages(POOL)
        assert system["content"].startswith(f"Task: {kind}\n") and "JSON" in system["content"]
        for i in task.passages:
            assert f">\n{POOL[i].text}\n</passage>" in user["content"]
    assert "Variant 2" in tasks[1].messages(POOL)[1]["content"]
    assert '"AQ-200"' in tasks[2].messages(POOL)[1]["content"]
