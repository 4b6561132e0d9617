"""The runner's count of compile seconds (``LaunchCounter.compile_s``): what of a check step's
launches was Triton compiling, the host work a step held shared makes a waiting timing wait on
(a diagnostic, read by ``benchmarks/full_sweep.py`` as "runner compile")."""

from __future__ import annotations

import time

from triton.runtime.jit import JITFunction

from kgb_core.evaluation.launches import LaunchCounter, time_compiles


class _Compiles:
    """A stand-in with JITFunction's compile entry point: 20 ms a compile."""

    def _do_compile(self, key: str) -> str:
        time.sleep(0.02)
        return f"kernel {key}"


def test_each_compile_adds_its_seconds_and_a_reset_clears_them():
    counter = LaunchCounter()
    time_compiles(_Compiles, counter.note_compile)
    assert _Compiles()._do_compile("a") == "kernel a"  # what the compile returns, unchanged
    assert _Compiles()._do_compile("b") == "kernel b"
    assert 0.04 <= counter.compile_s < 1.0
    counter.reset()
    assert counter.compile_s == 0.0


def test_a_class_that_compiles_nothing_is_left_alone():
    class Interpreted:
        def run(self) -> None:
            pass

    time_compiles(Interpreted, LaunchCounter().note_compile)
    assert not hasattr(Interpreted, "_do_compile")


def test_this_triton_compiles_where_the_counter_looks():
    """The counter times ``JITFunction._do_compile``; a Triton that renamed it would leave the
    number at zero on a GPU, silently. Triton 3.4 to 3.9 have it."""
    assert callable(getattr(JITFunction, "_do_compile", None))
