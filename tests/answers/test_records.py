"""``sweep.answers.records``: one query's end-to-end trace, ``answers/answers.jsonl``, written and
read back through real files."""

from __future__ import annotations

import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sweep.answers.records import JUDGES, AnswerTrace, read_answers, write_answers
from sweep.answers.replies import JudgeVerdict
from sweep.store.traces import Evidence, Retrieved

GOLD = (
    Evidence("travel.md", 1, 0, 58, "The daily allowance for meals is 45 euros within Portugal."),
)
HIT = Retrieved(
    1,
    "travel.md#0",
    "travel.md",
    0,
    80,
    17,
    0.83,
    "The daily allowance for meals is 45 euros within Portugal. Rail is preferred.",
)


def _trace(**kw) -> AnswerTrace:
    fields = dict(
        job=0,
        setting="size=64 overlap=0",
        query_id="q1",
        query="What is the daily meal allowance?",
        type="fact",
        reference="45 euros",
        gold=GOLD,
        context=(HIT,),
        context_relevance="complete",
        answer="45 euros.",
        declined=False,
        verdicts={
            "faithful": JudgeVerdict(True, "found", "none"),
            "relevant": JudgeVerdict(True, "on topic"),
            "correct": JudgeVerdict(False, "says 46"),
        },
        failures={},
        diagnosis="incorrect",
        prompt_version="1",
        k=2,
        model="stand-in",
    )
    fields.update(kw)
    return AnswerTrace(**fields)


def test_a_trace_round_trips_through_json():
    t = _trace(failures={"relevant": "bad_json"})
    assert AnswerTrace.from_json(json.loads(t.to_json())) == t
    data = json.loads(t.to_json())
    assert data["gold"][0]["text"].startswith("The daily") and data["context"][0]["rank"] == 1
    assert data["verdicts"]["faithful"] == {"passed": True, "reason": "found", "category": "none"}


def test_traces_round_trip_through_the_file_and_text_stays_readable(tmp_path):
    traces = [
        _trace(),
        _trace(
            job=1,
            query_id="q2",
            query="Où est le café ☕?",
            answer=None,
            declined=None,
            verdicts={},
            failures={"answer": "bad_json"},
            diagnosis="no_answer",
            gold=(),
            context=(),
            context_relevance="unanswerable",
            reference=None,
            type=None,
        ),
    ]
    path = tmp_path / "answers.jsonl"
    write_answers(path, traces)
    assert read_answers(path) == traces
    text = path.read_text(encoding="utf-8")
    assert len(text.splitlines()) == 2 and "Où est le café ☕?" in text  # not \\u escapes


def test_blank_lines_are_skipped_and_a_bad_line_names_file_and_line(tmp_path):
    path = tmp_path / "answers.jsonl"
    path.write_text(_trace().to_json() + "\n\n   \n" + '{"job": 1}\n', encoding="utf-8")
    with pytest.raises(ValueError) as e:
        read_answers(path)
    assert str(e.value).startswith(f"{path}:4: not an answer trace")
    path.write_text(_trace().to_json() + "\n\n", encoding="utf-8")
    assert read_answers(path) == [_trace()]
    path.write_text("not json\n")
    with pytest.raises(ValueError, match=":1: not an answer trace"):
        read_answers(path)
    path.write_text(
        '{"job": "x", "setting": "s", "query_id": "q", "query": "?", "context_relevance": "none"}\n'
    )
    with pytest.raises(ValueError, match=":1: not an answer trace"):
        read_answers(path)


def test_a_trace_from_before_k_and_model_were_recorded_reads_as_unknown():
    data = json.loads(_trace().to_json())
    for key in ("k", "model", "prompt_version", "failures", "diagnosis"):
        data.pop(key)
    old = AnswerTrace.from_json(data)
    assert (old.k, old.model, old.prompt_version, old.diagnosis, old.failures) == (
        0,
        "",
        "",
        "",
        {},
    )
    assert old.setup == ("", 0, "")


def test_setup_answerable_and_passed():
    t = _trace()
    assert t.setup == ("stand-in", 2, "1")
    assert t.answerable and not _trace(gold=()).answerable
    assert t.passed("faithful") is True and t.passed("correct") is False
    assert _trace(verdicts={}).passed("relevant") is None
    assert JUDGES == ("faithful", "relevant", "correct")


words = st.text(st.characters(blacklist_categories=("Cs",)), max_size=40)


@settings(max_examples=60, suppress_health_check=[HealthCheck.too_slow])
@given(
    query=words,
    answer=st.one_of(st.none(), words),
    declined=st.one_of(st.none(), st.booleans()),
    job=st.integers(0, 10_000),
    k=st.integers(0, 100),
    reason=words,
    passed=st.booleans(),
    ref=st.one_of(st.none(), words),
)
def test_any_trace_round_trips(query, answer, declined, job, k, reason, passed, ref):
    t = _trace(
        query=query,
        answer=answer,
        declined=declined,
        job=job,
        k=k,
        reference=ref,
        verdicts={"relevant": JudgeVerdict(passed, reason)},
        setting=query[:5],
    )
    line = t.to_json()
    assert "\n" not in line  # one line per trace in the file
    assert AnswerTrace.from_json(json.loads(line)) == t
