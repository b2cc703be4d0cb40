"""The ``llm`` config group as a checked value, and where the key and the cache live."""

from __future__ import annotations

import base64
import ipaddress
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import quote, unquote, urlsplit, urlunsplit

from sweep.core import cachedirs
from sweep.core.checks import integer, number
from sweep.llm.errors import LLMConfigError, LLMError

__all__ = [
    "LLMConfig",
    "check_api_key",
    "check_saved",
    "default_llm_cache_dir",
    "key_variable",
    "named_secrets",
    "resolve_api_key",
    "resolve_llm_cache_dir",
    "secrets_of",
    "without_userinfo",
]

_ENV_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
#: What environment variable names look like by convention. A lowercase value
#: passes as a name but is as likely a pasted key (``gsk_…``, ``hf_…``), so it
#: is never repeated.
_CONVENTIONAL_ENV_NAME = re.compile(r"[A-Z_][A-Z0-9_]*")
#: The variable, when its name cannot be shown.
UNSHOWN_VARIABLE = "the variable named by llm.api_key_env"


@dataclass(frozen=True)
class LLMConfig:
    """How to reach one OpenAI-compatible Chat Completions endpoint.

    ``api_key_env`` is the *name* of the environment variable holding the key;
    the key itself never enters the config, so it cannot leak into a saved
    config, a cache entry or a report.
    """

    base_url: str | None = None
    model: str | None = None
    api_key_env: str | None = "OPENAI_API_KEY"
    temperature: float = 0.0
    max_tokens: int | None = 512
    json_mode: bool = True
    max_concurrency: int = 4
    timeout_s: float = 60.0
    max_retries: int = 4
    backoff_s: float = 1.0
    cache_dir: str | None = None
    #: Prices per million prompt (input) and completion (output) tokens, in the
    #: currency the user reads them in; None: costs are not estimated.
    input_price: float | None = None
    output_price: float | None = None

    def __post_init__(self) -> None:
        if not isinstance(self.base_url, str) or not self.base_url.strip():
            raise LLMConfigError(
                "llm.base_url is required: the endpoint's URL, e.g. "
                "https://api.openai.com/v1 or http://localhost:11434/v1"
            )
        url = self.base_url.strip()
        parts = urlsplit(url)
        try:
            _ = parts.port  # reading it raises on a port that is not a number
        except ValueError:  # "user:pa" read as host and port: not a URL to connect to
            if "@" in url:
                # urlsplit ends the user:password part at the first # / or ?: a password
                # with one of them unencoded would be read as the host and shown.
                raise LLMConfigError(
                    "llm.base_url is not a URL sweep can read: percent-encode "
                    "# / ? @ in a password (# is %23), e.g. http://user:"
                    "pa%23ss@host/v1 (the value is not shown: it may hold a "
                    "password)"
                ) from None
            parts = parts._replace(netloc="")
        if parts.scheme not in ("http", "https") or not parts.hostname:
            shown = without_userinfo(url)
            got = (
                f", got {shown!r}"
                if "@" not in shown
                else " (the value is not shown: it may hold a password)"
            )
            raise LLMConfigError(f"llm.base_url must be an http:// or https:// URL{got}")
        if not isinstance(self.model, str) or not self.model.strip():
            raise LLMConfigError(
                "llm.model is required: the model name the endpoint serves, "
                "e.g. llm.model=gpt-4o-mini or llm.model=qwen2.5:7b"
            )
        if self.api_key_env is not None and not (
            isinstance(self.api_key_env, str)
            and (self.api_key_env == "" or _ENV_NAME.fullmatch(self.api_key_env))
        ):
            # The value is not echoed: a key pasted here by mistake must not be printed.
            raise LLMConfigError(
                "llm.api_key_env must be the name of an environment variable "
                "(letters, digits and _), e.g. OPENAI_API_KEY, or null; "
                "the value given is not shown in case it is the key itself"
            )
        number("llm.temperature", self.temperature, 0.0, 2.0, error=LLMConfigError)
        if self.max_tokens is not None:
            integer(
                "llm.max_tokens",
                self.max_tokens,
                1,
                1_000_000,
                allow_null=True,
                error=LLMConfigError,
            )
        if not isinstance(self.json_mode, bool):
            raise LLMConfigError(f"llm.json_mode must be true or false, got {self.json_mode!r}")
        integer("llm.max_concurrency", self.max_concurrency, 1, 256, error=LLMConfigError)
        number("llm.timeout_s", self.timeout_s, 0.0, 3600.0, open_low=True, error=LLMConfigError)
        integer("llm.max_retries", self.max_retries, 0, 20, error=LLMConfigError)
        number("llm.backoff_s", self.backoff_s, 0.0, 600.0, error=LLMConfigError)
        for name in ("input_price", "output_price"):
            value = getattr(self, name)
            if value is not None:
                number(f"llm.{name}", value, 0.0, 1e6, error=LLMConfigError)
        if self.cache_dir is not None and not isinstance(self.cache_dir, (str, os.PathLike)):
            raise LLMConfigError(
                f"llm.cache_dir must be a path, off, or null, got {self.cache_dir!r}"
            )

    @property
    def endpoint(self) -> str:
        """The URL to show and to connect to, without a user name or password in it."""
        return without_userinfo(self.base_url.strip()).rstrip("/")

    @property
    def credentials(self) -> tuple[str, str] | None:
        """User name and password written into ``base_url``, decoded, or None."""
        parts = urlsplit(self.base_url.strip())
        if parts.username is None and parts.password is None:
            return None
        return unquote(parts.username or ""), unquote(parts.password or "")

    def describe(self) -> dict[str, Any]:
        """The settings for a report: everything but where the cache is, never a secret."""
        return {
            "base_url": self.endpoint,
            "model": self.model,
            "api_key_env": key_variable(self.api_key_env, "(not shown)")
            if self.api_key_env
            else self.api_key_env,
            "temperature": self.temperature,
            "max_tokens": self.max_tokens,
            "json_mode": self.json_mode,
            "max_concurrency": self.max_concurrency,
            "timeout_s": self.timeout_s,
            "max_retries": self.max_retries,
            "input_price": self.input_price,
            "output_price": self.output_price,
        }


def without_userinfo(url: str) -> str:
    """``url`` without the ``user:password@`` part (as urlsplit reads it): what may be
    printed or saved."""
    parts = urlsplit(url)
    if "@" not in parts.netloc:
        return url
    return urlunsplit(parts._replace(netloc=parts.netloc.rsplit("@", 1)[1]))


def key_variable(name: str, unshown: str | None = UNSHOWN_VARIABLE) -> str | None:
    """``name`` if it looks like an environment variable's name, else ``unshown``."""
    return name if _CONVENTIONAL_ENV_NAME.fullmatch(name) else unshown


def is_local(base_url: str) -> bool:
    """Whether the endpoint is on this machine (Ollama, vLLM, llama.cpp usually are)."""
    host = urlsplit(base_url).hostname or ""
    if host == "localhost" or host.endswith(".localhost"):
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def resolve_api_key(config: LLMConfig, environ: Mapping[str, str] = os.environ) -> str | None:
    """The key from ``$llm.api_key_env``, or None when the endpoint is used without one.

    An unset variable is fine for a local endpoint (local servers rarely check
    keys; one that does answers 401, which is reported then). For a remote
    endpoint it is an error before any request is sent.
    """
    name = config.api_key_env
    if not name:
        return None
    key = environ.get(name, "")
    if key.strip():
        shown = key_variable(name, None)
        return check_api_key(
            key.strip(), f"environment variable {shown}" if shown else UNSHOWN_VARIABLE
        )
    if is_local(config.endpoint):
        return None
    if key_variable(name, None) is None:
        raise LLMError(
            f"{UNSHOWN_VARIABLE} is not set; its value is not shown because it does "
            "not look like a variable name (capital letters, digits and _) and may "
            "be the key itself. Put the key for "
            f"{config.endpoint} in an environment variable and set llm.api_key_env "
            "to its name, e.g. OPENAI_API_KEY (or llm.api_key_env=null for an "
            "endpoint that needs no key)"
        )
    raise LLMError(
        f"environment variable {name} is not set: it must hold the API key for "
        f"{config.endpoint} (export {name}=..., or set llm.api_key_env=null for an "
        "endpoint that needs no key)"
    )


def check_api_key(key: str, source: str) -> str:
    """``key``, if an HTTP header can carry it; else a one-line :class:`LLMConfigError`
    naming ``source`` (where the key came from) and what is wrong, never the key.

    A line break, a tab or another control character, or a character beyond ASCII,
    inside a key is a pasting accident. The HTTP library refuses such a header, and its
    error quotes the header whole (``Illegal header value b'Bearer sk-…\\n…'``), so the
    key is refused here, before any request."""
    for i, c in enumerate(key, 1):
        if " " <= c <= "~":
            continue
        what = (
            "a line break"
            if c in "\r\n\u2028\u2029\x85"
            else "a tab"
            if c == "\t"
            else "a control character"
            if not c.isprintable()
            else "a character beyond ASCII"
        )
        raise LLMConfigError(
            f"the API key in {source} has {what} at character {i} of "
            f"{len(key)}, which an HTTP header cannot carry (the key is not "
            "shown): set it again as one line of printable ASCII"
        )
    return key


def secrets_of(api_key: str | None, credentials: tuple[str, str] | None) -> tuple[str, ...]:
    """What must never be shown: the key, and a password in the URL in the forms a server
    may quote back (as typed, and inside a Basic auth header)."""
    found = [api_key or ""]
    if credentials is not None:
        user, password = credentials
        token = base64.b64encode(f"{user}:{password}".encode()).decode()
        found += [password, quote(password, safe=""), token]
    return tuple(s for s in found if s)


def named_secrets(
    api_key_env: object, base_url: object, environ: Mapping[str, str] = os.environ
) -> tuple[str, ...]:
    """The secrets an ``llm`` node's plain values name (the key in ``$api_key_env``, a
    password in ``base_url``), unchecked: for masking what a job writes when anything
    failed, also before (or without) a client being made."""
    key = environ.get(api_key_env, "") if isinstance(api_key_env, str) and api_key_env else ""
    credentials = None
    if isinstance(base_url, str):
        parts = urlsplit(base_url.strip())
        if parts.password is not None:
            credentials = unquote(parts.username or ""), unquote(parts.password)
    return secrets_of(key.strip() or None, credentials)


def check_saved(
    api_key_env: object, base_url: object, environ: Mapping[str, str] = os.environ
) -> None:
    """A one-line :class:`LLMConfigError` when an ``llm`` node that is to be saved (a
    sweep writes its config into every job's folder, ``results.csv`` and Hydra's files)
    holds a secret: a password in ``base_url``, or a key pasted where the variable's
    name goes (not a name, or a lowercase one no variable has: ``gsk_...``). Neither
    value is shown."""
    if isinstance(base_url, str) and urlsplit(base_url.strip()).password:
        raise LLMConfigError(
            "llm.base_url holds a password (not shown), and a sweep saves its config in every "
            "job's folder and in results.csv: give the endpoint without it, and its key in "
            "the environment variable llm.api_key_env names"
        )
    if (
        isinstance(api_key_env, str)
        and api_key_env
        and not (
            _CONVENTIONAL_ENV_NAME.fullmatch(api_key_env)
            or (_ENV_NAME.fullmatch(api_key_env) and api_key_env in environ)
        )
    ):
        raise LLMConfigError(
            "llm.api_key_env is not the name of an environment variable that is set (the value "
            "is not shown: it may be the key itself), and a sweep saves its config in every "
            "job's folder: set it to the variable's name, e.g. llm.api_key_env=OPENAI_API_KEY"
        )


def default_llm_cache_dir() -> Path:
    """``$XDG_CACHE_HOME/sweep/llm``, else ``~/.cache/sweep/llm``."""
    return cachedirs.default_cache_dir_of("llm")


def resolve_llm_cache_dir(cache_dir: str | os.PathLike | None) -> Path | None:
    """The folder ``llm.cache_dir`` names (None: the default); None when it is ``off``."""
    return cachedirs.resolve_cache_dir_of(cache_dir, "llm")
