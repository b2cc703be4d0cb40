"""Answer every query from what a setting retrieved, then judge the answers.

For each chosen setting and each query, the context is exactly what the
setting retrieved: its top ``k`` chunks in rank order, from the job's saved
traces (``<job>/hits.jsonl``). Two batches of concurrent requests, both
through the LLM client's cache: the answers, then the judges of every answer
that was given (faithfulness and relevance, and correctness when the query has
a reference answer). A reply that cannot be read is a counted failure.
"""

from __future__ import annotations

import logging
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, replace

from sweep.answers import prompts
from sweep.answers.diagnosis import context_relevance, diagnose_answer
from sweep.answers.records import AnswerTrace
from sweep.answers.replies import BadReply, JudgeVerdict, parse_answer, parse_judge_verdict
from sweep.core.errors import BadInput
from sweep.llm.client import Completion, LLMClient, RequestFailed
from sweep.reporting.sweepreport import SweepReport
from sweep.store.traces import QueryTrace, read_traces

__all__ = ["AnswersError", "ChosenSetting", "answer_settings", "choose_settings"]

log = logging.getLogger(__name__)
#: How a step whose request got no answer is recorded in a trace's failures.
REQUEST_FAILED = "request_failed: "


class AnswersError(ValueError, BadInput):
    """Bad input to ``sweep.answers`` (a setting, k, the sweep folder); one line."""


@dataclass(frozen=True)
class ChosenSetting:
    job: int
    label: str
    why: str  # recommended, best, or asked


def choose_settings(rep: SweepReport, spec: Sequence[object] | str) -> list[ChosenSetting]:
    """The settings named by ``settings=``: ``recommended``, ``best``, ``all`` or job ids."""
    items = [spec] if isinstance(spec, (str, int)) else list(spec)
    if not items:
        raise AnswersError("settings= names no setting; use recommended, best, all or job ids")
    ok = {r.job: r for r in rep.rows if r.ok}
    out: dict[int, str] = {}
    for item in items:
        word = str(item).strip().lower()
        if word in ("recommended", "best"):
            for d in rep.decision.decisions:
                if word == "recommended" and d.recommendation is not None:
                    out.setdefault(d.recommendation.job, word)
                elif word == "best":
                    job = next(
                        (c.job for c in d.comparisons.values() if c.verdict == "best"), d.chosen_job
                    )
                    if job is not None:
                        out.setdefault(job, word)
        elif word == "all":
            for job in ok:
                out.setdefault(job, "asked")
        elif word.lstrip("-").isdigit():
            job = int(word)
            if job not in ok:
                known = ", ".join(map(str, sorted(ok))) or "none"
                raise AnswersError(
                    f"settings: job {job} is not a setting that ran in "
                    f"{rep.sweep_dir} (ok jobs: {known})"
                )
            out.setdefault(job, "asked")
        else:
            raise AnswersError(
                f"settings: unknown choice {item!r}; use recommended, best, all "
                "or job ids, e.g. settings=[recommended,best] or settings=[0,3]"
            )
    if not out:  # a single ok setting has no recommendation: it is the best
        out = {job: "best" for job in list(ok)[:1]}
    if not out:
        raise AnswersError(f"{rep.sweep_dir}: no setting ran (every row is invalid or failed)")
    return [ChosenSetting(job, rep.labels[job], why) for job, why in sorted(out.items())]


def _units(trace: QueryTrace) -> tuple[int | None, ...] | None:
    """The gold units the context must hold: evidence spans when the query has them, else
    its documents."""
    if not trace.gold:
        return None
    spans = trace.credits.get("span")
    return tuple(spans) if spans else tuple(trace.credits.get("doc", ()))


def _reply(answer: object) -> tuple[str | None, str | None]:
    """``(text, failure)`` of one client answer."""
    if isinstance(answer, Completion):
        return answer.text, None
    if isinstance(answer, RequestFailed):
        return None, REQUEST_FAILED + answer.reason
    return None, "pending"  # a dry run


@dataclass(frozen=True)
class AnswerRun:
    traces: tuple[AnswerTrace, ...]
    k: int
    pending_judges: int  # dry run: judge requests that wait on answers not cached yet

    @property
    def failed_requests(self) -> Counter:
        """Why requests (answers and judges) got no answer: reason -> count."""
        return Counter(
            f.removeprefix(REQUEST_FAILED)
            for t in self.traces
            for f in t.failures.values()
            if f.startswith(REQUEST_FAILED)
        )

    @property
    def unreadable(self) -> int:
        """Replies that came but are not the JSON asked for (cached: a rerun gets them again)."""
        return sum(
            1
            for t in self.traces
            for f in t.failures.values()
            if not f.startswith(REQUEST_FAILED) and f != "pending"
        )

    @property
    def answered(self) -> bool:
        """Whether any question got a reply: without one there is nothing to write."""
        return any(not t.failures.get("answer", "").startswith(REQUEST_FAILED) for t in self.traces)


def _traces(rep: SweepReport, job: int, k: int) -> dict[str, QueryTrace]:
    row = rep.row(job)
    path = row.file("hits.jsonl")
    if path is None:
        raise AnswersError(
            f"{rep.sweep_dir}/{job}/hits.jsonl is missing: the setting's retrieved "
            "chunks are needed; rerun that setting"
        )
    traces = read_traces(path)
    depth = max((len(t.hits) for t in traces.values()), default=0)
    if depth < k and depth < row.stats.n_chunks:
        raise AnswersError(
            f"answers.k={k}, but {path} holds the top {depth} chunks per query "
            f"(the sweep's largest eval.k); use answers.k={depth} or less"
        )
    missing = [q for q, t in traces.items() if any(h.text is None for h in t.hits[:k])]
    if missing:
        raise AnswersError(f"{path}: query {missing[0]!r} has retrieved chunks without their text")
    return traces


def answer_settings(
    rep: SweepReport, chosen: Sequence[ChosenSetting], k: int, client: LLMClient
) -> AnswerRun:
    """Answer and judge every query under every chosen setting."""
    drafts: list[AnswerTrace] = []
    for c in chosen:
        for t in _traces(rep, c.job, k).values():
            context = t.hits[:k]
            drafts.append(
                AnswerTrace(
                    c.job,
                    c.label,
                    t.query_id,
                    t.query,
                    t.type,
                    t.reference,
                    t.gold,
                    context,
                    context_relevance(_units(t), k),
                    None,
                    None,
                    prompt_version=prompts.PROMPT_VERSION,
                    k=k,
                    model=client.config.model or "",
                )
            )
    log.info(
        "answering %d queries under %d setting(s) with the top %d chunks each",
        len(drafts) // max(len(chosen), 1),
        len(chosen),
        k,
    )
    replies = client.complete_many(
        [prompts.answer(d.query, [h.text for h in d.context]) for d in drafts], desc="answers"
    )
    answered: list[AnswerTrace] = []
    for d, reply in zip(drafts, replies):
        text, failure = _reply(reply)
        if text is None:
            answered.append(replace(d, failures={"answer": failure}))
            continue
        try:
            a = parse_answer(text)
        except BadReply as e:
            answered.append(replace(d, failures={"answer": e.reason}))
            continue
        answered.append(replace(d, answer=a.text, declined=a.declined))

    # The judges of every answer given: (trace index, judge, messages).
    requests: list[tuple[int, str, list[dict[str, str]]]] = []
    for i, t in enumerate(answered):
        if t.declined is not False:
            continue
        chunks = [h.text for h in t.context]
        requests.append((i, "faithful", prompts.faithfulness(t.query, chunks, t.answer)))
        requests.append((i, "relevant", prompts.relevance(t.query, t.answer)))
        if t.reference:
            requests.append((i, "correct", prompts.correctness(t.query, t.answer, t.reference)))
    judged = client.complete_many([m for _, _, m in requests], desc="judges")
    verdicts: dict[int, dict[str, JudgeVerdict]] = {}
    failures: dict[int, dict[str, str]] = {}
    for (i, judge, _), reply in zip(requests, judged):
        text, failure = _reply(reply)
        if text is not None:
            try:
                verdicts.setdefault(i, {})[judge] = parse_judge_verdict(text, judge)
                continue
            except BadReply as e:
                failure = e.reason
        failures.setdefault(i, {})[judge] = failure
    out = []
    for i, t in enumerate(answered):
        v = dict(verdicts.get(i, {}))
        if t.declined and t.reference and t.answerable:
            v["correct"] = JudgeVerdict(False, "declined although the question has an answer")
        fails = {**t.failures, **failures.get(i, {})}
        code = diagnose_answer(
            t.context_relevance,
            t.declined,
            None if "faithful" in fails else v.get("faithful", _NA).passed,
            None if "relevant" in fails else v.get("relevant", _NA).passed,
            v["correct"].passed if "correct" in v else None,
        )
        out.append(replace(t, verdicts=v, failures=fails, diagnosis=code))
    pending = sum(1 for t in answered if t.failures.get("answer") == "pending")
    return AnswerRun(tuple(out), k, pending)


# A verdict that was not asked for (a declined answer is not judged): never consulted when
# the answer was declined, because the diagnosis looks at ``declined`` first.
_NA = JudgeVerdict(True, "not judged")
