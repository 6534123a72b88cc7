"""Talking to language models, free of Django: the client, prompt rendering, output parsing, limits.

Nothing here imports Django, so it can be tested (and reused) on its own.
"""

from .client import Attempt, CallResult, EndpointConfig, LLMClient, PromptRequest
from .limiter import Limits, LocalLimiter, RedisLimiter
from .parsing import NoJSONFound, extract_json, validation_error
from .prompts import MissingVariables, render

__all__ = [
    "Attempt",
    "CallResult",
    "EndpointConfig",
    "LLMClient",
    "Limits",
    "LocalLimiter",
    "MissingVariables",
    "NoJSONFound",
    "PromptRequest",
    "RedisLimiter",
    "extract_json",
    "render",
    "validation_error",
]
