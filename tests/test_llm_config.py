"""The llm config node: checked values, where the key comes from, where the cache lives."""

from __future__ import annotations

import pytest

from sweep.llm import LLMConfig, LLMConfigError, LLMError
from sweep.llm.config import default_cache_dir, is_local, resolve_api_key, resolve_cache_dir

LOCAL = "http://localhost:11434/v1"
REMOTE = "https://api.example.com/v1"


def test_defaults_are_valid_for_a_url_and_model():
    cfg = LLMConfig(base_url=REMOTE + "/", model="m")
    assert cfg.endpoint == REMOTE and cfg.max_retries == 4 and cfg.json_mode


@pytest.mark.parametrize("kwargs, key", [
    ({"model": None}, "llm.model is required"),
    ({"model": "  "}, "llm.model is required"),
    ({"base_url": None}, "llm.base_url is required"),
    ({"base_url": "localhost:11434"}, "llm.base_url must be an http"),
    ({"base_url": "ftp://host/v1"}, "llm.base_url must be an http"),
    ({"temperature": -0.1}, "llm.temperature"),
    ({"temperature": float("nan")}, "llm.temperature"),
    ({"max_concurrency": 0}, "llm.max_concurrency"),
    ({"max_concurrency": True}, "llm.max_concurrency"),
    ({"timeout_s": 0}, "llm.timeout_s"),
    ({"max_retries": -1}, "llm.max_retries"),
    ({"max_retries": 2.5}, "llm.max_retries"),
    ({"backoff_s": -1}, "llm.backoff_s"),
    ({"max_tokens": 0}, "llm.max_tokens"),
    ({"json_mode": "yes"}, "llm.json_mode"),
])
def test_bad_values_fail_with_one_line_naming_the_key(kwargs, key):
    args = {"base_url": REMOTE, "model": "m", **kwargs}
    with pytest.raises(LLMConfigError) as e:
        LLMConfig(**args)
    assert key in str(e.value) and "\n" not in str(e.value)


def test_a_key_pasted_into_api_key_env_is_not_echoed():
    with pytest.raises(LLMConfigError) as e:
        LLMConfig(base_url=REMOTE, model="m", api_key_env="sk-live-0123456789abcdef")
    assert "sk-live" not in str(e.value) and "api_key_env" in str(e.value)


def test_key_comes_from_the_named_variable():
    cfg = LLMConfig(base_url=REMOTE, model="m", api_key_env="MY_KEY")
    assert resolve_api_key(cfg, {"MY_KEY": " secret-value "}) == "secret-value"


def test_missing_key_for_a_remote_endpoint_is_an_error_naming_the_variable():
    cfg = LLMConfig(base_url=REMOTE, model="m", api_key_env="MY_KEY")
    with pytest.raises(LLMError) as e:
        resolve_api_key(cfg, {})
    assert "MY_KEY is not set" in str(e.value) and "llm.api_key_env=null" in str(e.value)


@pytest.mark.parametrize("url", [LOCAL, "http://127.0.0.1:8000/v1", "http://[::1]:8080/v1"])
def test_a_local_endpoint_works_without_a_key(url):
    assert is_local(url)
    assert resolve_api_key(LLMConfig(base_url=url, model="m"), {}) is None


def test_null_api_key_env_sends_no_key_even_when_the_variable_exists():
    cfg = LLMConfig(base_url=REMOTE, model="m", api_key_env=None)
    assert resolve_api_key(cfg, {"OPENAI_API_KEY": "k" * 20}) is None
    assert not is_local(REMOTE)


def test_describe_names_the_variable_not_the_key():
    cfg = LLMConfig(base_url=REMOTE, model="m", api_key_env="MY_KEY")
    assert cfg.describe()["api_key_env"] == "MY_KEY" and "cache_dir" not in cfg.describe()


def test_cache_dir_default_off_and_path(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    assert default_cache_dir() == tmp_path / "sweep" / "llm"
    assert resolve_cache_dir(None) == tmp_path / "sweep" / "llm"
    assert resolve_cache_dir("off") is None and resolve_cache_dir("") is None
    assert resolve_cache_dir(str(tmp_path / "c")) == tmp_path / "c"
