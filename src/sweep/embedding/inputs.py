"""What the model sees of each text: its length in model tokens and, for a text the model
truncates, the token ids it keeps, counted with the model's own ``tokenizer.json`` (no
torch). The truncation share comes from the counts; the cache keys a truncated text by
what the model sees, so two texts the model truncates alike are embedded once.
"""

from __future__ import annotations

from collections.abc import Sequence

from sweep.embedding.errors import EmbedderError
from sweep.embedding.models import MEMO_LOCK, ModelFiles, load_tokenizer

__all__ = ["check_texts", "input_keys", "tokenized", "window_end_of", "window_ends_of"]

#: Per (tokenizer, lowercase, max_seq_length): string -> (model tokens, truncated-input
#: key). Process-wide, because every job of a sweep builds its own SentenceTransformerEmbedder.
_TOKEN_MEMO: dict[tuple[str, bool, int], dict[str, tuple[int, str | None]]] = {}
_TOKEN_MEMO_SIZE = 500_000


def check_texts(texts: Sequence[str]) -> list[str]:
    """``texts`` as a list, each a string (a single string, or anything else, is one
    line's error)."""
    if isinstance(texts, str):
        raise EmbedderError("expected a sequence of strings, got a single string")
    out = list(texts)
    for i, t in enumerate(out):
        if not isinstance(t, str):
            raise EmbedderError(f"text {i} is {type(t).__name__}, expected str")
    return out


def input_keys(strings: list[str], counted: list[tuple[int, str | None]]) -> list[str]:
    """A cache key per string: the string itself, or, for a string the model truncates,
    the token ids the model actually sees (``counted``: :func:`tokenized` of ``strings``).

    Chunks that share their first max_seq_length tokens (a 512-token chunk and the
    256-token chunk at the same offset, say) are the same model input and get one
    embedding.
    """
    return [s if key is None else key for s, (_, key) in zip(strings, counted)]


def tokenized(files: ModelFiles, limit: int, strings: list[str]) -> list[tuple[int, str | None]]:
    """Per string: its length in model tokens, and the key of its truncated model input
    (None when it is not truncated at ``limit`` tokens). One tokenizer pass serves both
    the truncation share and the cache keys, memoized across the jobs of a sweep, which
    share most of their chunks. ``files`` must have a tokenizer file."""
    assert files.tokenizer_file is not None
    with MEMO_LOCK:
        memo = _TOKEN_MEMO.setdefault((str(files.tokenizer_file), files.lowercase, limit), {})
    todo = [s for s in dict.fromkeys(strings) if s not in memo]
    if todo:
        if len(memo) + len(todo) > _TOKEN_MEMO_SIZE:
            memo.clear()
        tok = load_tokenizer(files.tokenizer_file)
        lowered = [t.lower() for t in todo] if files.lowercase else todo
        for s, enc in zip(todo, tok.encode_batch(lowered, add_special_tokens=True)):
            n = len(enc.ids)
            memo[s] = (n, _truncated_key(enc, limit) if n > limit else None)
    return [memo[s] for s in strings]


def _truncated_key(enc, limit: int) -> str:
    """What the model sees: its special tokens around the first (limit - number of
    specials) content tokens, as the tokenizer's own truncation does for one sequence."""
    n = len(enc.ids)
    special = enc.special_tokens_mask
    n_special = sum(special)
    head = 0
    while head < n and special[head]:
        head += 1
    content = [i for i, m in zip(enc.ids, special) if not m]
    kept = (
        enc.ids[:head]
        + content[: limit - n_special]
        + [i for i, m in zip(enc.ids[head:], special[head:]) if m]
    )
    return "\0ids:" + ",".join(map(str, kept))


def window_end_of(offsets: Sequence[tuple[int, int]], special: Sequence[int], limit: int) -> int:
    """The characters of a text the model reads when it keeps ``limit`` tokens of it: the
    end of the last content token kept (``offsets``: each token's character span,
    ``special``: 1 for a special token, which counts in ``limit`` as the tokenizer's own
    truncation counts it, like :func:`_truncated_key`)."""
    content = [o for o, m in zip(offsets, special) if not m]
    keep = limit - (len(offsets) - len(content))
    if keep <= 0:
        return 0
    return int(content[min(keep, len(content)) - 1][1])


def window_ends_of(files: ModelFiles, limit: int, strings: list[str]) -> list[int | None]:
    """Per string, the characters the model reads of it at ``limit`` tokens (None when it
    reads every token), with the model's own ``tokenizer.json`` (``files`` must have one).
    Not memoized: only the truncated chunks of a setting are asked, once."""
    assert files.tokenizer_file is not None
    tok = load_tokenizer(files.tokenizer_file)
    lowered = [t.lower() for t in strings] if files.lowercase else strings
    out: list[int | None] = []
    for s, low, enc in zip(strings, lowered, tok.encode_batch(lowered, add_special_tokens=True)):
        if len(enc.ids) <= limit:
            out.append(None)
            continue
        end = window_end_of(enc.offsets, enc.special_tokens_mask, limit)
        out.append(end if len(low) == len(s) else _unlowered(s, end))
    return out


def _unlowered(s: str, end: int) -> int:
    """Offset ``end`` in ``s.lower()`` as an offset in ``s``: a few characters lower to
    two ("İ" to "i̇"), which moves every offset after them."""
    n = 0
    for i, ch in enumerate(s):
        n += len(ch.lower())
        if n > end:
            return i
    return len(s)
