"""The sentence-transformers embedder: texts -> float32 (n, dim) arrays, through the
embedding cache.

Importing sentence-transformers costs ~10 s of CPU, more than a whole warm
sweep, so the model is loaded only when something must actually be embedded:
the embedder's identity, its default ``max_seq_length``, its tokenizer (for
truncation counts) and, from the cache, its width are all read from the model
files directly (``sweep.embedding.models``). Which runtime computes the vectors is
the backend's business (``sweep.embedding.backends``: one file per backend); late
chunking is :class:`~sweep.embedding.late.LateChunker`'s.
"""

from __future__ import annotations

import json
import logging
import os
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from sweep.core.messages import first_line
from sweep.core.timing import Timed
from sweep.core.types import Chunk, Document
from sweep.embedding import autobackend, backends, caching, rates
from sweep.embedding.autobackend import AUTO, BackendChoice, Runtime
from sweep.embedding.cache import EmbeddingCache, default_cache_dir, usable_cache_dir
from sweep.embedding.caching import CacheCount, EmbedStats, compute_misses, count_run
from sweep.embedding.caching import bump as _bump
from sweep.embedding.checks import check_settings
from sweep.embedding.encode_times import CachedEncodeTimes, timing_namespace
from sweep.embedding.errors import EmbedderError
from sweep.embedding.inputs import (
    check_texts,
    input_keys,
    tokenized,
    window_end_of,
    window_ends_of,
)
from sweep.embedding.late import LateChunker
from sweep.embedding.models import (
    BUNDLED_ALIASES,
    DEFAULT_MODEL,
    ModelFiles,
    cached_snapshot,
    model_files,
    resolve_model,
)
from sweep.embedding.onnx_backend import ExportedBackend
from sweep.embedding.presets import preset_source
from sweep.embedding.rates import EmbedRate
from sweep.embedding.torch_backend import TorchBackend

__all__ = ["SentenceTransformerEmbedder"]

log = logging.getLogger(__name__)


class SentenceTransformerEmbedder:
    """A sentence-transformers model behind a content-addressed embedding cache.

    ``backend`` picks the runtime: ``torch`` (sentence-transformers), ``onnx``
    (the model exported to ONNX, run by ONNX Runtime), ``onnx-int8`` (that
    export with int8 weights), ``openvino`` (the export run by OpenVINO), or ``auto``:
    the fastest of them that keeps torch's vectors and rankings on this CPU, probed once
    on the corpus's own texts (``sweep.embedding.autobackend``). The command's default is
    ``auto`` (``conf/embed``); a program that builds an embedder gets ``torch`` unless it
    asks, so its vectors never depend on a measurement.
    ``threads`` caps the CPU threads the model uses (None: the runtime's
    default, all cores). Exports are kept in ``onnx_dir`` (None: ``onnx/``
    inside the embedding cache folder, or ``$XDG_CACHE_HOME/sweep/onnx`` when
    the cache is off). ``late`` asks for late chunking (:attr:`late_chunker`, torch
    only), its windows of ``max_seq_length`` tokens overlapping by ``late_overlap``.
    ``preset`` (a ``conf/embed`` preset's name) loads the model from a folder or the local
    Hugging Face cache only, never the network, and names the preset when it is absent.
    """

    def __init__(
        self,
        model: str = DEFAULT_MODEL,
        device: str = "cpu",
        batch_size: int = 32,
        normalize: bool = True,
        max_seq_length: int | None = None,
        query_prefix: str = "",
        document_prefix: str = "",
        cache_dir: str | None = None,
        show_progress: bool = True,
        backend: str = "torch",
        threads: int | None = None,
        onnx_dir: str | None = None,
        late: bool = False,
        late_overlap: int = 64,
        preset: str | None = None,
        probe_min_texts: int | None = None,
    ) -> None:
        try:
            requested = backends.check_backend(backend)
        except ValueError as exc:
            raise EmbedderError(str(exc)) from None
        # auto on a GPU or with late chunking has one runtime to choose: torch.
        if requested == AUTO and (device != "cpu" or late):
            requested = "torch"
        #: The backend that runs; ``auto`` until it is chosen (:meth:`choose_backend`).
        self.backend = requested
        self._choice: BackendChoice | None = None
        check_settings(
            self.backend,
            device,
            batch_size,
            normalize,
            max_seq_length,
            query_prefix,
            document_prefix,
            threads,
            onnx_dir,
            late,
            late_overlap,
        )
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
        if probe_min_texts is not None and (
            isinstance(probe_min_texts, bool)
            or not isinstance(probe_min_texts, int)
            or probe_min_texts < 0
        ):
            raise EmbedderError(
                "embed.probe_min_texts must be a whole number >= 0 or null, "
                f"got {probe_min_texts!r}"
            )
        #: auto: fewer distinct texts than this run torch without a probe (None: as
        #: many as pay for a probe on this CPU).
        self.probe_min_texts = (
            autobackend.default_probe_min_texts() if probe_min_texts is None else probe_min_texts
        )
        self._onnx_dir = Path(os.path.expanduser(onnx_dir)) if onnx_dir is not None else None
        if preset is not None and not isinstance(preset, str):
            raise EmbedderError(f"embed.preset must be a preset's name or null, got {preset!r}")
        # A preset's model is loaded from this machine only (sweep.embedding.presets).
        self._source = (
            preset_source(preset, self.model_name) if preset else resolve_model(self.model_name)
        )
        self._requested_max_seq_length = max_seq_length
        self._files: ModelFiles | None = None
        self._dim: int | None = None
        self._max_seq_length: int | None = None
        self._cache_root = usable_cache_dir(cache_dir)
        self._cache: EmbeddingCache | None = None
        self._stats = EmbedStats()
        # The torch model is always at hand: it downloads a Hub model, counts tokens
        # without a tokenizer file, and late chunking reads its token vectors.
        self._torch = TorchBackend(self._source, device, self.model_name, self.label, threads)
        self._exported: ExportedBackend | None = (
            None if self.backend in ("torch", AUTO) else self._exported_backend(self.backend)
        )
        self._late = LateChunker(self, self.late_overlap) if late else None
        if os.path.isdir(self._source):
            self._files = model_files(Path(self._source))
            self._max_seq_length = self._check_max_seq_length(
                max_seq_length or self._files.default_max_seq_length
            )

    # -- identity ------------------------------------------------------------

    @property
    def label(self) -> str:
        """A readable model name: the Hub id or the folder name."""
        if self.model_name in BUNDLED_ALIASES:
            return DEFAULT_MODEL
        if os.path.isdir(os.path.expanduser(self.model_name)):
            return Path(os.path.expanduser(self.model_name)).resolve().name
        return self.model_name

    @property
    def max_seq_length(self) -> int:
        """Tokens the model sees per text (longer inputs are truncated)."""
        if self._max_seq_length is None:
            self.load()
        return int(self._max_seq_length)

    @property
    def cache_namespace(self) -> str:
        """What determines a vector besides the text: the cache namespace.

        Prefixes are not part of it: the cache is keyed by the exact string
        embedded (prefix included), so documents stay cached when only the
        query prefix changes.
        """
        files = self._model_files_loaded()
        namespace = {
            "format": 1,
            "weights": files.fingerprint,
            "max_seq_length": self.max_seq_length,
            "normalize": self.normalize,
        }
        namespace.update(self._runtime().namespace())
        return json.dumps(namespace, sort_keys=True)

    @property
    def precision(self) -> str:
        """What the model computes in: ``fp32``, ``int8`` (onnx-int8's weights), or
        OpenVINO's choice for this CPU (``bf16`` or ``f32``)."""
        return self._runtime().precision

    @property
    def identity(self) -> str:
        """Everything that determines the vectors: model, weights fingerprint,
        backend, max_seq_length, normalization and prefixes (for result rows)."""
        files = self._model_files_loaded()
        # auto not chosen yet by this embedder says auto: the settings of one grid share an
        # identity before any of them embeds, and the choice is the same for all.
        identity = {
            "model": self.label,
            "weights": files.fingerprint,
            "backend": self.backend,
            "max_seq_length": self.max_seq_length,
            "normalize": self.normalize,
            "query_prefix": self.query_prefix,
            "document_prefix": self.document_prefix,
        }
        if self.backend != AUTO:
            identity.update(self._runtime().identity())
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
            else:
                self.load()
                self._dim = self._runtime().dim()
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
        (text,) = check_texts([text])
        vec = self._encode([self.query_prefix + text])
        return np.ascontiguousarray(np.asarray(vec, dtype=np.float32).reshape(1, -1))

    def query_encode_ms(self, texts: Sequence[str], *, retime: bool | None = None) -> Timed | None:
        """Fresh-encode time (ms) of each query, as :meth:`encode_query` pays it with a
        warm model, and when and under what load it was measured; read from the cache when
        this embedder timed the query before on this device, thread count and CPU, so a
        warm rerun loads no model for its latency columns (``retime``: as
        :func:`sweep.core.timing.needs_retime` says). None when the cache is off."""
        if self._cache_root is None:
            return None
        texts = check_texts(texts)
        store = CachedEncodeTimes(
            self._cache_root, timing_namespace(self.identity, self.device, self.threads), self.label
        )
        timed, measured = store.get_or_measure(texts, self.encode_query, retime=retime)
        if measured:
            log.info(
                "query encode, one at a time with a warm model: %d of %d queries timed "
                "now, p50 %.1f ms, %s (kept in the cache for every setting and rerun)",
                measured,
                len(texts),
                float(np.median(timed.ms)),
                timed.conditions.describe(),
            )
        return timed

    def count_model_tokens(self, texts: Sequence[str]) -> np.ndarray:
        """int64 length of each text as embedded (document prefix included) in the
        model's own tokenizer, special tokens included; a text is truncated when
        its count exceeds ``max_seq_length``."""
        strings = [self.document_prefix + t for t in check_texts(texts)]
        if not strings:
            return np.zeros(0, dtype=np.int64)
        files = self._files
        if files is not None and files.tokenizer_file is not None:
            return np.fromiter(
                (n for n, _ in self._tokenized(strings)), dtype=np.int64, count=len(strings)
            )
        tokenizer = self._ensure_model().tokenizer
        ids = tokenizer(strings, add_special_tokens=True, truncation=False, verbose=False)[
            "input_ids"
        ]
        return np.fromiter((len(x) for x in ids), dtype=np.int64, count=len(strings))

    def window_ends(self, texts: Sequence[str]) -> list[int | None]:
        """Per text, the characters of it the model reads (its tokens up to
        ``max_seq_length``, special tokens included, as :meth:`count_model_tokens` counts
        them; the document prefix not part of the text); None when it reads all of it.
        Every backend truncates with the same tokenizer, so this holds for each."""
        texts = check_texts(texts)
        prefix, limit = self.document_prefix, self.max_seq_length
        strings = [prefix + t for t in texts]
        if not strings:
            return []
        files = self._files
        if files is not None and files.tokenizer_file is not None:
            ends = window_ends_of(files, limit, strings)
        else:
            ends = self._window_ends_by_model(strings, limit)
        return [
            None if e is None else min(max(e - len(prefix), 0), len(t)) for e, t in zip(ends, texts)
        ]

    def _window_ends_by_model(self, strings: list[str], limit: int) -> list[int | None]:
        """:meth:`window_ends` with the loaded model's tokenizer (a model folder without a
        ``tokenizer.json``); all None when that tokenizer has no character offsets (a
        slow, pure-Python one)."""
        tokenizer = self._ensure_model().tokenizer
        try:
            enc = tokenizer(
                strings,
                add_special_tokens=True,
                truncation=False,
                return_offsets_mapping=True,
                return_special_tokens_mask=True,
                verbose=False,
            )
        except NotImplementedError:
            return [None] * len(strings)
        return [
            None if len(ids) <= limit else window_end_of(offsets, special, limit)
            for ids, offsets, special in zip(
                enc["input_ids"], enc["offset_mapping"], enc["special_tokens_mask"]
            )
        ]

    def cached(self, texts: Sequence[str], *, queries: bool = False) -> np.ndarray | None:
        """The vectors of ``texts`` (documents, or queries) when the cache holds every one,
        else None; never loads the model (``sweep.generate``'s dry run uses them when an
        earlier run stored them)."""
        if self._files is None or self._max_seq_length is None or not self._settle():
            # Only the model itself could say what the cache keys are (or, auto, which
            # runtime's vectors they are).
            return None
        cache = self._get_cache()
        if cache is None:
            return None
        prefix = self.query_prefix if queries else self.document_prefix
        strings = [prefix + t for t in check_texts(texts)]
        vectors, found = cache.get_many(self._input_keys(strings))
        return np.ascontiguousarray(vectors, dtype=np.float32) if found.all() else None

    def count_cached(self, texts: Sequence[str], *, queries: bool = False) -> CacheCount:
        """How many distinct model inputs ``texts`` (documents, or queries) are, and how
        many the cache holds; never loads the model. Without the model's files at hand
        (a Hub model not downloaded yet) the distinct texts are counted and none cached."""
        prefix = self.query_prefix if queries else self.document_prefix
        strings = [prefix + t for t in check_texts(texts)]
        if self._files is None or self._max_seq_length is None:
            return CacheCount(len(set(strings)), 0, None)
        inputs = dict(zip(self._input_keys(strings), strings))  # distinct input -> a text
        cache = self._get_cache() if self._settle() else None
        found = (
            cache.contains_many(list(inputs))
            if cache is not None
            else np.zeros(len(inputs), dtype=bool)
        )
        missing = [s for s, hit in zip(inputs.values(), found) if not hit]
        return CacheCount(len(inputs), int(found.sum()), self._model_tokens(missing))

    @property
    def late_chunker(self) -> LateChunker | None:
        """What embeds this embedder's chunks late (``embed.late=true``), else None: the
        pipeline embeds chunks on their own (``sweep.core.protocols.MayChunkLate``)."""
        return self._late

    def embed_late(self, documents: Sequence[Document], chunks: Sequence[Chunk]) -> np.ndarray:
        """Late-chunked vectors of ``chunks`` (:meth:`LateChunker.embed_late`), windows
        overlapping by ``late_overlap`` whether or not ``late`` is on."""
        chunker = self._late or LateChunker(self, self.late_overlap)
        return chunker.embed_late(documents, chunks)

    def load(self) -> None:
        """Load the model (exporting it first for an ONNX backend) now instead
        of at the first cache miss."""
        self._runtime()  # auto: chosen first
        if self._exported is None:
            self._ensure_model()
        else:
            self._ensure_export()

    @property
    def source(self) -> str:
        """Where the model is loaded from: the bundled MiniLM's folder, a directory, or a Hub id."""
        return self._source

    def export_folder(self) -> Path:
        """The export this backend runs (exported now if it is not on disk yet)."""
        self._ensure_export()
        return self._exported.encoder.folder

    def torch_model(self) -> Any:
        """The loaded ``SentenceTransformer`` (late chunking reads its token vectors)."""
        return self._ensure_model()

    def through_cache(
        self, keys: list[str], announce: Callable[[int, int, int], None], compute: caching.Compute
    ) -> np.ndarray:
        """Vectors for ``keys`` through this embedder's cache (:func:`caching.through_cache`),
        counted in :attr:`stats`."""
        cache = self._get_cache()
        run = caching.through_cache(keys, cache, lambda: self.dim, announce, compute)
        if not run.misses and run.unique and self._dim is None:
            self._dim = int(run.vectors.shape[1])
        self._stats = count_run(self._stats, len(keys), run, cache is not None)
        return run.vectors

    # -- speed -----------------------------------------------------------------

    @property
    def rate_key(self) -> str:
        """Where this embedder's speed is kept (``sweep.embedding.rates``): the same weights
        on the same backend, device and processor run at the same speed."""
        weights = self._files.fingerprint if self._files is not None else self.model_name
        if self._files is not None:
            self._settle()
        return rates.rate_key(self.label, weights, self.backend, self.device)

    def rate(self) -> EmbedRate | None:
        """How fast this embedder ran here before (None: never measured, or no cache)."""
        return rates.known_rate(self._cache_root, self.rate_key)

    def _record_rate(self, **measured: Any) -> None:
        rates.record_rate(self._cache_root, self.rate_key, **measured)

    # -- internals ---------------------------------------------------------------

    def _runtime(self) -> TorchBackend | ExportedBackend:
        """The backend that computes this embedder's vectors (auto, asked before any text
        was offered: torch, as for too few texts to probe on)."""
        if not self._settle():
            self._decide([], [], few_kept="embedder")
        return self._torch if self._exported is None else self._exported

    # -- auto --------------------------------------------------------------------

    @property
    def backend_choice(self) -> BackendChoice | None:
        """What ``auto`` chose and why (None: the backend was named, or not chosen yet)."""
        return self._choice

    def choose_backend(
        self, texts: Sequence[str], queries: Sequence[str] = ()
    ) -> BackendChoice | None:
        """``auto``: the runtime for this model on this CPU, chosen once: a choice measured
        before, else probed now on samples of ``texts`` (chunks) and ``queries``
        (questions), when they are enough to pay for a probe (``probe_min_texts``). The
        probe's vectors of the chosen runtime go into the cache. None when the backend was
        named."""
        if self.backend != AUTO and (self._choice is None or self._choice.measured_here):
            return self._choice
        documents = [self.document_prefix + t for t in check_texts(texts)]
        asked = [self.query_prefix + q for q in check_texts(queries)]
        kept = autobackend.kept_choice(self._choice_folder(), self._choice_key())
        # A choice measured before stands; one made for want of texts is made again, for
        # the texts of this sweep.
        if kept is not None and kept.measured_here:
            self._adopt(self._choice_key(), kept)
        else:
            # Too few here is not written down: a grid may never embed (BM25), and each of
            # its jobs embeds fewer texts than the grid, so decides the same.
            self._decide(documents, asked, few_kept="process")
        return self._choice

    def _choice_key(self) -> str:
        files = self._model_files_loaded()
        return autobackend.choice_key(
            {
                "weights": files.fingerprint,
                "max_seq_length": self.max_seq_length,
                "normalize": self.normalize,
                "device": self.device,
                "threads": self.threads,
            }
        )

    def _settle(self) -> bool:
        """Whether the backend is chosen; ``auto`` takes a choice made before for this
        model and CPU (in this process or kept on disk) and never probes here."""
        if self.backend != AUTO:
            return True
        key = self._choice_key()
        choice = autobackend.kept_choice(self._choice_folder(), key)
        if choice is None:
            return False
        self._adopt(key, choice)
        return True

    def _adopt(self, key: str, choice: BackendChoice) -> None:
        self._choice = choice
        self.backend = choice.backend
        self._exported = (
            None if choice.backend == "torch" else self._exported_backend(choice.backend)
        )
        self._cache = None  # its namespace is the chosen runtime's
        autobackend.say_once(key, choice)

    def _choice_folder(self) -> Path | None:
        """Where ``auto``'s choices are kept: beside the exports, when there is a cache
        (``runtime.cache_dir`` or ``embed.onnx_dir``); with the cache off, in this process
        only."""
        if self._cache_root is None and self._onnx_dir is None:
            return None
        return self._onnx_root()

    def _distinct_inputs(self, documents: list[str], queries: list[str]) -> int:
        """How many distinct model inputs these are (as the plan counts them: two texts
        the model truncates alike are one)."""
        return len(set(self._input_keys(list(dict.fromkeys(documents + queries)))))

    def _too_few(self, documents: list[str], queries: list[str]) -> bool:
        return self._distinct_inputs(documents, queries) < self.probe_min_texts

    def _decide(self, documents: list[str], queries: list[str], *, few_kept: str = "disk") -> None:
        """Choose for ``documents`` and ``queries`` (prefixed as embedded): torch when they
        are too few to pay for a probe, else what the probe measures. A measured choice is
        kept on disk; torch for too few texts is kept where ``few_kept`` says: ``disk``
        (every later job of the sweep then runs torch too, whatever it embeds),
        ``process``, or ``embedder`` (this one alone, asked before it was offered any
        text)."""
        key = self._choice_key()
        if self._too_few(documents, queries):
            choice = autobackend.too_few(
                self._distinct_inputs(documents, queries), self.probe_min_texts
            )
            if few_kept != "embedder":
                folder = self._choice_folder() if few_kept == "disk" else None
                autobackend.keep_choice(folder, key, choice)
            self._adopt(key, choice)
            return
        self._probe(key, documents, queries)

    def _probe(self, key: str, documents: list[str], queries: list[str]) -> None:
        """Probe the runtimes on ``documents`` and ``queries``; keep the choice and the
        chosen runtime's vectors of what was sampled."""
        limit = self.max_seq_length
        log.info(
            "embed.backend=auto: measuring torch against %s on %d of the corpus's texts "
            "(once per model and CPU)",
            ", ".join(autobackend.CANDIDATES),
            min(len(set(documents)), autobackend.PROBE_TEXTS),
        )

        def run(backend: TorchBackend | ExportedBackend) -> Callable[[list[str]], np.ndarray]:
            return lambda texts: backend.encode(texts, self.batch_size, limit, self.normalize)

        candidates = []
        for name in autobackend.CANDIDATES:
            exported = self._exported_backend(name)
            candidates.append(
                Runtime(
                    name,
                    lambda e=exported: self._load_exported(e),
                    run(exported),
                    lambda e=exported: e.precision,
                )
            )
        reference = Runtime("torch", self._ensure_model, run(self._torch), lambda: "fp32")
        found = autobackend.probe(reference, candidates, documents, queries)
        autobackend.keep_choice(self._choice_folder(), key, found.choice)
        self._adopt(key, found.choice)
        cache = self._get_cache()
        if cache is not None:
            strings = found.texts + found.queries
            vectors = np.concatenate([found.text_vectors, found.query_vectors])
            cache.put_many(self._input_keys(strings), vectors)

    def _exported_backend(self, name: str) -> ExportedBackend:
        return backends.exported_backend(
            name, self.model_name, self.label, self.threads, self._onnx_root()
        )

    def _load_exported(self, exported: ExportedBackend) -> None:
        """Load ``exported`` (its package checked first: a probe says what is missing)."""
        try:
            backends.check_backend(exported.name)
        except ValueError as exc:
            raise EmbedderError(str(exc)) from None
        self._loaded(exported.load(self._model_files_loaded()), exported)

    def _check_max_seq_length(self, value: int | None) -> int | None:
        files = self._files
        if (
            value is not None
            and files is not None
            and files.position_limit is not None
            and value > files.position_limit
        ):
            raise EmbedderError(
                f"embed.max_seq_length={value} exceeds the model's limit of "
                f"{files.position_limit} positions ({self.model_name})"
            )
        return value

    def _model_files_loaded(self) -> ModelFiles:
        if self._files is None:
            # A Hub id that was not cached: loading downloads it into the HF cache.
            self._ensure_model()
            snapshot = cached_snapshot(self._source)
            if snapshot is None:
                raise EmbedderError(
                    f"cannot load embedding model '{self.model_name}': "
                    "downloaded, but not found in the Hugging Face cache"
                )
            self._files = model_files(snapshot)
        return self._files

    def _loaded(self, seconds: float | None, backend: TorchBackend | ExportedBackend) -> None:
        """Count a load this embedder did, and default ``max_seq_length`` to the model's."""
        if seconds is not None:
            self._stats = _bump(self._stats, load_seconds=seconds)
            self._record_rate(load_s=seconds)
        if self._max_seq_length is None:
            self._max_seq_length = self._check_max_seq_length(
                self._requested_max_seq_length or backend.default_max_seq_length()
            )

    def _ensure_model(self) -> Any:
        if self._torch.model is None:
            self._loaded(self._torch.load(), self._torch)
        return self._torch.model

    def _onnx_root(self) -> Path:
        if self._onnx_dir is not None:
            return self._onnx_dir
        if self._cache_root is not None:
            return self._cache_root / "onnx"
        return default_cache_dir().parent / "onnx"

    def _ensure_export(self) -> Any:
        """The runtime (ONNX Runtime or OpenVINO) for this backend's export, exporting
        the model first if needed."""
        exported = self._exported
        assert exported is not None, "torch runs no export"
        if exported.encoder is None:
            self._loaded(exported.load(self._model_files_loaded()), exported)
        return exported.encoder

    def _encode(self, texts: list[str]) -> np.ndarray:
        """This backend's vectors of ``texts``, the model loaded."""
        self.load()
        return self._runtime().encode(texts, self.batch_size, self.max_seq_length, self.normalize)

    def _get_cache(self) -> EmbeddingCache | None:
        if self._cache is None and self._cache_root is not None:
            self._cache = EmbeddingCache(
                self._cache_root, self.cache_namespace, dim=self._dim, meta={"model": self.label}
            )
        return self._cache

    def _input_keys(self, strings: list[str]) -> list[str]:
        """A cache key per string (``sweep.embedding.inputs.input_keys``)."""
        files = self._files
        if files is None or files.tokenizer_file is None or not strings:
            return strings
        return input_keys(strings, self._tokenized(strings))

    def _tokenized(self, strings: list[str]) -> list[tuple[int, str | None]]:
        return tokenized(self._files, self.max_seq_length, strings)

    def _model_tokens(self, strings: list[str]) -> int | None:
        """Model tokens of ``strings`` as the model sees them (truncated); None without a
        tokenizer file to count them with."""
        if self._files is None or self._files.tokenizer_file is None:
            return None
        limit = self.max_seq_length
        return sum(min(n, limit) for n, _ in self._tokenized(strings))

    def _embed(self, texts: Sequence[str], prefix: str, what: str) -> np.ndarray:
        strings = [prefix + t for t in check_texts(texts)]
        if strings and not self._settle():
            self._decide(strings, [])  # auto, and no corpus was offered before: these texts
        keys = self._input_keys(strings)  # distinct model inputs, as cache keys

        def announce(distinct: int, cached: int, missing: int) -> None:
            log.info(
                "embedding %d %s (%d distinct model inputs): %d cached, %d to embed",
                len(strings),
                what,
                distinct,
                cached,
                missing,
            )

        def record(todo: list[str], model_s: float) -> None:
            self._record_rate(texts=len(todo), tokens=self._model_tokens(todo), seconds=model_s)

        compute = compute_misses(
            strings,
            keys,
            self.load,
            self._encode_batch,
            self.batch_size,
            self.show_progress,
            record,
        )
        return self.through_cache(keys, announce, compute)

    def _encode_batch(self, texts: list[str]) -> np.ndarray:
        """One batch's vectors; a failure (out of memory, a bad max_seq_length) is one line."""
        try:
            return self._encode(texts)
        except EmbedderError:
            raise
        except Exception as exc:
            raise EmbedderError(
                f"embedding with '{self.model_name}' failed: {first_line(exc)}"
            ) from None
