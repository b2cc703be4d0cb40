"""`python -m sweep.generate` never prints or saves a secret: not a key pasted where a
variable name goes, not a password in llm.base_url, not one the server quotes back."""

from __future__ import annotations

import base64
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from llm_server import ContextResponders, Fault, GenerationResponders, StandInLLM, echo_forms
from paths import ROOT

PASSWORD = "hunter2pw-77"


def generate(
    tmp_path: Path, *overrides: str, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess:
    env = {**{k: v for k, v in os.environ.items() if k != "OPENAI_API_KEY"}, **(env or {})}
    cmd = [
        sys.executable,
        "-m",
        "sweep.generate",
        "dataset=tiny",
        "llm.model=stand-in",
        f"llm.cache_dir={tmp_path / 'llm'}",
        f"runtime.cache_dir={tmp_path / 'emb'}",
        "llm.backoff_s=0.01",
        "llm.max_retries=1",
        "generate.show_progress=false",
        "runtime.show_progress=false",
        "generate.window_tokens=60",
        "generate.n=3",
        "generate.kinds={fact: 1, adversarial: 0, multi: 0, unanswerable: 0}",
        f"generate.out={tmp_path / 'out'}",
        *overrides,
    ]
    return subprocess.run(
        cmd,
        cwd=ROOT,
        env={**env, "XDG_CACHE_HOME": str(tmp_path / "xdg")},
        capture_output=True,
        text=True,
        timeout=600,
    )


def written(*roots: Path) -> str:
    return "".join(
        p.read_text(encoding="utf-8", errors="replace")
        for root in roots
        for p in root.rglob("*")
        if p.is_file()
    )


def test_a_key_pasted_as_the_variable_name_is_not_printed(tmp_path):
    pasted = "gsk_live0123456789abcdef"
    proc = generate(
        tmp_path, "llm.base_url=https://llm.example.invalid/v1", f"llm.api_key_env={pasted}"
    )
    assert proc.returncode == 1 and "Traceback" not in proc.stderr
    assert "the variable named by llm.api_key_env is not set" in proc.stderr
    assert "gsk_" not in proc.stdout + proc.stderr


@pytest.mark.e2e
def test_a_password_in_the_url_reaches_no_report_log_or_question(tmp_path):
    server = GenerationResponders(realism=lambda q: 5).install(StandInLLM())
    draft = server.responders["fact-question"]
    # A server that quotes the request's Authorization header into every question.
    server.responders["fact-question"] = lambda r: draft(r).replace(
        '"question": "', f'"question": "({r.authorization}) ', 1
    )
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


# --------------------------------------------------------------------------- hostile keys

#: The trial's key: a line break inside, which no HTTP header can carry.
BROKEN_KEY = "sk-proj-AAAA1111\nBBBB2222CCCC"
#: A key a header carries, with characters that every escaping form changes.
KEY = 'sk-proj-Ab3x/Y9q+Z7w"2Kp5Lm8=Nq4Rt6Vx'


def key_forms(key: str) -> list[str]:
    """Every form of ``key`` that must not appear: as typed, the stand-in's echo forms,
    the HTTP library's header error, and the pieces of it in any letter case."""
    forms = set(echo_forms(f"Bearer {key}").values()) - {f"Bearer {key}"}
    forms |= {key, repr(key), repr(f"Bearer {key}".encode()), key.replace("\n", "")}
    return sorted(forms)


#: A picture inlined in report.html: base64 of PNG bytes, where any 4 letters turn up by
#: chance (``ab3x`` did), so the key's short pieces are not looked for in it.
_PICTURE = re.compile(r"data:image/[a-z+]+;base64,[A-Za-z0-9+/=]+")


def leaks(key: str, text: str) -> list[str]:
    pieces = [p for p in re.split(r"[^A-Za-z0-9]+", key) if len(p) >= 4 and p not in ("proj",)]
    found = [f for f in key_forms(key) if f in text]
    words = _PICTURE.sub(" ", text).lower()
    return found + [p for p in pieces if p.lower() in words]


def everything(proc: subprocess.CompletedProcess, *roots: Path) -> str:
    return proc.stdout + proc.stderr + written(*roots)


def sweep_with_contexts(
    tmp_path: Path, server: StandInLLM, key: str, name: str = "sweep"
) -> subprocess.CompletedProcess:
    """A real sweep on the tiny corpus: BM25 (no embedding model), a plain row and a
    row whose chunk contexts the stand-in writes with ``key`` in MY_LLM_KEY."""
    env = {k: v for k, v in os.environ.items() if k != "OPENAI_API_KEY"}
    cmd = [
        sys.executable,
        "-m",
        "sweep",
        "dataset=tiny",
        "retrieve=bm25",
        "chunk.size=48",
        "context.mode=none,llm",
        f"llm.base_url={server.url}",
        "llm.model=stand-in",
        "llm.api_key_env=MY_LLM_KEY",
        f"llm.cache_dir={tmp_path / 'llm'}",
        "llm.max_retries=0",
        f"runtime.cache_dir={tmp_path / 'emb'}",
        "runtime.show_progress=false",
        "eval.n_boot=200",
        f"hydra.sweep.dir={tmp_path / name}",
    ]
    return subprocess.run(
        cmd,
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=600,
        env={**env, "MY_LLM_KEY": key, "XDG_CACHE_HOME": str(tmp_path / "xdg")},
    )


def answers(
    tmp_path: Path, server: StandInLLM, key: str, folder: Path
) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k != "OPENAI_API_KEY"}
    cmd = [
        sys.executable,
        "-m",
        "sweep.answers",
        str(folder),
        f"llm.base_url={server.url}",
        "llm.model=stand-in",
        "llm.api_key_env=MY_LLM_KEY",
        f"llm.cache_dir={tmp_path / 'llm'}",
        "llm.max_retries=0",
        "answers.show_progress=false",
        "settings=[0]",
    ]
    return subprocess.run(
        cmd,
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=600,
        env={**env, "MY_LLM_KEY": key, "XDG_CACHE_HOME": str(tmp_path / "xdg")},
    )


def test_a_key_with_a_line_break_stops_generate_in_one_line_before_any_request(tmp_path):
    with GenerationResponders().install(StandInLLM()) as server:
        proc = generate(
            tmp_path,
            f"llm.base_url={server.url}",
            "llm.api_key_env=MY_LLM_KEY",
            env={"MY_LLM_KEY": BROKEN_KEY},
        )
        assert server.requests == []
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
    (line,) = proc.stderr.strip().splitlines()[-1:]
    assert line == (
        "generate: error: the API key in environment variable MY_LLM_KEY has a "
        "line break at character 17 of 29, which an HTTP header cannot carry (the "
        "key is not shown): set it again as one line of printable ASCII"
    )
    assert not leaks(BROKEN_KEY, everything(proc, tmp_path))


def test_a_key_a_server_quotes_in_base64_reaches_no_row_table_report_log_or_trace(tmp_path):
    # Every context request is refused with HTTP 400, the key quoted back in base64, hex,
    # upper case, split over lines and as a Basic token: the setting fails, and its error
    # goes to row.json, error.txt, the job's log, results.csv/.md, report.html and stderr.
    echo = (
        "bad request for {key_base64} ({basic_base64}, {key_hex}) from {key_upper} "
        "{key_split} {key_repr}"
    )
    with StandInLLM(api_key=KEY) as server:
        ContextResponders().install(server)
        server.always = Fault(status=400, echo=echo)
        proc = sweep_with_contexts(tmp_path, server, KEY)
        assert proc.returncode == 0, proc.stderr[-3000:]
        assert server.requests and all(r.authorization == f"Bearer {KEY}" for r in server.requests)
        folder = tmp_path / "sweep"
        row = json.loads((folder / "1" / "row.json").read_text())
        assert row["status"] == "failed" and "refused the request (HTTP 400)" in row["error"]
        assert "bad request for ***" in row["error"]
        # results.md escapes Markdown in errors, so the mask shows there as written: \*\*\*.
        shown = {"results.md": r"bad request for \*\*\*"}
        for name in ("results.csv", "results.md", "report.html", "1/error.txt"):
            assert shown.get(name, "bad request for ***") in (folder / name).read_text(), name
        assert not leaks(KEY, everything(proc, tmp_path))
        # sweep.answers on that folder, the same server: one line, masked, exit 1.
        answered = answers(tmp_path, server, KEY, folder)
        assert answered.returncode == 1 and "Traceback" not in answered.stderr
        assert "answers: error: the LLM endpoint" in answered.stderr
        assert "bad request for ***" in answered.stderr
        assert not leaks(KEY, everything(answered, tmp_path))
        # And with the trial's key: refused before any request, nothing else changes.
        server.requests.clear()
        broken = answers(tmp_path, server, BROKEN_KEY, folder)
        assert broken.returncode == 2 and server.requests == []
        assert (
            broken.stderr.strip()
            .splitlines()[-1]
            .startswith(
                "answers: error: the API key in environment variable MY_LLM_KEY has a line break"
            )
        )
        refused = sweep_with_contexts(tmp_path, server, BROKEN_KEY, name="again")
        assert refused.returncode == 2 and server.requests == []
        assert "MY_LLM_KEY has a line break" in refused.stderr.strip().splitlines()[-1]
        assert not leaks(BROKEN_KEY, everything(broken, tmp_path) + refused.stdout + refused.stderr)


def test_a_key_another_library_quotes_in_its_error_reaches_no_row_log_or_traceback(tmp_path):
    # Not the LLM client's error: a splitter's (any library's) that quotes the key named by
    # llm.api_key_env. The job fails, and error.txt, the row, the tables, the log and the
    # terminal show the key masked: every form of a long key, and a short one where it is
    # quoted as a credential.
    for n, key in enumerate(("sk-proj-TESTKEY0123456789abcd", "ollama")):
        env = {
            **os.environ,
            "SWEEP_TEST_KEY": key,
            "PYTHONPATH": os.pathsep.join([str(ROOT / "tests"), os.environ.get("PYTHONPATH", "")]),
        }
        out = tmp_path / f"sweep{n}"
        proc = subprocess.run(
            [
                sys.executable,
                "-m",
                "sweep",
                "dataset=tiny",
                "retrieve=bm25",
                "chunk=callable",
                "chunk.splitter._target_=splitters.quoting_a_key",
                "llm.api_key_env=SWEEP_TEST_KEY",
                f"runtime.cache_dir={tmp_path / 'cache'}",
                "runtime.show_progress=false",
                f"hydra.sweep.dir={out}",
            ],
            cwd=tmp_path,
            env=env,
            capture_output=True,
            text=True,
            timeout=600,
        )
        assert proc.returncode == 1 and "Traceback" not in proc.stderr, proc.stderr[-3000:]
        files = written(out)
        assert "upstream said 401 for Authorization: Bearer ***" in files
        assert key not in files + proc.stdout + proc.stderr


@pytest.mark.parametrize(
    "override, says",
    [
        (
            "llm.base_url=https://me:sk-PASSWORD1234abcd@llm.example.invalid/v1",
            "llm.base_url holds a password (not shown)",
        ),
        ("llm.api_key_env=sk-proj-PASTEDKEY123456", "llm.api_key_env is not the name of an"),
        ("llm.api_key_env=gsk_PASTEDKEY123456", "llm.api_key_env is not the name of an"),
    ],
)
def test_a_sweep_whose_llm_node_holds_a_secret_stops_before_saving_it(tmp_path, override, says):
    # Every job saves the llm node, used or not (results.csv, row.json, the job's log, its
    # resolved config, Hydra's own files): a secret in it stops the sweep first.
    secret = "PASSWORD1234" if "PASSWORD" in override else "PASTEDKEY123456"
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "sweep",
            "dataset=tiny",
            "retrieve=bm25",
            override,
            f"runtime.cache_dir={tmp_path / 'cache'}",
            "runtime.show_progress=false",
            f"hydra.sweep.dir={tmp_path / 'out'}",
        ],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=300,
    )
    errors = [line for line in proc.stderr.splitlines() if "error" in line]
    assert proc.returncode == 2 and len(errors) == 1 and says in errors[0], proc.stderr
    assert secret not in proc.stdout + proc.stderr
    assert not (tmp_path / "out").exists() and secret not in written(tmp_path)
