"""A stand-in for an OpenAI-compatible Chat Completions server, for tests and demos.

The real ``openai`` client talks to it over HTTP on 127.0.0.1, so everything
on the client side (requests, retries, timeouts, errors, the cache) runs as
it would against OpenAI, vLLM or Ollama. Only the model is fake: answers are
computed deterministically from the prompt.

    with StandInLLM() as server:               # starts on a free port
        server.url                             # "http://127.0.0.1:PORT/v1"
        server.add_faults(Fault(status=429), Fault(delay=2.0))  # the next two requests
        server.requests                        # every request received, in order

How a request is answered:

1. ``api_key`` set and the Bearer token differs: HTTP 401 (the body echoes
   the token, as real servers do, so tests can check it is never repeated).
2. The model is not in ``models``: HTTP 404.
3. A queued :class:`Fault` (or ``always``) applies: a delay, an HTTP status,
   a raw body (with any Content-Type), an answer text, a text quoting the
   request's Authorization header or its key back (as some proxies and servers
   do), in any of the forms :func:`echo_forms` names (base64, hex, upper case,
   split over lines, cut, escaped), or a connection closed without an answer.
   An answer text holding a lone surrogate (``"\\ud800"``) is sent as its JSON
   escape, as a server that copies broken text does.
4. Otherwise ``classify(request)`` names the prompt kind (by default the
   ``Task: <kind>`` line that starts every sweep system prompt) and
   ``responders[kind](request)`` returns the answer text. An unknown kind
   answers HTTP 400. :class:`ContextResponders` answers context.mode=llm's prompt.

In a test module, ``from llm_server import stand_in`` brings a fixture that
yields a started server with :class:`GenerationResponders` installed.

To answer a new kind of prompt (say, a judge of RAG answers), register a
responder: ``server.responders["answer-judgment"] = lambda req: '{"pass": true}'``.
:class:`GenerationResponders` answers the prompts of ``sweep.generate``; its
attributes switch on misbehaviours (quotes not in the passage, malformed
JSON, copied or duplicate questions, low realism scores).

Run it on its own for a manual session: ``python tests/llm_server.py --port 8765``.
"""

from __future__ import annotations

import argparse
import base64
import collections
import hashlib
import json
import re
import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import quote

Responder = Callable[["ChatRequest"], str]

_TASK = re.compile(r"^Task: ([\w-]+)", re.MULTILINE)


@dataclass(frozen=True)
class ChatRequest:
    """One request as the server received it."""

    body: dict[str, Any]
    authorization: str | None

    @property
    def model(self) -> str:
        return str(self.body.get("model", ""))

    @property
    def messages(self) -> list[dict[str, Any]]:
        messages = self.body.get("messages")
        return messages if isinstance(messages, list) else []

    def text(self, role: str) -> str:
        return "\n".join(str(m.get("content", "")) for m in self.messages if m.get("role") == role)

    @property
    def kind(self) -> str | None:
        m = _TASK.search(self.text("system"))
        return m.group(1) if m else None

    def canonical(self) -> str:
        """The body as a comparable string (what a cache would key on)."""
        return json.dumps(self.body, sort_keys=True)


@dataclass(frozen=True)
class Fault:
    """What to do instead of (or before) answering one request."""

    delay: float = 0.0  # seconds to wait before answering
    status: int | None = None  # answer this HTTP status with an error body
    retry_after: float | None = None
    body: str | None = None  # a raw HTTP 200 body (e.g. not JSON at all)
    content_type: str = "application/json"  # of ``body``
    content: str | None = None  # the assistant's answer text instead of the responder's
    # The answer text (or, with ``status``, the error message) with "{authorization}"
    # replaced by the request's Authorization header, "{key}" by its token and
    # "{key_base64}", "{key_hex}"... by the forms echo_forms names: a server quoting
    # the key back.
    echo: str | None = None
    drop: bool = False  # close the connection without answering


#: A streamed answer (server-sent events), which sweep never asks for.
SSE_BODY = (
    'data: {"id":"c","object":"chat.completion.chunk","created":0,"model":"stand-in",'
    '"choices":[{"index":0,"delta":{"content":"{}"}}]}\n\ndata: [DONE]\n\n'
)


def echo_forms(authorization: str | None) -> dict[str, str]:
    """The request's Authorization header and its key (the token after ``Bearer`` or
    ``Basic``) in the forms servers and proxies have quoted them back in, by name."""
    header = authorization or ""
    key = header.split(" ", 1)[1] if " " in header else header
    raw = key.encode("utf-8")
    return {
        "authorization": header,
        "key": key,
        "key_base64": base64.b64encode(raw).decode(),
        "key_base64_url": base64.urlsafe_b64encode(raw).decode(),
        "basic_base64": base64.b64encode(b"user:" + raw).decode(),  # as a Basic auth token
        "key_hex": raw.hex(),
        "key_upper": key.upper(),
        "key_lower": key.lower(),
        "key_split": "\n".join(key[i : i + 7] for i in range(0, len(key), 7)),
        "key_prefix": key[: -(-2 * len(key) // 3)],  # its first two thirds, as a cut log line
        "key_repr": repr(raw),
        "key_json": json.dumps(json.dumps(key)),
        "key_percent": quote(key, safe=""),
    }


def _echo(template: str, authorization: str | None) -> str:
    for name, value in echo_forms(authorization).items():  # not format: bodies hold braces
        template = template.replace("{" + name + "}", value)
    return template


def _error(message: str, code: str) -> dict[str, Any]:
    return {"error": {"message": message, "type": "invalid_request_error", "code": code}}


class StandInLLM:
    """A threaded HTTP server answering ``POST /v1/chat/completions`` and ``GET /v1/models``."""

    def __init__(
        self,
        *,
        api_key: str | None = None,
        models: Iterable[str] = ("stand-in",),
        responders: dict[str, Responder] | None = None,
        classify: Callable[[ChatRequest], str | None] = lambda r: r.kind,
        port: int = 0,
    ) -> None:
        self.api_key = api_key
        self.models = set(models)
        self.responders: dict[str, Responder] = dict(responders or {})
        self.classify = classify
        self.always: Fault | None = None
        self._faults: collections.deque[Fault] = collections.deque()
        self._lock = threading.Lock()
        self.requests: list[ChatRequest] = []
        self.answered: list[ChatRequest] = []
        self.in_flight = 0
        self.max_in_flight = 0  # most requests handled at once (concurrency tests)
        self._httpd = ThreadingHTTPServer(("127.0.0.1", port), self._handler())
        self._httpd.daemon_threads = True
        self._thread: threading.Thread | None = None

    # -- lifecycle -------------------------------------------------------------

    @property
    def port(self) -> int:
        return int(self._httpd.server_address[1])

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def start(self) -> StandInLLM:
        self._thread = threading.Thread(
            target=self._httpd.serve_forever, args=(0.05,), name="stand-in-llm", daemon=True
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()

    def __enter__(self) -> StandInLLM:
        return self.start()

    def __exit__(self, *exc: Any) -> None:
        self.stop()

    # -- scripting ---------------------------------------------------------------

    def add_faults(self, *faults: Fault) -> None:
        """Apply these to the next requests, one each, in arrival order."""
        with self._lock:
            self._faults.extend(faults)

    def reset_log(self) -> None:
        with self._lock:
            self.requests.clear()
            self.answered.clear()

    # -- answering -----------------------------------------------------------------

    def _next_fault(self) -> Fault | None:
        with self._lock:
            return self._faults.popleft() if self._faults else self.always

    def handle(self, request: ChatRequest) -> tuple[int, dict[str, str], bytes]:
        """Status, extra headers and body for one chat request."""
        with self._lock:
            self.requests.append(request)
            self.in_flight += 1
            self.max_in_flight = max(self.max_in_flight, self.in_flight)
        try:
            return self._answer(request)
        finally:
            with self._lock:
                self.in_flight -= 1

    def _answer(self, request: ChatRequest) -> tuple[int, dict[str, str], bytes]:
        if self.api_key is not None:
            token = (request.authorization or "").removeprefix("Bearer ").strip()
            if token != self.api_key:
                return _json(
                    401, _error(f"Incorrect API key provided: {token}.", "invalid_api_key")
                )
        if request.model not in self.models:
            return _json(
                404,
                _error(
                    f"The model `{request.model}` does not exist or you do not have access to it.",
                    "model_not_found",
                ),
            )
        fault = self._next_fault()
        echoed = None
        if fault is not None:
            if fault.delay:
                time.sleep(fault.delay)
            if fault.drop:
                return 0, {}, b""
            if fault.echo is not None:
                echoed = _echo(fault.echo, request.authorization)
            if fault.status is not None:
                headers = (
                    {"Retry-After": f"{fault.retry_after:g}"}
                    if fault.retry_after is not None
                    else {}
                )
                message = echoed or f"stand-in fault {fault.status}"
                status, _, body = _json(fault.status, _error(message, "stand_in_fault"))
                return status, headers, body
            if fault.body is not None:
                return 200, {"Content-Type": fault.content_type}, fault.body.encode()
        if echoed is not None:
            content = echoed
        elif fault is not None and fault.content is not None:
            content = fault.content
        else:
            kind = self.classify(request)
            responder = self.responders.get(kind or "")
            if responder is None:
                return _json(
                    400,
                    _error(f"stand-in has no responder for prompt kind {kind!r}", "no_responder"),
                )
            content = responder(request)
        with self._lock:
            self.answered.append(request)
        prompt_tokens = sum(len(str(m.get("content", "")).split()) for m in request.messages)
        completion_tokens = len(content.split())
        return _json(
            200,
            {
                "id": "chatcmpl-stand-in",
                "object": "chat.completion",
                "created": 0,
                "model": request.model,
                "choices": [
                    {
                        "index": 0,
                        "finish_reason": "stop",
                        "message": {"role": "assistant", "content": content},
                    }
                ],
                "usage": {
                    "prompt_tokens": prompt_tokens,
                    "completion_tokens": completion_tokens,
                    "total_tokens": prompt_tokens + completion_tokens,
                },
            },
        )

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: Any) -> None:  # quiet
                pass

            def _send(self, status: int, headers: dict[str, str], body: bytes) -> None:
                if status == 0:  # a dropped connection: no status line, no body
                    self.close_connection = True
                    return
                try:
                    self.send_response(status)
                    self.send_header(
                        "Content-Type", headers.pop("Content-Type", "application/json")
                    )
                    for k, v in headers.items():
                        self.send_header(k, v)
                    self.send_header("Content-Length", str(len(body)))
                    self.end_headers()
                    self.wfile.write(body)
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client gave up (a timeout test)

            def do_GET(self) -> None:
                if self.path.rstrip("/").endswith("/models"):
                    data = [
                        {"id": m, "object": "model", "owned_by": "stand-in"}
                        for m in sorted(server.models)
                    ]
                    self._send(*_json(200, {"object": "list", "data": data}))
                else:
                    self._send(*_json(404, _error(f"no route {self.path}", "not_found")))

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length)
                if not self.path.rstrip("/").endswith("/chat/completions"):
                    self._send(*_json(404, _error(f"no route {self.path}", "not_found")))
                    return
                try:
                    body = json.loads(raw)
                except ValueError:
                    self._send(*_json(400, _error("body is not JSON", "bad_json")))
                    return
                self._send(*server.handle(ChatRequest(body, self.headers.get("Authorization"))))

        return Handler


def _json(status: int, payload: Any) -> tuple[int, dict[str, str], bytes]:
    return status, {}, json.dumps(payload).encode()


# --------------------------------------------------------------------------- sweep.generate


_PASSAGE = re.compile(r"<passage[^>]*>\n(.*?)\n</passage>", re.DOTALL)
_QUESTION = re.compile(r"<question>\n(.*?)\n</question>", re.DOTALL)
_EVIDENCE = re.compile(r"<evidence>\n(.*?)\n</evidence>", re.DOTALL)
_VARIANT = re.compile(r"^Variant (\d+)", re.MULTILINE)
_WORD = re.compile(r"[A-Za-z][A-Za-z0-9'-]*[A-Za-z0-9]")
_STOP = frozenset(
    [
        "a",
        "an",
        "the",
        "and",
        "or",
        "of",
        "to",
        "in",
        "on",
        "for",
        "with",
        "at",
        "by",
        "from",
        "as",
        "is",
        "are",
        "was",
        "were",
        "be",
        "been",
        "it",
        "its",
        "this",
        "that",
        "these",
        "those",
        "what",
        "which",
        "who",
        "whom",
        "how",
        "when",
        "where",
        "why",
        "does",
        "do",
        "did",
        "can",
        "could",
        "should",
        "would",
        "will",
        "shall",
        "may",
        "might",
        "must",
        "about",
        "into",
        "than",
        "then",
        "there",
        "their",
        "they",
        "them",
        "our",
        "your",
        "you",
        "we",
        "i",
        "he",
        "she",
        "his",
        "her",
        "not",
        "no",
        "yes",
        "if",
        "so",
        "such",
        "per",
        "each",
        "any",
        "all",
        "also",
        "more",
        "most",
        "other",
        "some",
        "only",
        "very",
        "just",
        "docs",
        "say",
        "said",
        "relate",
        "when",
        "applies",
        "rule",
        "find",
        "out",
        "compare",
        "differ",
        "offer",
    ]
)
_ABSENT_TOPICS = (
    "pet insurance",
    "rooftop beekeeping",
    "submarine deployments",
    "cryptocurrency payroll",
    "horse stabling",
    "lunar shipping",
    "violin lessons",
    "glacier tours",
)
_FACT_TEMPLATES = (
    "What do the docs say about {a} and {b}?",
    "How does {a} relate to {b}?",
    "Where can I find out about {a} for {b}?",
    "What is the rule on {a} when {b} applies?",
)


def _digest(*parts: str) -> int:
    return int(hashlib.sha256("\0".join(parts).encode()).hexdigest()[:12], 16)


def _sentences(text: str) -> list[str]:
    """Sentences of at least six words, not headings or table rows."""
    out = []
    for piece in re.split(r"(?<=[.!?])[ \t]+|\n+", text):
        piece = piece.strip()
        if len(piece.split()) >= 6 and not piece.startswith(("#", "|", "-", "*", ">")):
            out.append(piece)
    return out


def _keywords(text: str, k: int = 2) -> list[str]:
    words = []
    for w in _WORD.findall(text):
        if w.lower() not in _STOP and len(w) > 3 and w.lower() not in (x.lower() for x in words):
            words.append(w)
    # Longest first (stable): rare, specific words make questions tell apart.
    return sorted(words, key=lambda w: -len(w))[:k]


def _content_words(text: str) -> set[str]:
    return {w.lower() for w in _WORD.findall(text) if w.lower() not in _STOP and len(w) > 3}


@dataclass
class GenerationResponders:
    """Deterministic answers to ``sweep.generate``'s prompts, with switchable faults.

    ``quote_mode``: ``exact`` copies a sentence of the passage; ``reflow``
    changes its case and line breaks (a normalised match must find it);
    ``mixed`` (the default) reflows every ``reflow_every``-th quote and copies
    the others; ``missing`` returns a quote that is not in the passage.
    """

    quote_mode: str = "mixed"
    reflow_every: int = 4  # mixed mode: every n-th quote reflowed
    malformed: set[str] = field(default_factory=set)  # kinds answered with non-JSON
    wrong_shape: set[str] = field(default_factory=set)  # kinds answered with JSON missing keys
    fence_every: int = 3  # every n-th answer in a ```json fence
    copy_passage: bool = False  # fact questions copy 10 words
    same_question: bool = False  # every fact question identical
    realism: Callable[[str], int] | None = None  # score by question, else hash-based
    answerable: bool | None = None  # evidence-check override
    in_corpus: bool | None = None  # retrieval-check override

    def install(self, server: StandInLLM) -> StandInLLM:
        server.responders.update(
            {
                "fact-question": self.fact,
                "adversarial-question": self.adversarial,
                "multi-hop-question": self.multi,
                "unanswerable-question": self.unanswerable,
                "realism-rating": self.rating,
                "evidence-check": self.evidence,
                "retrieval-check": self.retrieval,
            }
        )
        return server

    # -- helpers ---------------------------------------------------------------

    def _encode(self, kind: str, obj: dict[str, Any], seed: str) -> str:
        if kind in self.malformed:
            return "Sure! Here is the question you asked for: {question: what is it"
        if kind in self.wrong_shape:
            return json.dumps({"q": obj.get("question", "?")})
        obj = {**obj, "confidence": 0.9}  # an extra key, to be ignored
        text = json.dumps(obj, ensure_ascii=False)
        if self.fence_every and _digest(seed) % self.fence_every == 0:
            return f"Here you go:\n```json\n{text}\n```"
        return text

    def _quote(self, passage: str, seed: str) -> tuple[str, str]:
        """A sentence of the passage, and the quote as the model returns it."""
        sentences = _sentences(passage) or [passage.strip()]
        sentence = sentences[_digest(seed, passage) % len(sentences)]
        mode = self.quote_mode
        if mode == "mixed":
            mode = (
                "reflow"
                if self.reflow_every and _digest(seed, "reflow") % self.reflow_every == 0
                else "exact"
            )
        if mode == "reflow":
            words = sentence.split()
            half = len(words) // 2
            return sentence, (" ".join(words[:half]) + "\n" + " ".join(words[half:])).upper()
        if mode == "missing":
            return sentence, f"The stand-in invented this sentence about {len(sentence)} things."
        return sentence, sentence

    # -- generation ------------------------------------------------------------

    def fact(self, req: ChatRequest) -> str:
        user = req.text("user")
        passage = _PASSAGE.findall(user)[0]
        variant = _VARIANT.search(user)
        seed = passage + (variant.group(1) if variant else "")
        sentence, quote = self._quote(passage, seed)
        if self.same_question:
            question = "What is the warranty period of the device?"
        elif self.copy_passage:
            question = "Is it true that " + " ".join(sentence.split()[:10]) + "?"
        else:
            a, b = (_keywords(sentence) + ["it", "this"])[:2]
            question = _FACT_TEMPLATES[_digest(seed) % len(_FACT_TEMPLATES)].format(a=a, b=b)
        return self._encode(
            "fact-question", {"fact": sentence, "question": question, "quote": quote}, seed
        )

    def adversarial(self, req: ChatRequest) -> str:
        a, b, *_rest = _PASSAGE.findall(req.text("user"))
        sentence, quote = self._quote(a, a)
        k = (_keywords(sentence) + ["it", "this"])[:2]
        lure = (_keywords(b, 1) or ["that"])[0]
        question = f"Besides {lure}, what applies to {k[0]} and {k[1]}?"
        return self._encode("adversarial-question", {"question": question, "quote": quote}, a)

    def multi(self, req: ChatRequest) -> str:
        one, two = _PASSAGE.findall(req.text("user"))[:2]
        (s1, q1), (s2, q2) = self._quote(one, one + two), self._quote(two, two + one)
        k1 = (_keywords(s1, 1) or ["this"])[0]
        k2 = (_keywords(s2, 1) or ["that"])[0]
        question = f"How do {k1} and {k2} compare across both documents?"
        return self._encode(
            "multi-hop-question", {"question": question, "quotes": [q1, q2]}, one + two
        )

    def unanswerable(self, req: ChatRequest) -> str:
        user = req.text("user")
        names = re.findall(r"\b[A-Z][a-z]{3,}\b", " ".join(_PASSAGE.findall(user)))
        name = names[_digest(user) % len(names)] if names else "the company"
        topic = _ABSENT_TOPICS[_digest(user, "topic") % len(_ABSENT_TOPICS)]
        return self._encode(
            "unanswerable-question", {"question": f"Does {name} offer {topic}?"}, user
        )

    # -- filters ---------------------------------------------------------------

    def rating(self, req: ChatRequest) -> str:
        question = _QUESTION.findall(req.text("user"))[-1]
        if self.realism is not None:
            score = self.realism(question)
        elif "passage" in question.lower():
            score = 1
        else:
            score = 3 if _digest(question) % 6 == 0 else 5
        return self._encode(
            "realism-rating", {"score": score, "reason": "stand-in rating"}, question
        )

    def evidence(self, req: ChatRequest) -> str:
        user = req.text("user")
        question = _QUESTION.findall(user)[-1]
        evidence = " ".join(_EVIDENCE.findall(user)).lower()
        if self.answerable is not None:
            ok = self.answerable
        else:
            ok = sum(w in evidence for w in _content_words(question)) >= 2
        return self._encode("evidence-check", {"answerable": ok, "reason": "stand-in check"}, user)

    def retrieval(self, req: ChatRequest) -> str:
        user = req.text("user")
        question = _QUESTION.findall(user)[-1]
        passages = " ".join(_PASSAGE.findall(user)).lower()
        if self.in_corpus is not None:
            found = self.in_corpus
        else:
            words = _content_words(question)
            found = bool(words) and all(w in passages for w in words)
        return self._encode(
            "retrieval-check", {"answerable": found, "reason": "stand-in check"}, user
        )


# --------------------------------------------------------------------------- sweep.answers


_CHUNK = re.compile(r"<chunk rank=\"\d+\">\n(.*?)\n</chunk>", re.DOTALL)
_INLINE = {
    tag: re.compile(rf"<{tag}>(.*?)</{tag}>", re.DOTALL)
    for tag in ("question", "answer", "reference")
}
_NORM = re.compile(r"\s+")


def _inline(user: str, tag: str) -> str:
    found = _INLINE[tag].findall(user)
    return found[-1].strip() if found else ""


def _norm(text: str) -> str:
    return _NORM.sub(" ", text).strip().lower()


@dataclass
class AnswerResponders:
    """Deterministic answers to ``sweep.answers``' prompts (a RAG answer and three judges).

    The answer is the context sentence sharing the most content words with the
    question (at least ``min_overlap``), else a decline. The faithfulness judge
    passes an answer found word for word in the context; relevance needs a
    content word of the question in the answer; correctness needs half the
    reference's content words. Switches: ``hallucinate`` (answers from nowhere),
    ``decline_all``, ``malformed`` (kinds answered with non-JSON), ``unfaithful``
    (the faithfulness judge always fails, with ``category``).
    """

    min_overlap: int = 2
    hallucinate: bool = False
    decline_all: bool = False
    malformed: set[str] = field(default_factory=set)
    unfaithful: bool = False
    category: str = "misinterpretation"

    def install(self, server: StandInLLM) -> StandInLLM:
        server.responders.update(
            {
                "rag-answer": self.answer,
                "judge-faithfulness": self.faithful,
                "judge-relevance": self.relevant,
                "judge-correctness": self.correct,
            }
        )
        return server

    def _reply(self, kind: str, obj: dict[str, Any]) -> str:
        if kind in self.malformed:
            return "I think the answer is yes, probably {not json"
        return json.dumps(obj, ensure_ascii=False)

    def answer(self, req: ChatRequest) -> str:
        user = req.text("user")
        if self.hallucinate:
            return self._reply(
                "rag-answer",
                {"answer": "Bonuses are paid in gold bars on Fridays.", "declined": False},
            )
        question = _content_words(_inline(user, "question"))
        best, score = None, 0
        for chunk in _CHUNK.findall(user):
            for sentence in _sentences(chunk):
                overlap = len(question & _content_words(sentence))
                if overlap > score:
                    best, score = sentence, overlap
        if self.decline_all or best is None or score < self.min_overlap:
            return self._reply("rag-answer", {"answer": "", "declined": True})
        return self._reply("rag-answer", {"answer": best, "declined": False})

    def faithful(self, req: ChatRequest) -> str:
        user = req.text("user")
        context = _norm(" ".join(_CHUNK.findall(user)))
        ok = not self.unfaithful and _norm(_inline(user, "answer")) in context
        return self._reply(
            "judge-faithfulness",
            {
                "faithful": ok,
                "category": "none" if ok else self.category,
                "reason": "found in the context" if ok else "not stated in the context",
            },
        )

    def relevant(self, req: ChatRequest) -> str:
        user = req.text("user")
        ok = bool(
            _content_words(_inline(user, "question")) & _content_words(_inline(user, "answer"))
        )
        return self._reply("judge-relevance", {"relevant": ok, "reason": "stand-in relevance"})

    def correct(self, req: ChatRequest) -> str:
        user = req.text("user")
        reference = _content_words(_inline(user, "reference"))
        ok = len(reference & _content_words(_inline(user, "answer"))) * 2 >= len(reference) > 0
        return self._reply("judge-correctness", {"correct": ok, "reason": "stand-in correctness"})


# --------------------------------------------------------------------------- chunk contexts


_CONTEXT_DOC = re.compile(r"<document>\n(.*?)\n</document>", re.DOTALL)
_CONTEXT_CHUNK = re.compile(r"<chunk>\n(.*?)\n</chunk>", re.DOTALL)


@dataclass
class ContextResponders:
    """Deterministic answers to context.mode=llm's prompt (``Task: chunk-context``): the
    document's first heading (else its first words) and the chunk's three longest content
    words. No model writes them, so they show what the plumbing does, not what a real
    LLM's contexts are worth. ``say(document, chunk)``, when set, is answered instead (a
    test plants an answer in a context)."""

    say: Callable[[str, str], str] | None = None

    def install(self, server: StandInLLM) -> StandInLLM:
        server.responders["chunk-context"] = self.context
        return server

    def context(self, req: ChatRequest) -> str:
        user = req.text("user")
        doc, chunk = _CONTEXT_DOC.search(user), _CONTEXT_CHUNK.search(user)
        document = doc.group(1) if doc else user
        piece = chunk.group(1) if chunk else user
        if self.say is not None:
            return self.say(document, piece)
        title = next(
            (
                line.lstrip("# ").strip()
                for line in document.splitlines()
                if line.startswith("#") and line.lstrip("# ").strip()
            ),
            " ".join(document.split()[:6]),
        )
        words = ", ".join(_keywords(piece, 3)) or "its opening"
        return f'From the document "{title}"; this part is about {words}.'


try:
    import pytest
except ImportError:  # run as a script outside the test environment
    pytest = None

if pytest is not None:

    @pytest.fixture
    def stand_in():
        """A started stand-in answering sweep.generate's prompts; stopped after the test.
        Import it into a test module (``from llm_server import stand_in``) to use it."""
        server = GenerationResponders().install(StandInLLM())
        with server:
            yield server


def main() -> None:
    parser = argparse.ArgumentParser(description="Serve the stand-in LLM on 127.0.0.1.")
    parser.add_argument("--port", type=int, default=8765)
    parser.add_argument("--model", default="stand-in")
    args = parser.parse_args()
    server = GenerationResponders().install(StandInLLM(models=[args.model], port=args.port))
    AnswerResponders().install(server)
    ContextResponders().install(server)
    print(f"stand-in LLM serving model {args.model!r} at {server.url}", flush=True)
    try:
        server._httpd.serve_forever()
    except KeyboardInterrupt:
        pass


if __name__ == "__main__":
    main()
