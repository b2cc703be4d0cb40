"""A Chat Completions client for any OpenAI-compatible endpoint, behind the answer cache.

The ``openai`` package speaks the protocol; retries are ours (the package's
own are switched off) so that every retry is counted and the backoff is the
one documented: ``llm.backoff_s * 2**attempt``, or the server's Retry-After.
429, 5xx, timeouts and HTTP 200 answers that are not a chat completion (a
proxy's HTML page, an empty body, no choices, no content) are retried. A
request still failing after ``llm.max_retries`` retries is a
:class:`RequestFailed` that the caller counts, and it is not cached, so a
rerun asks again; a rejected key, an unknown model, an unreachable endpoint
or a request the server refuses outright stop the run with an
:class:`LLMError`.

Secrets (the API key, a password in ``llm.base_url``) are masked in
everything the server sends back, answers included, before it is cached,
returned or cut short, in every form :mod:`sweep.llm.errors` knows; no URL
shown or logged holds a password. A key no HTTP header can carry is refused
before any request, and whatever else the HTTP stack raises leaves the client
as a masked :class:`LLMError`.
"""

from __future__ import annotations

import logging
import random
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import FIRST_EXCEPTION, Future, ThreadPoolExecutor, wait
from dataclasses import asdict, dataclass, field
from typing import Any

from sweep.core import progress
from sweep.core.tokenization import replace_surrogates
from sweep.llm.cache import ResponseCache, Usage, request_key
from sweep.llm.completion import completion_text, describe_body
from sweep.llm.config import (
    UNSHOWN_VARIABLE,
    LLMConfig,
    check_api_key,
    key_variable,
    resolve_api_key,
    resolve_llm_cache_dir,
    secrets_of,
)
from sweep.llm.errors import MASK, LLMError, clean, mask

log = logging.getLogger(__name__)

__all__ = [
    "PENDING",
    "Answer",
    "Completion",
    "LLMClient",
    "LLMStats",
    "Messages",
    "RequestFailed",
]

Messages = Sequence[Mapping[str, str]]
#: The key handed to the ``openai`` client when the endpoint needs none (it insists on one).
NO_KEY = "not-needed"
_MAX_RETRY_AFTER_S = 60.0
_MAX_BACKOFF_S = 60.0
#: Longest server text repeated in a message, counted after masking.
_DETAIL_CHARS = 300
_CAUSE_CHARS = 200


@dataclass(frozen=True, slots=True)
class Completion:
    """The model's answer text, the tokens it cost, and whether it came from the cache."""

    text: str
    usage: Usage
    cached: bool


@dataclass(frozen=True, slots=True)
class RequestFailed:
    """A request that got no answer after every retry; ``reason`` is one line."""

    reason: str


class _Pending:
    """A dry run's answer to a request that is not cached: it would be sent."""

    def __repr__(self) -> str:
        return "PENDING"


PENDING = _Pending()
Answer = Completion | RequestFailed | _Pending


@dataclass(frozen=True)
class LLMStats:
    """What the client did, counted per request (not per retry) unless named so."""

    sent: int = 0  # requests sent to the endpoint
    failed: int = 0  # ...of which got no answer after every retry
    retries: int = 0  # extra attempts after 429, 5xx, a timeout or a non-answer
    cached: int = 0  # requests answered from the cache, nothing sent
    prompt_tokens: int = 0  # usage of the answers received (API's own counts)
    completion_tokens: int = 0
    cached_prompt_tokens: int = 0  # usage recorded with the cached answers: not paid again
    cached_completion_tokens: int = 0
    usage_missing: int = 0  # answers without a usage field
    would_send: int = 0  # dry run: requests not in the cache
    would_send_prompt_tokens: int = 0  # dry run: their prompt tokens, estimated

    def to_dict(self) -> dict[str, int]:
        return asdict(self)


@dataclass
class _Counter:
    values: dict[str, int] = field(default_factory=dict)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def add(self, **amounts: int) -> None:
        with self.lock:
            for k, v in amounts.items():
                self.values[k] = self.values.get(k, 0) + v

    def snapshot(self) -> LLMStats:
        with self.lock:
            return LLMStats(**self.values)


class LLMClient:
    """Send chat requests, at most ``config.max_concurrency`` at a time, through the cache.

    ``dry_run``: nothing is sent; cached answers are returned and every other
    request returns :data:`PENDING` and is counted in ``stats.would_send``.
    ``count_tokens`` estimates a prompt's tokens for the dry run.
    """

    @classmethod
    def open(
        cls,
        config: LLMConfig,
        *,
        dry_run: bool = False,
        show_progress: bool = True,
        count_tokens: Callable[[str], int] | None = None,
    ) -> LLMClient:
        """The client every command uses: the key read from the variable ``config.api_key_env``
        names, replies cached in ``config.cache_dir`` (null: the user's cache folder; off: none)."""
        root = resolve_llm_cache_dir(config.cache_dir)
        return cls(
            config,
            resolve_api_key(config),
            ResponseCache(root) if root is not None else None,
            dry_run=dry_run,
            show_progress=show_progress,
            count_tokens=count_tokens,
        )

    def __init__(
        self,
        config: LLMConfig,
        api_key: str | None,
        cache: ResponseCache | None,
        *,
        dry_run: bool = False,
        show_progress: bool = True,
        count_tokens: Callable[[str], int] | None = None,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        self.config = config
        self.cache = cache
        self.dry_run = dry_run
        self.show_progress = show_progress
        # open() checked a key from the environment already, naming its variable.
        self._secret = (
            None if api_key is None else check_api_key(api_key, "LLMClient's api_key argument")
        )
        self._secrets = secrets_of(api_key, config.credentials)
        self._warned_echo = False
        self._count_tokens = count_tokens or (lambda text: len(text) // 4 + 1)
        self._sleep = sleep
        self._counter = _Counter()
        self._memo: dict[str, Completion] = {}
        self._key_locks: dict[str, threading.Lock] = {}
        self._locks_lock = threading.Lock()
        self._openai: Any = None

    # -- public ------------------------------------------------------------------

    @property
    def stats(self) -> LLMStats:
        return self._counter.snapshot()

    def request(self, messages: Messages) -> dict[str, Any]:
        """The request body for ``messages``: what is sent and what the cache key hashes.

        A lone surrogate in a message (text from a damaged PDF, say) is sent as U+FFFD:
        the HTTP library cannot encode it, and the key must hash what is sent."""
        body: dict[str, Any] = {
            "model": self.config.model,
            "messages": [
                {"role": str(m["role"]), "content": replace_surrogates(str(m["content"]))}
                for m in messages
            ],
            "temperature": self.config.temperature,
        }
        if self.config.max_tokens is not None:
            body["max_tokens"] = self.config.max_tokens
        if self.config.json_mode:
            body["response_format"] = {"type": "json_object"}
        return body

    def is_cached(self, messages: Messages) -> bool:
        key = request_key(self.request(messages))
        return key in self._memo or (self.cache is not None and key in self.cache)

    def complete(self, messages: Messages) -> Answer:
        """One answer: from the cache, or sent (with retries) and cached.

        Raises :class:`LLMError` for a problem no retry can fix.
        """
        body = self.request(messages)
        key = request_key(body)
        with self._lock_for(key):
            found = self._lookup(key, body)
            if found is not None:
                self._counter.add(
                    cached=1,
                    cached_prompt_tokens=found.usage.prompt_tokens,
                    cached_completion_tokens=found.usage.completion_tokens,
                )
                return found
            if self.dry_run:
                tokens = sum(self._count_tokens(m["content"]) + 4 for m in body["messages"])
                self._counter.add(would_send=1, would_send_prompt_tokens=tokens)
                return PENDING
            answer = self._send(body)
            if isinstance(answer, Completion):
                self._memo[key] = Completion(answer.text, answer.usage, cached=True)
                if self.cache is not None:  # (a cache it cannot write is said once)
                    self.cache.put(key, body, answer.text, answer.usage)
            return answer

    def complete_many(self, batch: Sequence[Messages], desc: str = "LLM requests") -> list[Answer]:
        """Answers aligned with ``batch``, requested concurrently, with a progress bar."""
        if not batch:
            return []
        results: list[Answer | None] = [None] * len(batch)
        executor = ThreadPoolExecutor(
            max_workers=self.config.max_concurrency, thread_name_prefix="llm"
        )
        bar = progress.bar(len(batch), desc, "req", show=self.show_progress and not self.dry_run)
        futures: dict[Future, int] = {}
        try:
            for i, messages in enumerate(batch):
                futures[executor.submit(self.complete, messages)] = i
            pending = set(futures)
            while pending:
                done, pending = wait(pending, return_when=FIRST_EXCEPTION)
                for future in done:
                    results[futures[future]] = future.result()  # re-raises LLMError
                    bar.update(1)
        except BaseException:
            # Ctrl-C or a fatal error: nothing new starts; requests in flight
            # finish and are cached, so a rerun does not pay for them again.
            executor.shutdown(wait=False, cancel_futures=True)
            raise
        finally:
            bar.close()
        executor.shutdown(wait=True)
        return results  # type: ignore[return-value]  # every slot is filled

    # -- internals ---------------------------------------------------------------

    def _lock_for(self, key: str) -> threading.Lock:
        # Two identical requests in flight at once would both be paid for.
        with self._locks_lock:
            return self._key_locks.setdefault(key, threading.Lock())

    def _lookup(self, key: str, body: dict[str, Any]) -> Completion | None:
        memo = self._memo.get(key)
        if memo is not None:
            return memo
        if self.cache is None:
            return None
        hit = self.cache.get(key)
        if hit is None:
            return None
        text = self._masked(replace_surrogates(hit.text))
        # An entry from before answers were masked (or held a lone surrogate): rewritten on
        # disk too (a dry run writes nothing).
        if text != hit.text and not self.dry_run:
            try:
                self.cache.put(key, body, text, hit.usage)
            except OSError as e:
                log.warning(
                    "could not rewrite a cache entry in %s: %s",
                    self.cache.root,
                    self._clean(str(e)),
                )
        found = Completion(text, hit.usage, cached=True)
        self._memo[key] = found
        return found

    def _client(self) -> Any:
        if self._openai is None:
            import openai

            # A user name and password in llm.base_url go as the Basic auth header httpx
            # would make of them anyway, so the URL that the HTTP library logs holds none.
            http_client = None
            if self.config.credentials is not None:
                http_client = openai.DefaultHttpxClient(auth=self.config.credentials)
            self._openai = openai.OpenAI(
                base_url=self.config.endpoint,
                api_key=self._secret or NO_KEY,
                timeout=self.config.timeout_s,
                max_retries=0,
                http_client=http_client,
            )
        return self._openai

    def _fatal(self, message: str) -> LLMError:
        return LLMError(message, secrets=self._secrets)

    def _send(self, body: dict[str, Any]) -> Completion | RequestFailed:
        import openai

        cfg = self.config
        self._counter.add(sent=1)
        reason = ""
        for attempt in range(cfg.max_retries + 1):
            if attempt:
                self._counter.add(retries=1)
            retry_after: float | None = None
            try:
                raw = self._client().chat.completions.with_raw_response.create(**body)
            except openai.APITimeoutError:
                reason = f"timed out after {cfg.timeout_s:g} s"
            except openai.APIConnectionError as e:
                cause = self._clean(_cause(e), _CAUSE_CHARS) or type(e).__name__
                reason = f"cannot connect to {cfg.endpoint} ({cause})"
                if attempt == cfg.max_retries:
                    raise self._fatal(
                        f"cannot reach the LLM endpoint {cfg.endpoint}: "
                        f"{cause} (is the server running, and is "
                        "llm.base_url right?)"
                    ) from None
            except openai.APIStatusError as e:
                code = e.status_code
                if code == 429 or code >= 500:
                    reason = f"HTTP {code}"
                    retry_after = _retry_after(e)
                else:
                    raise self._status_error(e) from None
            except Exception as e:
                # Anything else the openai package or the HTTP library raises: its text may
                # quote a header, so it leaves here masked, and without its chain of causes.
                raise self._fatal(
                    f"the request to the LLM endpoint {cfg.endpoint} failed: "
                    f"{type(e).__name__}: {e}"
                ) from None
            else:
                answer = self._completion(raw)
                if isinstance(answer, Completion):
                    return answer
                # Typically a proxy or an overloaded server for a moment: retried like a 5xx.
                reason = answer.reason
            if attempt < cfg.max_retries:
                delay = (
                    retry_after
                    if retry_after is not None
                    else min(cfg.backoff_s * 2**attempt, _MAX_BACKOFF_S) * random.uniform(0.8, 1.2)
                )
                log.debug("retrying after %s in %.2f s", reason, delay)
                self._sleep(delay)
        self._counter.add(failed=1)
        retries = cfg.max_retries
        return RequestFailed(
            self._clean(f"{reason} (after {retries} {'retry' if retries == 1 else 'retries'})")
        )

    def _completion(self, raw: Any) -> Completion | RequestFailed:
        """The answer in an HTTP 200 response, or why there is none (nothing counted yet)."""
        try:
            response = raw.parse()
        except Exception:  # e.g. a JSON content type on an HTML page
            response = None
        text = completion_text(response)
        if text is None:
            what = describe_body(raw.headers.get("content-type", ""), raw.text)
            return RequestFailed(f"the server's answer is not a chat completion ({what})")
        # A lone surrogate (JSON can escape one, UTF-8 cannot hold it) becomes U+FFFD, as
        # undecodable bytes do: the answer is the same whether sent, cached or read back.
        text = replace_surrogates(text)
        masked = self._masked(text)
        if masked != text and not self._warned_echo:
            self._warned_echo = True
            log.warning(
                "an answer contained the API key or the password in llm.base_url (the "
                "server quoted it back, or the key is short enough to be a word of the "
                "answer); it is replaced by %s in the answers and the cache",
                MASK,
            )
        raw_usage = getattr(response, "usage", None)
        if raw_usage is None:
            self._counter.add(usage_missing=1)
            usage = Usage()
        else:
            usage = Usage.from_dict(
                {
                    "prompt_tokens": getattr(raw_usage, "prompt_tokens", 0),
                    "completion_tokens": getattr(raw_usage, "completion_tokens", 0),
                }
            )
        self._counter.add(
            prompt_tokens=usage.prompt_tokens, completion_tokens=usage.completion_tokens
        )
        return Completion(masked, usage, cached=False)

    def _status_error(self, e: Any) -> LLMError:
        cfg = self.config
        code = e.status_code
        detail = self._clean(_server_message(e), _DETAIL_CHARS)
        shown = key_variable(cfg.api_key_env or "")
        variable = shown if shown == UNSHOWN_VARIABLE else f"${shown}"
        if code in (401, 403):
            if self._secret is None:
                where = f"{variable} is not set" if cfg.api_key_env else "llm.api_key_env is null"
                return self._fatal(
                    f"the LLM endpoint {cfg.endpoint} requires an API key (HTTP "
                    f"{code}) and {where}; put the key in an environment "
                    "variable and name it with llm.api_key_env"
                )
            # The server's text is left out: it often quotes the key back.
            return self._fatal(
                f"the LLM endpoint {cfg.endpoint} rejected the API key in {variable} (HTTP {code})"
            )
        if code == 404:
            return self._fatal(
                f"the LLM endpoint {cfg.endpoint} answered HTTP 404 for model "
                f"{cfg.model!r}: {detail or 'not found'} (check llm.model, and "
                "that llm.base_url ends where the API starts, usually /v1)"
            )
        return self._fatal(
            f"the LLM endpoint {cfg.endpoint} refused the request (HTTP {code}): "
            f"{detail or 'no details'}"
        )

    def _masked(self, text: str) -> str:
        """An answer with the secrets masked (a short key only where quoted as one)."""
        return mask(text, self._secrets, short="credential")

    def _clean(self, text: str, limit: int | None = None) -> str:
        return clean(text, self._secrets, limit)


def _cause(e: BaseException) -> str:
    """The innermost reason of a connection error, e.g. 'Connection refused' (not masked)."""
    inner: BaseException | None = e
    text = ""
    while inner is not None:
        if str(inner).strip():
            text = str(inner)
        inner = inner.__cause__ or inner.__context__
    return text


def _server_message(e: Any) -> str:
    body = getattr(e, "body", None)
    message = None
    if isinstance(body, dict):
        error = body.get("error", body)
        message = error.get("message") if isinstance(error, dict) else error
        if message is None:
            message = body.get("message")
    if not message:
        message = getattr(e, "message", "") or ""
    return str(message)  # masked and cut by the caller, in that order


def _retry_after(e: Any) -> float | None:
    response = getattr(e, "response", None)
    headers = getattr(response, "headers", None)
    if headers is None:
        return None
    value = headers.get("retry-after")
    try:
        seconds = float(value)
    except (TypeError, ValueError):
        return None
    return min(max(seconds, 0.0), _MAX_RETRY_AFTER_S)
