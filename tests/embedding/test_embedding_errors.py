"""Every exception of the embedding stage is defined in sweep.embedding.errors."""

from __future__ import annotations

import importlib
import inspect
import pkgutil

import sweep.embedding
from sweep.embedding import errors


def test_every_exception_of_the_stage_is_defined_in_errors():
    defined = {}
    for info in pkgutil.iter_modules(sweep.embedding.__path__):
        module = importlib.import_module(f"sweep.embedding.{info.name}")
        for name, obj in vars(module).items():
            if (
                inspect.isclass(obj)
                and issubclass(obj, BaseException)
                and obj.__module__.startswith("sweep.embedding")
            ):
                defined[f"{info.name}.{name}"] = obj.__module__
    elsewhere = {where: home for where, home in defined.items() if home != errors.__name__}
    assert not elsewhere
    assert set(errors.__all__) == {
        "BackendExportError",
        "CacheError",
        "EmbedderError",
        "LateChunkingUnsupported",
    }
