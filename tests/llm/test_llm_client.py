"""The real openai client against the stand-in server: answers, cache, retries, errors."""

from __future__ import annotations

import base64
import json
import logging
import socket
from urllib.parse import quote

import pytest

from llm_server import SSE_BODY, Fault, StandInLLM, echo_forms
from sweep.llm import (
    PENDING,
    Completion,
    LLMClient,
    LLMConfig,
    LLMConfigError,
    LLMError,
    RequestFailed,
    ResponseCache,
    resolve_api_key,
)
from sweep.llm.cache import Usage, request_key

KEY = "sk-sweep-test-7f3a9c2e1b4d"


def ask(text: str) -> list[dict[str, str]]:
    return [{"role": "system", "content": "Task: echo\nRepeat."}, {"role": "user", "content": text}]


@pytest.fixture
def server():
    with StandInLLM(responders={"echo": lambda r: json.dumps({"said": r.text("user")})}) as s:
        yield s


def client_for(server: StandInLLM, tmp_path=None, key: str | None = None, sleeps=None, **cfg):
    config = LLMConfig(
        base_url=server.url,
        model=cfg.pop("model", "stand-in"),
        **{"backoff_s": 0.01, "max_retries": 2, **cfg},
    )
    cache = ResponseCache(tmp_path / "cache") if tmp_path is not None else None
    sleep = sleeps.append if sleeps is not None else (lambda s: None)
    return LLMClient(config, key, cache, show_progress=False, sleep=sleep)


def test_answer_usage_and_the_request_sent(server, tmp_path):
    client = client_for(server, tmp_path)
    answer = client.complete(ask("hello"))
    assert isinstance(answer, Completion) and not answer.cached
    assert json.loads(answer.text) == {"said": "hello"}
    (received,) = server.requests
    assert received.body == client.request(ask("hello"))
    assert received.body["response_format"] == {"type": "json_object"}
    assert received.body["temperature"] == 0.0 and received.body["max_tokens"] == 512
    # The stand-in counts words; the client reports the API's own numbers.
    assert answer.usage.prompt_tokens == 4 and answer.usage.completion_tokens == 2
    stats = client.stats
    assert (stats.sent, stats.cached, stats.prompt_tokens, stats.completion_tokens) == (1, 0, 4, 2)


def test_json_mode_off_sends_no_response_format(server):
    client = client_for(server, json_mode=False, max_tokens=None)
    client.complete(ask("x"))
    assert "response_format" not in server.requests[0].body
    assert "max_tokens" not in server.requests[0].body


def test_a_repeated_request_is_answered_by_the_cache(server, tmp_path):
    first = client_for(server, tmp_path).complete(ask("hello"))
    again = client_for(server, tmp_path)  # a new run, same cache
    answer = again.complete(ask("hello"))
    assert answer.cached and answer.text == first.text and answer.usage == first.usage
    assert len(server.requests) == 1
    stats = again.stats
    assert stats.sent == 0 and stats.cached == 1 and stats.cached_prompt_tokens == 4
    assert not again.is_cached(ask("other")) and again.is_cached(ask("hello"))


def test_identical_requests_in_one_batch_are_sent_once(server):
    client = client_for(server, max_concurrency=4)
    answers = client.complete_many([ask("same")] * 5)
    assert len(server.requests) == 1 and all(isinstance(a, Completion) for a in answers)
    assert client.stats.sent == 1 and client.stats.cached == 4


def test_batch_answers_stay_in_order_and_concurrency_is_bounded(server):
    server.always = Fault(delay=0.15)
    client = client_for(server, max_concurrency=3)
    texts = [f"q{i}" for i in range(12)]
    answers = client.complete_many([ask(t) for t in texts])
    assert [json.loads(a.text)["said"] for a in answers] == texts
    assert 2 <= server.max_in_flight <= 3


def test_429_then_success_counts_retries_and_backs_off(server, tmp_path):
    sleeps: list[float] = []
    server.add_faults(Fault(status=429), Fault(status=429))
    client = client_for(server, tmp_path, sleeps=sleeps, backoff_s=0.5, max_retries=3)
    answer = client.complete(ask("busy"))
    assert isinstance(answer, Completion)
    assert len(server.requests) == 3
    assert client.stats.sent == 1 and client.stats.retries == 2 and client.stats.failed == 0
    assert 0.4 <= sleeps[0] <= 0.6 and 0.8 <= sleeps[1] <= 1.2  # backoff_s * 2^attempt, ±20%


def test_retry_after_header_is_obeyed(server):
    sleeps: list[float] = []
    server.add_faults(Fault(status=429, retry_after=7))
    client = client_for(server, sleeps=sleeps)
    assert isinstance(client.complete(ask("x")), Completion)
    assert sleeps == [7.0]


def test_500_after_every_retry_is_a_counted_failure_not_cached(server, tmp_path):
    server.always = Fault(status=500)
    client = client_for(server, tmp_path, max_retries=2)
    answer = client.complete(ask("x"))
    assert isinstance(answer, RequestFailed) and "HTTP 500" in answer.reason
    assert "after 2 retries" in answer.reason
    assert len(server.requests) == 3
    assert client.stats.failed == 1 and client.stats.retries == 2
    server.always = None
    assert isinstance(client.complete(ask("x")), Completion)  # asked again, not a cached failure


def test_a_slow_answer_beyond_the_timeout_is_retried(server):
    server.add_faults(Fault(delay=1.5))
    client = client_for(server, timeout_s=0.3)
    answer = client.complete(ask("slow"))
    assert isinstance(answer, Completion) and client.stats.retries == 1


def test_always_too_slow_fails_with_the_timeout_as_reason(server):
    server.always = Fault(delay=1.0)
    client = client_for(server, timeout_s=0.2, max_retries=1)
    answer = client.complete(ask("slow"))
    assert isinstance(answer, RequestFailed) and "timed out after 0.2 s" in answer.reason


def _completion(**changes) -> str:
    body = {
        "id": "x",
        "object": "chat.completion",
        "created": 0,
        "model": "stand-in",
        "choices": [
            {"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": "{}"}}
        ],
    }
    choice = {**body["choices"][0], **changes.pop("choice", {})}
    return json.dumps({**body, "choices": [choice], **changes})


#: HTTP 200 answers that hold no answer, and the words the failure names them with.
NOT_COMPLETIONS = {
    "html page": (
        Fault(body="<html><body>502 Bad Gateway</body></html>", content_type="text/html"),
        "an HTML page",
    ),
    "html sent as json": (Fault(body="<!DOCTYPE html><html>oops</html>"), "an HTML page"),
    "empty body": (Fault(body=""), "an empty body"),
    "empty object": (Fault(body="{}"), "an empty JSON object"),
    "json list": (Fault(body='[{"choices": []}]'), "a JSON list"),
    "no choices": (Fault(body=_completion(choices=[])), "no choices"),
    "null content": (
        Fault(
            body=_completion(
                choice={
                    "message": {"role": "assistant", "content": None},
                    "finish_reason": "content_filter",
                }
            )
        ),
        "no message content, finish_reason content_filter",
    ),
    "empty content": (Fault(content=""), "an empty message"),
    "streamed": (
        Fault(body=SSE_BODY, content_type="text/event-stream"),
        "a stream of server-sent events, which was not asked for",
    ),
}


@pytest.mark.parametrize("name", NOT_COMPLETIONS)
def test_an_answer_that_is_not_a_completion_is_a_failure_and_a_rerun_asks_again(
    server, tmp_path, name
):
    fault, words = NOT_COMPLETIONS[name]
    server.add_faults(fault)
    client = client_for(server, tmp_path, max_retries=0)
    answer = client.complete(ask("x"))
    assert isinstance(answer, RequestFailed)
    assert (
        answer.reason == f"the server's answer is not a chat completion ({words}) (after 0 retries)"
    )
    assert client.stats.failed == 1 and client.stats.sent == 1
    assert ResponseCache(tmp_path / "cache").entries() == 0
    # The server is healthy again: the next run asks again and caches the answer.
    rerun = client_for(server, tmp_path, max_retries=0)
    answer = rerun.complete(ask("x"))
    assert isinstance(answer, Completion) and json.loads(answer.text) == {"said": "x"}
    assert rerun.stats.sent == 1 and len(server.requests) == 2
    assert ResponseCache(tmp_path / "cache").entries() == 1


@pytest.mark.parametrize("name", ["html page", "null content", "streamed"])
def test_an_answer_that_is_not_a_completion_is_retried_within_the_run(server, name):
    server.add_faults(NOT_COMPLETIONS[name][0])
    client = client_for(server, max_retries=2)
    assert isinstance(client.complete(ask("x")), Completion)
    assert client.stats.retries == 1 and client.stats.failed == 0 and client.stats.sent == 1


def test_an_empty_answer_cached_by_an_earlier_version_is_asked_again(server, tmp_path):
    client = client_for(server, tmp_path)
    key = request_key(client.request(ask("x")))
    path = ResponseCache(tmp_path / "cache").path(key)
    path.parent.mkdir(parents=True)
    path.write_text(json.dumps({"format": 1, "key": key, "request": {}, "text": "", "usage": {}}))
    assert not client.is_cached(ask("x"))
    assert isinstance(client.complete(ask("x")), Completion) and client.stats.sent == 1
    assert json.loads(json.loads(path.read_text())["text"]) == {"said": "x"}


def test_missing_usage_is_counted(server):
    body = {
        "id": "x",
        "object": "chat.completion",
        "created": 0,
        "model": "stand-in",
        "choices": [
            {"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": "{}"}}
        ],
    }
    server.add_faults(Fault(body=json.dumps(body)))
    client = client_for(server)
    answer = client.complete(ask("x"))
    assert (
        answer.text == "{}" and client.stats.usage_missing == 1 and client.stats.prompt_tokens == 0
    )


def test_rejected_key_is_one_line_without_the_key(tmp_path):
    wrong = "sk-wrong-key-ABCDEFGH12345"
    with StandInLLM(api_key=KEY, responders={"echo": lambda r: "{}"}) as server:
        client = client_for(server, key=wrong, api_key_env="MY_LLM_KEY")
        with pytest.raises(LLMError) as e:
            client.complete(ask("x"))
        # The stand-in echoes the wrong key in its error body, as OpenAI does.
        assert "ABCDEFGH" not in str(e.value) and "\n" not in str(e.value)
        assert "rejected the API key in $MY_LLM_KEY (HTTP 401)" in str(e.value)
        ok = client_for(server, tmp_path, key=KEY).complete(ask("x"))
        assert isinstance(ok, Completion)
        assert server.requests[-1].authorization == f"Bearer {KEY}"
    for path in (tmp_path / "cache").rglob("*"):
        if path.is_file():
            assert KEY not in path.read_text()


def test_an_endpoint_that_wants_a_key_when_none_is_set():
    with StandInLLM(api_key=KEY) as server:
        client = client_for(server, key=None, api_key_env="MY_LLM_KEY")
        with pytest.raises(
            LLMError, match=r"requires an API key \(HTTP 401\) and \$MY_LLM_KEY is not set"
        ):
            client.complete(ask("x"))
        assert server.requests[0].authorization == "Bearer not-needed"


def test_unknown_model_is_one_line_naming_it(server):
    client = client_for(server, model="gpt-7-imaginary")
    with pytest.raises(LLMError) as e:
        client.complete(ask("x"))
    msg = str(e.value)
    assert "HTTP 404" in msg and "'gpt-7-imaginary'" in msg and "\n" not in msg


def test_a_refused_request_is_one_line(server):
    client = client_for(server)
    with pytest.raises(LLMError, match=r"refused the request \(HTTP 400\)"):
        client.complete([{"role": "user", "content": "no task line"}])


def test_an_unreachable_endpoint_is_one_line():
    with socket.socket() as s:  # a port nothing listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    config = LLMConfig(
        base_url=f"http://127.0.0.1:{port}/v1", model="m", max_retries=1, backoff_s=0.01
    )
    client = LLMClient(config, None, None, show_progress=False)
    with pytest.raises(LLMError) as e:
        client.complete(ask("x"))
    assert "cannot reach the LLM endpoint" in str(e.value) and "\n" not in str(e.value)


def test_a_fatal_error_stops_a_batch(server):
    client = client_for(server, model="missing")
    with pytest.raises(LLMError):
        client.complete_many([ask(f"q{i}") for i in range(6)])


def test_dry_run_sends_nothing_and_counts_what_it_would_send(server, tmp_path):
    client_for(server, tmp_path).complete(ask("known"))
    dry = LLMClient(
        LLMConfig(base_url=server.url, model="stand-in"),
        None,
        ResponseCache(tmp_path / "cache"),
        dry_run=True,
        show_progress=False,
        count_tokens=lambda text: len(text.split()),
    )
    answers = dry.complete_many([ask("known"), ask("new one"), ask("another new one")])
    assert isinstance(answers[0], Completion) and answers[1] is PENDING and answers[2] is PENDING
    assert len(server.requests) == 1  # only the first, non-dry client's
    stats = dry.stats
    assert stats.would_send == 2 and stats.cached == 1 and stats.sent == 0
    # Words per message (the counter given) plus 4 per message: 7 + 6, then 7 + 7.
    assert stats.would_send_prompt_tokens == (3 + 4) + (2 + 4) + (3 + 4) + (3 + 4)


# --------------------------------------------------------------------------- secrets


ECHO = "you sent Authorization: {authorization}"


def files_text(root) -> str:
    return "".join(p.read_text() for p in root.rglob("*") if p.is_file())


@pytest.mark.parametrize("key", [KEY, "Ab3xY9q", "k1"])
def test_a_key_quoted_back_in_an_answer_is_masked_before_it_is_cached(tmp_path, key):
    with StandInLLM(api_key=key, responders={"echo": lambda r: "{}"}) as server:
        server.add_faults(Fault(echo=ECHO))
        client = client_for(server, tmp_path, key=key)
        answer = client.complete(ask("x"))
        assert server.requests[0].authorization == f"Bearer {key}"
        assert answer.text == "you sent Authorization: Bearer ***"
        again = client_for(server, tmp_path, key=key).complete(ask("x"))
        assert again.cached and again.text == answer.text
    assert key not in files_text(tmp_path / "cache")


def test_a_short_key_is_masked_in_an_answer_where_it_is_quoted_as_a_credential(server):
    # A placeholder key ("x", "4", "ollama") is also a word of ordinary answers: masked
    # only where the server quotes it as a credential, so {"score": 4} stays valid JSON.
    server.add_faults(
        Fault(echo="next x, then {authorization}; x-ray"),
        Fault(content='{"score": 4, "reason": "4 of 5"}'),
    )
    client = client_for(server, key="x")
    assert client.complete(ask("x")).text == "next x, then Bearer ***; x-ray"
    four = client_for(server, key="4").complete(ask("y"))
    assert four.text == '{"score": 4, "reason": "4 of 5"}'


def test_a_key_cached_by_an_earlier_version_is_masked_when_read(server, tmp_path):
    client = client_for(server, tmp_path, key=KEY)
    key = request_key(client.request(ask("x")))
    ResponseCache(tmp_path / "cache").put(key, {}, f"Bearer {KEY}", Usage())
    dry = LLMClient(
        client.config, KEY, ResponseCache(tmp_path / "cache"), dry_run=True, show_progress=False
    )
    assert dry.complete(ask("x")).text == "Bearer ***"
    assert KEY in files_text(tmp_path / "cache")  # a dry run writes nothing
    answer = client.complete(ask("x"))
    assert answer.cached and answer.text == "Bearer ***" and not server.requests
    assert KEY not in files_text(tmp_path / "cache")


@pytest.mark.parametrize("key", [KEY, "Ab3xY9q"])
@pytest.mark.parametrize("at", [0, 275, 290])
def test_a_key_quoted_in_an_error_is_masked_before_the_message_is_cut(server, key, at):
    # A refused request repeats the server's message, cut to 300 characters.
    server.add_faults(Fault(status=400, echo="x" * at + " {authorization} and more words"))
    with pytest.raises(LLMError) as e:
        client_for(server, key=key).complete(ask("x"))
    message = str(e.value)
    assert "refused the request (HTTP 400)" in message
    assert key[:4] not in message, message


def test_a_password_in_the_url_is_used_but_never_shown(server, tmp_path, caplog):
    caplog.set_level(logging.DEBUG)
    for name in ("httpx", "httpx2"):  # a sweep's log config quiets them
        caplog.set_level(logging.DEBUG, logger=name)
    password = "pa:ss/w@rd-12345"
    url = server.url.replace("http://", f"http://me:{quote(password, safe='')}@")
    config = LLMConfig(base_url=url, model="stand-in", max_retries=0)
    assert config.endpoint == server.url and password not in json.dumps(config.describe())
    server.add_faults(Fault(echo="{authorization} " + password))
    client = LLMClient(config, None, ResponseCache(tmp_path / "cache"), show_progress=False)
    answer = client.complete(ask("x"))
    token = base64.b64encode(f"me:{password}".encode()).decode()
    assert server.requests[0].authorization == f"Basic {token}"  # the URL's credentials, used
    assert answer.text == "Basic *** ***"
    wrong = LLMClient(
        LLMConfig(base_url=url, model="gpt-7", max_retries=0), None, None, show_progress=False
    )
    with pytest.raises(LLMError) as e:
        wrong.complete(ask("x"))
    shown = str(e.value) + caplog.text + files_text(tmp_path / "cache")
    assert server.url in str(e.value) and "HTTP Request: POST" in caplog.text
    assert "pa" + ":ss" not in shown and quote(password, safe="") not in shown
    assert token not in shown and "me:" not in shown


def test_the_rejected_key_message_never_names_a_pasted_key(tmp_path):
    pasted = "gsk_live_0123456789abcdef"
    with StandInLLM(api_key=KEY, responders={"echo": lambda r: "{}"}) as server:
        for key in (None, "wrong-key-0123456789"):
            client = client_for(server, key=key, api_key_env=pasted)
            with pytest.raises(LLMError) as e:
                client.complete(ask("x"))
            assert "gsk_" not in str(e.value)
            assert "the variable named by llm.api_key_env" in str(e.value)


def test_a_connection_closed_without_an_answer_is_retried(server, tmp_path):
    server.add_faults(Fault(drop=True))
    client = client_for(server, tmp_path, max_retries=1)
    assert isinstance(client.complete(ask("x")), Completion)
    assert client.stats.retries == 1 and len(server.requests) == 2
    server.always = Fault(drop=True)
    with pytest.raises(LLMError, match="cannot reach the LLM endpoint .*disconnected"):
        client_for(server, max_retries=1).complete(ask("y"))


ISSUE_KEY = "sk-proj-AAAA1111\nBBBB2222CCCC"


@pytest.mark.parametrize(
    "key,what",
    [
        (ISSUE_KEY, "a line break at character 17 of 29"),
        ("sk-proj-AAAA1111\tBBBB2222", "a tab"),
        ("sk-proj-AAAA1111\x00BBBB2222", "a control character"),
        ("sk-proj-AAAA1111\x7fBBBB2222", "a control character"),
        ("sk-proj-AAAA1111éBBBB2222", "a character beyond ASCII"),
        ("sk-proj-AAAA1111\u2028BBBB", "a line break"),
    ],
)
def test_a_key_no_http_header_can_carry_is_refused_before_any_request(server, tmp_path, key, what):
    config = LLMConfig(base_url=server.url, model="stand-in", api_key_env="MY_LLM_KEY")
    with pytest.raises(LLMConfigError) as e:
        resolve_api_key(config, {"MY_LLM_KEY": f"  {key}\n"})
    message = str(e.value)
    assert message.startswith(f"the API key in environment variable MY_LLM_KEY has {what}")
    assert "AAAA" not in message and "BBBB" not in message and "\n" not in message
    with pytest.raises(LLMConfigError, match="the API key in LLMClient's api_key argument has"):
        client_for(server, tmp_path, key=key)
    assert server.requests == [] and not (tmp_path / "cache").exists()


def test_the_issue_key_in_the_environment_stops_the_client_at_open(server, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", ISSUE_KEY)
    with pytest.raises(
        LLMConfigError,
        match="environment variable OPENAI_API_KEY has a line break at character 17 of 29",
    ):
        LLMClient.open(LLMConfig(base_url=server.url, model="stand-in", cache_dir="off"))
    assert server.requests == []


#: What each form of the key looks like, for the assertion that none is left anywhere.
SERVER_FORMS = [
    "key_base64",
    "key_base64_url",
    "basic_base64",
    "key_hex",
    "key_upper",
    "key_lower",
    "key_split",
    "key_prefix",
    "key_repr",
    "key_json",
    "key_percent",
]


@pytest.mark.parametrize("form", SERVER_FORMS)
def test_a_key_a_server_echoes_in_any_form_is_masked_in_answers_errors_and_the_cache(
    tmp_path, form, caplog
):
    # Quotes, a backslash, / + = : every escaping form differs from the key as typed.
    key = 'sk-proj-Ab3x/Y9q+Z7w"2Kp5\\Lm8=Nq4Rt6Vx'
    forms = echo_forms(f"Bearer {key}")
    assert key not in [forms[name] for name in SERVER_FORMS]
    with StandInLLM(api_key=key, responders={"echo": lambda r: "{}"}) as server:
        server.add_faults(
            Fault(echo=f"you sent {{{form}}}."),
            Fault(status=400, echo="x" * 280 + f" you sent {{{form}}} and more"),
        )
        client = client_for(server, tmp_path, key=key)
        answer = client.complete(ask("x"))
        # Quotes around a repr or JSON form stay: b'***', "\"***\"".
        assert answer.text.startswith("you sent ") and "***" in answer.text
        with pytest.raises(LLMError) as e:
            client.complete(ask("y"))
        again = client_for(server, tmp_path, key=key).complete(ask("x"))
        assert again.cached and again.text == answer.text
    shown = answer.text + str(e.value) + caplog.text + files_text(tmp_path / "cache")
    assert "refused the request (HTTP 400)" in str(e.value)
    assert not [name for name in SERVER_FORMS if forms[name] in shown]
    for piece in ("Z7w", "Lm8", "Nq4Rt"):
        assert piece.lower() not in shown.lower(), piece


def test_a_reply_with_a_lone_surrogate_is_cached_and_read_back_the_same(server, tmp_path):
    # The stand-in sends the surrogate as the JSON escape \ud800, as a server copying
    # broken text does; json.loads turns it into a str that UTF-8 cannot hold.
    server.add_faults(Fault(content='{"said": "caf\ud800e"}'))
    first = client_for(server, tmp_path).complete(ask("x"))
    assert isinstance(first, Completion) and first.text == '{"said": "caf\ufffde"}'
    (entry,) = (tmp_path / "cache").rglob("*.json")
    assert json.loads(entry.read_bytes().decode("utf-8"))["text"] == first.text
    again = client_for(server, tmp_path).complete(ask("x"))
    assert again.cached and again.text == first.text and len(server.requests) == 1


def test_a_prompt_with_a_lone_surrogate_is_sent_and_cached(server, tmp_path):
    # Text from a PDF whose glyph maps to U+D800: sent (and keyed) as U+FFFD.
    client = client_for(server, tmp_path)
    answer = client.complete(ask("page \ud800 one"))
    assert json.loads(answer.text) == {"said": "page \ufffd one"}
    assert client_for(server, tmp_path).complete(ask("page \ud800 one")).cached
