"""``sweep.answers.page``: answers.html, one self-contained page: the rates, then every query
under every setting as a row that opens to its trace, with in-page filters. The page is parsed
with ``html.parser`` to check what a reader and the filter script see."""

from __future__ import annotations

import re
from html import unescape
from html.parser import HTMLParser

from sweep.answers.diagnosis import DIAGNOSES
from sweep.answers.page import answers_page
from sweep.answers.records import AnswerTrace
from sweep.answers.replies import JudgeVerdict
from sweep.answers.summary import pair_tests, summarize_answers
from sweep.store.traces import Evidence, Retrieved

SENTENCE = "The daily allowance is 45 euros."
CHUNK = SENTENCE + " Rail is preferred."
GOLD = (Evidence("travel.md", 1, 100, 100 + len(SENTENCE), SENTENCE),)
HITS = (
    Retrieved(1, "travel.md#2", "travel.md", 100, 100 + len(CHUNK), 9, 0.8, CHUNK),
    Retrieved(2, "sensors.md#0", "sensors.md", 0, 21, 4, 0.4, "Calibrate every year."),
)
STATS = {
    "sent": 4,
    "cached": 0,
    "failed": 0,
    "retries": 0,
    "prompt_tokens": 1000,
    "completion_tokens": 50,
}


def _t(job=0, qid="q1", **kw) -> AnswerTrace:
    fields = dict(
        job=job,
        setting=f"size={64 * (job + 1)}",
        query_id=qid,
        query="What is the daily allowance?",
        type="fact",
        reference=None,
        gold=GOLD,
        context=HITS,
        context_relevance="complete",
        answer="45 euros a day.",
        declined=False,
        verdicts={
            "faithful": JudgeVerdict(True, "stated", "none"),
            "relevant": JudgeVerdict(True, "on topic"),
        },
        failures={},
        diagnosis="ok",
        prompt_version="1",
        k=2,
        model="stand-in",
    )
    fields.update(kw)
    return AnswerTrace(**fields)


class _Details(HTMLParser):
    """Each ``<details class="q">``: its data attributes and its text."""

    def __init__(self) -> None:
        super().__init__()
        self.found: list[dict] = []
        self.depth = 0
        self.selects: dict[str, list[str]] = {}
        self._select: str | None = None

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == "details" and a.get("class") == "q":
            self.found.append(
                {"data": {k[5:]: v for k, v in a.items() if k.startswith("data-")}, "text": ""}
            )
            self.depth = 1
        elif tag == "details" and self.depth:
            self.depth += 1
        if self.depth and tag in ("p", "li", "div", "ul", "ol", "summary"):
            self.found[-1]["text"] += " "  # a new block: words of two blocks do not run together
        if tag == "select":
            self._select = a["data-key"]
            self.selects[self._select] = []
        if tag == "option" and self._select:
            self.selects[self._select].append(a["value"])

    def handle_endtag(self, tag):
        if tag == "details" and self.depth:
            self.depth -= 1
        if tag == "select":
            self._select = None

    def handle_data(self, data):
        if self.depth:
            self.found[-1]["text"] += data


def _page(traces, tests=(), n_boot=50):
    html = answers_page(
        traces,
        summarize_answers(traces, n_boot=n_boot),
        list(tests),
        {t.job: t.setting for t in traces},
        stats=STATS,
    )
    parser = _Details()
    parser.feed(html)
    return html, parser


def test_every_answer_is_a_row_the_filters_can_select_on():
    traces = [
        _t(0, "q1"),
        _t(
            1,
            "q1",
            verdicts={
                "faithful": JudgeVerdict(False, "made up", "hallucination"),
                "relevant": JudgeVerdict(True, "r"),
            },
            diagnosis="unfaithful",
        ),
        _t(
            1,
            "q2",
            type=None,
            gold=(),
            context_relevance="unanswerable",
            declined=True,
            answer="",
            verdicts={},
            diagnosis="correctly_declined",
        ),
    ]
    html, p = _page(traces)
    assert [d["data"] for d in p.found] == [
        {
            "setting": "size=64",
            "diagnosis": "ok",
            "type": "fact",
            "faithful": "yes",
            "relevant": "yes",
            "correct": "–",
        },
        {
            "setting": "size=128",
            "diagnosis": "unfaithful",
            "type": "fact",
            "faithful": "no",
            "relevant": "yes",
            "correct": "–",
        },
        {
            "setting": "size=128",
            "diagnosis": "correctly_declined",
            "type": "(no type)",
            "faithful": "–",
            "relevant": "–",
            "correct": "–",
        },
    ]
    # Each filter offers "all" and the values rows can have; diagnoses only those present,
    # in the order of the report.
    assert p.selects["setting"] == ["", "size=128", "size=64"]
    assert p.selects["diagnosis"] == ["", "ok", "unfaithful", "correctly_declined"]
    assert p.selects["type"] == ["", "(no type)", "fact"]
    assert p.selects["faithful"] == ["", "yes", "no", "–"]
    assert '<span id="shown">3</span> of 3 shown' in html
    # The filter script and its styles are in the head, once, and nothing is fetched.
    head = html[: html.index("</head>")]
    assert head.count("function sweepFilter()") == 1 and "details.q" in head
    assert html.count("<script>") == 1 and not re.search(r'(src|href)="', html)


def test_a_trace_opens_to_question_gold_marked_context_answer_verdicts_and_diagnosis():
    html, p = _page(
        [
            _t(
                reference="45 euros",
                verdicts={
                    "faithful": JudgeVerdict(False, "says 46", "misinterpretation"),
                    "relevant": JudgeVerdict(True, "ok"),
                },
                diagnosis="unfaithful",
            )
        ]
    )
    (d,) = p.found
    text = " ".join(d["text"].split())
    assert "Question: What is the daily allowance?" in text
    assert "Reference answer: 45 euros" in text
    assert f"travel.md [100:{100 + len(SENTENCE)}]" in text
    # The gold part of the first chunk is marked; the second chunk holds no gold.
    assert f'<div class="chunk"><mark>{SENTENCE}</mark> Rail is preferred.</div>' in html
    assert "holds 100% of gold 1" in text and "no gold" in text
    assert "1. travel.md" in text and "2. sensors.md [0:21]" in text
    assert "45 euros a day." in text
    assert "faithful: no (misinterpretation) — says 46" in text and "relevant: yes — ok" in text
    assert f"Diagnosis: unfaithful: {DIAGNOSES['unfaithful']}" in text
    assert "context relevance: complete" in text


def test_declined_missing_and_unjudged_answers_are_said_so():
    html, p = _page(
        [
            _t(0, "q1", declined=True, answer="", verdicts={}, diagnosis="declined_with_evidence"),
            _t(
                0,
                "q2",
                declined=None,
                answer=None,
                verdicts={},
                failures={"answer": "bad_json"},
                diagnosis="no_answer",
            ),
            _t(
                0,
                "q3",
                verdicts={"relevant": JudgeVerdict(True, "r")},
                failures={"faithful": "bad_shape"},
                diagnosis="judge_failed",
            ),
            _t(0, "q4", gold=(Evidence("travel.md", 1, None, None, None),), diagnosis="ok"),
            _t(
                0,
                "q5",
                gold=(),
                context_relevance="unanswerable",
                declined=True,
                answer="",
                verdicts={},
                diagnosis="correctly_declined",
            ),
        ]
    )
    texts = [" ".join(d["text"].split()) for d in p.found]
    assert "Answer declined" in texts[0] and "(none asked)" in texts[0]
    assert "no answer (bad_json)" in texts[1]
    assert "faithful: reply unreadable (bad_shape)" in texts[2]
    assert "travel.md (whole document)" in texts[3]
    assert "(none: the question is unanswerable)" in texts[4]
    # The summary line's tags: declined, and context unknown for an unanswerable question.
    assert '<span class="tag">declined</span>' in html
    assert '<span class="tag">context: –</span>' in html
    assert '<span class="tag pass">context: yes</span>' in html


def test_what_the_model_and_the_dataset_wrote_is_escaped():
    evil = '<script>alert("x")</script>'
    html, p = _page(
        [
            _t(
                query=evil,
                answer=evil,
                setting='size="64" <b>',
                reference=evil,
                verdicts={"relevant": JudgeVerdict(True, evil)},
            )
        ]
    )
    assert "<script>alert" not in html
    assert html.count("&lt;script&gt;alert") >= 4
    (d,) = p.found
    assert d["data"]["setting"] == 'size="64" <b>'  # read back as it was, from a quoted attribute
    assert unescape(evil) in d["text"]


def test_sections_rates_and_paired_tests():
    traces = [
        _t(
            j,
            f"q{i}",
            verdicts={
                "faithful": JudgeVerdict(
                    j == 0 or i < 2, "r", "none" if j == 0 or i < 2 else "omission"
                ),
                "relevant": JudgeVerdict(True, "r"),
            },
        )
        for j in (0, 1)
        for i in range(8)
    ]
    html, _ = _page(traces, pair_tests(traces, n_perm=200))
    titles = re.findall(r"<h2>(.*?)</h2>", html)
    assert titles == [
        "Per setting",
        "Diagnosis: where a failure comes from",
        "Paired tests",
        "Every query",
    ]
    assert "1.00 [1.00, 1.00] (n=8)" in html  # setting 0's faithful rate
    assert "requests: 4 sent, 0 from the cache" in html
    assert "16 answers, 2 setting(s), model stand-in" in html
    html, _ = _page(traces, [])
    assert "<h2>Paired tests</h2>" not in html


def test_an_empty_run_is_still_a_page():
    html = answers_page([], [], [], {}, stats=STATS)
    assert html.startswith("<!DOCTYPE html>") and '<span id="shown">0</span> of 0 shown' in html
