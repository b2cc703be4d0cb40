"""The embedder's backends: torch, the ONNX Runtime exports (fp32, int8) and the
OpenVINO export of the real bundled MiniLM. Tests that export or load the model are marked e2e; one
export per test session is shared through the ``exports`` fixture."""

from __future__ import annotations

import csv
import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

from paths import ROOT
from sweep.embedding import onnx_export
from sweep.embedding.backends import BACKENDS, MANIFEST_FILE, check_backend
from sweep.embedding.embedder import SentenceTransformerEmbedder
from sweep.embedding.errors import BackendExportError, EmbedderError

TEXTS = [
    "the pump needs a new seal",
    "Travel is booked through the portal at least two weeks in advance.",
    "a",
    "Über naïve café — 東京 🙂",
    "calibration of the intake sensor " * 80,  # longer than max_seq_length
    "  spaces around  ",
    "The quarterly report lists every maintenance visit and its cost.",
]


@pytest.fixture(scope="session")
def exports(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("onnx-exports")


def emb(cache_dir, exports=None, **kw) -> SentenceTransformerEmbedder:
    if exports is not None:
        kw["onnx_dir"] = str(exports)
    return SentenceTransformerEmbedder(cache_dir=str(cache_dir), show_progress=False, **kw)


def one_line(exc: pytest.ExceptionInfo) -> str:
    msg = str(exc.value)
    assert "\n" not in msg
    return msg


# -- settings, without the model ---------------------------------------------------


@pytest.mark.parametrize("value", ["tensorrt", "ONNX", "", None, 3])
def test_bad_backend_is_a_one_line_error(tmp_path, value):
    with pytest.raises(EmbedderError) as err:
        emb(tmp_path, backend=value)
    msg = one_line(err)
    assert msg.startswith(
        "embed.backend must be one of auto, torch, onnx, onnx-int8, openvino, got "
    )
    assert repr(value) in msg


@pytest.mark.parametrize(
    "missing, backend",
    [
        ("onnxruntime", "onnx"),
        ("onnx", "onnx"),
        ("onnxruntime", "onnx-int8"),
        ("onnx", "onnx-int8"),
        ("openvino", "openvino"),
        ("onnx", "openvino"),
    ],
)
def test_a_missing_runtime_names_the_install_command(tmp_path, monkeypatch, missing, backend):
    monkeypatch.setitem(sys.modules, missing, None)  # makes `import <missing>` fail
    with pytest.raises(EmbedderError) as err:
        emb(tmp_path, backend=backend)
    assert one_line(err) == (
        f"embed.backend={backend} needs the '{missing}' package, which is not installed: "
        f"pip install {missing}"
    )
    # torch does not need it.
    assert emb(tmp_path, backend="torch").backend == "torch"


def test_int8_needs_onnx_ir_for_its_weights(tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "onnx_ir", None)
    with pytest.raises(EmbedderError) as err:
        emb(tmp_path, backend="onnx-int8")
    assert "needs the 'onnx-ir' package, which is not installed: pip install onnx-ir" in one_line(
        err
    )
    assert emb(tmp_path, backend="onnx").backend == "onnx"  # fp32 does not


@pytest.mark.parametrize(
    "kw, words",
    [
        ({"threads": 0}, "embed.threads must be a positive integer or null, got 0"),
        ({"threads": "2"}, "embed.threads"),
        ({"threads": True}, "embed.threads"),
        ({"backend": "onnx", "device": "cuda"}, "embed.backend=onnx runs on the CPU only"),
        ({"onnx_dir": " "}, "embed.onnx_dir"),
    ],
)
def test_bad_runtime_settings(tmp_path, kw, words):
    with pytest.raises(EmbedderError, match=words):
        emb(tmp_path, **kw)


def test_backend_is_part_of_the_namespace_and_identity(tmp_path):
    by_backend = {b: emb(tmp_path, backend=b) for b in BACKENDS}
    namespaces = {b: json.loads(e.cache_namespace) for b, e in by_backend.items()}
    # torch's namespace is the one used before backends existed: old caches stay valid.
    assert namespaces["torch"] == {
        "format": 1,
        "weights": namespaces["torch"]["weights"],
        "max_seq_length": 256,
        "normalize": True,
    }
    assert namespaces["onnx"]["backend"] == "onnx"
    assert namespaces["onnx-int8"]["backend"] == "onnx-int8"
    assert namespaces["openvino"]["backend"] == "openvino"
    assert len({e.cache_namespace for e in by_backend.values()}) == len(BACKENDS)
    assert [json.loads(e.identity)["backend"] for e in by_backend.values()] == list(BACKENDS)
    assert (
        emb(tmp_path, backend="onnx", threads=1).cache_namespace
        == by_backend["onnx"].cache_namespace
    )


def test_openvino_precision_is_part_of_the_namespace_and_identity(tmp_path, monkeypatch):
    # A cache folder shared by a CPU that computes in bfloat16 and one that cannot
    # keeps their vectors apart.
    from sweep.embedding import openvino_backend

    seen = {}
    for precision in ("bf16", "f32"):
        monkeypatch.setattr(openvino_backend, "cpu_precision", lambda p=precision: p)
        e = emb(tmp_path, backend="openvino")
        seen[precision] = (e.cache_namespace, e.identity)
        assert json.loads(e.cache_namespace)["precision"] == precision == e.precision
        assert json.loads(e.identity)["precision"] == precision
    assert seen["bf16"][0] != seen["f32"][0] and seen["bf16"][1] != seen["f32"][1]
    assert json.loads(emb(tmp_path, backend="onnx").cache_namespace)["precision"] == "fp32"


@pytest.mark.parametrize(
    "backend, kind", [("onnx", "fp32"), ("onnx-int8", "int8"), ("openvino", "openvino")]
)
def test_a_changed_export_recipe_is_another_cache_namespace(tmp_path, monkeypatch, backend, kind):
    # onnx-int8 went from dynamic to block-wise int8 weights: vectors cached under the old
    # recipe must not be served as the new one's.
    before = json.loads(emb(tmp_path, backend=backend).cache_namespace)
    assert before["recipe"] == onnx_export.RECIPES[kind]
    monkeypatch.setitem(onnx_export.RECIPES, kind, "r-next")
    after = json.loads(emb(tmp_path, backend=backend).cache_namespace)
    assert after["recipe"] == "r-next" and after != before
    assert "recipe" not in json.loads(emb(tmp_path, backend="torch").cache_namespace)


def test_openvino_that_cannot_see_the_cpu_is_a_one_line_error(tmp_path, monkeypatch):
    from sweep.embedding import encoders, openvino_backend

    def broken():
        raise RuntimeError('Device with "CPU" name is not registered\nin the OpenVINO Runtime')

    monkeypatch.setattr(encoders, "openvino_precision", broken)
    openvino_backend.cpu_precision.cache_clear()
    try:
        with pytest.raises(EmbedderError) as err:
            _ = emb(tmp_path, backend="openvino").cache_namespace
        assert one_line(err) == (
            "embed.backend=openvino: cannot query OpenVINO's CPU device: "
            'Device with "CPU" name is not registered'
        )
    finally:
        openvino_backend.cpu_precision.cache_clear()


def test_check_backend_passes_known_names():
    assert [check_backend(b) for b in BACKENDS] == list(BACKENDS)


def test_export_folder_default_follows_the_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert emb(tmp_path / "c", backend="onnx")._onnx_root() == tmp_path / "c" / "onnx"
    off = SentenceTransformerEmbedder(cache_dir="off", backend="onnx", show_progress=False)
    assert off._onnx_root() == tmp_path / "xdg" / "sweep" / "onnx"
    assert emb(tmp_path, tmp_path / "mine", backend="onnx")._onnx_root() == tmp_path / "mine"


# -- publishing an export ----------------------------------------------------------------


def _build(text: str):
    def build(folder: Path) -> None:
        (folder / "model.onnx").write_text(text)
        (folder / MANIFEST_FILE).write_text("{}")

    return build


def test_publish_moves_a_complete_folder_into_place(tmp_path):
    final = tmp_path / "abc-fp32-r1"
    onnx_export._publish(final, _build("mine"))
    assert (final / "model.onnx").read_text() == "mine"
    assert os.listdir(tmp_path) == ["abc-fp32-r1"]


def test_publish_when_another_process_won_the_race(tmp_path):
    final = tmp_path / "abc-fp32-r1"

    def build(folder: Path) -> None:
        # While this export runs, another process publishes the same folder.
        final.mkdir()
        _build("theirs")(final)
        _build("mine")(folder)

    onnx_export._publish(final, build)
    assert (final / "model.onnx").read_text() == "theirs"
    assert os.listdir(tmp_path) == ["abc-fp32-r1"]  # our temporary folder is gone


def test_failed_export_leaves_nothing(tmp_path):
    def build(folder: Path) -> None:
        (folder / "model.onnx").write_text("half")
        raise BackendExportError("broken graph")

    with pytest.raises(BackendExportError):
        onnx_export._publish(tmp_path / "abc-fp32-r1", build)
    assert os.listdir(tmp_path) == []


def test_stale_temporaries_are_removed(tmp_path):
    old, young = tmp_path / ".tmp-old", tmp_path / ".tmp-young"
    for d in (old, young):
        d.mkdir()
    os.utime(old, (0, 0))
    onnx_export._remove_stale_temporaries(tmp_path)
    assert sorted(os.listdir(tmp_path)) == [".tmp-young"]


# -- the real model ----------------------------------------------------------------------


def _cosines(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return np.sum(a * b, axis=1) / (np.linalg.norm(a, axis=1) * np.linalg.norm(b, axis=1))


@pytest.mark.e2e
@pytest.mark.parametrize(
    "backend, bound", [("onnx", 0.99999), ("onnx-int8", 0.999), ("openvino", 0.9999)]
)
@pytest.mark.parametrize("max_seq_length", [None, 16])
def test_vectors_match_torch(tmp_path, exports, backend, bound, max_seq_length):
    want = emb(tmp_path / "t", max_seq_length=max_seq_length).embed_documents(TEXTS)
    # batch_size 3 over 7 texts of mixed lengths: batches are sorted by length
    # and padded, and the rows must still come back in input order.
    e = emb(tmp_path / "o", exports, backend=backend, batch_size=3, max_seq_length=max_seq_length)
    got = e.embed_documents(TEXTS)
    assert got.dtype == np.float32 and got.shape == want.shape and got.flags.c_contiguous
    assert np.allclose(np.linalg.norm(got, axis=1), 1, atol=1e-5)
    cos = _cosines(got, want)
    assert cos.min() >= bound, cos
    assert e.stats.embedded == len(TEXTS)
    # MiniLM normalizes inside the model too; normalize=false must still agree.
    raw = emb(
        tmp_path / "u", exports, backend=backend, normalize=False, max_seq_length=max_seq_length
    ).embed_documents(TEXTS[:2])
    raw_torch = emb(tmp_path / "u", normalize=False, max_seq_length=max_seq_length).embed_documents(
        TEXTS[:2]
    )
    assert _cosines(raw, raw_torch).min() >= bound
    assert np.allclose(np.linalg.norm(raw, axis=1), np.linalg.norm(raw_torch, axis=1), rtol=0.02)


@pytest.mark.e2e
def test_export_is_checked_and_described(exports, tmp_path):
    emb(tmp_path, exports, backend="onnx-int8").load()
    folders = sorted(p.name for p in exports.iterdir() if "openvino" not in p.name)
    assert [f.split("-", 1)[1] for f in folders] == ["fp32-r1", "int8-r2"]
    fp32, int8 = (json.loads((exports / f / MANIFEST_FILE).read_text()) for f in folders)
    assert fp32["probe_min_cosine"] >= 0.99999 and int8["probe_min_cosine"] >= 0.999
    assert int8["int8"]["weights"] == "MatMulNBits" and int8["int8"]["bits"] == 8
    assert fp32["graph"] == "fused"  # exact, so the fused graph is the one kept
    assert fp32["dim"] == int8["dim"] == 384 and fp32["max_seq_length"] == 256
    assert (exports / folders[1] / "model.onnx").stat().st_size < 0.8 * (
        exports / folders[0] / "model.onnx"
    ).stat().st_size


@pytest.mark.e2e
def test_openvino_export_is_the_plain_graph_checked_at_its_precision(exports, tmp_path):
    e = emb(tmp_path, exports, backend="openvino")
    e.load()
    folder = e.export_folder()
    assert folder.name.endswith(f"-openvino-{e.precision}-r1")  # checked at this precision
    assert sorted(p.name for p in folder.iterdir()) == [
        "manifest.json",
        "model.bin",
        "model.xml",
        "tokenizer.json",
    ]  # raw.onnx is gone
    manifest = json.loads((folder / MANIFEST_FILE).read_text())
    assert manifest["graph"] == "plain" and manifest["probe_min_cosine"] >= 0.9999
    assert manifest["probe_precision"] == e.precision in ("bf16", "f32")
    # The weights stay float32 on disk (22.7M parameters); only the products may be bf16.
    assert (folder / "model.bin").stat().st_size > 4 * 22_000_000


@pytest.mark.e2e
def test_openvino_feeds_only_the_inputs_its_graph_has(tmp_path, exports):
    # A model that never reads token_type_ids is exported without that input; OpenVINO
    # refuses an input its graph does not have.
    import openvino as ov
    import openvino.opset13 as ops

    from sweep.embedding.encoders import OpenVinoEncoder

    source = emb(tmp_path, exports, backend="openvino").export_folder()
    folder = tmp_path / "two-inputs"
    folder.mkdir()
    (folder / "tokenizer.json").write_bytes((source / "tokenizer.json").read_bytes())
    manifest = json.loads((source / MANIFEST_FILE).read_text())
    manifest["dim"] = 1
    (folder / MANIFEST_FILE).write_text(json.dumps(manifest))
    assert "token_type_ids" in manifest["inputs"]
    ids = ops.parameter([-1, -1], ov.Type.i64, name="input_ids")
    mask = ops.parameter([-1, -1], ov.Type.i64, name="attention_mask")
    tokens = ops.convert(ops.reduce_sum(mask, ops.constant(np.array([1])), True), ov.Type.f32)
    tokens.output(0).get_tensor().set_names({"sentence_embedding"})  # the tokens per text
    ov.save_model(ov.Model([tokens], [ids, mask], "count"), str(folder / "model.xml"))
    got = OpenVinoEncoder(folder).encode(
        ["one", "one two three"], batch_size=2, max_seq_length=16, normalize=False
    )
    assert got[:, 0].tolist() == [3.0, 5.0]  # [CLS] ... [SEP]


@pytest.mark.e2e
def test_a_fused_graph_that_changes_the_vectors_is_replaced_by_the_plain_one(tmp_path, monkeypatch):
    import onnx
    from onnx import helper, numpy_helper

    fuse = onnx_export._optimize

    def inexact(raw, dst, model_dir):
        # A "fusion" that changes the numbers: a constant added to the output.
        fused = fuse(raw, dst, model_dir)
        model = onnx.load(str(dst))
        out = model.graph.output[0].name
        for node in model.graph.node:
            node.output[:] = [o + "_pre" if o == out else o for o in node.output]
        model.graph.initializer.append(
            numpy_helper.from_array(np.full(384, 0.05, dtype=np.float32), "shift")
        )
        model.graph.node.append(helper.make_node("Add", [out + "_pre", "shift"], [out]))
        onnx.save(model, str(dst))
        return fused

    monkeypatch.setattr(onnx_export, "_optimize", inexact)
    e = emb(tmp_path, tmp_path / "exports", backend="onnx")
    vectors = e.embed_documents(TEXTS[:3])
    (folder,) = (tmp_path / "exports").iterdir()
    manifest = json.loads((folder / MANIFEST_FILE).read_text())
    assert manifest["graph"] == "plain" and manifest["probe_min_cosine"] >= 0.99999
    torch_vectors = emb(tmp_path / "t", backend="torch").embed_documents(TEXTS[:3])
    assert _cosines(vectors, torch_vectors).min() >= 0.99999


@pytest.mark.e2e
def test_cache_never_returns_another_backends_vector(tmp_path, exports):
    text = ["the same text, embedded by every backend"]
    vectors = {}
    for backend in BACKENDS:
        e = emb(tmp_path, exports, backend=backend)
        vectors[backend] = e.embed_documents(text)
        assert (e.stats.cache_hits, e.stats.embedded) == (0, 1), backend
    assert len({v.tobytes() for v in vectors.values()}) == len(BACKENDS)
    for backend in BACKENDS[::-1]:  # each backend finds its own vector again
        e = emb(tmp_path, exports, backend=backend)
        assert e.embed_documents(text).tobytes() == vectors[backend].tobytes()
        assert (e.stats.cache_hits, e.stats.embedded) == (1, 0), backend


@pytest.mark.e2e
@pytest.mark.parametrize("backend", ["onnx", "openvino"])
def test_an_exported_backend_does_not_import_torch(tmp_path, exports, backend):
    emb(tmp_path, exports, backend=backend).load()
    script = textwrap.dedent(f"""
        import sys
        from sweep.embedding.embedder import SentenceTransformerEmbedder
        e = SentenceTransformerEmbedder(cache_dir="off", onnx_dir={str(exports)!r},
                     backend={backend!r}, show_progress=False, threads=1)
        v = e.embed_documents(["no torch here"], what="chunks")
        assert v.shape == (1, 384) and e.stats.embedded == 1
        assert "torch" not in sys.modules and "sentence_transformers" not in sys.modules
    """)
    res = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=300
    )
    assert res.returncode == 0, res.stderr


@pytest.mark.e2e
def test_export_failure_is_an_embedder_error(tmp_path):
    folder = tmp_path / "broken"
    folder.mkdir()
    (folder / "config.json").write_text("{}")
    e = SentenceTransformerEmbedder(
        str(folder),
        cache_dir="off",
        max_seq_length=16,
        backend="onnx",
        onnx_dir=str(tmp_path / "exports"),
        show_progress=False,
    )
    with pytest.raises(EmbedderError) as err:
        e.embed_documents(["x"])
    assert one_line(err).startswith("cannot run '") and "embed.backend=onnx: " in str(err.value)
    assert not [p for p in (tmp_path / "exports").iterdir()]  # nothing half-written is left


# -- a whole sweep ---------------------------------------------------------------------------


def _sweep(tmp_path: Path, *overrides: str, timeout: int = 600) -> subprocess.CompletedProcess:
    # No HF_HUB_OFFLINE: the default model must export and load without any network as it is.
    env = {k: v for k, v in os.environ.items() if k != "HF_HUB_OFFLINE"}
    cmd = [
        sys.executable,
        "-m",
        "sweep",
        "dataset=tiny",
        f"runtime.cache_dir={tmp_path / 'cache'}",
        f"hydra.sweep.dir={tmp_path / 'sweep'}",
        "runtime.show_progress=false",
        "eval.n_boot=200",
        *overrides,
    ]
    return subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True, timeout=timeout)


@pytest.mark.e2e
def test_sweep_with_the_int8_and_openvino_backends(tmp_path, exports):
    proc = _sweep(tmp_path, "embed.backend=onnx-int8,openvino,bogus", f"embed.onnx_dir={exports}")
    assert "Traceback" not in proc.stderr, proc.stderr[-3000:]
    with open(tmp_path / "sweep" / "results.csv", newline="", encoding="utf-8") as f:
        rows = {r["embed.backend"]: r for r in csv.DictReader(f)}
    bad = rows["bogus"]
    for backend in ("onnx-int8", "openvino"):
        ok = rows[backend]
        assert ok["status"] == "ok" and int(ok["embedded"]) > 0, ok
        assert 0.0 <= float(ok["span.recall@5"]) <= 1.0
    assert bad["status"] == "invalid"
    assert bad["error"].endswith(
        "embed.backend must be one of auto, torch, onnx, onnx-int8, openvino, got 'bogus'"
    )
    resolved = (tmp_path / "sweep" / "0" / "resolved_config.yaml").read_text()
    assert "backend: onnx-int8" in resolved


@pytest.mark.e2e
def test_the_embedding_command_shows_the_export_and_its_precision(tmp_path):
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "XDG_CACHE_HOME": str(tmp_path / "xdg")}
    res = subprocess.run(
        [sys.executable, "-m", "sweep.embedding", "--backend", "openvino", "--embed", "the pump"],
        capture_output=True,
        text=True,
        env=env,
        timeout=600,
    )
    assert res.returncode == 0, res.stderr[-2000:]
    lines = dict(line.split(": ", 1) for line in res.stdout.splitlines() if ": " in line)
    assert lines["export"].startswith(str(tmp_path / "xdg" / "sweep" / "onnx")) and lines[
        "export"
    ].endswith(f"-openvino-{lines['precision']}-r1")
    assert lines["precision"] in ("bf16", "f32")
    assert json.loads(lines["identity"])["precision"] == lines["precision"]
    assert "'the pump': [" in res.stdout
