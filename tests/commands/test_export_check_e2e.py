"""End to end on the bundled corpus: a sweep's setting exported (chunks, a LangChain module,
sweep's own module, its Hydra config) and checked against a baseline sweep, each exit code."""

from __future__ import annotations

import json
import os
import runpy
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from paths import ROOT

pytestmark = pytest.mark.e2e


def _env() -> dict:
    return {
        k: v for k, v in os.environ.items() if k not in ("HF_HUB_OFFLINE", "GITHUB_STEP_SUMMARY")
    }


def _run(*args: str, env: dict | None = None, cwd: Path = ROOT) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", *args],
        cwd=cwd,
        env=env or _env(),
        capture_output=True,
        text=True,
        timeout=900,
    )


@pytest.fixture(scope="module")
def sweeps(tmp_path_factory) -> dict[str, Path]:
    """The bundled corpus at 128 and 256 tokens, and LangChain's splitter on a copy of tiny."""
    base = tmp_path_factory.mktemp("sweeps")
    cache = base / "cache"
    grid = _run(
        "sweep",
        f"runtime.cache_dir={cache}",
        "runtime.show_progress=false",
        "eval.n_boot=200",
        "chunk.size=128,256",
        f"hydra.sweep.dir={base / 'grid'}",
    )
    assert grid.returncode == 0, grid.stderr[-3000:]
    tiny = base / "tiny"
    shutil.copytree(ROOT / "corpora" / "tiny", tiny)
    lc = _run(
        "sweep",
        f"runtime.cache_dir={cache}",
        "runtime.show_progress=false",
        "eval.n_boot=200",
        f"dataset.path={tiny}",
        "chunk=langchain",
        "chunk.size=300",
        "chunk.overlap=50",
        f"hydra.sweep.dir={base / 'langchain'}",
    )
    assert lc.returncode == 0, lc.stderr[-3000:]
    return {"grid": base / "grid", "langchain": base / "langchain", "tiny": tiny, "base": base}


def _dataset(path: Path):
    from sweep.datasets.loading import load_dataset

    return load_dataset(str(path))


# -- sweep.check -----------------------------------------------------------------------------


def test_check_fails_128_against_a_256_baseline_and_passes_a_sweep_against_itself(sweeps, tmp_path):
    grid = sweeps["grid"]
    summary = tmp_path / "summary.md"
    env = dict(_env(), GITHUB_STEP_SUMMARY=str(summary))
    worse = _run(
        "sweep.check",
        str(grid),
        "--baseline",
        str(grid),
        "--job",
        "0",
        "--baseline-job",
        "1",
        env=env,
    )
    assert worse.returncode == 1, worse.stderr
    assert "retrieval got worse" in worse.stdout and "significantly worse" in worse.stdout
    same = _run("sweep.check", str(grid), "--baseline", str(grid), env=env)
    assert same.returncode == 0, same.stderr
    assert "no retrieval regression" in same.stdout
    # both verdicts were appended to the job summary, in order
    text = summary.read_text()
    assert text.index("retrieval got worse") < text.index("no retrieval regression")


def test_check_json_and_max_drop(sweeps):
    grid = sweeps["grid"]
    proc = _run(
        "sweep.check",
        str(grid),
        "--baseline",
        str(grid),
        "--job",
        "0",
        "--baseline-job",
        "1",
        "--json",
    )
    verdict = json.loads(proc.stdout)
    assert proc.returncode == 1 and verdict["result"] == "regressed"
    assert verdict["diff"] < 0 and verdict["p_value"] < 0.05 and verdict["n_questions"] > 100
    # 256 against 128: better, so passing, unless a drop... there is none to exceed
    proc = _run(
        "sweep.check",
        str(grid),
        "--baseline",
        str(grid),
        "--job",
        "1",
        "--baseline-job",
        "0",
        "--max-drop",
        "0",
        "--json",
    )
    assert proc.returncode == 0 and json.loads(proc.stdout)["diff"] > 0


def test_check_exits_2_when_the_evaluation_sets_differ_or_the_metric_is_missing(sweeps, tmp_path):
    proc = _run("sweep.check", str(sweeps["grid"]), "--baseline", str(sweeps["langchain"]))
    assert proc.returncode == 2 and "evaluation sets differ" in proc.stdout
    broken = tmp_path / "broken"
    shutil.copytree(sweeps["grid"], broken)
    (broken / "1" / "per_query.csv").unlink()
    proc = _run(
        "sweep.check",
        str(broken),
        "--baseline",
        str(sweeps["grid"]),
        "--job",
        "1",
        "--baseline-job",
        "1",
    )
    assert proc.returncode == 2 and "has no per-query span recall@5" in proc.stdout
    proc = _run("sweep.check", str(tmp_path / "nowhere"), "--baseline", str(sweeps["grid"]))
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
    assert proc.stderr.strip().endswith("no such folder")


# -- sweep.export ----------------------------------------------------------------------------


def test_exported_chunks_are_the_documents_own_text_at_their_offsets(sweeps, tmp_path):
    out = tmp_path / "chunks.jsonl"
    proc = _run("sweep.export", str(sweeps["grid"]), "--recommended", "--to", "chunks", str(out))
    assert proc.returncode == 0, proc.stderr
    records = [json.loads(line) for line in out.read_text().splitlines()]
    docs = {d.doc_id: d for d in _dataset(ROOT / "corpora" / "kestrel").documents}
    assert (
        len(records)
        == json.loads((sweeps["grid"] / "1" / "row.json").read_text())["stats"]["n_chunks"]
    )
    for r in records:
        assert r["text"] == docs[r["doc_id"]].text[r["start"] : r["end"]]
        assert r["chunk_id"].startswith(r["doc_id"] + "#")
    assert sum("headings" in r for r in records) > len(records) / 2


def test_a_token_setting_exports_to_langchain_with_the_same_chunks(sweeps, tmp_path):
    out = tmp_path / "splitter.py"
    proc = _run("sweep.export", str(sweeps["grid"]), "--job", "1", "--to", "langchain", str(out))
    assert proc.returncode == 0, proc.stderr
    head = out.read_text()
    assert "identical chunks on 43 of 43 documents" in head and "WARNING" not in head
    chunks = out.with_suffix(".jsonl")
    _run("sweep.export", str(sweeps["grid"]), "--job", "1", "--to", "chunks", str(chunks))
    want: dict[str, list[str]] = {}
    for line in chunks.read_text().splitlines():
        r = json.loads(line)
        want.setdefault(r["doc_id"], []).append(r["text"].strip())
    splitter = runpy.run_path(str(out))["splitter"]
    for doc in _dataset(ROOT / "corpora" / "kestrel").documents:
        got = [t.strip() for t in splitter.split_text(doc.text) if t.strip()]
        assert got == want[doc.doc_id], doc.doc_id


def test_a_langchain_setting_exports_its_own_splitter(sweeps, tmp_path):
    out = tmp_path / "lc.py"
    proc = _run(
        "sweep.export", str(sweeps["langchain"]), "--recommended", "--to", "langchain", str(out)
    )
    assert proc.returncode == 0, proc.stderr
    text = out.read_text()
    assert "RecursiveCharacterTextSplitter(chunk_size=300, chunk_overlap=50)" in text
    assert "identical chunks on 3 of 3 documents" in text
    from langchain_text_splitters import RecursiveCharacterTextSplitter

    own = RecursiveCharacterTextSplitter(chunk_size=300, chunk_overlap=50)
    splitter = runpy.run_path(str(out))["splitter"]
    for doc in _dataset(sweeps["tiny"]).documents:
        assert splitter.split_text(doc.text) == own.split_text(doc.text)
    # another framework cannot be made of it: one line, exit 2
    proc = _run(
        "sweep.export",
        str(sweeps["langchain"]),
        "--recommended",
        "--to",
        "chonkie",
        str(tmp_path / "c.py"),
    )
    assert proc.returncode == 2 and "cannot translate" in proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1 and not (tmp_path / "c.py").exists()


def test_sweeps_own_module_and_the_hydra_config_rerun_the_setting(sweeps, tmp_path):
    out = tmp_path / "own.py"
    assert (
        _run(
            "sweep.export", str(sweeps["grid"]), "--job", "0", "--to", "sweep", str(out)
        ).returncode
        == 0
    )
    assert "identical chunks on 43 of 43 documents" in out.read_text()
    yaml = tmp_path / "chosen.yaml"
    assert (
        _run(
            "sweep.export", str(sweeps["grid"]), "--job", "0", "--to", "hydra", str(yaml)
        ).returncode
        == 0
    )
    proc = _run("sweep", "--config-dir", str(tmp_path), "--config-name", "chosen", "--cfg", "job")
    assert proc.returncode == 0, proc.stderr
    assert "strategy: token\n  size: 128\n  overlap: 0" in proc.stdout


def test_export_refuses_what_it_cannot_do_in_one_line(sweeps, tmp_path):
    existing = tmp_path / "mine.jsonl"
    existing.write_text("my own file\n")
    proc = _run("sweep.export", str(sweeps["grid"]), "--job", "0", "--to", "chunks", str(existing))
    assert proc.returncode == 2 and "file exists" in proc.stderr
    assert existing.read_text() == "my own file\n"
    proc = _run(
        "sweep.export",
        str(sweeps["grid"]),
        "--job",
        "9",
        "--to",
        "chunks",
        str(tmp_path / "x.jsonl"),
    )
    assert proc.returncode == 2 and "no job 9 (jobs: 0, 1)" in proc.stderr
    # the documents changed after the sweep: the offsets no longer fit them
    changed = sweeps["base"] / "changed"
    shutil.copytree(sweeps["langchain"], changed)
    doc = next((sweeps["tiny"] / "docs").rglob("*.md"))
    original = doc.read_text()
    try:
        doc.write_text(original + "\nAppended after the sweep.\n")
        proc = _run(
            "sweep.export",
            str(changed),
            "--recommended",
            "--to",
            "chunks",
            str(tmp_path / "y.jsonl"),
        )
    finally:
        doc.write_text(original)
    assert proc.returncode == 2 and "changed since job 0 ran" in proc.stderr
    assert "Traceback" not in proc.stderr and not (tmp_path / "y.jsonl").exists()


def test_export_refuses_a_hydra_file_named_like_one_of_sweeps_own_configs(sweeps, tmp_path):
    # `--config-name config` would read sweep's own config.yaml, and rerun the defaults
    for name in ("config.yaml", "chosen.yml"):
        proc = _run(
            "sweep.export", str(sweeps["grid"]), "--job", "0", "--to", "hydra", str(tmp_path / name)
        )
        assert proc.returncode == 2 and len(proc.stderr.strip().splitlines()) == 1, proc.stderr
        assert str(tmp_path / name) in proc.stderr and not (tmp_path / name).exists()


def _damage(what: str, job_dir: Path) -> Path:
    """Damage one file of a copied job folder the way a disk, an editor or a bad merge
    would; the damaged file's path."""
    if what == "per_query.csv header":
        path = job_dir / "per_query.csv"
        lines = path.read_text().splitlines(keepends=True)
        path.write_text("query,what\n" + "".join(lines[1:]))
    elif what == "resolved_config.yaml":
        path = job_dir / "resolved_config.yaml"
        path.write_text("chunk:\n  size: [128\n")
    elif what == "hydra.yaml":
        path = job_dir / ".hydra" / "hydra.yaml"
        path.write_text("hydra: {runtime: [\n")
    else:  # chunks.csv that is not text
        path = job_dir / "chunks.csv"
        path.write_bytes(b"chunk_id,doc_id,start,end,n_tokens\n\xff\xfe\x00bad\n")
    return path


@pytest.mark.parametrize(
    "what,command",
    [
        ("per_query.csv header", ("sweep.check", "{dir}", "--baseline", "{grid}")),
        (
            "per_query.csv header",
            ("sweep.export", "{dir}", "--recommended", "--to", "chunks", "{out}"),
        ),
        ("resolved_config.yaml", ("sweep.export", "{dir}", "--job", "0", "--to", "hydra", "{out}")),
        ("hydra.yaml", ("sweep.export", "{dir}", "--job", "0", "--to", "hydra", "{out}")),
        ("chunks.csv bytes", ("sweep.export", "{dir}", "--job", "0", "--to", "chunks", "{out}")),
    ],
    ids=lambda v: v if isinstance(v, str) else v[0],
)
def test_a_damaged_sweep_folder_is_one_line_naming_the_file_and_exit_2(
    sweeps, tmp_path, what, command, capsys
):
    import importlib

    damaged = tmp_path / "damaged"
    shutil.copytree(sweeps["grid"], damaged)
    path = _damage(what, damaged / "0")
    out = tmp_path / ("out.yaml" if "hydra" in command else "out.jsonl")
    module, *args = [a.format(dir=damaged, grid=sweeps["grid"], out=out) for a in command]
    status = importlib.import_module(f"{module}.__main__").main(args)
    err = capsys.readouterr().err
    assert status == 2 and len(err.strip().splitlines()) == 1, err
    assert str(path) in err and "Traceback" not in err and not out.exists()


def _main(module: str, *args: str, capsys) -> tuple[int, str]:
    import importlib

    status = importlib.import_module(f"{module}.__main__").main([str(a) for a in args])
    return status, capsys.readouterr().err


def _copy(sweeps, tmp_path, name="copy") -> Path:
    folder = tmp_path / name
    shutil.copytree(sweeps["grid"], folder)
    return folder


@pytest.mark.parametrize("damage", ["row.json", "per_query.csv", "results.csv"])
def test_the_recommended_setting_is_never_silently_another_one(sweeps, tmp_path, damage, capsys):
    folder = _copy(sweeps, tmp_path)
    from sweep.reporting.selection import recommended_job

    job = recommended_job(folder)
    if damage == "row.json":
        path = folder / str(job) / "row.json"
        path.write_text(path.read_text()[:40])
    elif damage == "per_query.csv":
        path = folder / str(job) / "per_query.csv"
        path.unlink()
    else:  # the report recommends another job than the rows do
        import csv

        path = folder / "results.csv"
        with open(path, newline="") as f:
            rows = list(csv.DictReader(f))
        for r in rows:
            r["recommended"] = str(r["job"] != str(job))
        with open(path, "w", newline="") as f:
            writer = csv.DictWriter(f, fieldnames=list(rows[0]))
            writer.writeheader()
            writer.writerows(rows)
    out = tmp_path / "o.jsonl"
    status, err = _main(
        "sweep.export", folder, "--recommended", "--to", "chunks", out, capsys=capsys
    )
    assert status == 2 and len(err.strip().splitlines()) == 1, err
    assert (str(path) if damage != "results.csv" else "results.csv") in err and not out.exists()
    status, err = _main("sweep.check", folder, "--baseline", sweeps["grid"], capsys=capsys)
    assert status == 2 and "Traceback" not in err


def test_check_refuses_sweeps_that_score_or_test_differently(sweeps, tmp_path, capsys):
    for key, value in (("alpha", 1e-5), ("min_coverage", 1.0)):
        folder = _copy(sweeps, tmp_path, key)
        for row in folder.glob("*/row.json"):
            data = json.loads(row.read_text())
            data["eval"][key] = value
            row.write_text(json.dumps(data))
        # its report as a sweep run so would have it (else check refuses a folder whose rows
        # no longer recommend the job its results.csv records)
        assert _run("sweep.report", "--no-html", str(folder)).returncode == 0
        proc = _run("sweep.check", str(folder), "--baseline", str(sweeps["grid"]), "--json")
        verdict = json.loads(proc.stdout)
        assert proc.returncode == 2 and f"eval.{key}" in verdict["reason"], proc.stdout


def test_damaged_but_readable_files_are_one_line_and_exit_2(sweeps, tmp_path, capsys):
    folder = _copy(sweeps, tmp_path)
    job = folder / "0"
    config = job / "resolved_config.yaml"
    config.write_text("dataset:\n  name: x\n")  # valid YAML, no chunk settings
    status, err = _main(
        "sweep.export", folder, "--job", "0", "--to", "chunks", tmp_path / "a.jsonl", capsys=capsys
    )
    assert status == 2 and f"{config}: no chunk settings" in err
    shutil.copy(sweeps["grid"] / "0" / "resolved_config.yaml", config)
    (job / ".hydra" / "hydra.yaml").write_text("hydra: [1, 2]\n")
    status, err = _main(
        "sweep.export", folder, "--job", "0", "--to", "hydra", tmp_path / "b.yaml", capsys=capsys
    )
    assert status == 2 and "hydra.yaml: no hydra.runtime section" in err
    # the check needs neither file
    status, err = _main(
        "sweep.check",
        folder,
        "--job",
        "0",
        "--baseline",
        sweeps["grid"],
        "--baseline-job",
        "0",
        capsys=capsys,
    )
    assert status == 0, err
    shutil.rmtree(job / ".hydra")
    status, err = _main(
        "sweep.export", folder, "--job", "0", "--to", "hydra", tmp_path / "c.yaml", capsys=capsys
    )
    assert status == 2 and "group choices" in err
    chunks = job / "chunks.csv"
    chunks.write_text("".join(chunks.read_text().splitlines(keepends=True)[:50]))
    status, err = _main(
        "sweep.export", folder, "--job", "0", "--to", "chunks", tmp_path / "d.jsonl", capsys=capsys
    )
    assert status == 2 and "49 chunks, but job 0 made" in err
    scores = job / "per_query.csv"
    lines = scores.read_text().splitlines(keepends=True)
    target = next(i for i, line in enumerate(lines) if ",span,recall@5," in line)
    lines[target] = lines[target].rsplit(",", 1)[0] + ",inf\n"
    scores.write_text("".join(lines))
    status, err = _main(
        "sweep.check",
        folder,
        "--job",
        "0",
        "--baseline",
        sweeps["grid"],
        "--baseline-job",
        "0",
        "--json",
        capsys=capsys,
    )
    assert status == 2 and "not a score" in err
    assert not list(tmp_path.glob("*.jsonl")) and not list(tmp_path.glob("*.yaml"))


def test_a_relative_dataset_path_is_read_from_the_folder_the_sweep_ran_in(
    sweeps, tmp_path, capsys, monkeypatch
):
    folder = _copy(sweeps, tmp_path)
    config = folder / "0" / "resolved_config.yaml"
    hydra = folder / "0" / ".hydra" / "hydra.yaml"
    text = config.read_text()
    absolute = next(
        line.split(":", 1)[1].strip()
        for line in text.splitlines()
        if line.strip().startswith("path:")
    )
    config.write_text(text.replace(absolute, "corpora/kestrel"))
    ran_in = next(
        line.split(":", 1)[1].strip()
        for line in hydra.read_text().splitlines()
        if line.strip().startswith("cwd:")
    )
    assert Path(ran_in).resolve() == ROOT.resolve() and (ROOT / "corpora" / "kestrel").is_dir()
    monkeypatch.chdir(tmp_path)
    out = tmp_path / "e.jsonl"
    status, err = _main("sweep.export", folder, "--job", "0", "--to", "chunks", out, capsys=capsys)
    assert status == 0, err
    assert out.read_text().count("\n") > 100


def test_a_summary_file_that_cannot_be_written_keeps_the_verdict(sweeps, tmp_path):
    env = dict(_env(), GITHUB_STEP_SUMMARY=str(tmp_path / "missing" / "summary.md"))
    proc = _run("sweep.check", str(sweeps["grid"]), "--baseline", str(sweeps["grid"]), env=env)
    assert proc.returncode == 0 and "GITHUB_STEP_SUMMARY" in proc.stderr
    assert "Traceback" not in proc.stderr
