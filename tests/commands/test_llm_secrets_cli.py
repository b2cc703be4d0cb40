"""`python -m sweep.generate` never prints or saves a secret: not a key pasted where a
variable name goes, not a password in llm.base_url, not one the server quotes back."""

from __future__ import annotations

import base64
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from llm_server import GenerationResponders, StandInLLM

from paths import ROOT

PASSWORD = "hunter2pw-77"


def generate(tmp_path: Path, *overrides: str) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k != "OPENAI_API_KEY"}
    cmd = [sys.executable, "-m", "sweep.generate", "dataset=tiny", "llm.model=stand-in",
           f"llm.cache_dir={tmp_path / 'llm'}", f"runtime.cache_dir={tmp_path / 'emb'}",
           "llm.backoff_s=0.01", "llm.max_retries=1", "generate.show_progress=false",
           "runtime.show_progress=false", "generate.window_tokens=60", "generate.n=3",
           "generate.kinds={fact: 1, adversarial: 0, multi: 0, unanswerable: 0}",
           f"generate.out={tmp_path / 'out'}", *overrides]
    return subprocess.run(cmd, cwd=ROOT, env={**env, "XDG_CACHE_HOME": str(tmp_path / "xdg")},
                          capture_output=True, text=True, timeout=600)


def written(*roots: Path) -> str:
    return "".join(p.read_text(encoding="utf-8", errors="replace")
                   for root in roots for p in root.rglob("*") if p.is_file())


def test_a_key_pasted_as_the_variable_name_is_not_printed(tmp_path):
    pasted = "gsk_live0123456789abcdef"
    proc = generate(tmp_path, "llm.base_url=https://llm.example.invalid/v1",
                    f"llm.api_key_env={pasted}")
    assert proc.returncode == 1 and "Traceback" not in proc.stderr
    assert "the variable named by llm.api_key_env is not set" in proc.stderr
    assert "gsk_" not in proc.stdout + proc.stderr


@pytest.mark.e2e
def test_a_password_in_the_url_reaches_no_report_log_or_question(tmp_path):
    server = GenerationResponders(realism=lambda q: 5).install(StandInLLM())
    draft = server.responders["fact-question"]
    # A server that quotes the request's Authorization header into every question.
    server.responders["fact-question"] = lambda r: draft(r).replace(
        '"question": "', f'"question": "({r.authorization}) ', 1)
    with server:
        url = server.url.replace("http://", f"http://me:{PASSWORD}@")
        proc = generate(tmp_path, f"llm.base_url='{url}'", "llm.api_key_env=null")
        assert proc.returncode == 0, proc.stderr[-3000:]
        assert all(r.authorization.startswith("Basic ") for r in server.requests)
    out = tmp_path / "out"
    report = json.loads((out / "generation_report.json").read_text())
    assert report["llm"]["base_url"] == server.url and report["endpoint"] == server.url
    questions = [json.loads(line)["query"] for line in (out / "queries.jsonl").open()]
    assert questions and all(q.startswith("(Basic ***) ") for q in questions)
    token = base64.b64encode(f"me:{PASSWORD}".encode()).decode()
    shown = proc.stdout + proc.stderr + written(out, tmp_path / "llm")
    assert PASSWORD not in shown and token not in shown
