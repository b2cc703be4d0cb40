"""Generate an evaluation set: tasks, model answers, spans, filters, in rounds.

Each round asks for as many questions of each kind as are still missing
(within ``max_attempts`` candidates per requested question) and passes them
through four stages, each a batch of concurrent requests:

1. ``draft``: the model writes the question (and quotes); quotes are located
   in their documents, and local checks run (copied wording, a multi-hop
   question that uses one passage, an adversarial answer that is also in a
   distractor);
2. ``realism``: a few-shot 1-5 rating, kept at ``min_realism`` or above;
3. ``check``: answerable from the quoted evidence alone, or, for an
   unanswerable question, not answered by the passages retrieved for it;
4. ``dedup``: no earlier kept question has an embedding within
   ``dedup_threshold`` cosine.

Everything is deterministic given the answers, so a rerun asks the model the
same requests, which the cache answers.

A dry run plans the first round without sending a request and without
loading the embedding model. The passages that go with a target passage
(distractors, multi-hop partners, the passages an unanswerable question is
checked against) are chosen with the embeddings an earlier run cached, or,
when there are none, by shared words; those kinds' requests are then an
estimate (:attr:`GenerationResult.estimated`).
"""

from __future__ import annotations

import logging
import math
import time
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from sweep.core.errors import ServiceFailure
from sweep.core.types import Document, Judgment, Query
from sweep.generate import filters, neighbours, prompts
from sweep.generate.config import KINDS, GenerateConfig
from sweep.generate.kinds import Task, TaskSource
from sweep.generate.passages import SentenceWindow, cut_passages, sampling_order
from sweep.generate.replies import (
    DraftQuestion,
    ShapeError,
    parse_check_verdict,
    parse_draft,
    parse_rating,
)
from sweep.generate.runreport import GenerationReport
from sweep.generate.spans import SpanMatch, match_span, normalize
from sweep.llm.client import PENDING, Answer, Completion, LLMClient, RequestFailed
from sweep.llm.jsonreply import ReplyError

log = logging.getLogger(__name__)

__all__ = ["GenerationError", "GenerationResult", "generate"]

SOURCE = "synthetic"
# In a dry run, the stand-in text for a question the model has not written yet.
_UNWRITTEN = "(a question the model has not written yet)"


class GenerationError(ValueError, ServiceFailure):
    """The corpus cannot give what was asked (e.g. no text at all); one line."""


@dataclass
class QuestionCandidate:
    task: Task
    draft: DraftQuestion | None = None
    spans: list[tuple[str, SpanMatch]] = field(default_factory=list)  # (doc_id, where)
    realism: int | None = None
    checked: tuple[int, ...] = ()  # passages a retrieval check read
    vector: np.ndarray | None = None
    rejected: tuple[str, str] | None = None  # (stage, reason)
    pending: bool = False  # dry run: depends on an answer not in the cache

    @property
    def kind(self) -> str:
        return self.task.kind

    @property
    def alive(self) -> bool:
        return self.rejected is None and not self.pending


@dataclass(frozen=True)
class GenerationResult:
    queries: tuple[Query, ...]
    report: GenerationReport
    #: Requests that got no answer, by reason (one line each, never a key).
    failures: Mapping[str, int] = field(default_factory=dict)
    #: Dry run: requests that would be sent, per kind.
    planned: Mapping[str, int] = field(default_factory=dict)
    #: Dry run: passages paired by shared words (no cached embeddings), so the requests of
    #: every kind but fact are an estimate.
    estimated: bool = False


def generate(
    documents: Sequence[Document],
    settings: GenerateConfig,
    client: LLMClient,
    embedder: Any,
    *,
    dataset: str = "",
) -> GenerationResult:
    """Questions of every kind in ``settings.kinds`` for ``documents``.

    ``embedder`` is a :class:`sweep.embedding.embedder.SentenceTransformerEmbedder` (or anything with its
    ``embed_documents``, ``embed_queries`` and ``cached``). With
    ``client.dry_run`` only the first round is planned, nothing is sent or
    embedded (``embedder`` may be None), and no query is returned.
    """
    return _Generation(documents, settings, client, embedder, dataset).run()


class _Generation:
    def __init__(
        self,
        documents: Sequence[Document],
        settings: GenerateConfig,
        client: LLMClient,
        embedder: Any,
        dataset: str,
    ) -> None:
        self.documents = {d.doc_id: d for d in documents}
        self.settings = settings
        self.client = client
        self.embedder = embedder
        self.dataset = dataset
        self.pool = cut_passages(documents, settings.window_tokens)
        if not self.pool:
            raise GenerationError("the corpus has no text to write questions from")
        self.targets = settings.counts()
        self.budget = {k: math.ceil(settings.max_attempts * n) for k, n in self.targets.items()}
        self.attempted: Counter = Counter()
        self.kept: dict[str, list[QuestionCandidate]] = {k: [] for k in KINDS}
        self.rejections: Counter = Counter()  # (stage, reason, kind) -> count
        self.located: Counter = Counter()  # "exact" / "normalised"
        self.pending = 0
        self.failures: Counter = Counter()  # reason -> requests
        self.planned: Counter = Counter()  # dry run: kind -> requests that would be sent
        self.paired_by_words = False  # dry run: neighbours estimated without embeddings
        self._passage_vectors: np.ndarray | None = None
        self._kept_vectors: list[np.ndarray] = []

    # -- setup ---------------------------------------------------------------------

    def passage_vectors(self) -> np.ndarray:
        if self._passage_vectors is None:
            if self.client.dry_run:
                # Loading the model and embedding every passage takes minutes on a CPU, for
                # a plan that only counts requests: the vectors an earlier run cached, else
                # passages that share words stand in.
                texts = [p.text for p in self.pool]
                cached = None if self.embedder is None else self.embedder.cached(texts)
                self.paired_by_words = cached is None
                vectors = neighbours.word_vectors(texts) if cached is None else cached
            else:
                log.info("embedding %d passages to find neighbours", len(self.pool))
                vectors = self.embedder.embed_documents([p.text for p in self.pool])
            self._passage_vectors = neighbours.normalize_rows(np.asarray(vectors))
        return self._passage_vectors

    def sources(self) -> dict[str, TaskSource]:
        wanted = [k for k in KINDS if self.targets[k] > 0]
        vectors = self.passage_vectors() if any(k != "fact" for k in wanted) else None
        terms = neighbours.term_frequencies(self.pool) if "multi" in wanted else None
        return {
            k: TaskSource(
                k, self.pool, sampling_order(self.pool, self.settings.seed, k), vectors, terms
            )
            for k in wanted
        }

    # -- rounds --------------------------------------------------------------------

    def run(self) -> GenerationResult:
        t0 = time.perf_counter()
        s = self.settings
        tokens = sum(p.n_tokens for p in self.pool)
        log.info(
            "%d documents cut into %d passages of about %d tokens (%s tokens in all)",
            len(self.documents),
            len(self.pool),
            s.window_tokens,
            f"{tokens:,}",
        )
        log.info(
            "asking for %d questions: %s",
            s.n,
            ", ".join(f"{n} {k}" for k, n in self.targets.items() if n),
        )
        sources = self.sources()
        rounds = 0
        while True:
            batch: list[QuestionCandidate] = []
            for kind, source in sources.items():
                missing = self.targets[kind] - len(self.kept[kind])
                room = self.budget[kind] - self.attempted[kind]
                tasks = source.take(max(0, min(missing, room)))
                self.attempted[kind] += len(tasks)
                batch += [QuestionCandidate(t) for t in tasks]
            if not batch:
                break
            rounds += 1
            self.round(rounds, batch)
            if self.client.dry_run:
                break
        notes = self.notes(sources)
        for note in notes:
            log.warning("%s", note)
        report = self.report(rounds, time.perf_counter() - t0, notes)
        queries = () if self.client.dry_run else self.queries()
        return GenerationResult(
            queries, report, dict(self.failures), dict(self.planned), self.paired_by_words
        )

    def round(self, number: int, batch: list[QuestionCandidate]) -> None:
        counts = Counter(c.kind for c in batch)
        log.info(
            "round %d: %d candidates (%s)",
            number,
            len(batch),
            ", ".join(f"{counts[k]} {k}" for k in KINDS if counts[k]),
        )
        self.draft_stage(number, batch)
        self.realism_stage(number, batch)
        self.check_stage(number, batch)
        self.dedup_stage(batch)
        for c in batch:
            if c.rejected is not None:
                self.rejections[(*c.rejected, c.kind)] += 1
            elif c.pending:
                self.pending += 1
            else:
                self.kept[c.kind].append(c)
                for _, where in c.spans:
                    self.located["exact" if where.exact else "normalised"] += 1
        rejected = Counter(c.rejected[1] for c in batch if c.rejected)
        log.info(
            "round %d: %d kept, %d rejected%s",
            number,
            sum(c.alive for c in batch),
            sum(rejected.values()),
            f" ({', '.join(f'{r} {n}' for r, n in rejected.most_common())})" if rejected else "",
        )

    def ask(
        self,
        number: int,
        stage: str,
        cands: list[QuestionCandidate],
        messages: list[list[dict[str, str]]],
    ) -> list[Answer]:
        answers = self.client.complete_many(messages, desc=f"round {number}: {stage}")
        failed = Counter()
        for c, a in zip(cands, answers):
            if a is PENDING:
                c.pending = True
                self.planned[c.kind] += 1
            elif isinstance(a, RequestFailed):
                c.rejected = (stage, "request_failed")
                failed[a.reason] += 1
        self.failures.update(failed)
        for reason, n in failed.items():
            log.warning(
                "round %d: %d %s request%s failed: %s",
                number,
                n,
                stage,
                "s" if n > 1 else "",
                reason,
            )
        return answers

    # -- stage 1: drafts -----------------------------------------------------------

    def draft_stage(self, number: int, batch: list[QuestionCandidate]) -> None:
        answers = self.ask(number, "draft", batch, [c.task.messages(self.pool) for c in batch])
        for c, a in zip(batch, answers):
            if isinstance(a, Completion):
                self.read_draft(c, a.text)

    def read_draft(self, c: QuestionCandidate, text: str) -> None:
        try:
            c.draft = parse_draft(c.kind, text)
        except ReplyError:
            c.rejected = ("draft", "bad_json")
            return
        except ShapeError:
            c.rejected = ("draft", "bad_shape")
            return
        reason = self.check_draft(c)
        if reason:
            c.rejected = ("draft", reason)

    def check_draft(self, c: QuestionCandidate) -> str | None:
        """The local checks of a draft; the reason it fails, or None."""
        assert c.draft is not None
        evidence = [self.pool[i] for i in c.task.evidence_passages]
        for k, quote in enumerate(c.draft.quotes):
            found = self.find_quote(quote, evidence[k:] + evidence[:k])
            if found is None:
                return "quote_not_found"
            c.spans.append(found)
        if c.kind == "multi":
            (d1, a), (d2, b) = c.spans
            overlapping = d1 == d2 and a.start < b.end and b.start < a.end
            owners = {self.owner(c.task, d1, a), self.owner(c.task, d2, b)}
            if overlapping or owners != set(c.task.evidence_passages):
                return "not_two_passages"
        if c.kind == "adversarial":
            doc_id, where = c.spans[0]
            answer = normalize(self.documents[doc_id].text[where.start : where.end])
            if any(answer in normalize(self.pool[i].text) for i in c.task.passages[1:]):
                return "distractor_has_answer"
        limit = self.settings.copy_run_words
        if limit and any(
            filters.longest_copied_run(c.draft.question, self.pool[i].text) >= limit
            for i in c.task.passages
        ):
            return "copies_passage"
        return None

    def find_quote(
        self, quote: str, passages: Sequence[SentenceWindow]
    ) -> tuple[str, SpanMatch] | None:
        """The quote in one of ``passages`` (in order), else anywhere in their documents."""
        for anywhere in (False, True):
            for p in passages:
                found = match_span(
                    quote, self.documents[p.doc_id].text, p.start, p.end, anywhere=anywhere
                )
                if found is not None:
                    return p.doc_id, found
        return None

    def owner(self, task: Task, doc_id: str, where: SpanMatch) -> int | None:
        """The task passage a located quote belongs to: the one it overlaps, else the
        only one in its document (a quote found elsewhere in that document)."""
        same_doc = [i for i in task.evidence_passages if self.pool[i].doc_id == doc_id]
        for i in same_doc:
            p = self.pool[i]
            if p.start < where.end and where.start < p.end:
                return i
        return same_doc[0] if len(same_doc) == 1 else None

    def question(self, c: QuestionCandidate) -> str:
        return c.draft.question if c.draft is not None else _UNWRITTEN

    def quotes(self, c: QuestionCandidate) -> list[str]:
        if c.draft is None:  # dry run: the evidence passages stand in for the quotes
            return [self.pool[i].text for i in c.task.evidence_passages]
        return [self.documents[d].text[w.start : w.end] for d, w in c.spans]

    # -- stage 2: realism ----------------------------------------------------------

    def realism_stage(self, number: int, batch: list[QuestionCandidate]) -> None:
        todo = [c for c in batch if c.rejected is None]
        answers = self.ask(
            number, "realism", todo, [prompts.realism(self.question(c)) for c in todo]
        )
        for c, a in zip(todo, answers):
            if not isinstance(a, Completion) or c.pending:
                continue
            try:
                c.realism = parse_rating(a.text)
            except ReplyError:
                c.rejected = ("realism", "bad_json")
            except ShapeError:
                c.rejected = ("realism", "bad_shape")
            else:
                if c.realism < self.settings.min_realism:
                    c.rejected = ("realism", "unrealistic")

    # -- stage 3: answerability ----------------------------------------------------

    def check_stage(self, number: int, batch: list[QuestionCandidate]) -> None:
        todo = [c for c in batch if c.rejected is None]
        self.embed_questions([c for c in todo if c.alive])
        messages = []
        for c in todo:
            if c.kind == "unanswerable":
                c.checked = self.retrieve(c)
                messages.append(
                    prompts.retrieval_check(self.question(c), [self.pool[i] for i in c.checked])
                )
            else:
                messages.append(prompts.evidence_check(self.question(c), self.quotes(c)))
        answers = self.ask(number, "check", todo, messages)
        for c, a in zip(todo, answers):
            if not isinstance(a, Completion) or c.pending:
                continue
            try:
                answerable = parse_check_verdict(a.text)
            except ReplyError:
                c.rejected = ("check", "bad_json")
                continue
            except ShapeError:
                c.rejected = ("check", "bad_shape")
                continue
            if c.kind == "unanswerable" and answerable:
                c.rejected = ("check", "answer_in_corpus")
            elif c.kind != "unanswerable" and not answerable:
                c.rejected = ("check", "not_answerable")

    def embed_questions(self, cands: list[QuestionCandidate]) -> None:
        if not cands:
            return
        questions = [self.question(c) for c in cands]
        if self.client.dry_run:  # loads no model: the vectors a run cached, or none
            cached = (
                None if self.embedder is None else self.embedder.cached(questions, queries=True)
            )
            if cached is None or self.paired_by_words:  # word vectors are another space
                return
            vectors = neighbours.normalize_rows(cached)
        else:
            vectors = neighbours.normalize_rows(np.asarray(self.embedder.embed_queries(questions)))
        for c, v in zip(cands, vectors):
            c.vector = v

    def retrieve(self, c: QuestionCandidate) -> tuple[int, ...]:
        k = min(self.settings.check_k, len(self.pool))
        if c.vector is None:  # dry run: the question is not written yet
            return c.task.passages[:k]
        return tuple(neighbours.top_k(c.vector, self.passage_vectors(), k))

    # -- stage 4: near duplicates --------------------------------------------------

    def dedup_stage(self, batch: list[QuestionCandidate]) -> None:
        todo = [c for c in batch if c.alive]
        if not todo or self.client.dry_run:  # sends nothing; a dry run embeds no question
            return
        earlier = np.stack(self._kept_vectors) if self._kept_vectors else None
        found = filters.near_duplicates(
            np.stack([c.vector for c in todo]), self.settings.dedup_threshold, earlier
        )
        for c, dup in zip(todo, found):
            if dup is None:
                self._kept_vectors.append(c.vector)
            else:
                c.rejected = ("dedup", "near_duplicate")

    # -- results -------------------------------------------------------------------

    def notes(self, sources: dict[str, TaskSource]) -> list[str]:
        notes = []
        for kind, source in sources.items():
            short = self.targets[kind] - len(self.kept[kind])
            if short <= 0 or self.client.dry_run:
                continue
            lost = sum(
                n
                for (_, reason, k), n in self.rejections.items()
                if k == kind and reason == "request_failed"
            )
            if lost:  # not the limit's fault: a rerun asks these again
                why = (
                    f"{lost} of {self.attempted[kind]} candidates tried got no answer to a "
                    "request; a rerun retries them"
                )
            else:
                why = source.note or (
                    f"{self.attempted[kind]} candidates tried, the limit of "
                    f"generate.max_attempts={self.settings.max_attempts:g} "
                    "per question"
                )
            notes.append(f"{kind}: {len(self.kept[kind])} of {self.targets[kind]} kept ({why})")
        return notes

    def queries(self) -> tuple[Query, ...]:
        out = []
        model = self.client.config.model
        for kind in KINDS:
            kept = self.kept[kind]
            width = max(3, len(str(len(kept))))
            for i, c in enumerate(kept, 1):
                out.append(self.query(f"syn-{kind}-{i:0{width}d}", c, model))
        return tuple(out)

    def query(self, query_id: str, c: QuestionCandidate, model: str) -> Query:
        assert c.draft is not None
        relevant = tuple(
            Judgment(
                doc_id=d,
                start=w.start,
                end=w.end,
                grade=1,
                quote=self.documents[d].text[w.start : w.end],
            )
            for d, w in c.spans
        )
        meta: dict[str, Any] = {
            "source": SOURCE,
            "generator": model,
            "prompt_version": prompts.PROMPT_VERSION,
            "realism": c.realism,
            "passages": [self.pool[i].location for i in c.task.evidence_passages],
        }
        if c.kind == "fact" and c.draft.fact:
            meta["fact"] = c.draft.fact
        if c.kind == "adversarial":
            meta["distractors"] = [self.pool[i].location for i in c.task.passages[1:]]
        if c.kind == "multi":
            meta["entity"] = c.task.entity
        if c.kind == "unanswerable":
            meta["context"] = [self.pool[i].location for i in c.task.passages]
            meta["checked"] = [self.pool[i].location for i in c.checked]
        if c.task.variant:
            meta["variant"] = c.task.variant + 1
        return Query(
            query_id=query_id, query=c.draft.question, relevant=relevant, type=c.kind, metadata=meta
        )

    def report(self, rounds: int, seconds: float, notes: list[str]) -> GenerationReport:
        cfg = self.client.config
        return GenerationReport(
            dataset=self.dataset,
            generator=cfg.model or "",
            endpoint=cfg.endpoint,
            prompt_version=prompts.PROMPT_VERSION,
            settings=self.settings.describe(),
            n_documents=len(self.documents),
            n_passages=len(self.pool),
            requested=dict(self.targets),
            attempted={k: self.attempted[k] for k in KINDS},
            kept={k: len(self.kept[k]) for k in KINDS},
            rejections=tuple((s, r, k, n) for (s, r, k), n in sorted(self.rejections.items())),
            requests=self.client.stats.to_dict(),
            quotes={"exact": self.located["exact"], "normalised": self.located["normalised"]},
            realism=dict(
                sorted(
                    Counter(
                        c.realism for cs in self.kept.values() for c in cs if c.realism is not None
                    ).items(),
                    reverse=True,
                )
            ),
            rounds=rounds,
            seconds=round(seconds, 2),
            dry_run=self.client.dry_run,
            pending=self.pending,
            notes=tuple(notes),
            llm=cfg.describe(),
        )
