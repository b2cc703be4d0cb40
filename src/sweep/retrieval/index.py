"""FAISS inner-product indexes over chunk embeddings (exact, HNSW and IVF).

All are plain classes with keyword settings, so Hydra can build them from
``index/*.yaml`` with ``_target_`` and a user can plug in another one that has
the same four members: ``build``, ``search``, ``ntotal``, ``describe``. An
index that may miss true neighbours says so with ``approximate = True``; the
pipeline then measures what it misses (:func:`ann_recall`).
"""

from __future__ import annotations

import logging
import math
from collections.abc import Iterator
from contextlib import contextmanager

import numpy as np

from sweep.core.checks import positive_int
from sweep.core.protocols import SearchIndex


def _faiss():
    # faiss reports at INFO that its AVX2 build is absent before it loads the
    # generic one; on the console (of every worker process, too) that reads like an error.
    logging.getLogger("faiss.loader").setLevel(logging.WARNING)
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


class _FaissIndex:
    """Shared build/search plumbing; subclasses make the FAISS index."""

    #: True when search may miss some of the true top k (the row then reports by how much).
    approximate = False

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
        k = positive_int("search: k", k)
        queries = _check_vectors("search", queries, self._dim)
        if queries.shape[0] == 0 or self._index.ntotal == 0:
            return (
                np.full((queries.shape[0], k), np.finfo(np.float32).min, dtype=np.float32),
                np.full((queries.shape[0], k), -1, dtype=np.int64),
            )
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

    approximate = True

    def __init__(self, m: int = 32, ef_construction: int = 200, ef_search: int = 128) -> None:
        super().__init__()
        for name, value in (
            ("m", m),
            ("ef_construction", ef_construction),
            ("ef_search", ef_search),
        ):
            positive_int(f"HNSWIndex: {name}", value)
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
        return (
            f"HNSW(m={self.m}, ef_construction={self.ef_construction}, "
            f"ef_search={self.ef_search}, dim={self._dim}, n={self.ntotal})"
        )


class IVFIndex(_FaissIndex):
    """Approximate inner-product search over k-means cells (``faiss.IndexIVFFlat``).

    The vectors are clustered into ``nlist`` cells, and a query is compared with
    the vectors of its ``nprobe`` nearest cells only. ``nlist=None`` picks
    4·√n; either way it is capped at n/39, because k-means wants about 39
    training vectors per cell (FAISS warns below that), so a small corpus gets
    few cells and, with ``nprobe`` ≥ cells, exact results.
    """

    approximate = True
    MIN_POINTS_PER_CELL = 39

    def __init__(self, nlist: int | None = None, nprobe: int = 16) -> None:
        super().__init__()
        if nlist is not None:
            positive_int("IVFIndex: nlist", nlist)
        self.nlist = nlist
        self.nprobe = positive_int("IVFIndex: nprobe", nprobe)
        self._cells = 1

    @classmethod
    def cells_for(cls, n: int, nlist: int | None) -> int:
        """The number of cells used for ``n`` vectors."""
        want = nlist if nlist is not None else round(4 * math.sqrt(max(n, 1)))
        return max(1, min(want, n // cls.MIN_POINTS_PER_CELL))

    def build(self, vectors: np.ndarray) -> None:
        vectors = _check_vectors("build", vectors, None)
        self._cells = self.cells_for(vectors.shape[0], self.nlist)
        super().build(vectors)

    def _make(self, dim: int):
        faiss = _faiss()
        quantizer = faiss.IndexFlatIP(dim)
        # FAISS's Python wrapper keeps the quantizer alive as long as the index.
        return faiss.IndexIVFFlat(quantizer, dim, self._cells, faiss.METRIC_INNER_PRODUCT)

    def _add(self, index, vectors: np.ndarray) -> None:
        index.train(vectors)  # k-means with FAISS's fixed seed: the same cells every run
        index.add(vectors)

    def _configure_search(self) -> None:
        self._index.nprobe = min(self.nprobe, self._cells)

    def describe(self) -> str:
        return (
            f"IVF(nlist={self._cells}, nprobe={min(self.nprobe, self._cells)}, "
            f"dim={self._dim}, n={self.ntotal})"
        )


#: Depth at which an approximate index is compared with exact search.
ANN_RECALL_K = 10


def ann_recall(
    index: SearchIndex, vectors: np.ndarray, queries: np.ndarray, k: int = ANN_RECALL_K
) -> float:
    """Share of exact search's top ``k`` that ``index`` also returns in its top ``k``,
    averaged over the queries: what the approximate index costs in neighbours.

    Exact search runs on the same ``vectors``; with fewer than ``k`` vectors every
    one of them is the target.
    """
    vectors = _check_vectors("ann_recall", vectors, None)
    if queries.shape[0] == 0 or vectors.shape[0] == 0:
        return float("nan")
    k = min(positive_int("search: k", k), vectors.shape[0])
    exact = FlatIPIndex()
    exact.build(vectors)
    _, truth = exact.search(queries, k)
    _, found = index.search(queries, k)
    hits = [len(set(t.tolist()) & set(f.tolist())) for t, f in zip(truth, found)]
    return float(np.mean(hits) / k)
