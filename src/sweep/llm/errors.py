"""Errors of the LLM client: one line each, and never a secret.

Whatever the server sends back is masked before it is shortened, so a cut
can never leave part of a key behind.

A key of 8 characters or more is masked in every form a server, a proxy or an
HTTP library writes it in, not only as typed: in any letter case; split by
white space or line breaks; escaped as Python ``repr`` or JSON writes it
(``\\n``, ``\\\\n``, ``\\u00e9``, ``\\x0a``, ``\\"``), percent-encoded (``%0A``,
``+``), as HTML entities; base64-encoded on its own or inside a Basic auth
token such as ``user:key``; hex-encoded; and cut, as long as the piece left
holds the key's first or last half (and 12 characters or more). Shorter
secrets keep the narrower rules of :func:`mask`.
"""

from __future__ import annotations

import base64
import functools
import re
from collections.abc import Iterable
from dataclasses import dataclass

from sweep.core.errors import BadInput, ServiceFailure
from sweep.core.messages import one_line

__all__ = ["MASK", "LLMConfigError", "LLMError", "clean", "clip", "mask"]

MASK = "***"
#: Keys this long are masked wherever they occur. Shorter ones are often
#: placeholders for local servers (``x``, ``1``, ``ollama``), which also occur
#: inside ordinary words: those are masked where they stand alone, not inside
#: a longer word, so "next" stays "next" with the key ``x``.
_MASK_EVERYWHERE_FROM = 8
#: A piece of a long key is masked from this many characters, and only when it is at
#: least half the key: a shorter piece of a key made of words ("password…") would rewrite
#: ordinary words, and half a random key is as useless to a reader as none of it.
_FRAGMENT_FROM = 12
_WORD_CHAR = "A-Za-z0-9"
#: What precedes a credential a server quotes back: "Bearer k1", "Authorization: k1",
#: '"api_key": "k1"', "password=k1" (the names in any letter case).
_CREDENTIAL = (
    r"(?i:\b(?:bearer|basic|token|authorization|api[_-]?key|password|secret)\b"
    r"[\"']?\s*[:=]?\s*[\"']?\s*(?:bearer\s+)?)"
)

#: One or more backslashes: an escape, escaped again when a repr lands in JSON or a log.
_BACKSLASHES = r"\\+"
#: Letters of the one-character escapes of repr and JSON.
_ESCAPE_LETTERS = {
    "\n": "n",
    "\r": "r",
    "\t": "t",
    "\b": "b",
    "\f": "f",
    "\v": "v",
    "\a": "a",
    "\0": "0",
}
_ENTITIES = {"&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&apos;"}
#: What may stand between two characters of a key a server wrapped or split: white space,
#: and line breaks and tabs as repr, JSON, percent-encoding and HTML write them.
_GAP = (
    r"(?:\s|\\+[nrt]|\\+u000[9ad]|\\+x0[9ad]|%0[9ad]|%20"
    r"|&#0*(?:9|10|13|32);|&#x0*(?:9|a|d|20);)*"
)
_BASE64_RUN = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/-_=")
_HEX_RUN = frozenset("0123456789abcdefABCDEF")
#: Characters one character of a key and a gap take at most, looking back from a match.
_LOOK_BACK = 64


class LLMError(RuntimeError, ServiceFailure):
    """A problem that stops the run (unreachable endpoint, rejected key, unknown model).

    ``str()`` is one line. Any secret passed in ``secrets`` is masked, because
    servers echo keys back in their error bodies.
    """

    def __init__(self, message: str, *, secrets: Iterable[str | None] = ()) -> None:
        super().__init__(clean(message, secrets))


class LLMConfigError(ValueError, BadInput):
    """A bad ``llm.*`` setting; ``str()`` names the key and the problem on one line."""


def mask(text: str, secrets: Iterable[str | None], *, short: str = "alone") -> str:
    """``text`` with every non-empty secret replaced by :data:`MASK`.

    A secret of 8 characters or more is masked wherever it occurs, in any of the
    forms the module's docstring lists. A shorter one is masked where it stands alone
    (``short="alone"``, for messages), or only where it follows a credential's
    name, as a server quoting a header does (``short="credential"``, for a model's
    answers, where a key such as ``4`` or ``ollama`` is also an ordinary word: masking
    it there would rewrite ``{"score": 4}`` and every cached answer with it)."""
    # Longest first: a password that is part of the key must not split the key's mask.
    for secret in sorted({s for s in secrets if s}, key=len, reverse=True):
        if len(secret) >= _MASK_EVERYWHERE_FROM:
            text = _mask_everywhere(text, secret)
        elif short == "credential":
            text = re.sub(
                rf"({_CREDENTIAL}){re.escape(secret)}(?![{_WORD_CHAR}])", rf"\g<1>{MASK}", text
            )
        else:
            alone = rf"(?<![{_WORD_CHAR}]){re.escape(secret)}(?![{_WORD_CHAR}])"
            text = re.sub(alone, MASK, text)
    return text


def clip(text: str, limit: int) -> str:
    """At most ``limit`` characters, an ellipsis marking a cut."""
    return text if len(text) <= limit else text[: max(limit - 1, 0)].rstrip() + "…"


def clean(text: str, secrets: Iterable[str | None], limit: int | None = None) -> str:
    """One line, secrets masked, then (only then) cut to ``limit`` characters."""
    secrets = tuple(secrets)
    # Masked before and after joining lines: a key with a space in it matches either way.
    text = mask(one_line(mask(str(text), secrets)), secrets)
    return text if limit is None else clip(text, limit)


# --------------------------------------------------------------------------- long keys


@dataclass(frozen=True)
class _Forms:
    """The patterns that find one long secret: ``encoded`` (base64 and hex), ``head`` and
    ``tail`` (its first and last part as written), ``right[i]`` / ``left[i]`` (its i-th
    character, after or before a match, to grow a match into the whole key)."""

    encoded: re.Pattern[str]
    head: re.Pattern[str]
    tail: re.Pattern[str]
    right: tuple[re.Pattern[str], ...]
    left: tuple[re.Pattern[str], ...]


def _mask_everywhere(text: str, secret: str) -> str:
    forms = _forms(secret)
    text = _mask_encoded(text, forms.encoded)
    text = _mask_spans(text, _head_spans(text, forms))
    return _mask_spans(text, _tail_spans(text, forms))


def _mask_encoded(text: str, encoded: re.Pattern[str]) -> str:
    # The whole base64 or hex run is masked: a Basic auth token holds more than the key,
    # and the run's first and last characters carry bits of it too.
    spans = []
    for m in encoded.finditer(text):
        run = _BASE64_RUN if m.lastgroup == "b64" else _HEX_RUN
        start, end = m.start(), m.end()
        while start > 0 and text[start - 1] in run:
            start -= 1
        while end < len(text) and text[end] in run:
            end += 1
        spans.append((start, end))
    return _mask_spans(text, spans)


def _head_spans(text: str, forms: _Forms) -> list[tuple[int, int]]:
    """Where the key's first part is, each grown to the right as far as the key goes."""
    spans: list[tuple[int, int]] = []
    pos, n = 0, len(forms.right)
    k = _anchor(n)
    while (m := forms.head.search(text, pos)) is not None:
        start, end = m.span()
        if end == start:  # only optional characters matched: nothing of the key
            pos = start + 1
            continue
        for i in range(k, n):
            step = forms.right[i].match(text, end)
            if step is None:
                break
            end = step.end()
        spans.append((start, end))
        pos = end  # the next search starts after the whole match, never inside it
    return spans


def _tail_spans(text: str, forms: _Forms) -> list[tuple[int, int]]:
    """Where the key's last part is, each grown to the left as far as the key goes."""
    spans: list[tuple[int, int]] = []
    pos, n = 0, len(forms.left)
    first = n - _anchor(n)
    while (m := forms.tail.search(text, pos)) is not None:
        start, end = m.span()
        if end == start:
            pos = start + 1
            continue
        for i in range(first - 1, -1, -1):
            step = forms.left[i].search(text, max(0, start - _LOOK_BACK), start)
            if step is None:
                break
            start = step.start()
        spans.append((start, end))
        pos = end
    return spans


def _mask_spans(text: str, spans: list[tuple[int, int]]) -> str:
    """``text`` with each span, overlapping ones merged, replaced by one :data:`MASK`."""
    if not spans:
        return text
    out, last = [], 0
    merged: list[list[int]] = []
    for start, end in sorted(spans):
        if merged and start <= merged[-1][1]:
            merged[-1][1] = max(merged[-1][1], end)
        else:
            merged.append([start, end])
    for start, end in merged:
        out += [text[last:start], MASK]
        last = end
    return "".join(out + [text[last:]])


def _anchor(n: int) -> int:
    """Characters of a key of length ``n`` a masked piece must hold at least."""
    return n if n < _FRAGMENT_FROM else max(_FRAGMENT_FROM, -(-n // 2))


@functools.lru_cache(maxsize=32)
def _forms(secret: str) -> _Forms:
    chars = _characters(secret)
    k = _anchor(len(secret))
    flags = re.IGNORECASE
    return _Forms(
        encoded=_encoded_pattern(secret),
        head=re.compile(_GAP.join(chars[:k]), flags),
        tail=re.compile(_GAP.join(chars[-k:]), flags),
        right=tuple(re.compile(_GAP + c, flags) for c in chars),
        left=tuple(re.compile(c + _GAP + r"\Z", flags) for c in chars),
    )


def _characters(secret: str) -> list[str]:
    """One pattern per character of ``secret``: the character in every written form.

    White space and control characters of the key are optional (a server may drop a
    line break a pasted key carried), unless that would leave fewer than 8 characters
    a match must hold."""
    optional = [c.isspace() or not c.isprintable() for c in secret]
    if len(secret) - sum(optional) < _MASK_EVERYWHERE_FROM:
        optional = [False] * len(secret)
    return [_character(c) + ("?" if skip else "") for c, skip in zip(secret, optional)]


def _character(c: str) -> str:
    code = ord(c)
    data = c.encode("utf-8", "surrogatepass")
    forms = {re.escape(c), "".join(f"%{b:02x}" for b in data), f"&#0*{code};", f"&#x0*{code:x};"}
    if c in _ESCAPE_LETTERS:
        forms.add(_BACKSLASHES + _ESCAPE_LETTERS[c])
    if code < 0x100:
        forms.add(_BACKSLASHES + f"x{code:02x}")
    if code < 0x10000:
        forms.add(_BACKSLASHES + f"u{code:04x}")
    else:  # JSON writes a character beyond the BMP as a surrogate pair
        high, low = divmod(code - 0x10000, 0x400)
        forms.add(_BACKSLASHES + f"u{0xD800 + high:04x}" + _BACKSLASHES + f"u{0xDC00 + low:04x}")
        forms.add(_BACKSLASHES + f"U{code:08x}")
    if len(data) > 1:  # a bytes repr: one \xNN per byte
        forms.add("".join(_BACKSLASHES + f"x{b:02x}" for b in data))
    if not c.isalnum():  # \" \' \\ \/
        forms.add(_BACKSLASHES + re.escape(c))
    if c == " ":
        forms.add(r"\+")
    if c in _ENTITIES:
        forms.add(_ENTITIES[c])
    return "(?:" + "|".join(sorted(forms, key=lambda f: (-len(f), f))) + ")"


def _encoded_pattern(secret: str) -> re.Pattern[str]:
    """The key's base64 (standard and URL-safe, at each of the three alignments a prefix
    such as ``user:`` can give it) and its hex, lower or upper case."""
    data = secret.encode("utf-8", "surrogatepass")
    cores = set()
    for offset in range(3):
        encoded = base64.b64encode(b"\0" * offset + data).decode()
        # The characters whose six bits all come from the key: the same whatever surrounds it.
        core = encoded[-(-8 * offset // 6) : 8 * (offset + len(data)) // 6]
        cores |= {core, core.replace("+", "-").replace("/", "_")}
    b64 = "|".join(re.escape(c) for c in sorted(cores, key=len, reverse=True))
    return re.compile(rf"(?P<b64>{b64})|(?P<hex>(?i:{data.hex()}))")
