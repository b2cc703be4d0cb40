"""A runnable Python module that defines ``splitter`` for the framework you deploy.

A row chunked by a framework's splitter exports that splitter's own configuration. A
row of sweep's own strategies exports the framework's closest equivalent (the table
below); how close it is gets measured on the sweep's documents and written in the
module's header (``sweep.exporting.agreement``). Where no framework has an equivalent
(the semantic strategy), or with ``--to sweep``, the module runs ``sweep.chunking``.
"""

from __future__ import annotations

import importlib.util
import json
from typing import Any, Mapping

__all__ = ["EXPORT_FRAMEWORKS", "Rendered", "framework_of", "render_module"]

#: what ``--to`` writes a module for: the frameworks, and sweep's own chunker
EXPORT_FRAMEWORKS = ("langchain", "llamaindex", "chonkie", "semchunk", "sweep")
_FRAMEWORK_CHUNKER = "sweep.chunking.build_framework_chunker"
_SEPARATORS = {
    "recursive": ["\n\n", "\n", ". ", " ", ""],
    "paragraph": ["\n\n", "\n", " ", ""],
    "sentence": [". ", "? ", "! ", "\n", " ", ""],
}


class Rendered:
    """A module's source and what it is (for the header)."""

    def __init__(self, source: str, what: str, framework: str, call: Mapping[str, Any]) -> None:
        self.source = source
        self.what = what
        #: whose split method to call when measuring: a framework, or ``langchain`` for a
        #: module whose splitter has ``split_text``
        self.framework = framework
        self.call = dict(call)


_PRELUDE = '''
try:  # sweep installed: cl100k_base from the copy it ships, no download
    from sweep.core.tokenization import route_offline_encodings
    route_offline_encodings()
except ImportError:
    pass


def _encoding(name):
    """tiktoken's encoding ``name`` (offline through sweep when sweep is installed)."""
    try:
        from sweep.core.tokenization import get_encoding
    except ImportError:
        import tiktoken
        return tiktoken.get_encoding(name)
    return get_encoding(name)
'''


def framework_of(chunk: Mapping[str, Any]) -> str | None:
    """The framework a row's chunk node ran (``langchain``...), or None for sweep's own."""
    return str(chunk.get("framework")) if chunk.get("_target_") == _FRAMEWORK_CHUNKER else None


def _importable(target: str) -> tuple[str, str, str]:
    """``(module, name, expression)`` for a ``_target_``: the longest prefix that is a
    module (as Hydra resolves it), the name imported from it, and the call's expression
    (``RecursiveCharacterTextSplitter.from_tiktoken_encoder`` for a class method)."""
    parts = target.split(".")
    for i in range(len(parts) - 1, 0, -1):
        module = ".".join(parts[:i])
        try:
            found = importlib.util.find_spec(module) is not None
        except (ImportError, ValueError):  # a parent that is no package
            found = False
        if found:
            return module, parts[i], ".".join(parts[i:])
    module, _, name = target.rpartition(".")  # not installed: the import says so
    return module, name, name


def _py(value: Any, imports: set[str]) -> str:
    """A Hydra node as a Python expression (``_target_`` nodes become calls)."""
    if isinstance(value, Mapping) and "_target_" in value:
        target = str(value["_target_"])
        kwargs = {k: v for k, v in value.items() if not str(k).startswith("_")}
        if target == "sweep.core.tokenization.get_encoding":
            return f"_encoding({_py(kwargs.get('name', 'cl100k_base'), imports)})"
        module, name, call = _importable(target)
        imports.add(f"from {module} import {name}")
        positional = value.get("_args_") or ()
        args = ", ".join([*(_py(v, imports) for v in positional),
                          *(f"{k}={_py(v, imports)}" for k, v in kwargs.items())])
        if value.get("_partial_"):
            imports.add("import functools")
            return f"functools.partial({call}{', ' if args else ''}{args})"
        return f"{call}({args})"
    if isinstance(value, Mapping):
        return "{" + ", ".join(f"{_py(k, imports)}: {_py(v, imports)}" for k, v in value.items()) + "}"
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(_py(v, imports) for v in value) + "]"
    return repr(value)


def _equivalent(to: str, strategy: str, size: int, overlap: int, tokenizer: str
                ) -> tuple[str, str] | None:
    """(import line, expression) of ``to``'s closest equivalent of a sweep strategy."""
    tok = repr(tokenizer)
    if to == "langchain":
        lc = "from langchain_text_splitters import "
        if strategy == "token":
            return (lc + "TokenTextSplitter", f"TokenTextSplitter(encoding_name={tok}, "
                    f"chunk_size={size}, chunk_overlap={overlap})")
        if strategy == "markdown":
            return (lc + "MarkdownTextSplitter", f"MarkdownTextSplitter.from_tiktoken_encoder("
                    f"encoding_name={tok}, chunk_size={size}, chunk_overlap={overlap})")
        if strategy in _SEPARATORS:
            keep = ', keep_separator="end"' if strategy in ("recursive", "sentence") else ""
            ov = 0 if strategy == "paragraph" else overlap
            return (lc + "RecursiveCharacterTextSplitter",
                    f"RecursiveCharacterTextSplitter.from_tiktoken_encoder(encoding_name={tok}, "
                    f"chunk_size={size}, chunk_overlap={ov}, "
                    f"separators={json.dumps(_SEPARATORS[strategy])}{keep})")
    if to == "llamaindex":
        li = "from llama_index.core.node_parser import "
        ov = 0 if strategy == "paragraph" else overlap
        if strategy == "token":
            return (li + "TokenTextSplitter", f"TokenTextSplitter(chunk_size={size}, "
                    f"chunk_overlap={ov}, tokenizer=_encoding({tok}).encode)")
        if strategy in ("sentence", "recursive", "paragraph", "markdown"):
            return (li + "SentenceSplitter", f"SentenceSplitter(chunk_size={size}, "
                    f"chunk_overlap={ov}, tokenizer=_encoding({tok}).encode)")
    if to == "chonkie":
        if strategy == "token":
            return ("from chonkie import TokenChunker", f"TokenChunker(tokenizer=_encoding({tok}), "
                    f"chunk_size={size}, chunk_overlap={overlap})")
        if strategy == "sentence":
            return ("from chonkie import SentenceChunker", f"SentenceChunker(tokenizer="
                    f"_encoding({tok}), chunk_size={size}, chunk_overlap={overlap})")
        if strategy in ("recursive", "paragraph", "markdown"):
            return ("from chonkie import RecursiveChunker",
                    f"RecursiveChunker(tokenizer=_encoding({tok}), chunk_size={size})")
    return None


_SWEEP_MODULE = '''
from functools import partial

from sweep.chunking import build_chunker
from sweep.core.types import Document

SETTINGS = {settings}
EMBED = {embed}


class SweepSplitter:
    """sweep's own chunker with this setting: ``split_text(text)`` gives the chunk texts,
    ``chunk(text)`` sweep's chunks with their offsets."""

    def __init__(self):
        embed_fn = None
        if SETTINGS["strategy"] == "semantic":  # it embeds sentences with the sweep's model
            from hydra.utils import instantiate

            embedder = instantiate(EMBED)
            embed_fn = partial(embedder.embed_documents, what="sentences")
        self.chunker = build_chunker(**SETTINGS, embed_fn=embed_fn)

    def chunk(self, text, doc_id="text"):
        return self.chunker.chunk(Document(doc_id, text))

    def split_text(self, text):
        return [c.text for c in self.chunk(text)]

    def split_for_embedding(self, text):
        """The texts the sweep embedded: each chunk after its title or heading prefix,
        when the setting has one."""
        return [c.embed_text or c.text for c in self.chunk(text)]


splitter = SweepSplitter()
'''


def render_module(config: Mapping[str, Any], to: str) -> Rendered:
    """The module for ``to`` of a job's resolved ``config``; ValueError when ``to`` cannot
    reproduce it (a framework row asked for another framework)."""
    chunk = config["chunk"]
    own = framework_of(chunk)
    if own is not None:
        if own == "callable" or to != own:
            target = chunk.get("splitter", {}).get("_target_", "?")
            hint = "" if own == "callable" else f" (it can be exported --to {own})"
            raise ValueError(f"this setting ran {target} (chunk={own}); sweep cannot translate "
                             f"one framework's splitter into another's{hint}; --to chunks and "
                             f"--to hydra work for every setting")
        imports: set[str] = set()
        expression = _py(chunk["splitter"], imports)
        call = dict(chunk.get("call") or {})
        note = (f"\n# Call it with these keyword arguments: {call!r}\n" if call else "")
        source = (_PRELUDE + "\n" + "\n".join(sorted(imports)) + "\n\n"
                  f"splitter = {expression}\n{note}")
        return Rendered(source, f"the splitter this setting ran ({chunk['splitter']['_target_']})",
                        own, call)
    strategy = str(chunk["strategy"])
    size, overlap, tokenizer = int(chunk["size"]), int(chunk["overlap"]), str(chunk["tokenizer"])
    found = None if to == "sweep" else _equivalent(to, strategy, size, overlap, tokenizer)
    if found is None:
        settings = {k: chunk[k] for k in ("strategy", "size", "overlap", "tokenizer", "prefix")}
        settings.update({k: chunk[k] for k in ("breakpoint_percentile", "buffer_size",
                                               "min_unit_tokens")
                         if strategy == "semantic" and k in chunk})
        embed = {k: v for k, v in config.get("embed", {}).items()
                 if k not in ("cache_dir", "show_progress")}
        source = _SWEEP_MODULE.format(settings=repr(settings), embed=repr(embed))
        why = ("sweep's own chunker (--to sweep)" if to == "sweep" else
               f"sweep's own chunker: {to} has no equivalent of the {strategy} strategy")
        return Rendered(source, why, "langchain", {})
    line, expression = found
    source = _PRELUDE + "\n" + line + "\n\n" + f"splitter = {expression}\n"
    return Rendered(source, f"{to}'s closest equivalent of sweep's {strategy} strategy", to, {})
