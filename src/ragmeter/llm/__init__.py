"""Chat models for grading answers and generating questions.

::

    from ragmeter.llm import CallSettings, ChatRequest, open_backend

    settings = CallSettings("ollama:llama3.2", cache="ragmeter-results/llm-cache.sqlite")
    with open_backend(settings) as calls:
        replies = calls.run([ChatRequest(prompt="...", json_schema=SCHEMA)])
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
from ragmeter.llm.settings import (
    CallSettings,
    ModelCalls,
    call_settings,
    model_label,
    open_backend,
)

__all__ = [
    "Backend",
    "CallSettings",
    "BackendRejected",
    "BackendUnavailable",
    "ChatReply",
    "ChatRequest",
    "Completion",
    "GGUFBackend",
    "Message",
    "ModelCalls",
    "OllamaBackend",
    "OpenAIBackend",
    "ReplyCache",
    "RunStats",
    "Runner",
    "call_settings",
    "chat",
    "extract_objects",
    "make_backend",
    "model_label",
    "open_backend",
    "parse_options",
    "parse_reply",
    "request_key",
    "run_all",
    "validate",
]
