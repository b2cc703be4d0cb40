"""Late chunking (Günther et al. 2024, arXiv 2409.04701): embed a whole document's
tokens once, then mean-pool each chunk's tokens, so a chunk's vector carries the
context around it ("it" knows which pump the previous paragraph named).

:class:`LateChunker` runs a sentence-transformers model that way for the embedder that
holds it (``embed.late=true``); :func:`windows`, :func:`assemble` and :func:`pool` are
the pure NumPy steps. A document longer than the model's window is read in overlapping windows of
tokens, and each token keeps the vector of the window that saw most context
around it.
"""

from __future__ import annotations

import hashlib
import json
import logging
import time
from collections.abc import Callable, Iterator, Sequence
from typing import Any, Protocol

import numpy as np

from sweep.core import progress
from sweep.core.messages import first_line
from sweep.core.types import Chunk, Document
from sweep.embedding.cache import EmbeddingCache
from sweep.embedding.caching import STORE_EVERY_BATCHES, keep
from sweep.embedding.errors import EmbedderError, LateChunkingUnsupported
from sweep.embedding.models import MEMO_LOCK

__all__ = ["LateChunker", "LateHost", "assemble", "pool", "windows"]

log = logging.getLogger(__name__)

# Late-chunked vectors share the cache with plain ones; this prefix (no text starts
# with a NUL) and the format number keep their keys apart.
_LATE_KEY = "\0late:"
_LATE_FORMAT = 1


def windows(n_tokens: int, width: int, overlap: int) -> list[tuple[int, int]]:
    """Token windows ``[a, b)`` covering ``0..n_tokens``, each at most ``width`` long,
    consecutive ones sharing exactly ``overlap`` tokens (the last may be shorter).

    The overlap is what gives the tokens near a cut context from both sides:
    :func:`assemble` takes each of them from the window it sits deeper in.
    """
    if n_tokens < 0:
        raise ValueError(f"n_tokens must be >= 0, got {n_tokens}")
    if width < 1:
        raise ValueError(f"width must be >= 1, got {width}")
    if not 0 <= overlap < width:
        raise ValueError(f"overlap must be in [0, width={width}), got {overlap}")
    step = width - overlap
    spans = []
    a = 0
    while a < n_tokens:
        b = min(a + width, n_tokens)
        spans.append((a, b))
        if b == n_tokens:
            break
        a += step
    return spans


def assemble(
    n_tokens: int, spans: Sequence[tuple[int, int]], window_vectors: Sequence[np.ndarray]
) -> np.ndarray:
    """Per-token vectors (n_tokens, d) of a document from the vectors of its windows.

    A token seen by several windows takes its vector from the one where it is
    farthest from a cut: distance ``min(t - a, b - 1 - t)``, where an edge at the
    document's own start or end is no cut (nothing was hidden there). Ties go to
    the earlier window, so the result is deterministic. ``window_vectors[i]`` is
    ``(b - a, d)`` for ``spans[i] == (a, b)``; the spans must cover every token.
    """
    if len(spans) != len(window_vectors):
        raise ValueError(f"{len(spans)} spans but {len(window_vectors)} window arrays")
    d = int(window_vectors[0].shape[1]) if len(window_vectors) else 0
    out = np.zeros((n_tokens, d), dtype=np.float32)
    best = np.full(n_tokens, -1, dtype=np.int64)
    far = n_tokens + 1  # farther than any cut can be
    for (a, b), vecs in zip(spans, window_vectors):
        if not 0 <= a <= b <= n_tokens or vecs.shape != (b - a, d):
            raise ValueError(
                f"window ({a}, {b}) with vectors of shape {vecs.shape} does not fit "
                f"{n_tokens} tokens of dim {d}"
            )
        t = np.arange(a, b)
        left = t - a if a > 0 else np.full(b - a, far)
        right = b - 1 - t if b < n_tokens else np.full(b - a, far)
        score = np.minimum(left, right)
        better = score > best[a:b]
        out[a:b][better] = vecs[better]
        best[a:b][better] = score[better]
    if (best < 0).any():
        raise ValueError(f"the windows leave token {int(np.argmax(best < 0))} uncovered")
    return out


def pool(
    token_offsets: np.ndarray, token_vectors: np.ndarray, spans: Sequence[tuple[int, int]]
) -> np.ndarray:
    """Mean vector (len(spans), d) of the tokens whose character span overlaps each
    ``[start, end)`` of ``spans``.

    ``token_offsets`` (n, 2) are the tokens' ``[start, end)`` character offsets in
    token order, as a tokenizer emits them. A span no token overlaps (whitespace
    only, or empty) gets the vector of the nearest token, the one before on a
    tie, rather than NaN, so every chunk stays searchable.
    """
    offsets = np.asarray(token_offsets, dtype=np.int64).reshape(-1, 2)
    vectors = np.asarray(token_vectors, dtype=np.float32)
    n = len(offsets)
    if vectors.ndim != 2 or len(vectors) != n:
        raise ValueError(f"{n} token offsets but token vectors of shape {vectors.shape}")
    bounds = np.asarray(spans, dtype=np.int64).reshape(-1, 2)
    if len(bounds) == 0:
        return np.zeros((0, vectors.shape[1]), dtype=np.float32)
    if n == 0:
        raise ValueError("no tokens to pool")
    # Running maxima keep the lookups valid should a tokenizer's offsets ever step
    # back; for offsets in order they change nothing.
    starts = np.maximum.accumulate(offsets[:, 0])
    ends = np.maximum.accumulate(offsets[:, 1])
    lo = np.searchsorted(ends, bounds[:, 0], side="right")  # first token ending after start
    hi = np.searchsorted(starts, bounds[:, 1], side="left")  # past the last starting before end
    empty = hi <= lo
    if empty.any():
        before = np.clip(lo - 1, 0, n - 1)
        after = np.clip(hi, 0, n - 1)
        gap_before = np.where(lo > 0, bounds[:, 0] - ends[before], np.iinfo(np.int64).max)
        gap_after = np.where(hi < n, starts[after] - bounds[:, 1], np.iinfo(np.int64).max)
        nearest = np.where(gap_before <= gap_after, before, after)
        lo = np.where(empty, nearest, lo)
        hi = np.where(empty, nearest + 1, hi)
    # reduceat sums [lo, hi - 1) in place, with no (n, d) copy or float64 cumulative
    # sum, which for a long document would be several times its token vectors; the
    # last token is added after (reduceat gives row lo itself when hi - 1 == lo).
    last = hi - 1
    sums = np.add.reduceat(vectors, np.stack([lo, last], axis=1).ravel(), axis=0)[::2]
    sums += np.where((last > lo)[:, None], vectors[last], 0)
    return (sums / (hi - lo)[:, None]).astype(np.float32)


class LateHost(Protocol):
    """What a late chunker needs of the embedder that holds it (``SentenceTransformerEmbedder``)."""

    model_name: str
    document_prefix: str
    normalize: bool
    batch_size: int
    threads: int | None
    show_progress: bool

    @property
    def max_seq_length(self) -> int: ...

    def torch_model(self) -> Any:
        """The loaded ``SentenceTransformer``."""
        ...

    def through_cache(
        self,
        keys: list[str],
        announce: Callable[[int, int, int], None],
        compute: Callable[..., tuple[float, float]],
    ) -> np.ndarray: ...


class LateChunker:
    """Late-chunked vectors of a host embedder's model: windows of ``max_seq_length`` tokens
    overlapping by ``overlap``, cached beside the host's plain vectors."""

    def __init__(self, host: LateHost, overlap: int) -> None:
        self.host = host
        self.overlap = overlap

    def embed_late(self, documents: Sequence[Document], chunks: Sequence[Chunk]) -> np.ndarray:
        """Late-chunked vectors, float32 (len(chunks), dim), rows aligned with ``chunks``.

        Each document is read by the model whole, in windows of ``max_seq_length``
        tokens (special and ``document_prefix`` tokens included) overlapping by
        ``overlap``, and a chunk's vector is the mean of its tokens' vectors over
        ``text[chunk.start:chunk.end]``, so it carries the context of the text around
        it; L2-normalised when ``normalize``. Late chunking embeds the document as
        written: a chunk's ``embed_text`` (a heading prefix, say) is not used. Vectors
        are cached by document text, span, overlap and prefix; only documents with an
        uncached chunk go through the model.
        """
        by_id = _by_id(documents)
        digests: dict[str, str] = {}
        keys = [self._key(c, by_id, digests) for c in chunks]

        def announce(distinct: int, cached: int, missing: int) -> None:
            log.info(
                "late-chunking %d chunks of %d documents: %d cached, %d to embed",
                len(chunks),
                len(digests),
                cached,
                missing,
            )

        def compute(
            misses: list[int], first: list[int], out: np.ndarray, cache: EmbeddingCache | None
        ) -> tuple[float, float]:
            # Each missing vector is computed from the first chunk that asks for it.
            wanted: dict[str, list[tuple[int, int, int]]] = {}
            for u in misses:
                c = chunks[first[u]]
                wanted.setdefault(c.doc_id, []).append((u, c.start, c.end))
            todo = [(by_id[d], spans) for d, spans in wanted.items()]
            return _LateRun(self, todo, [keys[f] for f in first], out, cache).run()

        return self.host.through_cache(keys, announce, compute)

    def _key(self, c: Chunk, by_id: dict[str, Document], digests: dict[str, str]) -> str:
        doc = by_id.get(c.doc_id)
        if doc is None:
            raise EmbedderError(
                f"late chunking: chunk {c.chunk_id} belongs to none of the documents given"
            )
        if not 0 <= c.start <= c.end <= len(doc.text):
            raise EmbedderError(
                f"late chunking: chunk {c.chunk_id} spans [{c.start}, {c.end}), "
                f"outside its document of {len(doc.text)} characters"
            )
        if c.doc_id not in digests:
            digests[c.doc_id] = hashlib.sha256(
                doc.text.encode("utf-8", "surrogatepass")
            ).hexdigest()
        return _LATE_KEY + json.dumps(
            [
                _LATE_FORMAT,
                self.overlap,
                self.host.document_prefix,
                digests[c.doc_id],
                c.start,
                c.end,
            ]
        )


def _by_id(documents: Sequence[Document]) -> dict[str, Document]:
    by_id: dict[str, Document] = {}
    for doc in documents:
        if doc.doc_id in by_id:
            raise EmbedderError(f"late chunking: document {doc.doc_id!r} is given twice")
        by_id[doc.doc_id] = doc
    return by_id


class _LateRun:
    """One pass of the model over the documents of ``todo``, writing the vector of each
    ``(row, start, end)`` of theirs into ``out[row]``.

    Windows of all documents share batches, and a document is pooled and its vectors
    freed as soon as its last window is through, so memory holds a batch and the
    documents it touches, never the corpus.
    """

    def __init__(
        self,
        chunker: LateChunker,
        todo: list[tuple[Document, list[tuple[int, int, int]]]],
        keys: list[str],
        out: np.ndarray,
        cache: EmbeddingCache | None,
    ) -> None:
        host = chunker.host
        self.host, self.overlap = host, chunker.overlap
        # Longest first, as plain embedding does: the bar's rate starts pessimistic.
        self.todo = sorted(todo, key=lambda item: -len(item[0].text))
        self.keys, self.out, self.cache = keys, out, cache
        self.model = host.torch_model()
        self.tok, self.transformer = self.model.tokenizer, self.model[0]
        self._check_model()
        self.lower = bool(getattr(self.transformer, "do_lower_case", False))
        head, self.tail = _special_tokens(self.tok)
        prefix = (
            self.tok(
                _lower(host.document_prefix, self.lower), add_special_tokens=False, verbose=False
            )["input_ids"]
            if host.document_prefix
            else []
        )
        self.lead = head + prefix
        self.width = host.max_seq_length - len(self.lead) - len(self.tail)
        if self.width <= self.overlap:
            raise EmbedderError(
                f"embed.late_overlap={self.overlap} must be less than the {self.width} document "
                f"tokens a window holds (max_seq_length {host.max_seq_length} minus special and "
                "prefix tokens)"
            )
        self.pad = self.tok.pad_token_id if self.tok.pad_token_id is not None else 0
        # Per document being read: its token offsets, windows and window vectors so far.
        self.reading: dict[int, tuple[np.ndarray, list[tuple[int, int]], list[np.ndarray]]] = {}
        self.pending_keys: list[str] = []
        self.pending_vecs: list[np.ndarray] = []
        self.store_seconds = 0.0

    def _check_model(self) -> None:
        tok, transformer = self.tok, self.transformer
        # getattr: these are the model's own modules, whose attributes vary by release.
        if (
            tok is None
            or not getattr(tok, "is_fast", False)
            or not hasattr(transformer, "auto_model")
        ):
            raise LateChunkingUnsupported(
                f"embed.late=true needs a fast tokenizer (for character offsets) and a "
                f"transformer module; '{self.host.model_name}' lacks one"
            )
        check_mean_pooled(self.model, self.host.model_name)

    def run(self) -> tuple[float, float]:
        """Model and cache-store seconds."""
        start = time.perf_counter()
        batches = 0
        size = self.host.batch_size
        with progress.bar(
            len(self.todo), "late chunking", "doc", show=self.host.show_progress
        ) as bar:
            batch: list[tuple[int, list[int]]] = []
            for item in self._window_inputs():
                batch.append(item)
                if len(batch) == size:
                    self._run_batch(batch, bar)
                    batch = []
                    batches += 1
                    if batches % STORE_EVERY_BATCHES == 0:
                        self._store()
            if batch:
                self._run_batch(batch, bar)
            self._store()
        return time.perf_counter() - start - self.store_seconds, self.store_seconds

    def _window_inputs(self) -> Iterator[tuple[int, list[int]]]:
        for i, (doc, _) in enumerate(self.todo):
            enc = self.tok(
                _lower(doc.text, self.lower),
                add_special_tokens=False,
                return_offsets_mapping=True,
                verbose=False,
            )
            ids = enc["input_ids"]
            offsets = np.asarray(enc["offset_mapping"], dtype=np.int64).reshape(-1, 2)
            # A document with no tokens (whitespace) is one window of specials only.
            spans = windows(len(ids), self.width, self.overlap) or [(0, 0)]
            self.reading[i] = (offsets, spans, [])
            for a, b in spans:
                yield i, self.lead + ids[a:b] + self.tail

    def _store(self) -> None:
        if self.cache is None or not self.pending_keys:
            return
        self.store_seconds += keep(
            self.cache, list(self.pending_keys), np.vstack(self.pending_vecs), "chunks late-chunked"
        )
        self.pending_keys.clear()
        self.pending_vecs.clear()

    def _hidden(self, batch: list[tuple[int, list[int]]]) -> np.ndarray:
        """The transformer's token vectors of a batch of windows."""
        import torch

        longest = max(len(ids) for _, ids in batch)
        input_ids = torch.full((len(batch), longest), self.pad, dtype=torch.long)
        mask = torch.zeros((len(batch), longest), dtype=torch.long)
        for row, (_, ids) in enumerate(batch):
            input_ids[row, : len(ids)] = torch.tensor(ids, dtype=torch.long)
            mask[row, : len(ids)] = 1
        model, host = self.model, self.host
        try:
            with MEMO_LOCK:
                # The memoized model is shared by embedders that may want another
                # max_seq_length or thread count.
                model.max_seq_length = host.max_seq_length
                if host.threads is not None:
                    torch.set_num_threads(host.threads)
                with torch.inference_mode():
                    features = {
                        "input_ids": input_ids.to(model.device),
                        "attention_mask": mask.to(model.device),
                    }
                    hidden = self.transformer(features)["token_embeddings"]
            return hidden.float().cpu().numpy()
        except Exception as exc:  # e.g. out of memory
            raise EmbedderError(
                f"late chunking with '{host.model_name}' failed: {first_line(exc)}"
            ) from None

    def _run_batch(self, batch: list[tuple[int, list[int]]], bar: Any) -> None:
        hidden = self._hidden(batch)
        lead, tail = len(self.lead), len(self.tail)
        for row, (i, ids) in enumerate(batch):
            offsets, spans, done = self.reading[i]
            if len(offsets):
                done.append(hidden[row, lead : len(ids) - tail])
            else:  # as the plain embedding of an empty text: the mean over the specials
                done.append(hidden[row, : len(ids)].mean(axis=0, keepdims=True))
            if len(done) == len(spans):
                self._finish(i)
                bar.update(1)

    def _finish(self, i: int) -> None:
        offsets, spans, done = self.reading.pop(i)
        wanted = self.todo[i][1]
        if len(offsets):
            tokens = assemble(len(offsets), spans, done)
            vecs = pool(offsets, tokens, [(s, e) for _, s, e in wanted])
        else:
            vecs = np.repeat(done[0], len(wanted), axis=0)
        if self.host.normalize:
            vecs /= np.maximum(np.linalg.norm(vecs, axis=1, keepdims=True), 1e-12)
        rows = [u for u, _, _ in wanted]
        self.out[rows] = vecs
        self.pending_keys.extend(self.keys[u] for u in rows)
        self.pending_vecs.append(vecs)


def check_mean_pooled(model: Any, name: str) -> None:
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
            for m in (
                "cls_token",
                "max_tokens",
                "mean_sqrt_len_tokens",
                "weightedmean_tokens",
                "lasttoken",
            )
        )
    if (
        len(modules) < 2
        or modules[1] != "Pooling"
        or not mean
        or any(m != "Normalize" for m in modules[2:])
    ):
        raise LateChunkingUnsupported(
            f"embed.late=true needs a mean-pooled model (transformer, mean pooling, at most a "
            f"normalization); '{name}' is {' -> '.join(modules)}"
            + ("" if mean else " without mean pooling")
        )


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
