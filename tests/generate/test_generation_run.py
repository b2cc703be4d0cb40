"""Generation end to end in process: the stand-in model, the real embedder, the tiny corpus.

Every rejection reason is produced by making the stand-in misbehave in one way.
"""

from __future__ import annotations

import json
import re

import pytest

from llm_server import Fault, GenerationResponders, StandInLLM
from paths import ROOT
from sweep.core.types import Document
from sweep.datasets.loading import load_corpus, load_dataset
from sweep.embedding.embedder import SentenceTransformerEmbedder
from sweep.generate.config import GenerateConfig
from sweep.generate.output import write_output
from sweep.generate.run import generate
from sweep.generate.spans import normalize
from sweep.llm import LLMClient, LLMConfig, ResponseCache

pytestmark = pytest.mark.e2e

TINY = load_corpus(ROOT / "corpora" / "tiny" / "docs")


@pytest.fixture(scope="module")
def embedder(tmp_path_factory):
    return SentenceTransformerEmbedder(
        cache_dir=str(tmp_path_factory.mktemp("embeddings")), show_progress=False
    )


@pytest.fixture
def server():
    with GenerationResponders().install(StandInLLM()) as s:
        yield s


def behaving(**faults) -> GenerationResponders:
    """The stand-in with one fault, and every question rated realistic unless said otherwise
    (its default rating rejects some questions by hash, which would muddle the counts)."""
    return GenerationResponders(**{"realism": lambda q: 5, **faults})


def run(server, tmp_path, embedder, documents=TINY, dry_run=False, llm=None, **settings):
    settings = GenerateConfig(
        **{
            "n": 6,
            "window_tokens": 60,
            "out": "unused",
            "show_progress": False,
            "dry_run": dry_run,
            **settings,
        }
    )
    config = LLMConfig(
        base_url=server.url, model="stand-in", backoff_s=0.01, max_retries=1, **(llm or {})
    )
    client = LLMClient(
        config, None, ResponseCache(tmp_path / "llm"), dry_run=dry_run, show_progress=False
    )
    return generate(documents, settings, client, embedder, dataset="tiny")


def only(kind: str) -> dict[str, float]:
    return {kind: 1.0}


def test_every_kind_with_exact_spans_and_metadata(server, tmp_path, embedder):
    result = run(server, tmp_path, embedder, n=12)
    texts = {d.doc_id: d.text for d in TINY}
    queries = result.queries
    assert [q.type for q in queries] == ["fact"] * 5 + ["adversarial"] * 4 + ["multi"] * 2 + [
        "unanswerable"
    ]
    assert len({q.query_id for q in queries}) == 12 and queries[0].query_id == "syn-fact-001"
    for q in queries:
        meta = q.metadata
        assert meta["source"] == "synthetic" and meta["generator"] == "stand-in"
        assert meta["prompt_version"] == "2" and meta["realism"] >= 4
        for j in q.relevant:
            assert texts[j.doc_id][j.start : j.end] == j.quote and j.grade == 1
    for q in queries:
        if q.type == "adversarial":
            assert len(q.relevant) == 1 and len(meta_of(q, "distractors")) == 2
            target = meta_of(q, "passages")[0]
            assert all(d != target for d in meta_of(q, "distractors"))
        if q.type == "multi":
            a, b = q.relevant
            assert (a.doc_id, a.start) != (b.doc_id, b.start) and meta_of(q, "entity")
        if q.type == "unanswerable":
            assert q.relevant == () and len(meta_of(q, "checked")) == 5
    report = result.report
    assert (
        report.kept
        == report.requested
        == {"fact": 5, "adversarial": 4, "multi": 2, "unanswerable": 1}
    )
    r = report.requests
    tried = sum(report.attempted.values())
    assert r["sent"] == len(server.requests) and r["cached"] == 0 and r["failed"] == 0
    assert r["prompt_tokens"] > 0 and r["completion_tokens"] > 0
    assert tried * 3 >= r["sent"] >= tried  # draft, realism, check per surviving candidate
    # The set is a valid dataset in the project format.
    write_output(tmp_path / "out", TINY, queries, report)
    assert len(load_dataset(tmp_path / "out").queries) == 12


def meta_of(q, key):
    return q.metadata[key]


def test_a_rerun_sends_nothing_and_gives_the_same_set(server, tmp_path, embedder):
    first = run(server, tmp_path, embedder, n=8)
    sent = len(server.requests)
    again = run(server, tmp_path, embedder, n=8)
    assert len(server.requests) == sent
    assert again.report.requests["sent"] == 0 and again.report.requests["cached"] == sent
    assert again.queries == first.queries


def test_dry_run_counts_without_sending(server, tmp_path, embedder):
    dry = run(server, tmp_path, embedder, dry_run=True, n=6)
    assert not server.requests and dry.queries == ()
    r = dry.report.requests
    assert r["would_send"] == 6 * 3 and r["cached"] == 0 and r["would_send_prompt_tokens"] > 1000
    run(server, tmp_path, embedder, n=6)
    sent = len(server.requests)
    again = run(server, tmp_path, embedder, dry_run=True, n=6)
    assert len(server.requests) == sent
    # The real run cached the embeddings, so the dry run pairs passages as it did.
    assert not again.estimated
    assert again.report.requests["would_send"] == 0 and again.report.requests["cached"] == sent


def test_a_dry_run_pairs_passages_without_the_embedder(server, tmp_path):
    dry = run(server, tmp_path, None, dry_run=True, n=10)
    assert dry.estimated
    assert dry.planned == {"fact": 12, "adversarial": 9, "multi": 6, "unanswerable": 3}
    assert dry.report.requests["would_send"] == 30 and not server.requests


def rejected(result) -> dict[str, int]:
    return result.report.rejected


def test_quotes_not_in_the_passage_are_rejected(server, tmp_path, embedder):
    behaving(quote_mode="missing").install(server)
    result = run(server, tmp_path, embedder, n=3, kinds=only("fact"), max_attempts=1)
    assert result.queries == () and rejected(result) == {"quote_not_found": 3}
    assert result.report.notes and "fact: 0 of 3 kept" in result.report.notes[0]


def test_reflowed_quotes_are_found_and_stored_exactly(server, tmp_path, embedder):
    behaving(quote_mode="reflow").install(server)
    result = run(server, tmp_path, embedder, n=4, kinds=only("fact"))
    texts = {d.doc_id: d.text for d in TINY}
    assert len(result.queries) == 4 and result.report.quotes == {"exact": 0, "normalised": 4}
    for q in result.queries:
        (j,) = q.relevant
        assert j.quote == texts[j.doc_id][j.start : j.end]
        assert j.quote != j.quote.upper()  # the document's casing, not the model's


@pytest.mark.parametrize(
    "responders, reason",
    [
        (behaving(malformed={"fact-question"}), "bad_json"),
        (behaving(wrong_shape={"fact-question"}), "bad_shape"),
        (behaving(copy_passage=True), "copies_passage"),
        (behaving(realism=lambda q: 3), "unrealistic"),
        (behaving(answerable=False), "not_answerable"),
    ],
)
def test_each_rejection_reason_of_fact_questions(server, tmp_path, embedder, responders, reason):
    responders.install(server)
    result = run(server, tmp_path, embedder, n=2, kinds=only("fact"), max_attempts=1)
    assert result.queries == () and rejected(result) == {reason: 2}


def test_min_realism_decides(server, tmp_path, embedder):
    behaving(realism=lambda q: 3).install(server)
    result = run(server, tmp_path, embedder, n=2, kinds=only("fact"), min_realism=3)
    assert len(result.queries) == 2 and {q.metadata["realism"] for q in result.queries} == {3}


def test_judge_replies_that_are_not_json_are_counted_per_stage(server, tmp_path, embedder):
    behaving(malformed={"realism-rating"}).install(server)
    result = run(server, tmp_path, embedder, n=2, kinds=only("fact"), max_attempts=1)
    assert ("realism", "bad_json", "fact", 2) in result.report.rejections


def test_an_answer_found_by_retrieval_rejects_an_unanswerable_question(server, tmp_path, embedder):
    behaving(in_corpus=True).install(server)
    result = run(server, tmp_path, embedder, n=2, kinds=only("unanswerable"), max_attempts=1)
    assert result.queries == () and rejected(result) == {"answer_in_corpus": 2}
    checks = [r for r in server.requests if r.kind == "retrieval-check"]
    assert len(checks) == 2 and all(r.text("user").count("<passage") == 5 for r in checks)


def test_near_duplicates_keep_the_first(server, tmp_path, embedder):
    behaving(same_question=True, answerable=True).install(server)
    result = run(server, tmp_path, embedder, n=3, kinds=only("fact"), max_attempts=2)
    assert len(result.queries) == 1 and rejected(result) == {"near_duplicate": 5}


def test_requests_failing_after_retries_are_counted(server, tmp_path, embedder):
    server.always = Fault(status=500)
    result = run(server, tmp_path, embedder, n=2, kinds=only("fact"), max_attempts=1)
    assert rejected(result) == {"request_failed": 2}
    r = result.report.requests
    assert r["failed"] == 2 and r["retries"] == 2 and len(server.requests) == 4
    server.always = None
    assert len(run(server, tmp_path, embedder, n=2, kinds=only("fact")).queries) == 2


SHARED = "Every request goes through the service desk before noon."


def test_an_adversarial_answer_also_in_a_distractor_is_rejected(server, tmp_path, embedder):
    docs = [
        Document(f"{topic}.md", f"{SHARED} {body}", topic)
        for topic, body in [
            ("travel", "Flights are booked in economy class for trips under six hours."),
            ("hardware", "Laptops are replaced every four years by the IT team."),
            ("payroll", "Salaries are paid on the last working day of each month."),
            ("security", "Badges must be worn visibly inside every office building."),
        ]
    ]

    def quote_the_shared_sentence(req):
        return json.dumps(
            {"question": "Which of these needs the service desk first?", "quote": SHARED}
        )

    server.responders["adversarial-question"] = quote_the_shared_sentence
    result = run(
        server, tmp_path, embedder, documents=docs, n=2, kinds=only("adversarial"), max_attempts=1
    )
    assert rejected(result) == {"distractor_has_answer": 2}


def test_a_multi_hop_question_from_one_passage_is_rejected(server, tmp_path, embedder):
    def both_from_the_first(req):
        first = re.findall(r"<passage[^>]*>\n(.*?)\n</passage>", req.text("user"), re.DOTALL)[0]
        words = first.split()
        return json.dumps(
            {
                "question": "How do these two facts relate?",
                "quotes": [" ".join(words[:4]), " ".join(words[-4:])],
            }
        )

    server.responders["multi-hop-question"] = both_from_the_first
    result = run(server, tmp_path, embedder, n=2, kinds=only("multi"), max_attempts=1)
    assert rejected(result) == {"not_two_passages": 2}


def test_multi_hop_runs_dry_with_a_note_when_no_passages_share_a_name(server, tmp_path, embedder):
    docs = [
        Document("a.md", "bread is baked every morning in the small oven downstairs."),
        Document("b.md", "the river floods after long rain in the early spring months."),
    ]
    result = run(server, tmp_path, embedder, documents=docs, n=2, kinds=only("multi"))
    assert result.queries == () and not server.requests
    assert "share a specific name" in result.report.notes[0]


def test_distractor_answers_are_checked_normalised():
    # The check compares normalised text, so a distractor that states the
    # answer with other line breaks or capitals still counts.
    assert normalize(SHARED) in normalize(
        "EVERY request goes\nthrough the service desk before noon."
    )
