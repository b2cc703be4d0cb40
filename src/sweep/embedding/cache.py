"""Content-addressed on-disk cache of embeddings (issue 5).

Layout under ``root``::

    v1/<sha256(namespace)[:32]>/namespace.json      identity, dim (for `info`)
    v1/<ns>/<h>.vecs.npy                             float32 (n, dim)
    v1/<ns>/<h>.keys.npy                             uint8 (n, 32): sha256 keys

One shard per ``put_many`` call rather than one file per string: a sweep looks
up ~10k strings, and reading a few dozen key files is far faster than opening
10k small ones. ``<h>`` is a hash of the shard's keys and vectors, so a shard
verifies itself when read, and two processes writing the same shard simply
write the same file. Every file is written to a temporary name and moved into
place with ``os.replace``; the keys file is moved last and acts as the commit
marker, so a reader never sees a partial shard. A shard that is truncated or
corrupt is ignored (its strings are recomputed) and removed.

A cache that cannot be written (a read-only mount shared by a team, a full disk) is
read, not written: the log says so once, naming the folder, and what it lacks is
computed and kept in this process's memory (``sweep.core.cachedirs``).
"""

from __future__ import annotations

import hashlib
import io
import json
import logging
import os
import time
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO

import numpy as np

from sweep.core import cachedirs
from sweep.embedding.errors import (
    CacheError,  # re-exported: sweep.cache imports it from here
    EmbedderError,
)

log = logging.getLogger(__name__)

FORMAT_DIR = "v1"
KEY_BYTES = 32
_KEYS_SUFFIX = ".keys.npy"
_VECS_SUFFIX = ".vecs.npy"
_META_NAME = "namespace.json"
_TMP_PREFIX = ".tmp-"
# Leftovers of a killed writer older than this are removed when a cache opens;
# younger ones may belong to a writer that is still running.
_STALE_TMP_SECONDS = 24 * 3600

#: The ``kind`` of a namespace that holds query-encode times (ms, dim 1), not vectors.
ENCODE_TIMES_KIND = "query_encode_ms"


def default_cache_dir() -> Path:
    """``$XDG_CACHE_HOME/sweep/embeddings``, else ``~/.cache/sweep/embeddings``."""
    return cachedirs.default_cache_dir_of("embeddings")


def resolve_cache_dir(cache_dir: str | os.PathLike | None) -> Path | None:
    """The folder ``runtime.cache_dir`` names (None: the default); None when it is ``off``."""
    return cachedirs.resolve_cache_dir_of(cache_dir, "embeddings")


def usable_cache_dir(cache_dir: str | os.PathLike | None) -> Path | None:
    """:func:`resolve_cache_dir`, refusing a path that exists and is not a folder."""
    root = resolve_cache_dir(cache_dir)
    if root is not None and root.exists() and not root.is_dir():
        raise EmbedderError(f"runtime.cache_dir {str(root)!r} exists and is not a directory")
    return root


def namespace_dirname(namespace: str) -> str:
    return hashlib.sha256(namespace.encode("utf-8", "surrogatepass")).hexdigest()[:32]


def cache_key(namespace: str, text: str) -> bytes:
    """sha256(namespace + NUL + text): the address of one embedding."""
    h = hashlib.sha256(namespace.encode("utf-8", "surrogatepass"))
    h.update(b"\0")
    h.update(text.encode("utf-8", "surrogatepass"))
    return h.digest()


def _shard_hash(keys: np.ndarray, vecs: np.ndarray) -> str:
    h = hashlib.sha256(np.ascontiguousarray(keys).tobytes())
    h.update(str(vecs.shape).encode())
    h.update(np.ascontiguousarray(vecs).tobytes())
    return h.hexdigest()[:32]


def _fsync_dir(path: Path) -> None:
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def _atomic_write(path: Path, suffix: str, write: Callable[[IO[bytes]], None]) -> None:
    """Write via a temporary file and rename, so no reader ever sees half a file."""
    tmp = path.parent / f"{_TMP_PREFIX}{os.getpid()}-{uuid.uuid4().hex}{suffix}"
    try:
        with open(tmp, "wb") as f:
            write(f)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        try:
            tmp.unlink()
        except OSError:
            pass
        raise


def _atomic_save(path: Path, array: np.ndarray) -> None:
    # Through bytes, not np.save to the file: numpy's own writes report a full disk as
    # "102400 requested and 15328 written", without the errno that says what happened.
    buffer = io.BytesIO()
    np.save(buffer, array, allow_pickle=False)
    _atomic_write(path, ".npy", lambda f: f.write(buffer.getbuffer()))


def _atomic_write_text(path: Path, text: str) -> None:
    _atomic_write(path, ".json", lambda f: f.write(text.encode("utf-8")))


def _load_keys(path: Path) -> np.ndarray | None:
    try:
        keys = np.load(path, allow_pickle=False)
    except FileNotFoundError:
        return None
    except Exception as exc:  # truncated or garbled file: recompute, never crash
        log.warning("ignoring corrupt embedding-cache file %s: %s", path, exc)
        _remove_shard(path.parent, path.name[: -len(_KEYS_SUFFIX)])
        return None
    if keys.dtype != np.uint8 or keys.ndim != 2 or keys.shape[1] != KEY_BYTES:
        log.warning("ignoring malformed embedding-cache file %s", path)
        _remove_shard(path.parent, path.name[: -len(_KEYS_SUFFIX)])
        return None
    return keys


def _remove_shard(ns_dir: Path, shard: str) -> None:
    # Keys first: without its keys file a shard is invisible to readers.
    for suffix in (_KEYS_SUFFIX, _VECS_SUFFIX):
        try:
            (ns_dir / f"{shard}{suffix}").unlink()
        except OSError:
            pass


@dataclass(frozen=True, slots=True)
class _Shard:
    name: str
    keys: np.ndarray


class EmbeddingCache:
    """Embeddings of one embedder identity (``namespace``), addressed by text.

    ``dim`` is optional; when given, stored vectors of another width are
    rejected on write and ignored on read.
    """

    def __init__(
        self,
        root: str | os.PathLike,
        namespace: str,
        dim: int | None = None,
        meta: dict | None = None,
    ) -> None:
        if not isinstance(namespace, str) or not namespace:
            raise CacheError("embedding cache namespace must be a non-empty string")
        self.root = Path(root)
        self.namespace = namespace
        self.dir = self.root / FORMAT_DIR / namespace_dirname(namespace)
        self._meta = dict(meta or {})
        self._dim = dim
        self._shards: dict[str, _Shard] = {}
        self._bad: set[str] = set()
        self._index: dict[bytes, tuple[str, int]] = {}
        self._vectors: dict[str, np.ndarray] = {}
        self._meta_written = False
        if self._dim is None:
            self._dim = self._stored_dim()
        if cachedirs.check_writable("embedding", self.root):
            self._remove_stale_temporaries()

    @property
    def dim(self) -> int | None:
        return self._dim

    def __len__(self) -> int:
        self._refresh()
        return len(self._index)

    def keys_for(self, texts: Sequence[str]) -> list[bytes]:
        ns = self.namespace
        return [cache_key(ns, t) for t in texts]

    def contains_many(self, texts: Sequence[str]) -> np.ndarray:
        """Which of ``texts`` the cache holds (a bool mask), without reading a vector."""
        self._refresh()
        index = self._index
        return np.fromiter((k in index for k in self.keys_for(texts)), dtype=bool, count=len(texts))

    def get_many(self, texts: Sequence[str]) -> tuple[np.ndarray, np.ndarray]:
        """Look up ``texts``: (float32 (n, dim) with NaN rows where missing, found mask).

        The width is ``dim`` if known (from the constructor or stored entries),
        else 0 when nothing is stored.
        """
        keys = self.keys_for(texts)
        self._refresh()
        n = len(keys)
        found = np.zeros(n, dtype=bool)
        by_shard: dict[str, list[tuple[int, int]]] = {}
        for i, key in enumerate(keys):
            loc = self._index.get(key)
            if loc is not None:
                by_shard.setdefault(loc[0], []).append((i, loc[1]))
        # A shard's vectors are read and verified only when a lookup needs them.
        loaded: dict[str, tuple[np.ndarray, np.ndarray]] = {}
        for shard, pairs in by_shard.items():
            vecs = self._shard_vectors(shard)
            if vecs is None:
                continue
            where = np.fromiter((p[0] for p in pairs), dtype=np.int64, count=len(pairs))
            rows = np.fromiter((p[1] for p in pairs), dtype=np.int64, count=len(pairs))
            loaded[shard] = (where, rows)
        dim = self._dim or 0
        out = np.full((n, dim), np.nan, dtype=np.float32)
        for shard, (where, rows) in loaded.items():
            out[where] = self._vectors[shard][rows]
            found[where] = True
        return out, found

    def put_many(self, texts: Sequence[str], vectors: np.ndarray) -> int:
        """Store ``vectors[i]`` for ``texts[i]``; returns how many new entries were written
        (0 when the cache cannot be written: they are then kept in this object's memory)."""
        vectors = np.asarray(vectors)
        if vectors.ndim != 2 or vectors.shape[0] != len(texts):
            raise CacheError(
                f"put_many: expected a ({len(texts)}, dim) array, got shape {vectors.shape}"
            )
        if not np.issubdtype(vectors.dtype, np.floating):
            raise CacheError(f"put_many: expected float vectors, got dtype {vectors.dtype}")
        vectors = np.ascontiguousarray(vectors, dtype=np.float32)
        if self._dim is not None and vectors.shape[1] != self._dim:
            raise CacheError(
                f"put_many: vectors have dim {vectors.shape[1]}, this cache holds dim {self._dim}"
            )
        if not np.isfinite(vectors).all():
            raise CacheError("put_many: vectors contain NaN or infinity")
        if len(texts) == 0:
            return 0
        self._refresh()
        keys = self.keys_for(texts)
        seen: set[bytes] = set()
        take: list[int] = []
        for i, key in enumerate(keys):
            if key not in self._index and key not in seen:
                seen.add(key)
                take.append(i)
        if not take:
            return 0
        if self._dim is None:
            self._dim = int(vectors.shape[1])
        key_arr = np.frombuffer(b"".join(keys[i] for i in take), dtype=np.uint8).reshape(
            -1, KEY_BYTES
        )
        vec_arr = vectors[take]
        name = _shard_hash(key_arr, vec_arr)
        written = self._write_shard(name, key_arr, vec_arr)
        # Kept in memory either way: the vectors are right, only the disk refused them.
        self._add_shard(_Shard(name, key_arr))
        self._vectors[name] = vec_arr
        return len(take) if written else 0

    # -- internals ---------------------------------------------------------

    def _write_shard(self, name: str, keys: np.ndarray, vecs: np.ndarray) -> bool:
        """Write one shard (vectors, then keys: the commit marker); False when the cache
        cannot be written, which is said once and leaves no half shard behind."""
        if cachedirs.read_only(self.root):
            return False
        vecs_path = self.dir / f"{name}{_VECS_SUFFIX}"
        keys_path = self.dir / f"{name}{_KEYS_SUFFIX}"
        try:
            self.dir.mkdir(parents=True, exist_ok=True)
            self._write_meta()
            _atomic_save(vecs_path, vecs)
            _atomic_save(keys_path, keys)
        except OSError as e:
            # A vectors file without its keys is invisible to readers: only space lost.
            # (With its keys, another process wrote the same shard whole: it stays.)
            if not keys_path.exists():
                try:
                    vecs_path.unlink()
                except OSError:
                    pass
            cachedirs.note_unwritable("embedding", self.root, e)
            return False
        _fsync_dir(self.dir)
        return True

    def _stored_dim(self) -> int | None:
        try:
            meta = json.loads((self.dir / _META_NAME).read_text(encoding="utf-8"))
            dim = meta.get("dim")
            return int(dim) if isinstance(dim, int) and dim > 0 else None
        except (OSError, ValueError, AttributeError):
            return None

    def _write_meta(self) -> None:
        if self._meta_written:
            return
        path = self.dir / _META_NAME
        if not path.exists():
            body = {
                "namespace": self.namespace,
                "dim": self._dim,
                "created": time.time(),
                **{k: v for k, v in self._meta.items() if k not in ("namespace", "dim")},
            }
            _atomic_write_text(path, json.dumps(body, indent=2, sort_keys=True) + "\n")
        self._meta_written = True

    def _remove_stale_temporaries(self) -> None:
        try:
            entries = list(os.scandir(self.dir))
        except OSError:
            return
        now = time.time()
        for entry in entries:
            if entry.name.startswith(_TMP_PREFIX):
                try:
                    if now - entry.stat().st_mtime > _STALE_TMP_SECONDS:
                        os.unlink(entry.path)
                except OSError:
                    pass

    def _refresh(self) -> None:
        """Pick up shards written since the last look, by this or another process."""
        try:
            names = os.listdir(self.dir)
        except OSError:
            return
        for fname in names:
            if not fname.endswith(_KEYS_SUFFIX) or fname.startswith("."):
                continue
            shard = fname[: -len(_KEYS_SUFFIX)]
            if shard in self._shards or shard in self._bad:
                continue
            keys = _load_keys(self.dir / fname)
            if keys is None:
                self._bad.add(shard)
                continue
            self._add_shard(_Shard(shard, keys))

    def _add_shard(self, shard: _Shard) -> None:
        self._shards[shard.name] = shard
        raw = shard.keys.tobytes()
        index = self._index
        name = shard.name
        for row in range(shard.keys.shape[0]):
            key = raw[row * KEY_BYTES : (row + 1) * KEY_BYTES]
            if key not in index:
                index[key] = (name, row)

    def _shard_vectors(self, name: str) -> np.ndarray | None:
        vecs = self._vectors.get(name)
        if vecs is not None:
            return vecs
        shard = self._shards[name]
        path = self.dir / f"{name}{_VECS_SUFFIX}"
        problem = None
        try:
            vecs = np.load(path, allow_pickle=False)
        except FileNotFoundError:
            problem = "missing"
        except Exception as exc:  # truncated or garbled: recompute, never crash
            problem = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        if problem is None:
            if (
                vecs.dtype != np.float32
                or vecs.ndim != 2
                or vecs.shape[0] != shard.keys.shape[0]
                or (self._dim is not None and vecs.shape[1] != self._dim)
            ):
                problem = f"unexpected array {vecs.dtype} {vecs.shape}"
            elif _shard_hash(shard.keys, vecs) != name:
                problem = "checksum mismatch"
        if problem is not None:
            if problem != "missing":
                log.warning(
                    "ignoring corrupt embedding-cache shard %s (%s); "
                    "its entries will be recomputed",
                    path,
                    problem,
                )
                _remove_shard(self.dir, name)
            self._drop_shard(name)
            return None
        if self._dim is None:
            self._dim = int(vecs.shape[1])
        self._vectors[name] = vecs
        return vecs

    def _drop_shard(self, name: str) -> None:
        shard = self._shards.pop(name, None)
        self._bad.add(name)
        if shard is None:
            return
        dead = [k for k, (s, _) in self._index.items() if s == name]
        for key in dead:
            del self._index[key]
        # Another shard may hold the same keys; let the next refresh find them.
        if dead:
            for other in list(self._shards.values()):
                raw = other.keys.tobytes()
                for row in range(other.keys.shape[0]):
                    key = raw[row * KEY_BYTES : (row + 1) * KEY_BYTES]
                    if key not in self._index:
                        self._index[key] = (other.name, row)


# -- whole-cache operations -------------------------------------------------


def _namespace_dirs(root: Path) -> list[Path]:
    base = root / FORMAT_DIR
    try:
        entries = sorted(os.scandir(base), key=lambda e: e.name)
    except OSError:
        return []
    return [
        Path(e.path)
        for e in entries
        if e.is_dir(follow_symlinks=False)
        and len(e.name) == 32
        and all(c in "0123456789abcdef" for c in e.name)
    ]


def _is_cache_file(name: str) -> bool:
    return (
        name == _META_NAME
        or name.startswith(_TMP_PREFIX)
        or name.endswith(_KEYS_SUFFIX)
        or name.endswith(_VECS_SUFFIX)
    )


def _namespace_info(ns_dir: Path) -> dict:
    files = [e for e in os.scandir(ns_dir) if e.is_file(follow_symlinks=False)]
    size = 0
    keys: set[bytes] = set()
    shards = 0
    for e in files:
        if not _is_cache_file(e.name):
            continue
        try:
            size += e.stat().st_size
        except OSError:
            continue
        if e.name.endswith(_KEYS_SUFFIX) and not e.name.startswith("."):
            try:
                arr = np.load(e.path, allow_pickle=False)
            except Exception:
                continue
            if arr.dtype == np.uint8 and arr.ndim == 2 and arr.shape[1] == KEY_BYTES:
                raw = arr.tobytes()
                keys.update(raw[i : i + KEY_BYTES] for i in range(0, len(raw), KEY_BYTES))
                shards += 1
    meta: dict = {}
    try:
        meta = json.loads((ns_dir / _META_NAME).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        pass
    return {
        "id": ns_dir.name,
        "namespace": meta.get("namespace", ""),
        "model": meta.get("model", ""),
        "dim": meta.get("dim"),
        "entries": len(keys),
        "shards": shards,
        "bytes": size,
    }


def cache_info(root: str | os.PathLike) -> dict:
    """Size of the cache at ``root``: entries, bytes, the totals per backend and one record
    per namespace (with its backend, sorted by it)."""
    root = Path(root)
    namespaces = [_namespace_info(d) for d in _namespace_dirs(root)]
    backends: dict[str, dict[str, int]] = {}
    for n in namespaces:
        n["backend"] = namespace_backend(n)
        total = backends.setdefault(n["backend"], {"namespaces": 0, "entries": 0, "bytes": 0})
        total["namespaces"] += 1
        total["entries"] += n["entries"]
        total["bytes"] += n["bytes"]
    namespaces.sort(key=lambda n: n["backend"])
    return {
        "root": str(root),
        "entries": sum(n["entries"] for n in namespaces),
        "bytes": sum(n["bytes"] for n in namespaces),
        "backends": dict(sorted(backends.items())),
        "namespaces": namespaces,
    }


def clear_cache(root: str | os.PathLike, namespace: str | None = None) -> dict:
    """Delete cached embeddings (all, or one namespace given by identity or id).

    Only files this module writes are removed, so pointing ``root`` at a
    directory that holds other things is harmless. Returns what was removed.
    """
    root = Path(root)
    dirs = _namespace_dirs(root)
    if namespace is not None:
        wanted = {namespace, namespace_dirname(namespace)}
        dirs = [d for d in dirs if d.name in wanted]
    removed = {"entries": 0, "bytes": 0, "namespaces": 0}
    for ns_dir in dirs:
        info = _namespace_info(ns_dir)
        names = sorted(os.listdir(ns_dir), key=lambda n: (not n.endswith(_KEYS_SUFFIX), n))
        for name in names:  # keys files first, so readers stop seeing shards at once
            if _is_cache_file(name):
                try:
                    (ns_dir / name).unlink()
                except OSError:
                    pass
        try:
            ns_dir.rmdir()
        except OSError:
            pass
        removed["entries"] += info["entries"]
        removed["bytes"] += info["bytes"]
        removed["namespaces"] += 1
    try:
        (root / FORMAT_DIR).rmdir()
    except OSError:
        pass
    return removed


# -- command line -------------------------------------------------------------


def human_bytes(n: int) -> str:
    size = float(n)
    for unit in ("B", "KB", "MB", "GB"):
        if size < 1024 or unit == "GB":
            return f"{size:.0f} {unit}" if unit == "B" else f"{size:.1f} {unit}"
        size /= 1024
    return f"{n} B"


def namespace_backend(ns: dict) -> str:
    """The runtime a namespace's vectors came from: ``openvino (bf16, recipe r1)``,
    ``torch (fp32)``; ``-`` for what holds no vectors (encode times)."""
    try:
        ident = json.loads(ns["namespace"])
    except (TypeError, ValueError):
        ident = None
    if not isinstance(ident, dict) or ident.get("kind") == ENCODE_TIMES_KIND:
        return "-"
    # torch's namespace names no backend: it was the only one when the cache began.
    backend = f"{ident.get('backend', 'torch')} ({ident.get('precision', 'fp32')}"
    return backend + (f", recipe {ident['recipe']})" if "recipe" in ident else ")")


def describe_namespace(ns: dict) -> str:
    try:
        ident = json.loads(ns["namespace"])
    except (TypeError, ValueError):
        return ns.get("model") or ns["namespace"] or "?"
    if not isinstance(ident, dict):
        return str(ident)
    model = ns.get("model") or ident.get("model") or "?"
    if ident.get("kind") == ENCODE_TIMES_KIND:  # sweep.embedding.encode_times
        return (
            f"{model} query encode times (ms) on {ident.get('device', '?')}, "
            f"{ident.get('threads', '?')} thread(s)"
        )
    parts = [model, namespace_backend(ns)]
    for key in ("max_seq_length", "normalize"):
        if key in ident:
            parts.append(f"{key}={ident[key]}")
    return " ".join(parts)
