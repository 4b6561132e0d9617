"""Shared fixtures: a fresh registry per test, one CPU evaluator per module, paths."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from kgb_core.evaluation.pool import EvaluationSettings, Evaluator
from kgb_core.plugins import load_registry

TESTS = Path(__file__).parent
KERNELS = TESTS / "kernels"
REPO = TESTS.parent


@pytest.fixture
def registry():
    return load_registry()


@pytest.fixture(scope="module")
def unscreened_cpu_evaluator():
    """The same with the static screen off: what the run-time checks alone make of a
    candidate whose tricks the screen would refuse on sight (a test of those checks)."""
    backend = load_registry().backend("cpu")
    settings = EvaluationSettings(seeds=(0,), timeout_s=60, timing=False, screen=False)
    with Evaluator.for_backend(backend, settings) as evaluator:
        yield evaluator


@pytest.fixture(scope="module")
def unscreened_timed_cpu_evaluator():
    """The same with timing on: what the timing stage's checks make of a candidate that
    cheats only once it is timed (the CPU backend's few timed repetitions keep it cheap)."""
    backend = load_registry().backend("cpu")
    settings = EvaluationSettings(seeds=(0,), timeout_s=60, timing=True, screen=False)
    with Evaluator.for_backend(backend, settings) as evaluator:
        yield evaluator


@pytest.fixture(scope="module")
def cpu_evaluator():
    """One worker for a module's checks: reuse is part of what is under test."""
    backend = load_registry().backend("cpu")
    settings = EvaluationSettings(seeds=(0,), timeout_s=60, timing=False)
    with Evaluator.for_backend(backend, settings) as evaluator:
        yield evaluator


def kgb(*args: str, env: dict[str, str] | None = None, timeout: float = 600,
        cwd: Path | None = None) -> subprocess.CompletedProcess:
    """Run the real console entry point in a subprocess, as a user would."""
    full_env = {**os.environ, **(env or {})}
    return subprocess.run([sys.executable, "-c", "from kgb_core.cli import main; main()", *args],
                          capture_output=True, text=True, env=full_env, timeout=timeout,
                          cwd=str(cwd or REPO))
