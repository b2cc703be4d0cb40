"""``sweep.answers``: answers from a setting's chunks, binary judges, the diagnosis of each query.

The real ``openai`` client talks to the stand-in server (tests/llm_server.py) on
127.0.0.1; the sweeps are written through sweep's own types (no model).
"""

from __future__ import annotations

import csv
import json
import math
import os
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from interrupting import interrupt_twice
from llm_server import AnswerResponders, Fault, StandInLLM
from paths import ROOT
from sweep.answers.diagnosis import context_relevance, diagnose_answer
from sweep.answers.humancheck import cohen_kappa
from sweep.answers.replies import BadReply, parse_answer, parse_judge_verdict
from sweep.store.traces import Evidence, QueryTrace, Retrieved, write_traces
from sweepdirs import make_job

# --------------------------------------------------------------------------- pure parts


@pytest.mark.parametrize(
    "ranks,k,want",
    [
        ((1, 2), 5, "complete"),
        ((1, 9), 5, "partial"),
        ((None, 9), 5, "none"),
        ((), 5, "unanswerable"),
        (None, 5, "unanswerable"),
    ],
)
def test_context_relevance_from_credit_ranks(ranks, k, want):
    assert context_relevance(ranks, k) == want


@pytest.mark.parametrize(
    "args,want",
    [
        (("complete", False, True, True, None), "ok"),
        (("complete", False, True, True, True), "ok"),
        (("complete", False, True, True, False), "incorrect"),
        (("complete", False, True, False, None), "wrong_section"),
        (("complete", False, False, True, None), "unfaithful"),
        (("complete", False, False, False, None), "unfaithful"),
        (("complete", True, None, None, False), "declined_with_evidence"),
        (("partial", False, True, True, None), "retrieval"),
        (("none", True, None, None, None), "retrieval"),
        (("unanswerable", True, None, None, None), "correctly_declined"),
        (("unanswerable", False, True, True, None), "answered_without_evidence"),
        (("complete", None, None, None, None), "no_answer"),
        (("complete", False, None, True, None), "judge_failed"),
    ],
)
def test_every_diagnosis(args, want):
    assert diagnose_answer(*args) == want


def test_answer_and_verdict_contracts():
    assert parse_answer('{"answer": "45 euros", "declined": false, "extra": 1}').text == "45 euros"
    assert parse_answer('```json\n{"answer": "", "declined": true}\n```').declined
    assert parse_answer('{"answer": null, "declined": "true"}').declined
    v = parse_judge_verdict(
        '{"faithful": false, "category": "Hallucination", "reason": "r"}', "faithful"
    )
    assert (v.passed, v.category) == (False, "hallucination")
    assert (
        parse_judge_verdict('{"faithful": true, "category": "omission"}', "faithful").category
        == "none"
    )
    assert parse_judge_verdict('{"relevant": true, "reason": "ok"}', "relevant").passed
    for text, reason in (
        ("no json at all", "bad_json"),
        ('{"answer": 3}', "bad_shape"),
        ('{"answer": "", "declined": false}', "bad_shape"),
    ):
        with pytest.raises(BadReply) as e:
            parse_answer(text)
        assert e.value.reason == reason
    for text in (
        '{"faithful": "maybe"}',
        '{"faithful": false, "category": "none"}',
        '{"faithful": false, "category": "lies"}',
    ):
        with pytest.raises(BadReply, match="bad_shape"):
            parse_judge_verdict(text, "faithful")


def test_cohen_kappa_known_values():
    assert cohen_kappa([(True, True), (False, False)] * 5) == 1.0
    # 20 pairs: 15 agree; each rater says yes 10 times -> po 0.75, pe 0.5, kappa 0.5.
    pairs = [(True, True)] * 8 + [(False, False)] * 7 + [(True, False)] * 2 + [(False, True)] * 3
    pairs += [(True, False)] * 0
    po = 15 / 20
    pa, pb = 10 / 20, 11 / 20
    pe = pa * pb + (1 - pa) * (1 - pb)
    assert cohen_kappa(pairs) == pytest.approx((po - pe) / (1 - pe))
    assert math.isnan(cohen_kappa([(True, True)] * 4))


# --------------------------------------------------------------------------- a sweep to answer from

DOCS = {
    "travel.md": "The daily allowance for meals is 45 euros within Portugal. Rail is preferred "
    "for journeys under four hours between Lisbon and Porto.",
    "sensors.md": "The AQ-200 sensor must be calibrated every twelve months by a technician. Its "
    "battery lasts five years in normal outdoor operation.",
}
QUERIES = [  # id, question, gold (doc, quote) or None, type, reference answer
    (
        "q1",
        "What is the daily meal allowance within Portugal?",
        ("travel.md", "The daily allowance for meals is 45 euros within Portugal."),
        "fact",
        "45 euros",
    ),
    (
        "q2",
        "How often must the AQ-200 sensor be calibrated?",
        ("sensors.md", "The AQ-200 sensor must be calibrated every twelve months by a technician."),
        "fact",
        None,
    ),
    (
        "q3",
        "How long does the sensor battery last outdoors?",
        ("sensors.md", "Its battery lasts five years in normal outdoor operation."),
        "fact",
        None,
    ),
    ("q4", "What is the parking allowance in Tokyo offices?", None, "unanswerable", None),
]


def _write_sweep(folder: Path, retrieved: dict[int, dict[str, list[tuple[str, str]]]]) -> Path:
    """Jobs with traces whose chunks are the given (doc, sentence) lists, in rank order."""
    for job, per_query in retrieved.items():
        make_job(folder, job, 64 * (job + 1), 0, np.array([1.0, 1.0, 0.0, 1.0] * 15))
        traces = []
        for qid, question, gold, qtype, reference in QUERIES:
            chunks = per_query[qid]
            hits = []
            for rank, (doc, sentence) in enumerate(chunks, 1):
                start = DOCS[doc].index(sentence)
                hits.append(
                    Retrieved(
                        rank,
                        f"{doc}#{rank}",
                        doc,
                        start,
                        start + len(sentence),
                        len(sentence.split()),
                        1 - rank / 10,
                        sentence,
                    )
                )
            ev = ()
            credits = {}
            if gold:
                start = DOCS[gold[0]].index(gold[1])
                ev = (Evidence(gold[0], 1, start, start + len(gold[1]), gold[1]),)
                found = next(
                    (
                        h.rank
                        for h in hits
                        if h.doc_id == gold[0]
                        and h.start <= start
                        and h.end >= start + len(gold[1])
                    ),
                    None,
                )
                credits = {"doc": (found,), "span": (found,)}
            traces.append(
                QueryTrace(
                    qid, question, qtype, None, ev, tuple(hits), credits, reference=reference
                )
            )
        write_traces(folder / str(job) / "hits.jsonl", traces)
    return folder


def _sentences(doc):
    return [s if s.endswith(".") else s + "." for s in DOCS[doc].rstrip(".").split(". ")]


def _good_and_bad(tmp_path: Path) -> Path:
    t, s = _sentences("travel.md"), _sentences("sensors.md")
    good = {
        "q1": [("travel.md", t[0]), ("sensors.md", s[0])],
        "q2": [("sensors.md", s[0]), ("travel.md", t[1])],
        "q3": [("sensors.md", s[1]), ("travel.md", t[0])],
        "q4": [("travel.md", t[1]), ("sensors.md", s[1])],
    }
    bad = {
        "q1": [("travel.md", t[1]), ("sensors.md", s[1])],  # the gold sentence is missing
        "q2": [("sensors.md", s[0]), ("travel.md", t[1])],
        "q3": [("travel.md", t[0]), ("sensors.md", s[0])],
        "q4": [("sensors.md", s[0]), ("travel.md", t[0])],
    }
    return _write_sweep(tmp_path / "sweep", {0: good, 1: bad})


def _answers(
    server: StandInLLM, sweep: Path, cache: Path, *overrides: str
) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k != "OPENAI_API_KEY"}
    cmd = [
        sys.executable,
        "-m",
        "sweep.answers",
        str(sweep),
        f"llm.base_url={server.url}",
        "llm.model=stand-in",
        "llm.api_key_env=null",
        f"llm.cache_dir={cache}",
        "answers.show_progress=false",
        "answers.n_boot=200",
        "answers.n_perm=500",
        "settings=all",
        "answers.k=2",
        *overrides,
    ]
    return subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)


@pytest.fixture
def server():
    with AnswerResponders().install(StandInLLM()) as s:
        yield s


def _traces(sweep: Path) -> dict[tuple[int, str], dict]:
    lines = (sweep / "answers" / "answers.jsonl").read_text().splitlines()
    return {(t["job"], t["query_id"]): t for t in map(json.loads, lines)}


def test_answers_judged_and_diagnosed_then_a_rerun_sends_nothing(tmp_path, server):
    sweep = _good_and_bad(tmp_path)
    proc = _answers(server, sweep, tmp_path / "cache")
    assert proc.returncode == 0, proc.stderr[-3000:]
    t = _traces(sweep)
    assert len(t) == 8
    good = {q: t[(0, q)] for q in ("q1", "q2", "q3", "q4")}
    assert good["q1"]["answer"] == "The daily allowance for meals is 45 euros within Portugal."
    assert (
        good["q1"]["verdicts"]["faithful"]["passed"] and good["q1"]["verdicts"]["correct"]["passed"]
    )
    assert good["q1"]["diagnosis"] == "ok" and good["q1"]["context_relevance"] == "complete"
    assert good["q4"]["declined"] and good["q4"]["diagnosis"] == "correctly_declined"
    # The second setting lost q1's evidence: a retrieval problem, whatever the model did.
    assert t[(1, "q1")]["context_relevance"] == "none" and t[(1, "q1")]["diagnosis"] == "retrieval"
    # Unanswerable, and the context happens to mention sensors: answered anyway.
    rows = list(csv.DictReader(open(sweep / "answers" / "answers.csv")))
    assert [r["job"] for r in rows] == ["0", "1"]
    assert float(rows[0]["declined"]) == 1.0 and float(rows[0]["faithful"]) == 1.0
    assert float(rows[0]["faithful.lo"]) <= 1.0 and int(rows[0]["diagnosis.ok"]) >= 1
    md = (sweep / "answers" / "answers.md").read_text()
    assert "Do the answers hold up?" in md and "Paired tests" in md and "requests:" in md
    html = (sweep / "answers" / "answers.html").read_text(encoding="utf-8")
    assert html.count('<details class="q"') == 8 and "sweepFilter" in html
    assert not re.search(r'(src|href)="(?!data:)', html)
    assert 'href="answers/answers.html"' in (sweep / "report.html").read_text(encoding="utf-8")
    sent = len(server.requests)
    assert sent > 8  # answers and judges
    again = _answers(server, sweep, tmp_path / "cache")
    assert again.returncode == 0 and len(server.requests) == sent  # everything from the cache
    assert "0 sent" in again.stdout and _traces(sweep) == t


def test_hallucinations_and_declines_are_diagnosed(tmp_path):
    sweep = _good_and_bad(tmp_path)
    with AnswerResponders(hallucinate=True).install(StandInLLM()) as server:
        assert _answers(server, sweep, tmp_path / "c1").returncode == 0
    t = _traces(sweep)
    assert t[(0, "q1")]["diagnosis"] == "unfaithful"
    assert t[(0, "q1")]["verdicts"]["faithful"]["category"] == "misinterpretation"
    assert t[(0, "q4")]["diagnosis"] == "answered_without_evidence"
    with AnswerResponders(decline_all=True).install(StandInLLM()) as server:
        assert _answers(server, sweep, tmp_path / "c2").returncode == 0
    t = _traces(sweep)
    assert t[(0, "q2")]["diagnosis"] == "declined_with_evidence"
    assert t[(0, "q1")]["verdicts"]["correct"]["passed"] is False  # declined with a reference
    assert t[(0, "q4")]["diagnosis"] == "correctly_declined"


def test_wrong_section_and_incorrect_answers(tmp_path):
    sweep = _good_and_bad(tmp_path)
    responders = AnswerResponders(min_overlap=1)
    with responders.install(StandInLLM()) as server:
        server.responders["judge-relevance"] = lambda req: '{"relevant": false, "reason": "off"}'
        assert _answers(server, sweep, tmp_path / "c1").returncode == 0
    assert _traces(sweep)[(0, "q2")]["diagnosis"] == "wrong_section"
    with responders.install(StandInLLM()) as server:
        server.responders["judge-correctness"] = lambda req: '{"correct": false, "reason": "no"}'
        assert _answers(server, sweep, tmp_path / "c2").returncode == 0
    assert _traces(sweep)[(0, "q1")]["diagnosis"] == "incorrect"


def test_malformed_judge_replies_are_counted_not_a_crash(tmp_path):
    sweep = _good_and_bad(tmp_path)
    with AnswerResponders(malformed={"judge-faithfulness"}).install(StandInLLM()) as server:
        proc = _answers(server, sweep, tmp_path / "c")
    assert proc.returncode == 0, proc.stderr[-2000:]
    t = _traces(sweep)
    assert t[(0, "q1")]["diagnosis"] == "judge_failed" and t[(0, "q1")]["failures"] == {
        "faithful": "bad_json"
    }
    assert (
        "replies could not be read" in proc.stdout and "same replies from the cache" in proc.stdout
    )


def test_every_request_failing_is_exit_3_and_writes_nothing(tmp_path, server):
    sweep = _good_and_bad(tmp_path)
    server.always = Fault(status=500)
    proc = _answers(server, sweep, tmp_path / "c", "llm.max_retries=1", "llm.backoff_s=0")
    assert proc.returncode == 3, proc.stderr[-2000:]
    assert "Traceback" not in proc.stderr
    (line,) = [ln for ln in proc.stderr.splitlines() if ln.startswith("answers: error:")]
    assert "none of the 8 requests got an answer (8 HTTP 500 (after 1 retry))" in line
    assert "nothing was written" in line and "Run the same command again to retry them" in line
    assert not (sweep / "answers").exists()
    server.always = None
    assert _answers(server, sweep, tmp_path / "c").returncode == 0
    assert "no_answer" not in {t["diagnosis"] for t in _traces(sweep).values()}


def test_some_requests_failing_is_exit_3_with_the_results_written(tmp_path, server):
    sweep = _good_and_bad(tmp_path)
    server.add_faults(Fault(status=500), Fault(status=500))  # two of the eight answers
    proc = _answers(server, sweep, tmp_path / "c", "llm.max_retries=0", "llm.max_concurrency=1")
    assert proc.returncode == 3, proc.stderr[-2000:]
    (line,) = [ln for ln in proc.stderr.splitlines() if ln.startswith("answers: incomplete:")]
    assert "2 of " in line and "requests got no answer (2 HTTP 500 (after 0 retries))" in line
    assert "Run the same command again to retry them" in line
    diagnoses = [t["diagnosis"] for t in _traces(sweep).values()]
    assert diagnoses.count("no_answer") == 2 and len(diagnoses) == 8
    sent = len(server.requests)
    again = _answers(server, sweep, tmp_path / "c", "llm.max_concurrency=1")
    assert again.returncode == 0, again.stderr[-2000:]
    # The two answers and their judges, nothing else.
    assert 2 <= len(server.requests) - sent <= 2 * 4
    assert "no_answer" not in {t["diagnosis"] for t in _traces(sweep).values()}


def test_each_setting_keeps_its_results_until_it_is_answered_again(tmp_path, server):
    sweep = _good_and_bad(tmp_path)
    assert _answers(server, sweep, tmp_path / "c", "settings=[0]").returncode == 0
    first = _traces(sweep)
    second = _answers(server, sweep, tmp_path / "c", "settings=[1]")
    assert second.returncode == 0, second.stderr[-2000:]
    both = _traces(sweep)
    assert {job for job, _ in both} == {0, 1} and len(both) == 8
    assert {key: t for key, t in both.items() if key[0] == 0} == first
    rows = list(csv.DictReader(open(sweep / "answers" / "answers.csv")))
    assert [r["job"] for r in rows] == ["0", "1"]
    assert "Paired tests" in (sweep / "answers" / "answers.md").read_text()
    assert (sweep / "answers" / "answers.html").read_text().count('<details class="q"') == 8
    assert "also hold the settings answered before" in second.stdout
    # Answered again (here by a model that makes things up): only its own results change.
    with AnswerResponders(hallucinate=True).install(StandInLLM()) as liar:
        assert _answers(liar, sweep, tmp_path / "c2", "settings=[0]").returncode == 0
    now = _traces(sweep)
    assert now[(0, "q1")]["diagnosis"] == "unfaithful"
    assert {key: t for key, t in now.items() if key[0] == 1} == {
        key: t for key, t in both.items() if key[0] == 1
    }
    # A run in which nothing came back leaves every setting's results as they were.
    server.always = Fault(status=500)
    failed = _answers(server, sweep, tmp_path / "c3", "settings=[1]", "llm.max_retries=0")
    assert failed.returncode == 3 and "stay as they were" in failed.stderr
    assert _traces(sweep) == now


def test_settings_answered_by_different_models_are_not_tested_against_each_other(tmp_path, server):
    sweep = _good_and_bad(tmp_path)
    server.models.add("other")
    assert _answers(server, sweep, tmp_path / "c", "settings=[0]").returncode == 0
    assert (
        _answers(server, sweep, tmp_path / "c", "settings=[1]", "llm.model=other").returncode == 0
    )
    md = (sweep / "answers" / "answers.md").read_text()
    assert "k and model per setting" in md and "Paired tests" not in md
    rows = list(csv.DictReader(open(sweep / "answers" / "answers.csv")))
    assert [(r["k"], r["model"]) for r in rows] == [("2", "stand-in"), ("2", "other")]


def test_unreadable_answers_file_is_one_line_and_kept(tmp_path, server):
    sweep = _good_and_bad(tmp_path)
    (sweep / "answers").mkdir()
    (sweep / "answers" / "answers.jsonl").write_text("not json\n")
    proc = _answers(server, sweep, tmp_path / "c")
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
    assert "answers.jsonl:1: not an answer trace" in proc.stderr and "move" in proc.stderr
    assert (sweep / "answers" / "answers.jsonl").read_text() == "not json\n"
    assert not server.requests


def test_a_second_ctrl_c_prints_no_threading_traceback(tmp_path, server):
    sweep = _good_and_bad(tmp_path)
    server.always = Fault(delay=8)  # requests in flight when Python waits for its threads
    env = {k: v for k, v in os.environ.items() if k != "OPENAI_API_KEY"}
    cmd = [
        sys.executable,
        "-m",
        "sweep.answers",
        str(sweep),
        f"llm.base_url={server.url}",
        "llm.model=stand-in",
        "llm.api_key_env=null",
        f"llm.cache_dir={tmp_path / 'c'}",
        "answers.show_progress=false",
        "settings=all",
        "answers.k=2",
    ]
    text = interrupt_twice(cmd, server, ROOT, env)
    assert "interrupted again" in text, text[-2000:]
    assert "Traceback" not in text and "Exception ignored" not in text, text[-2000:]


def test_dry_run_sends_nothing(tmp_path, server):
    sweep = _good_and_bad(tmp_path)
    proc = _answers(server, sweep, tmp_path / "c", "answers.dry_run=true")
    assert proc.returncode == 0 and server.requests == []
    assert "8 requests would be sent" in proc.stdout and not (sweep / "answers").exists()


def test_judges_can_be_checked_against_a_person(tmp_path, server):
    sweep = _good_and_bad(tmp_path)
    assert _answers(server, sweep, tmp_path / "c", "judge.export=6").returncode == 0
    sample = sweep / "answers" / "judge_sample.csv"
    rows = list(csv.DictReader(open(sample)))
    assert len(rows) == 6 and all(r["label"] == "" for r in rows)
    assert "passed" not in sample.read_text()  # the judge's verdict is not shown
    verdicts = {
        (t["job"], t["query_id"], j): v["passed"]
        for t in _traces(sweep).values()
        for j, v in t["verdicts"].items()
    }
    for r in rows:  # a person who agrees with the judge except once
        r["label"] = "yes" if verdicts[(int(r["job"]), r["query_id"], r["judge"])] else "no"
    rows[0]["label"] = "no" if rows[0]["label"] == "yes" else "yes"
    with open(sample, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)
    proc = _answers(server, sweep, tmp_path / "c", f"judge.agreement={sample}")
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert "Cohen's kappa" in proc.stdout and "raw agreement" in proc.stdout
    # A new sample would replace the person's labels: refused before any request.
    labelled = sample.read_text()
    sent = len(server.requests)
    again = _answers(server, sweep, tmp_path / "c", "judge.export=6")
    assert again.returncode == 2 and "Traceback" not in again.stderr
    assert f"{sample} holds 6 label(s); a new judge.export would replace them" in again.stderr
    assert sample.read_text() == labelled and len(server.requests) == sent
    rows[1]["label"] = "perhaps"
    with open(sample, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)
    bad = _answers(server, sweep, tmp_path / "c", f"judge.agreement={sample}")
    assert bad.returncode == 2 and f"{sample}:3: label 'perhaps' is not yes or no" in bad.stderr


@pytest.mark.parametrize(
    "overrides,words",
    [
        (("settings=[99]",), "job 99 is not a setting that ran"),
        (("settings=[worst]",), "unknown choice 'worst'"),
        (("answers.k=0",), "answers.k must be an integer in [1, 10000] or null"),
        (("answers.k=50",), "holds the top 2 chunks per query"),
        (("llm.model=null",), "llm.model is required"),
        (("judge.export=-1",), "judge.export must be an integer in"),
    ],
)
def test_bad_config_is_one_line(tmp_path, server, overrides, words):
    sweep = _good_and_bad(tmp_path)
    proc = _answers(server, sweep, tmp_path / "c", *overrides)
    assert proc.returncode == 2, proc.stderr[-2000:]
    assert "Traceback" not in proc.stderr
    (line,) = [ln for ln in proc.stderr.splitlines() if ln.startswith("answers: error:")]
    assert words in line


def test_a_missing_sweep_folder_and_a_rejected_key(tmp_path, server):
    proc = _answers(server, tmp_path / "nope", tmp_path / "c")
    assert proc.returncode == 2 and "not a directory" in proc.stderr
    sweep = _good_and_bad(tmp_path)
    with AnswerResponders().install(StandInLLM(api_key="sk-right")) as keyed:
        env = dict(os.environ, MY_KEY="sk-wrong-secret-123")
        cmd = [
            sys.executable,
            "-m",
            "sweep.answers",
            str(sweep),
            f"llm.base_url={keyed.url}",
            "llm.model=stand-in",
            "llm.api_key_env=MY_KEY",
            f"llm.cache_dir={tmp_path / 'c'}",
            "answers.show_progress=false",
            "answers.k=2",
        ]
        proc = subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 1 and "401" in proc.stderr and "Traceback" not in proc.stderr
    assert "sk-wrong-secret-123" not in proc.stderr + proc.stdout
    assert not any(
        "sk-wrong-secret-123" in p.read_text(errors="ignore")
        for p in tmp_path.rglob("*")
        if p.is_file()
    )


@pytest.mark.e2e
def test_answers_on_a_real_sweep_of_the_tiny_corpus(tmp_path, server):
    env = {k: v for k, v in os.environ.items() if k != "HF_HUB_OFFLINE"}
    sweep = tmp_path / "sweep"
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "sweep",
            "dataset=tiny",
            "chunk.size=32,64",
            f"runtime.cache_dir={tmp_path / 'emb'}",
            f"hydra.sweep.dir={sweep}",
            "runtime.show_progress=false",
            "eval.n_boot=100",
        ],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    env.pop("OPENAI_API_KEY", None)
    cmd = [
        sys.executable,
        "-m",
        "sweep.answers",
        str(sweep),
        f"llm.base_url={server.url}",
        "llm.model=stand-in",
        "llm.api_key_env=null",
        f"llm.cache_dir={tmp_path / 'llm'}",
        "answers.show_progress=false",
        "answers.n_boot=100",
        "answers.n_perm=200",
    ]
    first = subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)
    assert first.returncode == 0, first.stderr[-2000:]
    traces = _traces(sweep)
    # Default settings: the recommended and the best; every query of the tiny set under each.
    assert len({job for job, _ in traces}) in (1, 2) and len(traces) % 7 == 0
    t1 = next(t for (_, q), t in traces.items() if q == "t1")
    assert t1["reference"] == "45 euros a day within Portugal." and len(t1["context"]) == 5
    assert all(t["diagnosis"] for t in traces.values())
    sent = len(server.requests)
    again = subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)
    assert again.returncode == 0 and len(server.requests) == sent


# --------------------------------------------------------------------------- a sweep folder is data


def test_answers_as_a_link_to_another_folder_is_refused_before_any_request(tmp_path, server):
    sweep = _good_and_bad(tmp_path)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (sweep / "answers").symlink_to(elsewhere)
    proc = _answers(server, sweep, tmp_path / "c")
    assert proc.returncode == 2 and "Traceback" not in proc.stderr, proc.stderr[-2000:]
    assert proc.stderr.strip().splitlines() == [
        f"answers: error: {sweep / 'answers'}: is a symbolic link, not a folder: sweep writes "
        "only into a folder of its own there, and leaves this as it is"
    ]
    assert not server.requests and list(elsewhere.iterdir()) == []
    assert (sweep / "answers").is_symlink()


@pytest.mark.parametrize("name", ["answers.jsonl", "judge_sample.csv"])
def test_an_answers_file_linked_from_outside_is_refused_unread(tmp_path, server, name):
    # judge_sample.csv's header used to be quoted in its error: a link to a key file showed it.
    secret = tmp_path / "key.txt"
    secret.write_text("OPENAI_API_KEY=sk-proj-secret0123\n")
    sweep = _good_and_bad(tmp_path)
    (sweep / "answers").mkdir()
    (sweep / "answers" / name).symlink_to(secret)
    proc = _answers(server, sweep, tmp_path / "c", "judge.export=4")
    assert proc.returncode == 2 and "Traceback" not in proc.stderr, proc.stderr[-2000:]
    assert proc.stderr.strip().splitlines() == [
        f"answers: error: {sweep / 'answers' / name}: is a link leading out of the sweep folder"
    ]
    assert "sk-proj" not in proc.stdout + proc.stderr and not server.requests
