"""Export a local sentence-transformers model to ONNX once, quantize it to int8,
or convert it for OpenVINO.

Layout under ``root`` (``<embedding cache>/onnx`` unless ``embed.onnx_dir`` says)::

    <fingerprint>-fp32-r1/model.onnx       the whole model, pooling included
    <fingerprint>-fp32-r1/tokenizer.json   the model's fast tokenizer
    <fingerprint>-fp32-r1/manifest.json    inputs, output, dim, padding, checks
    <fingerprint>-int8-r2/...              the same, weight matrices stored as int8
    <fingerprint>-openvino-bf16-r1/model.xml  the plain graph in OpenVINO's format (+ model.bin),
                                            checked at the precision OpenVINO computes in here

The folder name carries the model's weights fingerprint and the recipe
revision, so another model or a changed recipe never reuses an old export.
A folder is built under a temporary name and renamed into place: two processes
exporting at once both succeed and one of the two identical results stays.

The recipe: torch's TorchScript exporter (the graph ONNX Runtime's transformer
optimizer recognises, with eager attention so attention fuses into one op), and
that optimizer's BERT fusions where they are exact. For int8, every weight
matrix of a MatMul is stored as 8-bit integers with one scale per block of 32
rows (ONNX Runtime's MatMulNBits; attention and the embeddings stay fp32), and
the products run in int8. The earlier recipe, dynamic quantization, also
quantized every activation per batch: on MiniLM that moved the vectors to a
cosine of 0.976 and span recall@5 by up to 0.031 in a cell of the default grid,
where the block-wise weights keep a cosine of 0.9993 and every cell within
0.009. Every export is checked against the torch model on a few probe texts
before it is published.

OpenVINO gets the graph as exported, without ONNX Runtime's fusions (they use
operators only ONNX Runtime knows); OpenVINO fuses it itself when it compiles.
"""

from __future__ import annotations

import json
import logging
import os
import shutil
import time
import uuid
import warnings
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import numpy as np

from sweep.embedding.encoders import (
    MANIFEST_FILE,
    MODEL_FILE,
    OPENVINO_FILE,
    TOKENIZER_FILE,
    encoder_for,
    export_kind,
)
from sweep.embedding.errors import BackendExportError

log = logging.getLogger(__name__)

#: Revision of each export recipe, in the folder name: a changed recipe is exported anew.
RECIPES = {"fp32": "r1", "int8": "r2", "openvino": "r1"}
#: int8 weights: one scale per block of this many input rows of a weight matrix.
INT8_BLOCK = 32
_TMP_PREFIX = ".tmp-"
_STALE_TMP_SECONDS = 24 * 3600
#: Minimum cosine between the export's and torch's vectors on the probe texts.
#: fp32 differs by float rounding only; int8 by design, and OpenVINO by bfloat16
#: products on CPUs that have them (the bench measures what each costs in retrieval).
MIN_PROBE_COSINE = {"fp32": 0.99999, "int8": 0.999, "openvino": 0.9999}
#: The backend each export kind is checked with.
_BACKEND = {"fp32": "onnx", "int8": "onnx-int8", "openvino": "openvino"}
#: Architectures whose attention and layer norms the BERT fusions recognise.
_BERT_LIKE = {"bert", "roberta", "xlm-roberta", "distilbert", "camembert", "electra", "mpnet"}
_PROBES = (
    "a",
    "The pump needs a new seal before the next inspection.",
    "  Leading and trailing spaces, tabs\tand\nnewlines  ",
    "Über naïve café — 東京 🙂 ½ Ｆｕｌｌｗｉｄｔｈ",
    "Travel is booked through the portal at least two weeks in advance; "
    "receipts are uploaded within thirty days of the trip. " * 3,
    "calibration step " * 400,  # longer than any max_seq_length: truncated
)


def export_dirname(fingerprint: str, backend: str, precision: str | None = None) -> str:
    """The export's folder name. OpenVINO's names the precision it was checked at
    (``precision``): a cache folder shared with a machine that computes in another
    precision gets an export checked there."""
    kind = export_kind(backend)
    if kind == "openvino":
        if not precision:
            raise ValueError("an openvino export is named by its precision")
        return f"{fingerprint}-{kind}-{precision}-{RECIPES[kind]}"
    return f"{fingerprint}-{kind}-{RECIPES[kind]}"


def ensure_export(
    model_dir: Path, fingerprint: str, backend: str, root: Path, precision: str | None = None
) -> Path:
    """The folder of ``model_dir``'s export for ``backend`` under ``root``, built if missing
    (``precision``: OpenVINO's on this machine, for the ``openvino`` backend)."""
    final = root / export_dirname(fingerprint, backend, precision)
    if (final / MANIFEST_FILE).is_file():
        return final
    root.mkdir(parents=True, exist_ok=True)
    _remove_stale_temporaries(root)
    kind = export_kind(backend)
    if kind == "int8":
        source = ensure_export(model_dir, fingerprint, "onnx", root)
        _publish(final, lambda tmp: _quantize(source, tmp, model_dir))
    elif kind == "openvino":
        _publish(final, lambda tmp: _export_openvino(model_dir, tmp))
    else:
        _publish(final, lambda tmp: _export_fp32(model_dir, tmp))
    return final


def _publish(final: Path, build) -> None:
    tmp = final.parent / f"{_TMP_PREFIX}{final.name}-{uuid.uuid4().hex[:8]}"
    tmp.mkdir()
    try:
        build(tmp)
        try:
            os.rename(tmp, final)
        except OSError:
            if not (final / MANIFEST_FILE).is_file():
                raise
            # Another process published the same export first; theirs is as good.
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def _remove_stale_temporaries(root: Path) -> None:
    now = time.time()
    for entry in os.scandir(root):
        if entry.name.startswith(_TMP_PREFIX) and entry.is_dir(follow_symlinks=False):
            try:
                if now - entry.stat().st_mtime > _STALE_TMP_SECONDS:
                    shutil.rmtree(entry.path, ignore_errors=True)
            except OSError:
                pass


def _load_torch_model(model_dir: Path) -> Any:
    from sentence_transformers import SentenceTransformer

    try:
        # Eager attention exports as plain MatMul/Softmax, which the optimizer fuses.
        return SentenceTransformer(
            str(model_dir),
            device="cpu",
            local_files_only=True,
            model_kwargs={"attn_implementation": "eager"},
        ).eval()
    except (TypeError, ValueError):
        return SentenceTransformer(str(model_dir), device="cpu", local_files_only=True).eval()


class _Graph:
    """The model as a function of tensors, for the exporter."""

    @staticmethod
    def wrap(model: Any, constants: dict[str, Any]) -> Any:
        import torch

        class Wrapped(torch.nn.Module):
            def __init__(self) -> None:
                super().__init__()
                self.model = model

            def forward(self, input_ids, attention_mask, token_type_ids=None):
                features = {"input_ids": input_ids, "attention_mask": attention_mask, **constants}
                if token_type_ids is not None:
                    features["token_type_ids"] = token_type_ids
                return self.model(features)["sentence_embedding"]

        return Wrapped().eval()


def _export_graph(model_dir: Path, out: Path) -> tuple[Any, dict, Path]:
    """The torch model, its manifest and its plain ONNX graph (``out/raw.onnx``), with
    the tokenizer saved beside it."""
    import torch

    model = _load_torch_model(model_dir)
    tokenizer = getattr(model, "tokenizer", None)
    backend_tokenizer = getattr(tokenizer, "backend_tokenizer", None)
    if backend_tokenizer is None:
        raise BackendExportError(
            "the exported backends need a model with a fast (tokenizers) tokenizer"
        )
    features = model.preprocess(["an example input", "a"])
    tensors = {k: v for k, v in features.items() if isinstance(v, torch.Tensor)}
    constants = {k: v for k, v in features.items() if not isinstance(v, torch.Tensor)}
    inputs = [n for n in ("input_ids", "attention_mask", "token_type_ids") if n in tensors]
    if inputs[:2] != ["input_ids", "attention_mask"] or set(tensors) - set(inputs):
        raise BackendExportError(f"unsupported model inputs {sorted(tensors)}")
    raw = out / "raw.onnx"
    with warnings.catch_warnings(), torch.no_grad():
        warnings.simplefilter(
            "ignore"
        )  # tracer warnings about shape checks that hold for any input
        torch.onnx.export(
            _Graph.wrap(model, constants),
            tuple(tensors[n] for n in inputs),
            str(raw),
            input_names=inputs,
            output_names=["sentence_embedding"],
            dynamo=False,
            opset_version=17,
            dynamic_axes={n: {0: "batch", 1: "tokens"} for n in inputs},
        )
    backend_tokenizer.save(str(out / TOKENIZER_FILE))
    manifest = {
        "format": 1,
        "source": str(model_dir),
        "inputs": inputs,
        "output": "sentence_embedding",
        "dim": int(model.get_embedding_dimension()),
        "max_seq_length": int(model.max_seq_length) if model.max_seq_length else None,
        "lowercase": bool(getattr(model[0], "do_lower_case", False)),
        "pad_id": int(tokenizer.pad_token_id if tokenizer.pad_token_id is not None else 0),
        "pad_token": str(tokenizer.pad_token or "[PAD]"),
        "versions": _versions(),
    }
    return model, manifest, raw


def _export_fp32(model_dir: Path, out: Path) -> None:
    model, manifest, raw = _export_graph(model_dir, out)
    fused = _optimize(raw, out / MODEL_FILE, model_dir)
    manifest.update(recipe=RECIPES["fp32"], precision="fp32", graph="fused" if fused else "plain")
    _write_manifest(out, manifest)
    try:
        _check(out, model, "fp32", manifest)
    except BackendExportError as exc:
        if not fused:
            raise
        # The fusions are kept only where they compute the model's own vectors; the plain
        # graph is the exported model itself.
        log.warning("the fused ONNX graph is not exact (%s); using the plain graph", exc)
        shutil.copyfile(raw, out / MODEL_FILE)
        manifest["graph"] = "plain"
        _check(out, model, "fp32", manifest)
    raw.unlink()


def _export_openvino(model_dir: Path, out: Path) -> None:
    import openvino as ov

    model, manifest, raw = _export_graph(model_dir, out)
    # Weights stay float32 on disk; the precision of the products is chosen per CPU
    # when the model is compiled.
    ov.save_model(ov.convert_model(str(raw)), str(out / OPENVINO_FILE), compress_to_fp16=False)
    raw.unlink()
    manifest["versions"]["openvino"] = ov.__version__
    manifest.update(recipe=RECIPES["openvino"], precision="fp32", graph="plain")
    _write_manifest(out, manifest)
    _check(out, model, "openvino", manifest)


def _optimize(raw: Path, dst: Path, model_dir: Path) -> bool:
    """ONNX Runtime's transformer fusions (attention, layer norm, GELU) when the
    architecture is one they know, written to ``dst``; the graph as exported otherwise.
    Whether the fusions were applied."""
    config = _transformer_config(model_dir)
    heads, hidden = config.get("num_attention_heads"), config.get("hidden_size")
    if (
        config.get("model_type") in _BERT_LIKE
        and isinstance(heads, int)
        and isinstance(hidden, int)
    ):
        from onnxruntime.transformers import optimizer

        try:
            with _quiet_logs():
                model = optimizer.optimize_model(
                    str(raw), model_type="bert", num_heads=heads, hidden_size=hidden
                )
                fused = {k: v for k, v in model.get_fused_operator_statistics().items() if v}
                model.save_model_to_file(str(dst))
            log.info("ONNX fusions: %s", fused)
            return True
        except Exception as exc:  # fusion is an optimisation, never a requirement
            log.warning(
                "ONNX Runtime's transformer optimizer failed (%s); using the plain graph", exc
            )
    shutil.copyfile(raw, dst)
    return False


@contextmanager
def _quiet_logs():
    """Mute ONNX Runtime's tools, which log every fusion and a quantization hint
    through loggers of their own and the root logger."""
    previous = logging.root.manager.disable
    logging.disable(logging.WARNING)
    try:
        yield
    finally:
        logging.disable(previous)


def _transformer_config(model_dir: Path) -> dict:
    folder = model_dir
    try:
        for module in json.loads((model_dir / "modules.json").read_text(encoding="utf-8")):
            if str(module.get("type", "")).endswith("Transformer"):
                folder = model_dir / str(module.get("path", ""))
                break
    except (OSError, ValueError, AttributeError):
        pass
    try:
        data = json.loads((folder / "config.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def _quantize(source: Path, out: Path, model_dir: Path) -> None:
    from onnxruntime.quantization.matmul_nbits_quantizer import MatMulNBitsQuantizer

    with _quiet_logs():
        quantizer = MatMulNBitsQuantizer(
            str(source / MODEL_FILE),
            bits=8,
            block_size=INT8_BLOCK,
            is_symmetric=True,
            accuracy_level=4,
            op_types_to_quantize=("MatMul",),
        )
        quantizer.process()
        quantizer.model.save_model_to_file(str(out / MODEL_FILE), use_external_data_format=False)
    shutil.copyfile(source / TOKENIZER_FILE, out / TOKENIZER_FILE)
    manifest = json.loads((source / MANIFEST_FILE).read_text(encoding="utf-8"))
    manifest.update(
        precision="int8",
        recipe=RECIPES["int8"],
        versions=_versions(),
        int8={
            "weights": "MatMulNBits",
            "bits": 8,
            "block": INT8_BLOCK,
            "symmetric": True,
            "accuracy_level": 4,
        },
    )
    _write_manifest(out, manifest)
    _check(out, _load_torch_model(model_dir), "int8", manifest)


def _check(folder: Path, model: Any, kind: str, manifest: dict) -> None:
    """Compare the export with the torch model on the probe texts; record the worst cosine."""
    msl = int(model.max_seq_length or 128)
    want = np.asarray(
        model.encode(
            list(_PROBES), convert_to_numpy=True, show_progress_bar=False, normalize_embeddings=True
        ),
        dtype=np.float64,
    )
    encoder = encoder_for(_BACKEND[kind], folder)
    got = encoder.encode(list(_PROBES), batch_size=4, max_seq_length=msl, normalize=True).astype(
        np.float64
    )
    cosine = float(np.min(np.sum(want * got, axis=1)))
    if not cosine >= MIN_PROBE_COSINE[kind]:
        at = f" computed in {encoder.precision}" if kind == "openvino" else ""
        raise BackendExportError(
            f"the {kind} export{at} disagrees with the torch model "
            f"(cosine {cosine:.6f} < {MIN_PROBE_COSINE[kind]} on a probe text)"
        )
    if kind == "openvino":
        manifest["probe_precision"] = encoder.precision
    manifest["probe_min_cosine"] = round(cosine, 6)
    _write_manifest(folder, manifest)


def _write_manifest(folder: Path, manifest: dict) -> None:
    (folder / MANIFEST_FILE).write_text(
        json.dumps(manifest, indent=2, sort_keys=True) + "\n", encoding="utf-8"
    )


def _versions() -> dict[str, str]:
    out = {}
    for name in ("torch", "onnx", "onnxruntime", "sentence_transformers", "transformers"):
        try:
            out[name] = __import__(name).__version__
        except Exception:
            pass
    return out
