"""Splitters of a user's own, for ``chunk=callable`` (tests put this folder on PYTHONPATH)."""

from __future__ import annotations


def paragraphs(text: str, min_chars: int = 0) -> list[str]:
    """Blank-line paragraphs, each stripped; short ones joined to the next (the way a
    user's own code rewrites nothing but picks its cuts)."""
    out, pending = [], ""
    for part in text.split("\n\n"):
        pending = f"{pending}\n\n{part}" if pending else part
        if len(pending.strip()) >= min_chars:
            out.append(pending.strip())
            pending = ""
    if pending.strip():
        out.append(pending.strip())
    return out


def shouting(text: str) -> list[str]:
    """A splitter that rewrites its chunks: upper-cased lines."""
    return [line.upper() for line in text.splitlines() if line.strip()]


def backwards(text: str) -> list[str]:
    """A splitter that returns the right texts in the wrong order: last paragraph first."""
    return paragraphs(text)[::-1]


def not_a_list(text: str) -> str:
    return text


def quoting_a_key(text: str) -> list[str]:
    """A splitter whose library fails quoting the credential it was handed, as an HTTP
    library quotes a header (the test's key is in ``$SWEEP_TEST_KEY``)."""
    import os

    raise RuntimeError(
        f"upstream said 401 for Authorization: Bearer {os.environ['SWEEP_TEST_KEY']}"
    )
