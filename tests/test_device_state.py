"""The runner's watch on device state the timer depends on (``Backend.device_state_watch``).

On NVIDIA it watches L2 persistence, which lets lines survive the timer's flush (the GPU
cheats in tests/adversarial/gpu/ run on the H200). Here a test backend watches torch's thread
count instead, so the plumbing is shown on the CPU: a change left in place after import or a
call, and one made and undone inside a call around its launch, are both ``tampering``.
"""

from __future__ import annotations

import pytest

from kgb_core.evaluation import verdicts
from kgb_core.evaluation.evaluator import EvaluationSettings, Evaluator
from kgb_core.plugins import load_registry

RELU = '''
import torch
import triton
import triton.language as tl


@triton.jit
def _relu(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n
    x = tl.load(x_ptr + offsets, mask=mask)
    tl.store(out_ptr + offsets, tl.where(x > 0, x, 0.0), mask=mask)


def kernel(x):
    x = x.contiguous()
    out = torch.empty_like(x)
    {before}
    _relu[(triton.cdiv(max(x.numel(), 1), 256),)](x, out, x.numel(), BLOCK=256)
    {after}
    return out
'''


@pytest.fixture(scope="module")
def watched_evaluator():
    import kgb_test_plugins

    registry = load_registry(extra=[("kgb_test_plugins", kgb_test_plugins)])
    backend = registry.backend("cpu_statewatch")
    settings = EvaluationSettings(seeds=(0,), timeout_s=60, timing=False, screen=False)
    with pytest.MonkeyPatch.context() as patch:
        # The runner finds this backend through KGB_EXTRA_PLUGINS, like any installed plugin.
        patch.setenv("KGB_EXTRA_PLUGINS", "kgb_test_plugins")
        patch.setenv("PYTHONPATH", str(kgb_test_plugins.KERNELS.parent))
        with Evaluator.for_backend(backend, settings) as evaluator:
            yield evaluator


@pytest.mark.parametrize("before, after, where", [
    ("", "", None),
    ("", "torch.set_num_threads(1)", "during kernel(...)"),
    ("saved = torch.get_num_threads(); torch.set_num_threads(1)",
     "torch.set_num_threads(saved)", "_relu was launched with"),
], ids=["unchanged", "left_changed_after_the_call", "changed_only_around_the_launch"])
def test_a_change_of_watched_state_is_tampering(watched_evaluator, before, after, where):
    result = watched_evaluator.evaluate("aten.relu", RELU.format(before=before, after=after))
    if where is None:
        assert result.verdict == verdicts.PASS, result.message
        return
    assert result.verdict == verdicts.TAMPERING, result.message
    assert where in result.message and "thread count" in result.message


def test_a_change_made_at_import_is_tampering(watched_evaluator):
    source = RELU.format(before="", after="") + "\ntorch.set_num_threads(1)\n"
    result = watched_evaluator.evaluate("aten.relu", source)
    assert result.verdict == verdicts.TAMPERING, result.message
    assert "while being imported" in result.message


def test_the_l2_watch_reports_changes_from_what_it_found_and_not_what_it_cannot_read(
        monkeypatch):
    """kgb_backends/cuda_l2.py with the driver's answers simulated: the H200's driver sets
    aside L2 by default (11796480 bytes there), and a thread with no current context gets no
    answer at all (None), which is no change."""
    import kgb_backends.cuda_l2 as l2

    state = {"limit": 11796480, "window": (0, 0)}
    monkeypatch.setattr(l2, "persisting_l2_limit", lambda: state["limit"])
    monkeypatch.setattr(l2, "access_policy_window", lambda stream: state["window"])
    changes = l2.persisting_l2_watch(stream=0)
    assert changes() == []
    state.update(limit=None, window=None)
    assert changes() == []
    state.update(limit=64 << 20, window=(1 << 40, 4096))
    found = changes()
    assert len(found) == 2 and "from 11796480 to 67108864" in found[0] and "4096" in found[1]
