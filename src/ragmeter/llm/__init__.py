"""Chat models for grading answers and generating questions.

::

    from ragmeter.llm import ChatRequest, ReplyCache, make_backend, run_all

    backend = make_backend("ollama:llama3.2")
    with ReplyCache("ragmeter-results/llm-cache.sqlite") as cache:
        replies = run_all(backend, [ChatRequest(prompt="...", json_schema=SCHEMA)], cache)
"""

from ragmeter.llm.backends import (
    GGUFBackend,
    OllamaBackend,
    OpenAIBackend,
    make_backend,
    parse_options,
)
from ragmeter.llm.cache import ReplyCache, request_key
from ragmeter.llm.client import (
    Backend,
    BackendRejected,
    BackendUnavailable,
    ChatReply,
    ChatRequest,
    Completion,
    Message,
)
from ragmeter.llm.parse import extract_objects, parse_reply, validate
from ragmeter.llm.runner import Runner, RunStats, chat, run_all

__all__ = [
    "Backend",
    "BackendRejected",
    "BackendUnavailable",
    "ChatReply",
    "ChatRequest",
    "Completion",
    "GGUFBackend",
    "Message",
    "OllamaBackend",
    "OpenAIBackend",
    "ReplyCache",
    "RunStats",
    "Runner",
    "chat",
    "extract_objects",
    "make_backend",
    "parse_options",
    "parse_reply",
    "request_key",
    "run_all",
    "validate",
]
