"""A failure that comes from what the backend cannot run says so (kgb_core/evaluation/backend_gaps.py);
a kernel's own failure never does, and a wrong value is never blamed on the backend."""

from __future__ import annotations

from types import SimpleNamespace

from conftest import KERNELS
from kgb_core.evaluation import verdicts
from kgb_core.evaluation.backend_gaps import known_gap


def test_inline_assembly_on_the_cpu_backend_names_the_gap(unscreened_cpu_evaluator):
    result = unscreened_cpu_evaluator.evaluate("aten.neg",
                                               (KERNELS / "neg_inline_asm.py").read_text())
    assert result.verdict == verdicts.COMPILE_ERROR
    assert "inline assembly" in result.backend_gap
    assert "known gap of the cpu backend" in result.message
    assert "line 14, in _neg" in result.message  # the kernel's own line is still shown


def test_a_kernels_own_error_names_no_gap(unscreened_cpu_evaluator):
    result = unscreened_cpu_evaluator.evaluate("aten.relu",
                                               (KERNELS / "relu_raises.py").read_text())
    assert result.verdict == verdicts.RUNTIME_ERROR
    assert result.backend_gap == "" and "known gap" not in result.message


def test_only_a_failure_to_run_is_matched():
    quirks = SimpleNamespace(known_gaps=((r"inline_asm not supported", "no asm here"),))
    message = "NotImplementedError: inline_asm not supported in interpreter mode"
    assert known_gap(verdicts.COMPILE_ERROR, message, quirks) == "no asm here"
    assert known_gap(verdicts.WRONG_OUTPUT, message, quirks) is None
    assert known_gap(verdicts.RUNTIME_ERROR, "IndexError: out of range", quirks) is None
