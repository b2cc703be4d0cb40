"""The config files of a sweep folder: literal strings written so every reader gets them back
(OmegaConf, Hydra, sweep's own reader), and saved YAML read as plain data: no alias expands,
no tag builds an object, no interpolation resolves."""

from __future__ import annotations

import time

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from omegaconf import OmegaConf

from sweep.core.configfiles import (
    MAX_CONFIG_BYTES,
    ConfigFileError,
    config_yaml,
    escape_interpolations,
    read_yaml,
    unescape_interpolations,
)

#: strings made of what OmegaConf's grammar treats specially
tricky = st.text(alphabet=st.sampled_from(list("\\${}:ab .'\"\n")), max_size=24)


@settings(max_examples=400, deadline=None)
@given(tricky)
def test_every_string_reads_back_as_written_through_omegaconf_and_sweeps_reader(text):
    escaped = escape_interpolations(text)
    assert OmegaConf.create({"v": escaped}).v == text  # OmegaConf (and so Hydra) reads the literal
    assert unescape_interpolations(escaped) == text
    written = config_yaml({"a": {"v": text, "list": [text, 3]}})
    assert OmegaConf.create(written).a.v == text


def test_a_saved_config_keeps_an_escaped_interpolation_literal(tmp_path, monkeypatch):
    monkeypatch.setenv("SWEEP_TEST_KEY", "sk-secret-1234")
    cfg = OmegaConf.create(
        {"chunk": {"prompt": "\\${oc.env:SWEEP_TEST_KEY}", "size": 64, "twice": "${.size}"}}
    )
    path = tmp_path / "resolved_config.yaml"
    path.write_text(config_yaml(cfg), encoding="utf-8")
    # resolved: the real interpolation has its value, the escaped one stays the literal
    again = OmegaConf.load(path)
    assert again.chunk.prompt == "${oc.env:SWEEP_TEST_KEY}" and again.chunk.twice == 64
    assert read_yaml(path) == {
        "chunk": {"prompt": "${oc.env:SWEEP_TEST_KEY}", "size": 64, "twice": 64}
    }
    assert "sk-secret" not in path.read_text()


def test_reading_never_resolves_an_interpolation(tmp_path, monkeypatch):
    monkeypatch.setenv("SWEEP_TEST_KEY", "sk-secret-1234")
    path = tmp_path / "resolved_config.yaml"
    path.write_text(
        "llm:\n  key: ${oc.env:SWEEP_TEST_KEY}\n  other: ${llm.key}\n"
        "  escaped: \\${oc.env:SWEEP_TEST_KEY}\n"
    )
    assert read_yaml(path) == {
        "llm": {
            "key": "${oc.env:SWEEP_TEST_KEY}",
            "other": "${llm.key}",
            "escaped": "${oc.env:SWEEP_TEST_KEY}",
        }
    }


def test_plain_values_read_as_omegaconf_reads_them(tmp_path):
    path = tmp_path / "c.yaml"
    path.write_text("a: 1e3\nb: 2024-01-01\nc: yes\nd: null\ne: .inf\nf: [1, two]\n")
    assert read_yaml(path) == OmegaConf.to_container(OmegaConf.load(path))


def _bomb(levels: int) -> str:
    """The "billion laughs": each level names the one before it ten times."""
    lines = ['l0: &l0 "lol"']
    lines += [f"l{i}: &l{i} [" + ", ".join([f"*l{i - 1}"] * 10) + "]" for i in range(1, levels)]
    return "\n".join(lines) + "\n"


def test_an_alias_bomb_is_refused_at_once_naming_the_file_and_line(tmp_path):
    path = tmp_path / "resolved_config.yaml"
    path.write_text(_bomb(9))  # 10^8 strings, were it expanded
    started = time.perf_counter()
    with pytest.raises(ConfigFileError) as err:
        read_yaml(path)
    assert time.perf_counter() - started < 2
    assert str(err.value).startswith(f"{path}:2: a YAML alias (*l0)")
    assert "\n" not in str(err.value)


@pytest.mark.parametrize(
    "text,says",
    [
        ("a: !!python/object/apply:os.system ['true']\n", "python/object/apply:os.system"),
        ("a: !!binary aGVsbG8=\n", "binary"),
        ("a: !!set {x}\n", "set"),
        ("a: 1\na: 2\n", "the key 'a' twice"),
        ("a: [1\n", "not valid YAML"),
        ("[" * 20000, "nested too deeply"),
    ],
)
def test_what_sweep_never_writes_is_one_line_naming_the_file(tmp_path, text, says):
    path = tmp_path / "hydra.yaml"
    path.write_text(text)
    with pytest.raises(ConfigFileError) as err:
        read_yaml(path)
    assert str(path) in str(err.value) and says in str(err.value)
    assert "\n" not in str(err.value)


def test_a_file_larger_than_any_config_is_not_read(tmp_path):
    path = tmp_path / "resolved_config.yaml"
    with open(path, "w") as f:
        f.write("a: " + "x" * (MAX_CONFIG_BYTES + 10) + "\n")
    with pytest.raises(ConfigFileError, match="larger than 16 MB"):
        read_yaml(path)


def test_a_config_leading_out_of_the_sweep_folder_is_refused_unread(tmp_path):
    # resolved_config.yaml as a link to a file elsewhere: neither read nor quoted.
    sweep, outside = tmp_path / "sweep", tmp_path / "outside.yaml"
    (sweep / "0").mkdir(parents=True)
    outside.write_text("key: sk-secret\n  bad: [\n")  # YAML whose error would quote it
    path = sweep / "0" / "resolved_config.yaml"
    path.symlink_to(outside)
    with pytest.raises(ConfigFileError) as err:
        read_yaml(path, inside=sweep)
    assert str(err.value) == f"{path}: is a link leading out of the sweep folder"
    inner = sweep / "0" / "copy.yaml"
    inner.symlink_to("resolved_config.yaml")  # inside, but on to the same file outside
    with pytest.raises(ConfigFileError, match="link leading out"):
        read_yaml(inner, inside=sweep)
    with pytest.raises(ConfigFileError, match=f"{sweep / '0' / 'missing.yaml'}: missing"):
        read_yaml(sweep / "0" / "missing.yaml", inside=sweep)


def test_a_fifo_as_a_config_is_refused_not_waited_on(tmp_path):
    # In a child process with a timeout: a reader that opens the FIFO blocks for ever.
    import os
    import subprocess
    import sys

    fifo = tmp_path / "hydra.yaml"
    os.mkfifo(fifo)
    code = (
        "import sys; from sweep.core.configfiles import read_yaml, ConfigFileError\n"
        "try: read_yaml(sys.argv[1])\nexcept ConfigFileError as e: print(e)"
    )
    done = subprocess.run(
        [sys.executable, "-c", code, str(fifo)], capture_output=True, text=True, timeout=60
    )
    assert done.stdout.strip() == f"{fifo}: is a FIFO, not a regular file", done.stderr
