"""FAISS inner-product indexes over chunk embeddings (exact and HNSW).

Both are plain classes with keyword settings, so Hydra can build them from
``index/*.yaml`` with ``_target_`` and a user can plug in another one that has
the same four members: ``build``, ``search``, ``ntotal``, ``describe``.
"""

from __future__ import annotations

from contextlib import contextmanager
from typing import Iterator

import numpy as np


def _faiss():
    try:
        import faiss
    except ImportError as exc:  # pragma: no cover - faiss-cpu is a dependency
        raise ImportError(f"{exc}; pip install faiss-cpu") from None
    return faiss


def _check_vectors(name: str, vectors: np.ndarray, dim: int | None) -> np.ndarray:
    if not isinstance(vectors, np.ndarray):
        raise ValueError(f"{name}: expected a NumPy array, got {type(vectors).__name__}")
    if vectors.dtype != np.float32:
        raise ValueError(f"{name}: expected float32 vectors, got {vectors.dtype}")
    if vectors.ndim != 2:
        raise ValueError(f"{name}: expected a 2-D (n, dim) array, got shape {vectors.shape}")
    if vectors.shape[1] == 0:
        raise ValueError(f"{name}: vectors have dimension 0")
    if dim is not None and vectors.shape[1] != dim:
        raise ValueError(f"{name}: vectors have dim {vectors.shape[1]}, the index has dim {dim}")
    if not np.isfinite(vectors).all():
        raise ValueError(f"{name}: vectors contain NaN or infinity")
    return np.ascontiguousarray(vectors)


def _check_k(k: int) -> int:
    if isinstance(k, bool) or not isinstance(k, (int, np.integer)) or k < 1:
        raise ValueError(f"search: k must be a positive integer, got {k!r}")
    return int(k)


class _FaissIndex:
    """Shared build/search plumbing; subclasses make the FAISS index."""

    def __init__(self) -> None:
        self._index = None
        self._dim: int | None = None

    def _make(self, dim: int):
        raise NotImplementedError

    def _configure_search(self) -> None:
        pass

    @property
    def ntotal(self) -> int:
        return 0 if self._index is None else int(self._index.ntotal)

    @property
    def dim(self) -> int | None:
        return self._dim

    @property
    def nbytes(self) -> int:
        """Size of the built index as FAISS stores it (vectors plus any graph): its memory cost."""
        if self._index is None:
            return 0
        return int(_faiss().serialize_index(self._index).size)

    def build(self, vectors: np.ndarray) -> None:
        """Index ``vectors`` (float32, (n, dim)); row i gets id i. Replaces any previous build."""
        vectors = _check_vectors("build", vectors, None)
        self._dim = int(vectors.shape[1])
        index = self._make(self._dim)
        if vectors.shape[0]:
            self._add(index, vectors)
        self._index = index

    def _add(self, index, vectors: np.ndarray) -> None:
        index.add(vectors)

    def search(self, queries: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
        """Top-k by inner product: (float32 scores, int64 ids), each (nq, k); id -1 where fewer than k."""
        if self._index is None:
            raise ValueError("search: the index is not built; call build(vectors) first")
        k = _check_k(k)
        queries = _check_vectors("search", queries, self._dim)
        if queries.shape[0] == 0 or self._index.ntotal == 0:
            return (np.full((queries.shape[0], k), np.finfo(np.float32).min, dtype=np.float32),
                    np.full((queries.shape[0], k), -1, dtype=np.int64))
        self._configure_search()
        scores, ids = self._index.search(queries, k)
        return np.asarray(scores, dtype=np.float32), np.asarray(ids, dtype=np.int64)

    def describe(self) -> str:
        raise NotImplementedError


class FlatIPIndex(_FaissIndex):
    """Exact inner-product search (``faiss.IndexFlatIP``): cosine for normalized vectors."""

    def _make(self, dim: int):
        return _faiss().IndexFlatIP(dim)

    def describe(self) -> str:
        return f"FlatIP(dim={self._dim}, n={self.ntotal})"


@contextmanager
def _single_thread() -> Iterator[None]:
    faiss = _faiss()
    before = faiss.omp_get_max_threads()
    faiss.omp_set_num_threads(1)
    try:
        yield
    finally:
        faiss.omp_set_num_threads(before)


class HNSWIndex(_FaissIndex):
    """Approximate inner-product search with an HNSW graph (``faiss.IndexHNSWFlat``)."""

    def __init__(self, m: int = 32, ef_construction: int = 200, ef_search: int = 128) -> None:
        super().__init__()
        for name, value in (("m", m), ("ef_construction", ef_construction), ("ef_search", ef_search)):
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ValueError(f"HNSWIndex: {name} must be a positive integer, got {value!r}")
        if m < 2:
            raise ValueError(f"HNSWIndex: m must be at least 2, got {m}")
        self.m = m
        self.ef_construction = ef_construction
        self.ef_search = ef_search

    def _make(self, dim: int):
        faiss = _faiss()
        index = faiss.IndexHNSWFlat(dim, self.m, faiss.METRIC_INNER_PRODUCT)
        index.hnsw.efConstruction = self.ef_construction
        index.hnsw.efSearch = self.ef_search
        return index

    def _add(self, index, vectors: np.ndarray) -> None:
        # Parallel insertion makes the graph, and so the results, depend on
        # thread timing; one thread keeps every run of a sweep reproducible.
        with _single_thread():
            index.add(vectors)

    def _configure_search(self) -> None:
        self._index.hnsw.efSearch = self.ef_search

    def describe(self) -> str:
        return (f"HNSW(m={self.m}, ef_construction={self.ef_construction}, "
                f"ef_search={self.ef_search}, dim={self._dim}, n={self.ntotal})")
