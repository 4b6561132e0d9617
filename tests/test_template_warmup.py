"""The runner template's warm-up (``Backend.warm_template``): Triton's compiler initialised
with no device and no new thread, and a warm-up that starts a thread refused loudly."""

from __future__ import annotations

import os

import pytest

from kgb_backends.triton_warmup import compile_for_target
from kgb_core.evaluation.evaluator import EvaluationSettings, Evaluator
from kgb_core.plugins import load_registry


def test_a_cuda_kernel_compiles_with_no_device_no_thread_and_a_read_only_cache(monkeypatch):
    """What the NVIDIA backend does in the template, here on a machine with no GPU, with the
    Triton cache where the sandbox has it: on a read-only file system (the H200 run at
    dec3a9b failed there). The compile gets a temporary folder and the variable is restored."""
    import triton

    compiled = []
    original = triton.compile
    monkeypatch.setattr(triton, "compile",
                        lambda *a, **k: compiled.append(original(*a, **k)) or compiled[-1])
    monkeypatch.setenv("TRITON_CACHE_DIR", "/proc/kgb-read-only")
    threads = len(os.listdir("/proc/self/task"))
    compile_for_target("cuda", 90, 32)
    assert len(os.listdir("/proc/self/task")) == threads
    assert compiled and "cubin" in compiled[0].asm
    assert os.environ["TRITON_CACHE_DIR"] == "/proc/kgb-read-only"


def test_a_warm_up_that_starts_a_thread_stops_the_template(monkeypatch):
    import kgb_test_plugins

    registry = load_registry(extra=[("kgb_test_plugins", kgb_test_plugins)])
    monkeypatch.setenv("KGB_EXTRA_PLUGINS", "kgb_test_plugins")
    monkeypatch.setenv("PYTHONPATH", str(kgb_test_plugins.KERNELS.parent))
    settings = EvaluationSettings(seeds=(0,), timeout_s=60, timing=False)
    spec = registry.operator("aten.relu")
    with pytest.raises(Exception, match="warm_template started threads"):
        with Evaluator.for_backend(registry.backend("cpu_threadedwarmup"), settings) as evaluator:
            evaluator.evaluate(spec.id, spec.reference_kernel())
