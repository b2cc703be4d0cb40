"""Strategies register themselves where they are defined (``@chunker``): the factory, the
options, the overlap table and the docs all read the one registry (issue 43, item 4)."""

from __future__ import annotations

import re
import subprocess
import sys

import pytest

from paths import ROOT
from sweep.chunking import STRATEGIES, BaseChunker, UnknownChunkSetting, build_chunker
from sweep.chunking import base as chunking_base
from sweep.chunking.base import chunker, strategies
from sweep.chunking.factory import OVERLAP_MEANING, strategy_options
from sweep.chunking.semantic import SemanticChunker


def test_the_registry_lists_every_strategy_in_a_fixed_order():
    assert STRATEGIES == (
        "token",
        "sentence",
        "paragraph",
        "recursive",
        "markdown",
        "page",
        "semantic",
    )
    assert set(OVERLAP_MEANING) == set(STRATEGIES)
    assert all(strategies()[name].cls.strategy == name for name in STRATEGIES)


def test_the_registry_is_complete_however_the_package_was_reached():
    # A module imported alone registers only itself; the registry imports the rest when read.
    for first in ("sweep.chunking.base", "sweep.chunking.markdown", "sweep.chunking.factory"):
        code = (
            f"import importlib; importlib.import_module({first!r})\n"
            "from sweep.chunking.base import strategies\n"
            "print(','.join(strategies()))"
        )
        proc = subprocess.run(
            [sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, timeout=120
        )
        assert proc.stdout.strip() == "token,sentence,paragraph,recursive,markdown,page,semantic", (
            first,
            proc.stderr[-2000:],
        )


def test_options_and_their_defaults_are_the_classes_keyword_parameters():
    assert strategy_options() == {
        "breakpoint_percentile": ("semantic", 90.0),
        "buffer_size": ("semantic", 1),
        "min_unit_tokens": ("semantic", 8),
        "page_fallback": ("page", "paragraph"),
    }
    assert strategies()["semantic"].takes_embed_fn and not strategies()["token"].takes_embed_fn
    assert strategies()["semantic"].cls is SemanticChunker


def test_a_strategy_defined_in_one_file_is_built_by_the_factory():
    @chunker("halves", overlap="ignored")
    class HalvesChunker(BaseChunker):
        def __init__(self, *args, pieces: int = 2, **kwargs) -> None:
            super().__init__(*args, **kwargs)
            self.pieces = pieces

        def spans(self, doc):
            step = max(1, len(doc.text) // self.pieces)
            return [(a, min(a + step, len(doc.text))) for a in range(0, len(doc.text), step)]

    try:
        built = build_chunker("halves", size=64, pieces=4)
        assert isinstance(built, HalvesChunker) and built.pieces == 4
        assert strategy_options()["pieces"] == ("halves", 2)
        # another strategy's option at a non-default value is a note, as for semantic's
        assert build_chunker("token", pieces=3).notes == (
            "option pieces=3 is ignored by strategy 'token'",
        )
        with pytest.raises(ValueError, match="registered twice"):
            chunker("halves", overlap="x")(
                type("Other", (BaseChunker,), {"spans": lambda s, d: []})
            )
    finally:
        del chunking_base._REGISTERED["halves"]
    with pytest.raises(UnknownChunkSetting, match="unknown chunk strategy 'halves'"):
        build_chunker("halves")


def _table(text: str, header: str) -> list[list[str]]:
    lines = text.splitlines()
    start = lines.index(header)
    rows = []
    for line in lines[start + 2 :]:
        if not line.startswith("|"):
            break
        rows.append([c.strip() for c in line.strip("|").split("|")])
    return rows


def test_the_docs_tables_list_the_registered_strategies_and_option_defaults():
    text = (ROOT / "docs" / "chunking.md").read_text(encoding="utf-8")
    names = [
        row[0].strip("`")
        for row in _table(text, "| strategy | what a chunk is | what `chunk.overlap` means |")
    ]
    assert tuple(names) == STRATEGIES
    documented = {
        row[0].strip("`"): _default(row[1])
        for row in _table(text, "| option | default | what it does |")
    }
    assert documented == {
        name: _default(default) for name, (_, default) in strategy_options().items()
    }


def _default(value: object) -> float | str:
    """A default as the docs' table shows it: a number (``90`` for 90.0), else its name."""
    shown = str(value).strip("`")
    return float(shown) if re.fullmatch(r"[0-9.]+", shown) else shown


def test_sweeps_help_lists_the_registered_strategies_and_their_defaults():
    from sweep.chunking.factory import strategies_help

    proc = subprocess.run(
        [sys.executable, "-m", "sweep", "--help"],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert strategies_help() in proc.stdout
    assert "chunk.min_unit_tokens 8" in proc.stdout and "(default cl100k_base;" in proc.stdout
