"""The example plugin, installed as its own distribution: discovered, probed, and its quirks
applied by the core (skipped dtypes, launch limits, deny-list)."""

from __future__ import annotations

import pytest

from kgb_backend_example import ExampleBackend
from kgb_core.evaluation import verdicts
from kgb_core.evaluation.evaluator import EvaluationSettings, Evaluator
from kgb_core.plugins import load_registry


@pytest.fixture(scope="module")
def registry():
    registry = load_registry()
    if "example" not in registry.names("backend"):
        pytest.skip("kgb-backend-example is not installed (scripts/setup.sh installs "
                    "every distribution under plugins/)")
    return registry


def test_it_is_discovered_with_its_distribution_and_version(registry):
    info = registry.provider("backend", "example")
    assert (info.name, info.distribution, info.version) == ("kgb-backend-example",
                                                            "kgb-backend-example", "0.1.0")
    assert info.error is None


def test_the_probe_says_what_it_checked():
    availability = ExampleBackend().probe()
    assert availability.available and availability.checks
    assert all(check.ok for check in availability.checks)


def test_its_deny_list_names_real_operators(registry):
    # A typo in a deny-list would silently deny nothing: every id must exist.
    known = {op.id for op in registry.operators()}
    assert set(ExampleBackend.profile.quirks.denied_operators) <= known


def test_the_core_applies_its_dtype_skips_and_launch_limits(registry):
    backend = registry.backend("example")
    reference = registry.operator("aten.neg").reference_kernel()
    too_many_warps = reference.replace("BLOCK=block)", "BLOCK=block, num_warps=16)")
    too_large_block = reference.replace("block = 1024", "block = 8192")
    assert too_many_warps != reference and too_large_block != reference
    settings = EvaluationSettings(seeds=(0,), timeout_s=120, timing=False)
    with Evaluator.for_backend(backend, settings) as evaluator:
        # the failing cases first: a check that cannot fail proves nothing
        warps = evaluator.evaluate("aten.neg", too_many_warps)
        block = evaluator.evaluate("aten.neg", too_large_block)
        good = evaluator.evaluate("aten.neg", reference)
    assert warps.verdict == verdicts.LIMIT_EXCEEDED and "num_warps=16" in warps.message
    assert block.verdict == verdicts.LIMIT_EXCEEDED and "BLOCK=8192" in block.message
    assert good.verdict == verdicts.PASS, good.message
    skipped = [c for c in good.cases if c["status"] == "skipped"]
    assert skipped and {c["dtype"] for c in skipped} == {"float16"}
    assert good.backend == "example" and good.emulates == ""


REPLACES_THE_PLUGINS_TIMER = '''
import kgb_backend_example
from kgb_core.timing import Timer


class _Instant(Timer):
    label = "instant"

    def time_once_ms(self, fn):
        fn()
        return 1e-6


kgb_backend_example.ExampleBackend.make_timer = lambda self, settings: _Instant(settings)
'''


def test_a_candidate_replacing_the_plugins_own_timer_is_caught(registry):
    """The runner guards the backend plugin's package as it guards kgb's: a third-party
    backend's timer is as much the harness as the CPU backend's (the static screen is off
    here, as a screen that missed the import would leave it)."""
    settings = EvaluationSettings(seeds=(0,), timeout_s=120, timing=True, screen=False)
    with Evaluator.for_backend(registry.backend("example"), settings) as evaluator:
        cheat = registry.operator("aten.neg").reference_kernel() + REPLACES_THE_PLUGINS_TIMER
        result = evaluator.evaluate("aten.neg", cheat)
    assert result.verdict == verdicts.TAMPERING, f"{result.verdict}: {result.message}"
    assert "kgb_backend_example.ExampleBackend" in result.message
