"""The llm config node: checked values, where the key comes from, where the cache lives."""

from __future__ import annotations

import pytest

from sweep.llm import LLMConfig, LLMConfigError, LLMError
from sweep.llm.config import default_llm_cache_dir, is_local, resolve_api_key, resolve_llm_cache_dir

LOCAL = "http://localhost:11434/v1"
REMOTE = "https://api.example.com/v1"


def test_defaults_are_valid_for_a_url_and_model():
    cfg = LLMConfig(base_url=REMOTE + "/", model="m")
    assert cfg.endpoint == REMOTE and cfg.max_retries == 4 and cfg.json_mode


@pytest.mark.parametrize(
    "kwargs, key",
    [
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
        ({"input_price": -0.15}, "llm.input_price"),
        ({"output_price": "0.60"}, "llm.output_price"),
        ({"output_price": float("inf")}, "llm.output_price"),
    ],
)
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
    assert default_llm_cache_dir() == tmp_path / "sweep" / "llm"
    assert resolve_llm_cache_dir(None) == tmp_path / "sweep" / "llm"
    assert resolve_llm_cache_dir("off") is None and resolve_llm_cache_dir("") is None
    assert resolve_llm_cache_dir(str(tmp_path / "c")) == tmp_path / "c"


@pytest.mark.parametrize("pasted", ["gsk_live0123456789abcdef", "hf_AbCdEf0123456789", "sk_x"])
def test_a_key_pasted_as_a_lowercase_variable_name_is_never_shown(pasted):
    cfg = LLMConfig(base_url=REMOTE, model="m", api_key_env=pasted)
    with pytest.raises(LLMError) as e:
        resolve_api_key(cfg, {})
    message = str(e.value)
    assert pasted not in message and pasted[:4] not in message and "\n" not in message
    assert "the variable named by llm.api_key_env is not set" in message
    assert "OPENAI_API_KEY" in message  # what to write instead
    assert pasted not in str(cfg.describe()) and cfg.describe()["api_key_env"] == "(not shown)"
    # A local endpoint needs no key, so the run goes on; the report still hides the value.
    local = LLMConfig(base_url=LOCAL, model="m", api_key_env=pasted)
    assert resolve_api_key(local, {}) is None and pasted not in str(local.describe())


def test_a_set_lowercase_variable_still_gives_its_key():
    cfg = LLMConfig(base_url=REMOTE, model="m", api_key_env="my_key")
    assert resolve_api_key(cfg, {"my_key": "secret-value"}) == "secret-value"


@pytest.mark.parametrize(
    "url, shown",
    [
        ("http://user:hunter2@host:8000/v1/", "http://host:8000/v1"),
        ("https://:hunter2%40x@api.example.com/v1", "https://api.example.com/v1"),
        ("http://a@b:hunter2@x@host/v1", "http://host/v1"),
        ("http://host/v1?next=a@b", "http://host/v1?next=a@b"),
    ],
)
def test_userinfo_is_never_in_the_url_shown_or_saved(url, shown):
    cfg = LLMConfig(base_url=url, model="m")
    assert cfg.endpoint == shown and cfg.describe()["base_url"] == shown
    assert "hunter2" not in str(cfg.describe())


def test_credentials_come_from_the_url_decoded():
    assert LLMConfig(base_url="http://me:p%40ss@h/v1", model="m").credentials == ("me", "p@ss")
    assert LLMConfig(base_url=REMOTE, model="m").credentials is None


@pytest.mark.parametrize("url", ["ftp://user:hunter2-pw@host/v1", "user:hunter2-pw@host/v1"])
def test_a_bad_url_with_a_password_is_refused_without_it(url):
    with pytest.raises(LLMConfigError) as e:
        LLMConfig(base_url=url, model="m")
    assert "hunter2" not in str(e.value) and "llm.base_url must be an http" in str(e.value)


@pytest.mark.parametrize(
    "url",
    [
        "https://bob:pa#ss@api.example.com/v1",
        "https://bob:pa?ss@api.example.com/v1",
        "https://bob:pa/ss@api.example.com/v1",
    ],
)
def test_a_password_with_an_unencoded_separator_is_refused_without_showing_it(url):
    # urlsplit would read "bob" as the host and keep the password in what is shown.
    with pytest.raises(LLMConfigError) as err:
        LLMConfig(base_url=url, model="m")
    password = url.split(":")[2].split("@")[0]
    assert password not in str(err.value) and "ss@api" not in str(err.value)
    assert "percent-encode" in str(err.value)
    ok = LLMConfig(base_url="https://bob:pa%23ss@api.example.com/v1", model="m")
    assert ok.endpoint == "https://api.example.com/v1" and ok.credentials == ("bob", "pa#ss")


def test_a_node_to_be_saved_holding_a_secret_is_refused_without_showing_it():
    from sweep.llm.config import check_saved

    check_saved("OPENAI_API_KEY", "https://api.openai.com/v1", environ={})
    check_saved(
        "my_key", "http://me@localhost:8000/v1", environ={"my_key": "x"}
    )  # a user, no password
    check_saved(None, None, environ={})
    for api_key_env, base_url, environ in (
        ("OPENAI_API_KEY", "https://me:s3cr3t-pw@host/v1", {}),
        ("sk-proj-abc123", "https://host/v1", {}),
        ("gsk_abc123", "https://host/v1", {}),
    ):
        with pytest.raises(LLMConfigError) as e:
            check_saved(api_key_env, base_url, environ=environ)
        assert "s3cr3t" not in str(e.value) and "abc123" not in str(e.value)
