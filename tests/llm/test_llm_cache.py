"""The answer cache: content-addressed JSON, whole entries only, safe to share."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import textwrap
import threading
import time

from sweep.llm.cache import ResponseCache, Usage, request_key

REQUEST = {
    "model": "m",
    "messages": [{"role": "user", "content": "Hi"}],
    "temperature": 0.0,
    "max_tokens": 10,
    "response_format": {"type": "json_object"},
}


def test_put_then_get_returns_text_and_usage(tmp_path):
    cache = ResponseCache(tmp_path)
    key = request_key(REQUEST)
    assert cache.get(key) is None and key not in cache
    cache.put(key, REQUEST, '{"a": 1}', Usage(12, 3))
    hit = cache.get(key)
    assert hit.text == '{"a": 1}' and hit.usage == Usage(12, 3)
    entry = json.loads(cache.path(key).read_text())
    assert entry["request"] == REQUEST and entry["key"] == key
    assert ResponseCache(tmp_path).get(key) == hit  # another process sees the same
    assert cache.entries() == 1


def test_key_depends_on_everything_that_changes_the_answer():
    base = request_key(REQUEST)
    changed = [
        {**REQUEST, "model": "other"},
        {**REQUEST, "temperature": 0.7},
        {**REQUEST, "max_tokens": 11},
        {**REQUEST, "response_format": None},
        {**REQUEST, "messages": [{"role": "user", "content": "Hi!"}]},
        {**REQUEST, "messages": [{"role": "system", "content": "Hi"}]},
    ]
    keys = {request_key(r) for r in changed}
    assert base not in keys and len(keys) == len(changed)
    # Key order in the dict does not matter: the JSON is canonical.
    assert request_key(dict(reversed(list(REQUEST.items())))) == base


def test_damaged_or_foreign_entries_are_misses(tmp_path, caplog):
    cache = ResponseCache(tmp_path)
    key = request_key(REQUEST)
    cache.put(key, REQUEST, "answer", Usage())
    path = cache.path(key)
    path.write_text(path.read_text()[:-20])  # truncated
    assert cache.get(key) is None
    path.write_text(json.dumps({"format": 1, "key": "0" * 64, "text": "x"}))  # another key's
    assert cache.get(key) is None
    assert "ignoring" in caplog.text


def test_concurrent_writers_of_the_same_and_different_keys(tmp_path):
    cache = ResponseCache(tmp_path)
    errors = []

    def writer(n: int) -> None:
        try:
            for i in range(40):
                req = {**REQUEST, "messages": [{"role": "user", "content": f"q{i % 10}"}]}
                cache.put(request_key(req), req, f"answer {i % 10}", Usage(i, n))
        except Exception as e:  # pragma: no cover - the assertion below reports it
            errors.append(e)

    threads = [threading.Thread(target=writer, args=(n,)) for n in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    assert cache.entries() == 10
    for i in range(10):
        req = {**REQUEST, "messages": [{"role": "user", "content": f"q{i}"}]}
        assert cache.get(request_key(req)).text == f"answer {i}"
    assert not list(tmp_path.rglob(".tmp-*"))


def test_a_writer_killed_mid_write_leaves_only_whole_entries(tmp_path):
    script = textwrap.dedent(f"""
        import sys
        from sweep.llm.cache import ResponseCache, Usage, request_key
        cache = ResponseCache({str(tmp_path)!r})
        big = "x" * 2_000_000
        i = 0
        while True:
            req = {{"model": "m", "messages": [{{"role": "user", "content": str(i)}}]}}
            cache.put(request_key(req), req, big, Usage(i, i))
            i += 1
            if i == 3:
                print("ready", flush=True)
    """)
    proc = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True)
    assert proc.stdout.readline().strip() == "ready"
    time.sleep(0.3)
    proc.send_signal(signal.SIGKILL)
    proc.wait(timeout=30)
    cache = ResponseCache(tmp_path)
    entries = list((tmp_path / "v1").glob("*/*.json"))
    assert len(entries) >= 3
    for path in entries:
        key = path.stem
        hit = cache.get(key)
        assert hit is not None and len(hit.text) == 2_000_000, path


def test_an_empty_answer_is_never_stored_and_an_old_one_is_a_miss(tmp_path):
    cache = ResponseCache(tmp_path)
    key = request_key(REQUEST)
    for text in ("", "  \n"):
        cache.path(key).unlink(missing_ok=True)
        cache.put(key, REQUEST, text, Usage())
        assert not cache.path(key).exists()
        # As earlier versions wrote them: a miss, so the request is sent again.
        cache.path(key).parent.mkdir(parents=True, exist_ok=True)
        cache.path(key).write_text(json.dumps({"format": 1, "key": key, "text": text}))
        assert cache.get(key) is None and key not in cache


def test_a_lone_surrogate_in_a_request_or_an_answer_is_stored_and_read_back(tmp_path):
    # UTF-8 cannot hold U+D800: it is written as the JSON escape, which reads back the same.
    cache = ResponseCache(tmp_path)
    request = {**REQUEST, "messages": [{"role": "user", "content": "page \ud800 one"}]}
    key = request_key(request)
    cache.put(key, request, "answer \udfff two", Usage(1, 2))
    raw = cache.path(key).read_bytes()
    assert b"\\ud800" in raw and b"\\udfff" in raw and raw.decode("utf-8")
    assert json.loads(raw)["request"] == request
    assert ResponseCache(tmp_path).get(key) == cache.get(key)
    assert cache.get(key).text == "answer \udfff two"
    assert not list(tmp_path.rglob(".tmp-*"))


def test_a_read_only_cache_is_read_and_said_once_never_an_error(tmp_path, caplog):
    # A shared team cache mounted read-only: its answers serve, new ones are not kept, and
    # the log says so once, not once per answer.
    from mounts import read_only

    cache = ResponseCache(tmp_path / "llm")
    kept = request_key(REQUEST)
    cache.put(kept, REQUEST, "kept", Usage(1, 1))
    with read_only(tmp_path / "llm"):
        cache = ResponseCache(tmp_path / "llm")
        for i in range(3):
            request = {**REQUEST, "seed": i}
            cache.put(request_key(request), request, f"answer {i}", Usage(1, 1))
            assert cache.get(request_key(request)) is None
        assert cache.get(kept).text == "kept"
    said = [r.getMessage() for r in caplog.records if "cannot write" in r.getMessage()]
    assert said == [
        f"LLM cache: cannot write {tmp_path / 'llm'} (Read-only file system); it is "
        "read, not written, for the rest of this run"
    ]


def test_an_entry_nested_too_deeply_is_a_miss(tmp_path):
    cache = ResponseCache(tmp_path)
    key = request_key(REQUEST)
    cache.put(key, REQUEST, "x", Usage(1, 1))
    cache.path(key).write_text("[" * 100_000 + "]" * 100_000)
    assert cache.get(key) is None
