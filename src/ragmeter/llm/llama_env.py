"""The process around llama.cpp: which CPU buffers a model loads with, and quiet loading.

Kept apart from :mod:`ragmeter.llm.backends` because none of it is about chat:
it is about the C library under the gguf backend.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Iterator
from typing import Any

__all__ = ["cpu_has_amx", "llama_extra_buffers", "quiet_llama"]


def cpu_has_amx() -> bool:
    """Whether this CPU advertises Intel AMX (Linux ``/proc/cpuinfo``)."""
    try:
        with open("/proc/cpuinfo", encoding="utf-8", errors="replace") as f:
            for line in f:
                if line.startswith("flags"):
                    return "amx_int8" in line.split()
    except OSError:
        pass
    return False


@contextlib.contextmanager
def llama_extra_buffers(enabled: bool) -> Iterator[None]:
    """Load llama.cpp models with or without extra CPU buffer types.

    Extra buffer types repack weights for faster CPU kernels (AMX, AVX-512);
    some llama.cpp builds crash with a segmentation fault in the AMX kernels.
    llama-cpp-python has no switch for it, so this sets ``use_extra_bufts``
    in the default model parameters while a model loads (a no-op with
    ``enabled=True`` or on versions without the field).
    """
    from llama_cpp import llama_cpp as lib

    original = lib.llama_model_default_params
    fields = {name for name, _ in getattr(lib.llama_model_params, "_fields_", [])}
    if enabled or "use_extra_bufts" not in fields:
        yield
        return

    def patched():
        params = original()
        params.use_extra_bufts = False
        return params

    with _PARAMS_LOCK:
        lib.llama_model_default_params = patched
        try:
            yield
        finally:
            lib.llama_model_default_params = original


_PARAMS_LOCK = threading.Lock()


def quiet_llama(verbose: bool) -> Any:
    """Silence what llama.cpp writes to stderr while a model loads, unless ``verbose``.

    ``Llama(verbose=False)`` still lets a few lines of the C library through."""
    if verbose:
        return contextlib.nullcontext()
    try:
        from llama_cpp._utils import suppress_stdout_stderr
    except ImportError:  # pragma: no cover (a llama-cpp-python without it)
        return contextlib.nullcontext()
    return suppress_stdout_stderr(disable=False)
