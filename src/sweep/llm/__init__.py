"""A client for OpenAI-compatible Chat Completions endpoints, with an answer cache."""

from sweep.llm.cache import ResponseCache, Usage
from sweep.llm.client import PENDING, Completion, LLMClient, LLMStats, RequestFailed
from sweep.llm.config import LLMConfig, resolve_api_key, resolve_llm_cache_dir
from sweep.llm.errors import LLMConfigError, LLMError
from sweep.llm.jsonreply import ReplyError, parse_json_object

__all__ = [
    "PENDING",
    "Completion",
    "LLMClient",
    "LLMConfig",
    "LLMConfigError",
    "LLMError",
    "LLMStats",
    "ReplyError",
    "RequestFailed",
    "ResponseCache",
    "Usage",
    "parse_json_object",
    "resolve_api_key",
    "resolve_llm_cache_dir",
]
