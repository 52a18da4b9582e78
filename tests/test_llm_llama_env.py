"""``ragmeter.llm.llama_env``: AMX read from the CPU flags, llama.cpp's extra CPU buffers
switched off only while a model loads (and only when asked), and quiet loading.

Skipped without llama-cpp-python, except the CPU flags."""

from __future__ import annotations

import contextlib
import io
import sys

import pytest

from ragmeter.llm import llama_env


def _cpuinfo(monkeypatch, text: str | None) -> None:
    def fake_open(path, *args, **kwargs):
        assert path == "/proc/cpuinfo"
        if text is None:
            raise FileNotFoundError(path)  # not Linux
        return io.StringIO(text)

    monkeypatch.setattr(llama_env, "open", fake_open, raising=False)


@pytest.mark.parametrize(
    ("cpuinfo", "amx"),
    [
        ("processor\t: 0\nflags\t\t: fpu sse avx512f amx_bf16 amx_int8 amx_tile\n", True),
        ("processor\t: 0\nflags\t\t: fpu sse avx512f amx_bf16\nbugs\t: amx_int8\n", False),
        ("model name\t: amx_int8 in the name only\n", False),
        (None, False),
    ],
)
def test_amx_is_read_from_the_first_flags_line(monkeypatch, cpuinfo, amx):
    _cpuinfo(monkeypatch, cpuinfo)
    assert llama_env.cpu_has_amx() is amx


lib = pytest.importorskip("llama_cpp.llama_cpp", reason="llama-cpp-python is not installed")


@pytest.mark.skipif(
    "use_extra_bufts" not in {n for n, _ in getattr(lib.llama_model_params, "_fields_", [])},
    reason="this llama.cpp has no extra buffer types",
)
def test_extra_buffers_are_off_only_while_a_model_loads_and_only_when_asked():
    original = lib.llama_model_default_params
    assert original().use_extra_bufts  # llama.cpp's default
    with llama_env.llama_extra_buffers(False):
        assert lib.llama_model_default_params().use_extra_bufts is False
    assert lib.llama_model_default_params is original
    with llama_env.llama_extra_buffers(True):
        assert lib.llama_model_default_params is original
    assert lib.llama_model_default_params().use_extra_bufts


def test_quiet_loading_unless_verbose(monkeypatch):
    from llama_cpp._utils import suppress_stdout_stderr

    quiet = llama_env.quiet_llama(False)
    assert isinstance(quiet, suppress_stdout_stderr) and quiet.disable is False
    loud = llama_env.quiet_llama(True)
    assert isinstance(loud, contextlib.nullcontext)
    with loud:
        pass
    # a llama-cpp-python without the helper loads as it is, unsilenced
    monkeypatch.setitem(sys.modules, "llama_cpp._utils", None)
    assert isinstance(llama_env.quiet_llama(False), contextlib.nullcontext)
