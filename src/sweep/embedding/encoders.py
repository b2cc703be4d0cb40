"""The runtimes of an exported model: ONNX Runtime and OpenVINO, each computing the vectors
of an export folder (``sweep.embedding.onnx_export`` writes them; the ``onnx`` and
``openvino`` backends, ``sweep.embedding.onnx_backend`` and ``openvino_backend``, run them).

The exported backends run a copy of the model (see ``sweep.embedding.onnx_export``)
with the model's own ``tokenizers`` tokenizer, so embedding with them imports
neither torch nor sentence-transformers once the export exists.

- ``onnx``: the graph with ONNX Runtime's exact fusions, run by ONNX Runtime.
- ``onnx-int8``: that graph with its weight matrices stored as int8 in blocks of
  32 rows, each with its own scale (ONNX Runtime's MatMulNBits), which keeps
  MiniLM's vectors within a cosine of 0.999 of the model's own.
- ``openvino``: the plain graph run by OpenVINO at the CPU's default inference
  precision: bfloat16 where the CPU computes it natively (AVX-512 BF16, AMX),
  float32 on other x86 CPUs. The precision is part of the cache key and of the
  export's folder name (each precision's export is checked where it runs).
"""

from __future__ import annotations

import json
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

MODEL_FILE = "model.onnx"
#: OpenVINO's own format (graph + weights), converted once from the plain ONNX graph.
OPENVINO_FILE = "model.xml"
TOKENIZER_FILE = "tokenizer.json"
MANIFEST_FILE = "manifest.json"


def export_kind(backend: str) -> str:
    """Which export a backend runs: ``fp32``, ``int8`` or ``openvino``."""
    if backend == "openvino":
        return "openvino"
    return "int8" if backend.endswith("-int8") else "fp32"


def openvino_precision() -> str:
    """The precision OpenVINO computes in on this CPU by default (``bf16`` or ``f32``)."""
    import openvino as ov

    return _precision_name(ov.Core().get_property("CPU", "INFERENCE_PRECISION_HINT"))


def _precision_name(value: Any) -> str:
    """``bf16``, ``f32``, ...: OpenVINO's short name of an element type."""
    return str(value.get_type_name() if hasattr(value, "get_type_name") else value)


@dataclass(frozen=True, slots=True)
class Manifest:
    """What the export recorded about the model (``manifest.json`` beside it)."""

    inputs: tuple[str, ...]
    output: str
    dim: int
    max_seq_length: int | None
    lowercase: bool
    pad_id: int
    pad_token: str

    @classmethod
    def read(cls, folder: Path) -> Manifest:
        data = json.loads((folder / MANIFEST_FILE).read_text(encoding="utf-8"))
        return cls(
            inputs=tuple(data["inputs"]),
            output=str(data["output"]),
            dim=int(data["dim"]),
            max_seq_length=data.get("max_seq_length"),
            lowercase=bool(data["lowercase"]),
            pad_id=int(data["pad_id"]),
            pad_token=str(data["pad_token"]),
        )


class ExportEncoder:
    """Tokenizes with the export's tokenizer, sorts by token count so each batch
    pads to about its own length, runs the graph (which includes the model's
    pooling), and optionally L2-normalizes, like ``SentenceTransformer.encode``."""

    def __init__(self, folder: Path) -> None:
        from tokenizers import Tokenizer

        self.folder = folder
        self.manifest = Manifest.read(folder)
        self._tokenizer = Tokenizer.from_file(str(folder / TOKENIZER_FILE))
        self._tokenizer.no_padding()
        self._lock = threading.Lock()
        self._inputs = list(self.manifest.inputs)

    @property
    def dim(self) -> int:
        return self.manifest.dim

    def _run(self, feed: dict[str, np.ndarray]) -> np.ndarray:
        raise NotImplementedError

    def encode(
        self, texts: Sequence[str], batch_size: int, max_seq_length: int, normalize: bool
    ) -> np.ndarray:
        """float32 (len(texts), dim), rows aligned with ``texts``."""
        out = np.empty((len(texts), self.dim), dtype=np.float32)
        if not texts:
            return out
        strings = [t.lower() for t in texts] if self.manifest.lowercase else list(texts)
        with self._lock:  # truncation is tokenizer state, and embedders may differ in it
            self._tokenizer.enable_truncation(max_length=max_seq_length)
            encodings = self._tokenizer.encode_batch(strings, add_special_tokens=True)
        order = sorted(range(len(encodings)), key=lambda i: -len(encodings[i].ids))
        for lo in range(0, len(order), batch_size):
            idx = order[lo : lo + batch_size]
            batch = [encodings[i] for i in idx]
            width = max(len(e.ids) for e in batch)
            ids = np.full((len(batch), width), self.manifest.pad_id, dtype=np.int64)
            mask = np.zeros((len(batch), width), dtype=np.int64)
            types = np.zeros((len(batch), width), dtype=np.int64)
            for row, enc in enumerate(batch):
                n = len(enc.ids)
                ids[row, :n] = enc.ids
                mask[row, :n] = 1
                types[row, :n] = enc.type_ids
            feed = {"input_ids": ids, "attention_mask": mask, "token_type_ids": types}
            out[idx] = self._run({name: feed[name] for name in self._inputs})
        if normalize:
            # As torch.nn.functional.normalize: a zero vector stays zero.
            norms = np.linalg.norm(out, axis=1, keepdims=True)
            out /= np.maximum(norms, 1e-12)
        return out


class OnnxEncoder(ExportEncoder):
    """An exported model folder run by ONNX Runtime on the CPU."""

    def __init__(self, folder: Path, threads: int | None = None) -> None:
        import onnxruntime as ort

        super().__init__(folder)
        options = ort.SessionOptions()
        options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
        # 0 lets ONNX Runtime use one thread per physical core.
        options.intra_op_num_threads = int(threads or 0)
        options.inter_op_num_threads = 1
        options.log_severity_level = 3  # warnings about unused initializers are noise here
        self._session = ort.InferenceSession(
            str(folder / MODEL_FILE), options, providers=["CPUExecutionProvider"]
        )
        names = {i.name for i in self._session.get_inputs()}
        self._inputs = [n for n in self.manifest.inputs if n in names]

    def _run(self, feed: dict[str, np.ndarray]) -> np.ndarray:
        return self._session.run([self.manifest.output], feed)[0]


class OpenVinoEncoder(ExportEncoder):
    """An exported model folder run by OpenVINO on the CPU, at the CPU's default
    inference precision (``precision``: ``bf16`` or ``f32``)."""

    def __init__(self, folder: Path, threads: int | None = None) -> None:
        import openvino as ov

        super().__init__(folder)
        config: dict[str, Any] = {"PERFORMANCE_HINT": "LATENCY"}
        if threads:
            config["INFERENCE_NUM_THREADS"] = int(threads)
        compiled = ov.Core().compile_model(str(folder / OPENVINO_FILE), "CPU", config)
        # The exporter drops an input the model never reads (token_type_ids, say).
        names = {name for port in compiled.inputs for name in port.get_names()}
        self._inputs = [n for n in self.manifest.inputs if n in names]
        self.precision = _precision_name(compiled.get_property("INFERENCE_PRECISION_HINT"))
        self._output = compiled.output(self.manifest.output)
        self._request = compiled.create_infer_request()
        self._run_lock = threading.Lock()  # one infer request runs one batch at a time

    def _run(self, feed: dict[str, np.ndarray]) -> np.ndarray:
        with self._run_lock:
            return np.array(self._request.infer(feed)[self._output], dtype=np.float32)


def encoder_for(backend: str, folder: Path, threads: int | None = None) -> ExportEncoder:
    """The runtime that computes ``backend``'s vectors from its export ``folder``."""
    if backend == "openvino":
        return OpenVinoEncoder(folder, threads=threads)
    return OnnxEncoder(folder, threads=threads)
