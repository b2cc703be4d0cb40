"""A sweep folder is untrusted input: ``sweep.export`` run on a tampered one runs none of its
code, resolves none of its interpolations, expands none of its aliases and writes no line of
data outside a comment. One real sweep (BM25 on the tiny corpus with LangChain's splitter:
no embedding model) is made once, then copied and tampered with the way the reliability
trial did; each refusal is one line on stderr with exit 2, and the marker file each payload
would create never appears."""

from __future__ import annotations

import ast
import contextlib
import os
import shutil
import socket
import subprocess
import sys
import threading
from pathlib import Path

import pytest
import yaml

from paths import ROOT

SECRET = "sk-test-0123456789abcdef"


def _env() -> dict:
    return {
        **{k: v for k, v in os.environ.items() if k != "GITHUB_STEP_SUMMARY"},
        "SWEEP_TEST_KEY": SECRET,
        "HF_HUB_OFFLINE": "1",
    }


def _run(*args: str, cwd: Path = ROOT) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", *map(str, args)],
        cwd=cwd,
        env=_env(),
        capture_output=True,
        text=True,
        timeout=600,
    )


@pytest.fixture(scope="module")
def swept(tmp_path_factory) -> Path:
    """A real sweep whose splitter has a separator the user escaped: the literal string
    ``${oc.env:SWEEP_TEST_KEY}``, which must never become the key."""
    base = tmp_path_factory.mktemp("hostile")
    proc = _run(
        "sweep",
        "dataset=tiny",
        "retrieve=bm25",
        f"runtime.cache_dir={base / 'cache'}",
        "runtime.show_progress=false",
        "eval.n_boot=50",
        "eval.latency_queries=0",
        "chunk=langchain",
        "chunk.size=400",
        '+chunk.splitter.separators=["\\${oc.env:SWEEP_TEST_KEY}","."," "]',
        f"hydra.sweep.dir={base / 'sweep'}",
        cwd=base,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    return base / "sweep"


def _copy(swept: Path, tmp_path: Path, name: str = "copy") -> Path:
    folder = tmp_path / name
    shutil.copytree(swept, folder)
    return folder


def _tamper(folder: Path, change) -> Path:
    """Rewrite job 0's resolved_config.yaml with ``change(config)`` applied."""
    path = folder / "0" / "resolved_config.yaml"
    config = yaml.safe_load(path.read_text())
    change(config)
    path.write_text(yaml.safe_dump(config, sort_keys=False))
    return path


def _refused(proc: subprocess.CompletedProcess, *says: str) -> str:
    err = proc.stderr.strip()
    assert proc.returncode == 2, proc.stderr
    assert len(err.splitlines()) == 1 and "Traceback" not in err, err
    for part in says:
        assert part in err, err
    return err


# -- item 2b: a literal the user escaped stays literal, from the sweep to the rerun ---------


def test_an_escaped_interpolation_never_becomes_the_key(swept, tmp_path):
    saved = swept / "0" / "resolved_config.yaml"
    assert SECRET not in saved.read_text()
    module = tmp_path / "splitter.py"
    proc = _run("sweep.export", swept, "--job", "0", "--to", "langchain", module)
    assert proc.returncode == 0, proc.stderr
    text = module.read_text()
    assert SECRET not in text and "identical chunks on 3 of 3 documents" in text
    call = ast.parse(text).body[-1].value
    separators = next(k.value for k in call.keywords if k.arg == "separators")
    assert ast.literal_eval(separators) == ["${oc.env:SWEEP_TEST_KEY}", ".", " "]
    chosen = tmp_path / "chosen.yaml"
    proc = _run("sweep.export", swept, "--job", "0", "--to", "hydra", chosen)
    assert proc.returncode == 0, proc.stderr
    assert SECRET not in chosen.read_text()
    rerun = _run(
        "sweep", "--config-dir", tmp_path, "--config-name", "chosen", "--cfg", "job", "--resolve"
    )
    assert rerun.returncode == 0, rerun.stderr
    assert SECRET not in rerun.stdout and "- ${oc.env:SWEEP_TEST_KEY}" in rerun.stdout


# -- item 1: export never runs code a sweep folder names ------------------------------------


def _splitter_runs(marker: Path):
    def change(config):
        config["chunk"]["splitter"] = {"_target_": "os.system", "_args_": [f"touch {marker}"]}

    return change


def _key_is_code(marker: Path):
    def change(config):
        key = (
            f"x=1) if __import__('os').system('touch {marker}') else "
            "RecursiveCharacterTextSplitter(y"
        )
        config["chunk"]["splitter"][key] = 1

    return change


def _dataset_runs(marker: Path):
    def change(config):
        config["dataset"] = {"_target_": "os.system", "_args_": [f"touch {marker}"]}

    return change


def _dataset_path_runs(marker: Path):
    def change(config):
        config["dataset"]["path"] = {"_target_": "os.system", "_args_": [f"touch {marker}"]}

    return change


def _embedder_runs(marker: Path):
    def change(config):  # sweep's own semantic strategy, its embedder the payload
        config["chunk"] = {
            "_target_": "sweep.chunking.build_chunker",
            "strategy": "semantic",
            "size": 400,
            "overlap": 0,
            "tokenizer": "cl100k_base",
            "prefix": "none",
        }
        config["embed"] = {"_target_": "os.system", "_args_": [f"touch {marker}"]}

    return change


@pytest.mark.parametrize(
    "tamper,kind,says",
    [
        (_splitter_runs, "langchain", "chunk.splitter._target_ is 'os.system'"),
        (_key_is_code, "langchain", "not a keyword argument's name"),
        (_dataset_runs, "chunks", "dataset._target_ is 'os.system'"),
        (_dataset_path_runs, "chunks", "dataset: expected str"),
        (_embedder_runs, "sweep", "builds only sweep's own embedder"),
    ],
    ids=["splitter", "keyword", "dataset", "dataset-argument", "embedder"],
)
def test_a_tampered_config_runs_nothing_and_is_one_line(swept, tmp_path, tamper, kind, says):
    marker = tmp_path / "pwned"
    folder = _copy(swept, tmp_path)
    path = _tamper(folder, tamper(marker))
    out = tmp_path / ("out.jsonl" if kind == "chunks" else "out.py")
    proc = _run("sweep.export", folder, "--job", "0", "--to", kind, out)
    _refused(proc, str(path), says)
    assert not marker.exists() and not out.exists()


# -- item 4: YAML aliases -------------------------------------------------------------------

_BOMB = ['a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol","lol"]'] + [
    f"{b}: &{b} [" + ", ".join([f"*{a}"] * 10) + "]" for a, b in zip("abcdefgh", "bcdefghi")
]


@pytest.mark.parametrize(
    "which,kind", [("resolved_config.yaml", "chunks"), (".hydra/hydra.yaml", "hydra")]
)
def test_an_alias_bomb_is_refused_in_one_line(swept, tmp_path, which, kind):
    folder = _copy(swept, tmp_path)
    path = folder / "0" / which
    path.write_text("\n".join(_BOMB) + "\n" + path.read_text())  # 10^9 strings, expanded
    out = tmp_path / ("out.jsonl" if kind == "chunks" else "out.yaml")
    proc = _run("sweep.export", folder, "--job", "0", "--to", kind, out)
    _refused(proc, f"{path}:2: a YAML alias (*a)")
    assert not out.exists()


# -- item 9: data in a comment stays in the comment -----------------------------------------


def test_a_line_break_in_a_path_stays_inside_one_comment_line(swept, tmp_path):
    folder = _copy(swept, tmp_path, "runs\nevil = __import__('os').getcwd()\n")
    there = tmp_path / "out\nevil_key: 1\n#"
    there.mkdir()
    chosen = there / "chosen.yaml"
    proc = _run("sweep.export", folder, "--job", "0", "--to", "hydra", chosen)
    assert proc.returncode == 0, proc.stderr
    text = chosen.read_text()
    assert set(yaml.safe_load(text)) == {
        "defaults",
        "dataset",
        "chunk",
        "embed",
        "index",
        "retrieve",
        "rerank",
        "parent",
        "context",
        "eval",
        "llm",
        "name",
    }
    head = [line for line in text.splitlines() if line.startswith("#")]
    assert len(head) == 3 and "out\\nevil_key: 1\\n#" in head[2] and "runs\\nevil" in head[0]
    module = there / "splitter.py"
    proc = _run("sweep.export", folder, "--job", "0", "--to", "langchain", module)
    assert proc.returncode == 0, proc.stderr
    source = module.read_text()
    names = {t.id for s in ast.parse(source).body if isinstance(s, ast.Assign) for t in s.targets}
    assert names == {"splitter"}
    lines = source.splitlines()
    comment = lines[: next(i for i, line in enumerate(lines) if not line.startswith("# "))]
    said = " ".join(line[2:] for line in comment)
    assert said.startswith("Exported by sweep.export from job 0 of ")
    assert "runs\\nevil = __import__('os').getcwd()\\n" in said


# -- the Hydra file: only what sweep's own configs hold, since its header says how to run it --


def _target_elsewhere(marker: Path):
    def change(config):  # the review's reproducer: Hydra's own blocklist lets it through
        config["index"] = {"_target_": "shutil.copyfile", "_args_": ["/etc/hostname", str(marker)]}

    return change


def _target_in_a_list(marker: Path):
    def change(config):
        config["chunk"]["splitter"]["separators"] = [
            ".",
            {"_target_": "shutil.copyfile", "_args_": ["/etc/hostname", str(marker)]},
        ]

    return change


def _target_in_args(marker: Path):
    def change(config):
        config["eval"]["_args_"] = [
            {"_target_": "shutil.copyfile", "_args_": ["/etc/hostname", str(marker)]}
        ]

    return change


def _splitter_off_the_list(marker: Path):
    def change(config):
        config["chunk"]["splitter"] = {
            "_target_": "langchain_text_splitters.SentenceTransformersTokenTextSplitter",
            "model_name": str(marker),
        }

    return change


def _own_defaults(marker: Path):
    def change(config):  # it would replace the defaults list export writes
        config["defaults"] = ["config", {"override chunk": f"../../{marker.parent.name}/evil"}]

    return change


def _unknown_key(marker: Path):
    def change(config):
        config["payload"] = {
            "_target_": "shutil.copyfile",
            "_args_": ["/etc/hostname", str(marker)],
        }

    return change


def _not_a_flag(marker: Path):
    def change(config):
        config["retrieve"]["_partial_"] = "yes"

    return change


def _stdlib_splitter(marker: Path):
    def change(config):  # chunk=callable, its "own function" the standard library's
        config["chunk"]["framework"] = "callable"
        config["chunk"]["splitter"] = {
            "_target_": "shutil.copyfile",
            "_partial_": True,
            "dst": str(marker),
        }

    return change


def _instantiating_splitter(marker: Path):
    def change(config):  # it would build whatever a document's text names
        config["chunk"]["framework"] = "callable"
        config["chunk"]["splitter"] = {"_target_": "hydra.utils.instantiate", "_partial_": True}

    return change


def _not_a_name(marker: Path):
    def change(config):
        config["chunk"]["framework"] = "callable"
        config["chunk"]["splitter"] = {"_target_": "mypkg.split; touch pwned", "_partial_": True}

    return change


@pytest.mark.parametrize(
    "tamper,says",
    [
        (
            _target_elsewhere,
            "index._target_ is 'shutil.copyfile', which none of sweep's own configs builds",
        ),
        (_target_in_a_list, "chunk.splitter.separators[1]._target_ is 'shutil.copyfile'"),
        (_target_in_args, "eval._args_[0]._target_ is 'shutil.copyfile'"),
        (
            _splitter_off_the_list,
            "chunk.splitter._target_ is 'langchain_text_splitters."
            "SentenceTransformersTokenTextSplitter', which --to hydra does "
            "not write",
        ),
        (_own_defaults, "the key 'defaults' is none of sweep's own config keys"),
        (_unknown_key, "the key 'payload' is none of sweep's own config keys"),
        (_not_a_flag, "retrieve._partial_ is 'yes', not true or false"),
        (
            _stdlib_splitter,
            "chunk.splitter._target_ is 'shutil.copyfile', in Python's standard library",
        ),
        (_instantiating_splitter, "chunk.splitter._target_ is 'hydra.utils.instantiate', in hydra"),
        (_not_a_name, "is 'mypkg.split; touch pwned', not a dotted Python name"),
    ],
    ids=[
        "target",
        "in-a-list",
        "in-args",
        "off-the-list",
        "defaults",
        "unknown-key",
        "flag",
        "stdlib-splitter",
        "instantiate-splitter",
        "not-a-name",
    ],
)
def test_the_hydra_file_holds_only_sweeps_own_configs(swept, tmp_path, tamper, says):
    marker = tmp_path / "pwned"
    folder = _copy(swept, tmp_path)
    path = _tamper(folder, tamper(marker))
    chosen = tmp_path / "chosen.yaml"
    proc = _run("sweep.export", folder, "--job", "0", "--to", "hydra", chosen)
    _refused(proc, f"{path}: ", says)
    assert not chosen.exists() and not marker.exists()


def test_a_group_choice_outside_sweeps_configs_is_refused(swept, tmp_path):
    """Hydra reads ``override chunk: ../../x`` as a YAML file of the attacker's, with any
    node in it: the choices come from sweep's own configs only."""
    folder = _copy(swept, tmp_path)
    evil = folder / "evil.yaml"
    evil.write_text("payload:\n  _target_: shutil.copyfile\n")
    path = folder / "0" / ".hydra" / "hydra.yaml"
    hydra = yaml.safe_load(path.read_text())
    hydra["hydra"]["runtime"]["choices"]["chunk"] = "../../copy/evil"
    path.write_text(yaml.safe_dump(hydra, sort_keys=False))
    chosen = tmp_path / "out" / "chosen.yaml"
    chosen.parent.mkdir()
    proc = _run("sweep.export", folder, "--job", "0", "--to", "hydra", chosen)
    _refused(proc, f"{path}: chunk='../../copy/evil' is none of sweep's own chunk configs")
    assert not chosen.exists()


@pytest.fixture(scope="module")
def swept_callable(tmp_path_factory) -> Path:
    """A real sweep of the user's own splitter (tests/splitters.py: ``chunk=callable``)."""
    base = tmp_path_factory.mktemp("callable")
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "sweep",
            "dataset=tiny",
            "retrieve=bm25",
            f"runtime.cache_dir={base / 'cache'}",
            "runtime.show_progress=false",
            "eval.n_boot=50",
            "eval.latency_queries=0",
            "chunk=callable",
            "chunk.splitter._target_=splitters.paragraphs",
            "+chunk.splitter.min_chars=40",
            f"hydra.sweep.dir={base / 'sweep'}",
        ],
        cwd=base,
        env=_with_splitters(),
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    return base / "sweep"


def _with_splitters() -> dict:
    return {
        **_env(),
        "PYTHONPATH": os.pathsep.join([str(ROOT / "tests"), os.environ.get("PYTHONPATH", "")]),
    }


def test_a_callable_settings_hydra_file_names_the_function_and_reruns(swept_callable, tmp_path):
    chosen = tmp_path / "chosen.yaml"
    proc = _run("sweep.export", swept_callable, "--job", "0", "--to", "hydra", chosen)
    assert proc.returncode == 0, proc.stderr
    note = (
        "NOTE: the rerun calls splitters.paragraphs, this setting's own splitter: read it "
        "before you run it."
    )
    assert proc.stderr.strip() == note
    head = [line for line in chosen.read_text().splitlines() if line.startswith("#")]
    assert head[-2] == f"# {note}" and head[-1].startswith("# Rerun it: python -m sweep ")
    rerun = subprocess.run(
        [
            sys.executable,
            "-m",
            "sweep",
            "--config-dir",
            str(tmp_path),
            "--config-name",
            "chosen",
            f"runtime.cache_dir={tmp_path / 'cache'}",
            "runtime.show_progress=false",
            f"hydra.sweep.dir={tmp_path / 'rerun'}",
        ],
        cwd=tmp_path,
        env=_with_splitters(),
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert rerun.returncode == 0, rerun.stderr[-3000:]
    for name in ("chunks.csv", "per_query.csv"):  # the same chunks, scored the same
        assert (tmp_path / "rerun" / "0" / name).read_bytes() == (
            swept_callable / "0" / name
        ).read_bytes()


# -- a tokenizer named by the folder is never fetched while export measures the module -------


@contextlib.contextmanager
def _recording_proxy():
    """An HTTP(S) proxy on localhost that records each connection and answers none: with it
    in the proxy variables, any request a process makes (Python's or Rust's, which ignores
    HF_HUB_OFFLINE) is seen."""
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(16)
    server.settimeout(0.2)
    seen: list[bytes] = []
    done = threading.Event()

    def serve():
        while not done.is_set():
            try:
                conn, _ = server.accept()
            except OSError:
                continue
            with conn:
                conn.settimeout(2)
                try:
                    seen.append(conn.recv(200))
                except OSError:
                    seen.append(b"?")

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    url = f"http://127.0.0.1:{server.getsockname()[1]}"
    try:
        yield (
            {
                v: url
                for v in (
                    "HTTPS_PROXY",
                    "HTTP_PROXY",
                    "ALL_PROXY",
                    "https_proxy",
                    "http_proxy",
                    "all_proxy",
                )
            }
            | {"HF_ENDPOINT": url},
            seen,
        )
    finally:
        done.set()
        thread.join()
        server.close()


def _framework_splitter(framework: str, splitter: dict, **chunk):
    def change(config):
        config["chunk"]["framework"] = framework
        config["chunk"]["splitter"] = splitter
        config["chunk"].update(chunk)

    return change


@pytest.mark.parametrize(
    "framework,splitter,says",
    [
        # the review's reproducer: chonkie fetches it from the Hub whatever HF_HUB_OFFLINE says
        (
            "chonkie",
            {
                "_target_": "chonkie.TokenChunker",
                "tokenizer": "attacker-org/evil-tokenizer",
                "chunk_size": 100,
            },
            "chunk.splitter.tokenizer is 'attacker-org/evil-tokenizer'",
        ),
        (
            "chonkie",
            {"_target_": "chonkie.TokenChunker", "_args_": ["attacker-org/evil-tokenizer", 100]},
            "chunk.splitter.tokenizer is 'attacker-org/evil-tokenizer'",
        ),
        # chonkie sends a tiktoken name to the Hub too
        (
            "chonkie",
            {"_target_": "chonkie.RecursiveChunker", "tokenizer": "cl100k_base", "chunk_size": 100},
            "chunk.splitter.tokenizer is 'cl100k_base'",
        ),
        (
            "semchunk",
            {
                "_target_": "semchunk.chunkerify",
                "tokenizer_or_token_counter": "attacker-org/evil-tokenizer",
                "chunk_size": 100,
            },
            "chunk.splitter.tokenizer_or_token_counter is 'attacker-org/evil-tokenizer'",
        ),
        # tiktoken downloads an encoding it has not cached
        (
            "langchain",
            {
                "_target_": "langchain_text_splitters.TokenTextSplitter",
                "encoding_name": "o200k_base",
                "chunk_size": 100,
            },
            "chunk.splitter.encoding_name is 'o200k_base'",
        ),
    ],
    ids=["chonkie", "chonkie-positional", "chonkie-tiktoken-name", "semchunk", "tiktoken"],
)
def test_export_fetches_no_tokenizer_a_folder_names(swept, tmp_path, framework, splitter, says):
    folder = _copy(swept, tmp_path)
    path = _tamper(folder, _framework_splitter(framework, splitter))
    out = tmp_path / "out.py"
    with _recording_proxy() as (proxy, seen):
        env = {
            **{k: v for k, v in _env().items() if k not in ("HF_HUB_OFFLINE",)},
            **proxy,
            "TIKTOKEN_CACHE_DIR": str(tmp_path / "tiktoken"),
        }  # nothing cached
        proc = subprocess.run(
            [
                sys.executable,
                "-m",
                "sweep.export",
                str(folder),
                "--job",
                "0",
                "--to",
                framework,
                str(out),
            ],
            cwd=ROOT,
            env=env,
            capture_output=True,
            text=True,
            timeout=600,
        )
    _refused(
        proc,
        f"{path}: job 0: {says}",
        "export will not download a tokenizer named by a sweep folder",
    )
    assert seen == [] and not out.exists()


def test_sweeps_own_framework_presets_still_export(swept, tmp_path):
    """chonkie.yaml's offline encoding node and semchunk.yaml's cl100k_base load offline."""
    chonkie = {
        "_target_": "chonkie.RecursiveChunker",
        "chunk_size": 400,
        "tokenizer": {"_target_": "sweep.core.tokenization.get_encoding", "name": "cl100k_base"},
    }
    semchunk = {
        "_target_": "semchunk.chunkerify",
        "tokenizer_or_token_counter": "cl100k_base",
        "chunk_size": 100,
    }
    for framework, splitter, call in (
        ("chonkie", chonkie, {}),
        ("semchunk", semchunk, {"call": {"overlap": 0}}),
    ):
        folder = _copy(swept, tmp_path, framework)
        _tamper(folder, _framework_splitter(framework, splitter, **call))
        out = tmp_path / f"{framework}.py"
        with _recording_proxy() as (proxy, seen):
            env = {
                **{k: v for k, v in _env().items() if k != "HF_HUB_OFFLINE"},
                **proxy,
                "TIKTOKEN_CACHE_DIR": str(tmp_path / "tiktoken"),
            }
            proc = subprocess.run(
                [
                    sys.executable,
                    "-m",
                    "sweep.export",
                    str(folder),
                    "--job",
                    "0",
                    "--to",
                    framework,
                    str(out),
                ],
                cwd=ROOT,
                env=env,
                capture_output=True,
                text=True,
                timeout=600,
            )
        assert proc.returncode == 0, proc.stderr
        assert seen == [] and out.exists()


# -- item 10: nothing outside the sweep folder is read, through a link -----------------------


@pytest.mark.parametrize(
    "which,kind",
    [("resolved_config.yaml", "chunks"), (".hydra/hydra.yaml", "hydra"), ("chunks.csv", "chunks")],
)
def test_a_job_file_linked_from_outside_the_folder_is_refused(swept, tmp_path, which, kind):
    # The target is a good copy of the job's own file: followed, it would be exported from.
    folder = _copy(swept, tmp_path)
    path = folder / "0" / which
    target = tmp_path / "elsewhere" / path.name
    target.parent.mkdir()
    shutil.copyfile(path, target)
    path.unlink()
    path.symlink_to(target)
    out = tmp_path / ("out.jsonl" if kind == "chunks" else "out.yaml")
    proc = _run("sweep.export", folder, "--job", "0", "--to", kind, out)
    _refused(proc, f"{path}: is a link leading out of the sweep folder")
    assert not out.exists()


def test_a_config_linked_from_outside_is_never_quoted(swept, tmp_path):
    # A link to a file that is no YAML (an environment, a key file): refused before it is
    # read, so no YAML error can quote a line of it.
    folder = _copy(swept, tmp_path)
    path = folder / "0" / "resolved_config.yaml"
    target = tmp_path / "key.txt"
    target.write_text(f"{SECRET}: [\n")
    path.unlink()
    path.symlink_to(target)
    proc = _run("sweep.export", folder, "--job", "0", "--to", "chunks", tmp_path / "o.jsonl")
    _refused(proc, f"{path}: is a link leading out of the sweep folder")
    assert SECRET not in proc.stderr


def test_a_hydra_record_that_is_a_fifo_is_refused_not_waited_on(swept, tmp_path):
    folder = _copy(swept, tmp_path)
    path = folder / "0" / ".hydra" / "hydra.yaml"
    path.unlink()
    os.mkfifo(path)
    proc = _run("sweep.export", folder, "--job", "0", "--to", "hydra", tmp_path / "o.yaml")
    _refused(proc, f"{path}: is a FIFO, not a regular file")
