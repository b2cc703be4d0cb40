"""``sweep.core.errors``: every exception class of sweep has one kind, and the kind alone
decides a job's row status."""

from __future__ import annotations

import importlib
import inspect
import pkgutil
from pathlib import Path

import pytest

import sweep
from sweep.core.errors import (
    KINDS,
    BadInput,
    InvalidSetting,
    ServiceFailure,
    SweepError,
    kind_of,
    row_status,
)

#: Exceptions that are not errors of sweep, so have no kind, and why.
OUTSIDE = {
    # A BaseException on purpose: no `except Exception` may swallow it; it stops the sweep.
    "DiskFull",
    # Private control flow, raised and caught inside their own module.
    "_NeedsDownload",  # core.tokenization: tiktoken would download; becomes a TokenizerError
    "_Refused",  # core.configfiles: a YAML alias or tag; becomes a ConfigFileError
    "_OnSkippedFile",  # datasets.judgments: stops reading a file's judgments
    "_DuplicateKey",  # datasets.problems: becomes a BadJsonLine
}


def sweep_exception_classes() -> list[type[BaseException]]:
    """Every exception class defined in a module of sweep."""
    found: dict[str, type[BaseException]] = {}
    for info in pkgutil.walk_packages(sweep.__path__, "sweep."):
        module = importlib.import_module(info.name)
        for _, cls in inspect.getmembers(module, inspect.isclass):
            if issubclass(cls, BaseException) and cls.__module__ == info.name:
                found[f"{cls.__module__}.{cls.__qualname__}"] = cls
    return [found[name] for name in sorted(found)]


def kind_problem(cls: type[BaseException]) -> str | None:
    """What is wrong with an exception class's kind; None when it has exactly one (the
    kinds it derives from are one kind and the kinds that kind refines)."""
    kinds = [kind for kind in KINDS if issubclass(cls, kind)]
    if not kinds:
        return "no kind"
    if not all(issubclass(kinds[0], kind) for kind in kinds):
        return "two kinds: " + ", ".join(kind.__name__ for kind in kinds)
    return None


def test_every_exception_class_of_sweep_has_exactly_one_kind():
    classes = sweep_exception_classes()
    assert len(classes) > 40  # the walk found them (45 on 2026-12-05)
    problems = {
        f"{cls.__module__}.{cls.__qualname__}": kind_problem(cls)
        for cls in classes
        if cls is not SweepError and cls.__qualname__ not in OUTSIDE
    }
    assert {name: p for name, p in problems.items() if p} == {}


def test_the_exceptions_outside_the_family_are_still_there_and_have_no_kind():
    # A stale entry would let a new class of that name go without a kind.
    outside = {
        cls.__qualname__: cls for cls in sweep_exception_classes() if cls.__qualname__ in OUTSIDE
    }
    assert set(outside) == OUTSIDE
    assert all(kind_of(cls) is None for cls in outside.values())


def test_the_check_finds_a_class_without_a_kind_or_with_two():
    class Plain(ValueError):
        pass

    class Both(BadInput, ServiceFailure):
        pass

    class Refined(ValueError, InvalidSetting):
        pass

    assert kind_problem(Plain) == "no kind"
    assert kind_problem(Both) == "two kinds: BadInput, ServiceFailure"
    assert kind_problem(Refined) is None


def test_a_class_keeps_its_builtin_base_beside_its_kind():
    from sweep.core.files import NotRegularFile
    from sweep.datasets.loading import DatasetError
    from sweep.llm import LLMError

    assert issubclass(DatasetError, ValueError) and kind_of(DatasetError) is BadInput
    assert issubclass(LLMError, RuntimeError) and kind_of(LLMError) is ServiceFailure
    assert issubclass(NotRegularFile, OSError) and issubclass(NotRegularFile, ValueError)
    assert kind_of(NotRegularFile(2, "is a FIFO", "a")) is BadInput


def test_the_kind_is_the_most_specific_and_none_outside_sweep():
    from sweep.chunking import UnknownChunkSetting

    assert kind_of(InvalidSetting("x")) is InvalidSetting  # also a BadInput
    assert kind_of(UnknownChunkSetting) is InvalidSetting
    assert kind_of(BadInput("x")) is BadInput
    assert kind_of(ServiceFailure("x")) is ServiceFailure
    assert kind_of(ValueError("x")) is None
    assert kind_of(KeyError) is None
    assert all(issubclass(kind, SweepError) for kind in KINDS)


@pytest.mark.parametrize(
    ("error", "status"),
    [
        (InvalidSetting("overlap 64 >= size 64"), "invalid"),
        (BadInput("a damaged row"), "failed"),
        (ServiceFailure("the endpoint is down"), "failed"),
        (ValueError("a library's error"), "failed"),
        (RuntimeError("a bug"), "failed"),
    ],
    ids=lambda v: type(v).__name__ if isinstance(v, Exception) else v,
)
def test_the_row_status_of_each_kind_is_the_documented_one(error, status):
    assert row_status(error) == status


def test_the_row_status_of_sweeps_own_invalid_settings():
    from sweep.chunking import ChunkingSettingsError
    from sweep.chunking.contexts import ContextError, ContextsFailed
    from sweep.retrieval.parents import ParentError

    assert row_status(ChunkingSettingsError("overlap >= size")) == "invalid"
    assert row_status(ContextError("chunk.context=bad")) == "invalid"
    assert row_status(ParentError("retrieve.parent=bad")) == "invalid"
    assert row_status(ContextsFailed("no answer")) == "failed"


def test_the_docs_name_every_kind_with_its_exit_status_and_row():
    text = (Path(__file__).parents[2] / "docs" / "index.md").read_text(encoding="utf-8")
    section = text.split("## Errors and exit codes", 1)[1].split("\n## ", 1)[0]
    for kind in KINDS:
        assert f"`{kind.__name__}`" in section
