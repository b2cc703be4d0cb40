"""Contextual chunk headers: an LLM writes a short context that situates each chunk in its
document, and the context is prepended to the chunk for embedding and BM25.

This is Anthropic's Contextual Retrieval (https://www.anthropic.com/news/contextual-retrieval,
September 2024), whose prompt is the default. Like a heading prefix, the context is
part of what is searched, never of what is credited: a chunk's offsets still describe
its own text, so an answer that only the context states is not found.

Requests go through sweep's LLM client, so every answer is cached by its request:
the model, the prompt, the whole document and the chunk's text. Re-chunking pays only
for chunks whose text is new. A request that fails after its retries is not cached
and fails the setting; a rerun asks again.

A context far longer than ``context.max_tokens`` (more than four times, in
cl100k_base tokens) comes from an endpoint that ignored the request's ``max_tokens``.
It fails the setting too, naming the chunk: cutting it to the budget would search text
the model never meant as a context, and keeping it would let one reply outweigh the
chunk it situates, so neither happens quietly. A context a little over the budget is
kept: the model's own tokenizer counts differently from cl100k_base.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

from sweep.core.errors import InvalidSetting, ServiceFailure
from sweep.core.tokenization import DEFAULT_TOKENIZER, count_tokens
from sweep.core.types import Chunk, Document
from sweep.llm import Completion, LLMClient, LLMConfig, RequestFailed
from sweep.llm.cache import request_key

__all__ = [
    "ANTHROPIC_PROMPT",
    "CONTEXT_MODES",
    "ContextError",
    "ContextSpec",
    "ContextWriter",
    "Contexts",
    "ContextsFailed",
    "Estimate",
    "check_confirmed",
    "estimate",
    "messages_for",
    "with_contexts",
    "write_contexts",
]

log = logging.getLogger(__name__)

CONTEXT_MODES = ("none", "llm")
#: The prompt of Anthropic's Contextual Retrieval post, word for word.
ANTHROPIC_PROMPT = """<document>
{document}
</document>
Here is the chunk we want to situate within the whole document
<chunk>
{chunk}
</chunk>
Please give a short succinct context to situate this chunk within the overall document \
for the purposes of improving search retrieval of the chunk. Answer only with the \
succinct context and nothing else."""
_SYSTEM = (
    "Task: chunk-context\nYou situate a chunk of a document for a search index. "
    "Reply with the context only."
)
#: Tokens of the messages' framing (roles, separators) per request, as OpenAI counts them.
_FRAMING_TOKENS = 8
#: A context more than this many times ``max_tokens`` long (cl100k_base tokens) cannot
#: come from an endpoint that honoured ``max_tokens``, whatever tokenizer the model uses.
_FAR_OVER = 4
#: Characters per token beyond which a context counts as far over without being
#: tokenized whole (a reply of megabytes is not worth tokenizing to refuse it).
_MAX_CHARS_PER_TOKEN = 8


class ContextError(ValueError, InvalidSetting):
    """A ``context`` setting that cannot run, or a request nobody confirmed; one line."""


class ContextsFailed(RuntimeError, ServiceFailure):
    """Some contexts got no answer: the setting fails rather than run partly plain."""


@dataclass(frozen=True)
class ContextSpec:
    """The ``context`` config node: ``mode`` none or llm; ``prompt`` with ``{document}`` and
    ``{chunk}``; ``max_tokens`` per context; ``confirm`` must be true to send more than
    ``confirm_above`` requests."""

    mode: str = "none"
    prompt: str = ANTHROPIC_PROMPT
    max_tokens: int = 150
    confirm: bool = False
    confirm_above: int = 200

    def __post_init__(self) -> None:
        if self.mode not in CONTEXT_MODES:
            raise ContextError(
                f"context.mode must be one of {', '.join(CONTEXT_MODES)}, got {self.mode!r}"
            )
        if (
            not isinstance(self.prompt, str)
            or "{document}" not in self.prompt
            or "{chunk}" not in self.prompt
        ):
            raise ContextError("context.prompt must contain {document} and {chunk}")
        for key, value in (("max_tokens", self.max_tokens), ("confirm_above", self.confirm_above)):
            if (
                isinstance(value, bool)
                or not isinstance(value, int)
                or value < 0
                or (key == "max_tokens" and value == 0)
            ):
                raise ContextError(
                    f"context.{key} must be a whole number of "
                    f"{'tokens' if key == 'max_tokens' else 'requests'}, "
                    f"got {value!r}"
                )
        if not isinstance(self.confirm, bool):
            raise ContextError(f"context.confirm must be true or false, got {self.confirm!r}")

    @property
    def active(self) -> bool:
        return self.mode != "none"

    def llm_config(self, config: LLMConfig) -> LLMConfig:
        """The ``llm`` group's endpoint, asked for plain text of at most ``max_tokens``."""
        return replace(config, json_mode=False, max_tokens=self.max_tokens)


def messages_for(spec: ContextSpec, document: Document, chunk: Chunk) -> list[dict[str, str]]:
    # str.replace, not format: documents are full of braces.
    user = spec.prompt.replace("{document}", document.text).replace("{chunk}", chunk.text)
    return [{"role": "system", "content": _SYSTEM}, {"role": "user", "content": user}]


@dataclass(frozen=True)
class Estimate:
    """What writing the contexts would send: requests not in the cache and their tokens
    (prompt tokens counted in cl100k_base; completion tokens at most ``max_tokens`` each)."""

    chunks: int
    requests: int
    prompt_tokens: int
    completion_tokens: int
    cost: float | None

    def describe(self, model: str) -> str:
        cost = "" if self.cost is None else f", about ${self.cost:,.2f}"
        return (
            f"{self.chunks:,} chunks, {self.chunks - self.requests:,} contexts cached, "
            f"{self.requests:,} requests to {model}: about {self.prompt_tokens:,} prompt "
            f"tokens and at most {self.completion_tokens:,} completion tokens{cost}"
        )


def _cost(config: LLMConfig, prompt: int, completion: int) -> float | None:
    prices = (config.input_price, config.output_price)
    if any(p is None for p in prices):
        return None
    return (prompt * prices[0] + completion * prices[1]) / 1e6


def estimate(
    client: LLMClient,
    spec: ContextSpec,
    documents: Sequence[Document],
    chunks: Sequence[Chunk],
    asked: set[str] | None = None,
) -> Estimate:
    """What writing these chunks' contexts would send. A request is counted once (chunks
    with the same text in one document ask once); ``asked`` carries the request keys
    counted already across calls, for a grid whose settings share chunks."""
    by_id = {d.doc_id: d for d in documents}
    doc_tokens: dict[str, int] = {}
    requests = prompt = 0
    asked = set() if asked is None else asked
    frame = count_tokens(DEFAULT_TOKENIZER, _SYSTEM + spec.prompt) + _FRAMING_TOKENS
    for c in chunks:
        doc = by_id[c.doc_id]
        messages = messages_for(spec, doc, c)
        key = request_key(client.request(messages))
        if key in asked:
            continue
        asked.add(key)
        if client.is_cached(messages):
            continue
        if c.doc_id not in doc_tokens:
            doc_tokens[c.doc_id] = count_tokens(DEFAULT_TOKENIZER, doc.text)
        requests += 1
        prompt += frame + doc_tokens[c.doc_id] + c.n_tokens
    completion = requests * spec.max_tokens
    return Estimate(
        len(chunks), requests, prompt, completion, _cost(client.config, prompt, completion)
    )


def check_confirmed(spec: ContextSpec, found: Estimate, model: str) -> None:
    """Refuse to send more than ``confirm_above`` requests unless ``confirm`` says so."""
    if found.requests > spec.confirm_above and not spec.confirm:
        raise ContextError(
            f"context.mode=llm would send {found.describe(model)}; more than "
            f"context.confirm_above={spec.confirm_above} requests, so "
            "rerun with context.confirm=true to send them"
        )


@dataclass(frozen=True)
class Contexts:
    """One context per chunk, and what writing them cost (tokens as the API counted them,
    cached answers included: they were paid once)."""

    texts: list[str]
    sent: int
    cached: int
    prompt_tokens: int
    completion_tokens: int
    cost: float | None
    seconds: float

    def columns(self) -> dict[str, Any]:
        return {
            "context_requests": self.sent,
            "context_cached": self.cached,
            "context_prompt_tokens": self.prompt_tokens,
            "context_completion_tokens": self.completion_tokens,
            "context_cost": self.cost,
            "context_s": self.seconds,
        }


def write_contexts(
    client: LLMClient, spec: ContextSpec, documents: Sequence[Document], chunks: Sequence[Chunk]
) -> Contexts:
    """Ask for every chunk's context (cached ones are not sent); raise
    :class:`ContextsFailed` naming how many got no answer and why."""
    by_id = {d.doc_id: d for d in documents}
    t0 = time.perf_counter()
    before = client.stats
    answers = client.complete_many(
        [messages_for(spec, by_id[c.doc_id], c) for c in chunks], desc="chunk contexts"
    )
    failed = [a for a in answers if isinstance(a, RequestFailed)]
    if failed:
        reasons: dict[str, int] = {}
        for a in failed:
            reasons[a.reason] = reasons.get(a.reason, 0) + 1
        worst = max(reasons, key=reasons.get)
        raise ContextsFailed(
            f"{len(failed)} of {len(chunks)} chunk contexts got no answer "
            f"({worst}); answers received are cached, so a rerun asks only "
            "for the missing ones"
        )
    done = [a for a in answers if isinstance(a, Completion)]
    after = client.stats
    prompt = sum(a.usage.prompt_tokens for a in done)
    completion = sum(a.usage.completion_tokens for a in done)
    texts = [" ".join(a.text.split()) for a in done]
    _refuse_far_over(spec, chunks, texts)
    return Contexts(
        texts,
        after.sent - before.sent,
        after.cached - before.cached,
        prompt,
        completion,
        _cost(client.config, prompt, completion),
        time.perf_counter() - t0,
    )


def _refuse_far_over(spec: ContextSpec, chunks: Sequence[Chunk], texts: Sequence[str]) -> None:
    """Raise :class:`ContextsFailed` when a context is far over ``spec.max_tokens``,
    naming the first such chunk and how long its context is."""
    limit = _FAR_OVER * spec.max_tokens
    over = [(c, t) for c, t in zip(chunks, texts) if _far_over(t, limit)]
    if not over:
        return
    chunk, text = over[0]
    raise ContextsFailed(
        f"{len(over)} of {len(chunks)} chunk contexts are more than {_FAR_OVER} times "
        f"context.max_tokens={spec.max_tokens} tokens long (the context of chunk "
        f"{chunk.chunk_id!r} has {len(text):,} characters): the endpoint ignored max_tokens, "
        "so the setting is not run with them; use an endpoint that honours max_tokens"
    )


def _far_over(text: str, limit: int) -> bool:
    """Whether ``text`` is more than ``limit`` cl100k_base tokens, tokenizing at most
    ``limit * _MAX_CHARS_PER_TOKEN`` characters of it."""
    if len(text.encode("utf-8", "surrogatepass")) <= limit:  # a token is at least a byte
        return False
    head = limit * _MAX_CHARS_PER_TOKEN
    return len(text) > head or count_tokens(DEFAULT_TOKENIZER, text) > limit


def with_contexts(chunks: Sequence[Chunk], texts: Sequence[str]) -> list[Chunk]:
    """The chunks with their context before what they are embedded with (a heading prefix
    stays after it); offsets and text untouched, so the context is never credited."""
    return [
        replace(c, embed_text=f"{t}\n\n{c.embedding_input}" if t else c.embed_text)
        for c, t in zip(chunks, texts)
    ]


@dataclass(frozen=True)
class ContextWriter:
    """Writes a chunking's contexts through ``client``: the estimate logged first, more
    than ``spec.confirm_above`` requests refused unless confirmed."""

    client: LLMClient
    spec: ContextSpec

    def __call__(self, documents: Sequence[Document], chunks: Sequence[Chunk]) -> Contexts:
        found = estimate(self.client, self.spec, documents, chunks)
        model = f"{self.client.config.model} at {self.client.config.endpoint}"
        log.info("chunk contexts: %s", found.describe(model))
        check_confirmed(self.spec, found, model)
        return write_contexts(self.client, self.spec, documents, chunks)
