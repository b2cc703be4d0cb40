"""``import sweep``: the names a notebook needs, loaded lazily, and the README's example running."""

from __future__ import annotations

import os
import re
import subprocess
import sys

import numpy as np
import pytest

import sweep
from paths import ROOT


def test_import_sweep_loads_neither_torch_nor_faiss():
    code = (
        "import sweep, sys; names = sweep.__all__; "
        "assert 'torch' not in sys.modules and 'faiss' not in sys.modules, 'eager'; "
        "print(len(names))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert int(out.stdout) == len(sweep.__all__)


def test_every_exported_name_resolves_and_a_wrong_one_is_an_attribute_error():
    for name in sweep.__all__:
        assert getattr(sweep, name) is not None, name
    assert sweep.Document.__module__ == "sweep.core.types"
    with pytest.raises(AttributeError, match="no attribute 'evaluate'"):
        sweep.evaluate  # noqa: B018
    assert "evaluate_setting" in dir(sweep)


def _table(name: str, values: list[float]) -> sweep.ScoreTable:
    from sweep.core.measures import LEVELS

    n = len(values)
    return sweep.ScoreTable(
        tuple(f"q{i}" for i in range(n)),
        ("recall@5",),
        np.arange(n),
        np.full(n, LEVELS.index("span")),
        np.zeros(n, dtype=int),
        np.asarray(values, dtype=float),
    )


def test_compare_ranks_settings_and_tests_them_paired():
    rng = np.random.default_rng(0)
    base = rng.uniform(0, 1, 60)
    tables = {
        "small": _table("small", list(np.clip(base - 0.3, 0, 1))),  # clearly worse on every query
        "large": _table("large", list(base)),
        "large-again": _table("large-again", list(base[::-1] * 0 + base)),  # the same scores
    }
    frame = sweep.compare(tables, sweep.EvalConfig(n_perm=2000))
    assert list(frame["setting"]) == ["large", "large-again", "small"]
    verdicts = dict(zip(frame["setting"], frame["verdict"]))
    assert verdicts == {"large": "best", "large-again": "tie", "small": "worse"}
    assert frame.loc[frame.setting == "small", "diff"].item() == pytest.approx(
        np.clip(base - 0.3, 0, 1).mean() - base.mean()
    )
    assert set(frame["n_compared"]) == {60}


def test_compare_names_a_setting_without_the_primary_metric():
    with pytest.raises(ValueError, match="setting 'x' has no span/ndcg@5"):
        sweep.compare({"x": _table("x", [1.0, 0.0])}, sweep.EvalConfig(primary="span/ndcg@5"))
    with pytest.raises(ValueError, match="no settings"):
        sweep.compare({})


def _readme_example() -> str:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    block = re.search(
        r"<!-- python-example -->\s*```python\n(.*?)```\s*<!-- /python-example -->", text, re.S
    )
    assert block, "README.md has no <!-- python-example --> block"
    return block.group(1)


@pytest.mark.e2e
def test_the_readme_python_example_compares_two_settings(tmp_path):
    env = {**os.environ, "XDG_CACHE_HOME": str(tmp_path / "cache")}
    out = subprocess.run(
        [sys.executable, "-c", _readme_example()],
        capture_output=True,
        text=True,
        env=env,
        cwd=tmp_path,
        timeout=600,
    )
    assert out.returncode == 0, out.stderr[-2000:]
    lines = out.stdout.strip().splitlines()
    assert lines[0].split() == [
        "setting",
        "mean",
        "diff",
        "p_value",
        "p_holm",
        "verdict",
        "n_needed",
        "n_compared",
    ]
    assert {line.split()[1] for line in lines[1:]} == {"token-256", "token-512"}
    assert any(line.split()[-3] == "best" for line in lines[1:])
