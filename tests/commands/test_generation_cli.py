"""`python -m sweep.generate` in a subprocess against the stand-in server.

Error paths first (no embedding model needed), then the end-to-end runs.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from interrupting import INTERRUPTED, interrupt_twice
from llm_server import Fault, stand_in  # noqa: F401  (fixture)
from paths import ROOT
from sweep.store.row import Row

KEY = "sk-sweep-e2e-5c0ffee5ecre7"
WRONG_KEY = "sk-wrong-e2e-0badc0ffee42"


def generate(
    tmp_path: Path,
    server_url: str | None,
    *overrides: str,
    env: dict | None = None,
    timeout: int = 600,
) -> subprocess.CompletedProcess:
    base = {k: v for k, v in os.environ.items() if k not in ("OPENAI_API_KEY", "SWEEP_TEST_KEY")}
    base["XDG_CACHE_HOME"] = str(tmp_path / "xdg")
    cmd = [
        sys.executable,
        "-m",
        "sweep.generate",
        "dataset=tiny",
        "llm.model=stand-in",
        f"llm.cache_dir={tmp_path / 'llm'}",
        f"runtime.cache_dir={tmp_path / 'emb'}",
        "llm.api_key_env=SWEEP_TEST_KEY",
        "llm.backoff_s=0.01",
        "llm.max_retries=1",
        "generate.show_progress=false",
        "runtime.show_progress=false",
        "generate.window_tokens=60",
        f"generate.out={tmp_path / 'out'}",
    ]
    if server_url:
        cmd.append(f"llm.base_url={server_url}")
    return subprocess.run(
        cmd + list(overrides),
        cwd=ROOT,
        env={**base, **(env or {})},
        capture_output=True,
        text=True,
        timeout=timeout,
    )


def one_line_error(proc: subprocess.CompletedProcess, code: int) -> str:
    assert proc.returncode == code, proc.stderr[-2000:]
    assert "Traceback" not in proc.stderr
    errors = [line for line in proc.stderr.splitlines() if line.startswith("generate: error:")]
    assert len(errors) == 1, proc.stderr[-2000:]
    return errors[0]


def compose(tmp_path: Path, *overrides: str):
    from hydra import compose as hydra_compose
    from hydra import initialize_config_dir

    from sweep.hydrakit.config import CONF_DIR, register

    register()
    with initialize_config_dir(config_dir=str(CONF_DIR), version_base="1.3"):
        return hydra_compose(
            config_name="generate",
            overrides=[
                "dataset=tiny",
                "llm.base_url=http://127.0.0.1:9/v1",
                "llm.model=stand-in",
                f"llm.cache_dir={tmp_path / 'llm'}",
                f"generate.out={tmp_path / 'out'}",
                *overrides,
            ],
        )


def test_the_config_composes_with_every_llm_option(tmp_path):
    from hydra.utils import instantiate

    cfg = compose(tmp_path)
    assert cfg.llm.api_key_env == "OPENAI_API_KEY" and cfg.generate.window_tokens == 300
    assert instantiate(cfg.generate, _convert_="all").counts()["fact"] == 40
    local = compose(tmp_path, "llm=local", "llm.model=qwen2.5:7b")
    config = instantiate(local.llm)
    assert config.endpoint == "http://127.0.0.1:9/v1" and config.api_key_env is None


@pytest.mark.parametrize(
    "override, needle",
    [
        ("generate.n=-3", "generate.n must be an integer"),
        ("generate.window_tokens=0", "generate.window_tokens must be an integer"),
        ("+generate.kinds.trivia=0", "unknown kind 'trivia'"),
        ("generate.min_realism=9", "generate.min_realism"),
        ("llm.base_url=null", "llm.base_url is required"),
        ("llm.base_url=localhost:11434", "llm.base_url must be an http"),
        ("llm.max_concurrency=0", "llm.max_concurrency"),
        ("llm.timeout_s=-1", "llm.timeout_s"),
        ("generate.out=null", "generate.out is required"),
    ],
)
def test_bad_config_values_stop_before_any_work(tmp_path, override, needle):
    from sweep.generate.config import GenerateConfigError
    from sweep.generate.generating import run_generate
    from sweep.llm import LLMConfigError

    with pytest.raises((GenerateConfigError, LLMConfigError)) as e:
        run_generate(compose(tmp_path, override))
    assert needle in str(e.value) and "\n" not in str(e.value)


@pytest.mark.parametrize(
    "override, needle",
    [
        ("generate.n=0", "generate.n must be an integer in [1, 1000000], got 0"),
        ("generate.kinds.fact=0.5", "generate.kinds shares must sum to 1, got 1.1"),
        ("llm.model=null", "llm.model is required"),
        ("dataset.path=/no/such/dir", "/no/such/dir: no such file or directory"),
    ],
)
def test_bad_config_is_one_line_and_exit_2(tmp_path, override, needle):
    proc = generate(tmp_path, "http://127.0.0.1:9/v1", override)
    assert needle in one_line_error(proc, 2)
    assert not (tmp_path / "out").exists()


def test_missing_key_for_a_remote_endpoint_fails_before_any_request(tmp_path):
    proc = generate(tmp_path, "https://llm.example.invalid/v1")
    assert "SWEEP_TEST_KEY is not set" in one_line_error(proc, 1)


def test_a_foreign_output_folder_is_refused(tmp_path):
    (tmp_path / "out").mkdir()
    (tmp_path / "out" / "mine.txt").write_text("keep me")
    proc = generate(tmp_path, "http://127.0.0.1:9/v1")
    assert "not empty and holds no earlier generation" in one_line_error(proc, 2)
    assert (tmp_path / "out" / "mine.txt").read_text() == "keep me"


def test_unreachable_endpoint(tmp_path):
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    proc = generate(
        tmp_path,
        f"http://127.0.0.1:{port}/v1",
        "generate.kinds={fact: 1, adversarial: 0, multi: 0, unanswerable: 0}",
    )
    assert "cannot reach the LLM endpoint" in one_line_error(proc, 1)


FACT_ONLY = "generate.kinds={fact: 1, adversarial: 0, multi: 0, unanswerable: 0}"


def test_rejected_key_never_printed(tmp_path, stand_in):
    stand_in.api_key = KEY
    proc = generate(tmp_path, stand_in.url, FACT_ONLY, env={"SWEEP_TEST_KEY": WRONG_KEY})
    line = one_line_error(proc, 1)
    assert "rejected the API key in $SWEEP_TEST_KEY (HTTP 401)" in line
    assert WRONG_KEY not in proc.stdout + proc.stderr and "0badc0ffee" not in proc.stderr


def test_unknown_model(tmp_path, stand_in):
    proc = generate(tmp_path, stand_in.url, FACT_ONLY, "llm.model=no-such-model")
    assert "HTTP 404 for model 'no-such-model'" in one_line_error(proc, 1)


def test_dry_run_sends_and_writes_nothing(tmp_path, stand_in):
    proc = generate(tmp_path, stand_in.url, FACT_ONLY, "generate.n=5", "generate.dry_run=true")
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert "dry run, nothing sent. The first round would send 15 requests" in proc.stdout
    assert not stand_in.requests and not (tmp_path / "out").exists()


def test_dry_run_loads_no_model_and_prints_the_estimate_at_once(
    tmp_path, stand_in, monkeypatch, capsys
):
    from sweep.embedding import embedder as embedding
    from sweep.embedding import torch_backend
    from sweep.generate.generating import run_generate

    def no_model(*args, **kwargs):
        raise AssertionError("a dry run loaded or ran the embedding model")

    for name in ("embed_documents", "embed_queries", "encode_query", "load", "_ensure_model"):
        monkeypatch.setattr(embedding.SentenceTransformerEmbedder, name, no_model)
    monkeypatch.setattr(torch_backend, "_load_sentence_transformer", no_model)
    # Every kind: adversarial, multi-hop and unanswerable tasks need neighbour passages.
    cfg = compose(
        tmp_path,
        f"llm.base_url={stand_in.url}",
        "generate.n=10",
        "generate.window_tokens=60",
        "generate.dry_run=true",
        "generate.out=null",
        f"runtime.cache_dir={tmp_path / 'emb'}",
    )
    assert run_generate(cfg) == 0
    out = capsys.readouterr().out
    assert (
        "The first round would send 30 requests (12 for fact, 9 for adversarial, 6 for "
        "multi, 3 for unanswerable)"
    ) in out
    assert "estimated: the 18 requests for adversarial, multi-hop and unanswerable" in out
    assert not stand_in.requests and not (tmp_path / "out").exists()


def test_every_request_failing_is_an_incomplete_set_and_exit_3(tmp_path, stand_in):
    stand_in.always = Fault(status=500)
    proc = generate(tmp_path, stand_in.url, FACT_ONLY, "generate.n=3", "llm.max_retries=0")
    assert proc.returncode == 3, proc.stderr[-2000:]
    assert "Traceback" not in proc.stderr
    (line,) = [ln for ln in proc.stderr.splitlines() if ln.startswith("generate: incomplete:")]
    assert "9 requests got no answer (9 HTTP 500 (after 0 retries)), so only 0 of 3" in line
    assert "Run the same command again to retry them" in line
    # The notes say why it is short: failed requests, not the candidates' limit.
    assert "fact: 0 of 3 kept (9 of 9 candidates tried got no answer" in proc.stderr
    assert "max_attempts" not in proc.stdout + proc.stderr
    out = tmp_path / "out"
    assert sorted(p.name for p in out.iterdir()) == [
        "generation_report.incomplete.json",
        "generation_report.incomplete.md",
        "queries.incomplete.jsonl",
    ]
    report = json.loads((out / "generation_report.incomplete.json").read_text())
    assert report["status"] == "incomplete" and report["requests"]["failed"] == 9
    assert "**Incomplete**: 9 requests got no answer" in proc.stdout


def test_a_second_ctrl_c_prints_no_threading_traceback(tmp_path, stand_in):
    stand_in.always = Fault(delay=8)  # requests in flight when Python waits for its threads
    base = {k: v for k, v in os.environ.items() if k != "OPENAI_API_KEY"}
    cmd = [
        sys.executable,
        "-m",
        "sweep.generate",
        "dataset=tiny",
        "llm.model=stand-in",
        f"llm.base_url={stand_in.url}",
        f"llm.cache_dir={tmp_path / 'llm'}",
        f"runtime.cache_dir={tmp_path / 'emb'}",
        "llm.api_key_env=null",
        "llm.max_concurrency=2",
        "generate.show_progress=false",
        "generate.window_tokens=60",
        "generate.n=4",
        FACT_ONLY,
        f"generate.out={tmp_path / 'out'}",
    ]
    text = interrupt_twice(cmd, stand_in, ROOT, base)
    assert "interrupted again" in text, text[-2000:]
    assert "Traceback" not in text and "Exception ignored" not in text, text[-2000:]


# --------------------------------------------------------------------------- end to end


def all_text(*roots: Path) -> str:
    chunks = []
    for root in roots:
        for path in root.rglob("*"):
            if path.is_file():
                chunks.append(path.read_bytes().decode("utf-8", "replace"))
    return "\n".join(chunks)


@pytest.mark.e2e
def test_generate_validate_sweep_and_rerun_for_free(tmp_path, stand_in):
    stand_in.api_key = KEY
    env = {"SWEEP_TEST_KEY": KEY}
    proc = generate(tmp_path, stand_in.url, "generate.n=10", env=env)
    assert proc.returncode == 0, proc.stderr[-3000:]
    out = tmp_path / "out"
    assert sorted(p.name for p in out.iterdir()) == [
        "corpus.jsonl",
        "generation_report.json",
        "generation_report.md",
        "queries.jsonl",
    ]
    report = json.loads((out / "generation_report.json").read_text())
    assert report["kept_total"] == 10 and report["requests"]["sent"] == len(stand_in.requests)
    assert "# Generation report" in proc.stdout and "round 1:" in proc.stderr
    # Documents exactly as read, so every offset stays valid.
    tiny = {p.name: p.read_text(encoding="utf-8") for p in (ROOT / "corpora/tiny/docs").iterdir()}
    rows = [json.loads(line) for line in (out / "corpus.jsonl").read_text().splitlines()]
    assert {r["doc_id"]: r["text"] for r in rows} == tiny
    for line in (out / "queries.jsonl").read_text().splitlines():
        q = json.loads(line)
        assert q["metadata"]["source"] == "synthetic" and q["type"]
        assert all("quote" in j for j in q["relevant"])

    valid = subprocess.run(
        [sys.executable, "-m", "sweep.validate", str(out)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert valid.returncode == 0 and "valid" in valid.stdout, valid.stderr

    sweep = subprocess.run(
        [
            sys.executable,
            "-m",
            "sweep",
            f"dataset.path={out}",
            "chunk.size=64",
            f"runtime.cache_dir={tmp_path / 'emb'}",
            f"hydra.sweep.dir={tmp_path / 'sweep'}",
            "runtime.show_progress=false",
            "eval.n_boot=200",
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert sweep.returncode == 0, sweep.stderr[-3000:]
    row = Row.from_json((tmp_path / "sweep" / "0" / "row.json").read_text())
    assert row.status == "ok" and row.summary.levels["span"].n_queries >= 8

    sent = len(stand_in.requests)
    again = generate(tmp_path, stand_in.url, "generate.n=10", env=env)
    assert again.returncode == 0, again.stderr[-3000:]
    assert len(stand_in.requests) == sent
    assert json.loads((out / "generation_report.json").read_text())["requests"]["sent"] == 0

    # The key is in no file written and no line printed.
    printed = proc.stdout + proc.stderr + again.stdout + again.stderr + sweep.stdout + sweep.stderr
    assert KEY not in printed
    assert KEY not in all_text(out, tmp_path / "llm", tmp_path / "sweep")
    assert all(r.authorization == f"Bearer {KEY}" for r in stand_in.requests)


@pytest.mark.e2e
def test_an_interrupted_run_resumes_without_asking_again(tmp_path, stand_in):
    stand_in.always = Fault(delay=0.5)
    cmd = [
        sys.executable,
        "-m",
        "sweep.generate",
        "dataset=tiny",
        "llm.model=stand-in",
        f"llm.base_url={stand_in.url}",
        f"llm.cache_dir={tmp_path / 'llm'}",
        f"runtime.cache_dir={tmp_path / 'emb'}",
        "llm.api_key_env=null",
        "llm.max_concurrency=1",
        "generate.show_progress=false",
        "runtime.show_progress=false",
        "generate.window_tokens=60",
        "generate.n=8",
        FACT_ONLY,
        f"generate.out={tmp_path / 'out'}",
    ]
    proc = subprocess.Popen(
        cmd, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    entries = tmp_path / "llm" / "v1"
    deadline = time.time() + 120
    while (
        time.time() < deadline and proc.poll() is None and len(list(entries.glob("*/*.json"))) < 3
    ):
        time.sleep(0.05)
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode in INTERRUPTED, err[-2000:]
    assert "interrupted" in err and "run the same command again" in err and "Traceback" not in err
    assert not (tmp_path / "out").exists()
    cached = {
        json.dumps(json.loads(p.read_text())["request"], sort_keys=True)
        for p in entries.glob("*/*.json")
    }
    assert 3 <= len(cached) < 8 * 3

    stand_in.always = None
    stand_in.reset_log()
    resumed = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert resumed.returncode == 0, resumed.stderr[-3000:]
    asked = {r.canonical() for r in stand_in.requests}
    now_cached = {
        json.dumps(json.loads(p.read_text())["request"], sort_keys=True)
        for p in entries.glob("*/*.json")
    }
    # What the server received and what the cache stores compare equal...
    assert asked and asked <= now_cached
    # ...and nothing answered before the interruption is asked again.
    assert not asked & cached
    report = json.loads((tmp_path / "out" / "generation_report.json").read_text())
    assert report["requests"]["cached"] >= len(cached) and report["kept_total"] == 8

    stand_in.reset_log()
    third = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert third.returncode == 0 and not stand_in.requests


@pytest.mark.e2e
def test_a_set_short_of_failed_requests_is_incomplete_until_a_rerun_finishes_it(tmp_path, stand_in):
    from llm_server import GenerationResponders

    GenerationResponders(realism=lambda q: 5, answerable=True).install(stand_in)
    stand_in.add_faults(Fault(status=500), Fault(status=500))  # two of the five drafts
    args = (
        FACT_ONLY,
        "generate.n=5",
        "generate.max_attempts=1",
        "llm.max_retries=0",
        "llm.max_concurrency=1",
    )
    proc = generate(tmp_path, stand_in.url, *args)
    assert proc.returncode == 3, proc.stderr[-3000:]
    assert "2 requests got no answer (2 HTTP 500 (after 0 retries)), so only 3 of 5" in proc.stderr
    out = tmp_path / "out"
    assert not (out / "queries.jsonl").exists() and not (out / "corpus.jsonl").exists()
    assert len((out / "queries.incomplete.jsonl").read_text().splitlines()) == 3
    answered = {r.canonical() for r in stand_in.answered}

    stand_in.reset_log()
    again = generate(tmp_path, stand_in.url, *args)
    assert again.returncode == 0, again.stderr[-3000:]
    # Only what got no answer is asked again: the two drafts and the checks after them.
    asked = {r.canonical() for r in stand_in.requests}
    assert len(stand_in.requests) == 2 * 3 and not asked & answered
    assert sorted(p.name for p in out.iterdir()) == [
        "corpus.jsonl",
        "generation_report.json",
        "generation_report.md",
        "queries.jsonl",
    ]
    report = json.loads((out / "generation_report.json").read_text())
    assert report["status"] == "finished" and report["kept_total"] == 5


def test_nothing_kept_is_an_error_and_leaves_the_folder_alone(tmp_path, stand_in):
    from llm_server import GenerationResponders
    from sweep.generate.generating import run_generate
    from sweep.generate.run import GenerationError

    GenerationResponders(quote_mode="missing").install(stand_in)
    cfg = compose(
        tmp_path,
        f"llm.base_url={stand_in.url}",
        FACT_ONLY,
        "generate.n=2",
        "generate.max_attempts=1",
        "generate.show_progress=false",
        "generate.window_tokens=60",
    )
    with pytest.raises(
        GenerationError, match=r"no question was kept \(rejected: 2 quote_not_found\)"
    ):
        run_generate(cfg)
    assert not (tmp_path / "out").exists()
