"""Shared fixtures: a fresh registry per test, one CPU evaluator per module, paths."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from kgb_core.evaluation.evaluator import EvaluationSettings, Evaluator
from kgb_core.plugins import load_registry

TESTS = Path(__file__).parent
KERNELS = TESTS / "kernels"
REPO = TESTS.parent

# The start of a script that checks candidates with a real CPU judge in a process of its own
# (``python -c``), its environment set as the harness sets it: defines ``registry``,
# ``backend`` and ``Judge`` (CPU_BACKEND_PRELUDE, for a script that makes its judge its own
# way), and ``judge``. The script imports ``os`` first.
CPU_BACKEND_PRELUDE = """
from kgb_core.plugins import load_registry
registry = load_registry()
backend = registry.backend("cpu")
for key, value in backend.worker_environment().items():
    os.environ.setdefault(key, value)
from kgb_core.evaluation.judge import Judge
"""
CPU_JUDGE_PRELUDE = CPU_BACKEND_PRELUDE + """judge = Judge(backend, registry)
"""
# For a script (which imports ``fcntl``): whether another process could take the lock file open
# as ``probe`` alone at this moment, as another judge's timing would.
LOCK_PROBE = """
def lock_free(probe):
    try:
        fcntl.flock(probe, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return False
    fcntl.flock(probe, fcntl.LOCK_UN)
    return True
"""
# For a script: every Timer.measure watched. ``measuring`` holds each one's ``warmed`` in order;
# ``running["warmed"]`` is the running one's (None between them: no timer is measuring).
MEASURE_SPY = """
from kgb_core.timing import Timer
measuring = []
running = {"warmed": None}
_measure = Timer.measure


def _spied(timer, fn, prepare=None, *, warmed=False):
    measuring.append(warmed)
    running["warmed"] = warmed
    try:
        return _measure(timer, fn, prepare, warmed=warmed)
    finally:
        running["warmed"] = None


Timer.measure = _spied
"""


def script_report(script: str, *args: str, timeout: float = 600) -> dict:
    """Run ``script`` (``python -c``, from the repository, with this environment) and return
    the JSON object its last line of output prints; a failing script fails the test."""
    import json

    done = subprocess.run([sys.executable, "-c", script, *args], capture_output=True,
                          text=True, cwd=str(REPO), timeout=timeout, env=dict(os.environ))
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


@pytest.fixture
def registry():
    return load_registry()


# A module's evaluator keeps its one judge for all the module's jobs: the product replaces a
# judge after ``max_jobs_per_worker`` (64) jobs, which cost test_negative_controls.py (915
# jobs) 14 judge starts of 3.6 s each (5 s beside the suite's other workers). The replacement
# itself is test_evaluation.py's test_a_judge_is_replaced_after_its_quota_of_jobs.
SUITE_JOBS_PER_JUDGE = 100_000


@pytest.fixture(scope="module")
def unscreened_cpu_evaluator():
    """The same with the static screen off: what the run-time checks alone make of a
    candidate whose tricks the screen would refuse on sight (a test of those checks)."""
    backend = load_registry().backend("cpu")
    settings = EvaluationSettings(seeds=(0,), timeout_s=60, timing=False, screen=False,
                                  max_jobs_per_worker=SUITE_JOBS_PER_JUDGE)
    with Evaluator.for_backend(backend, settings) as evaluator:
        yield evaluator


@pytest.fixture(scope="module")
def unscreened_timed_cpu_evaluator():
    """The same with timing on: what the timing stage's checks make of a candidate that
    cheats only once it is timed (the CPU backend's few timed repetitions keep it cheap)."""
    backend = load_registry().backend("cpu")
    settings = EvaluationSettings(seeds=(0,), timeout_s=60, timing=True, screen=False,
                                  max_jobs_per_worker=SUITE_JOBS_PER_JUDGE)
    with Evaluator.for_backend(backend, settings) as evaluator:
        yield evaluator


@pytest.fixture(scope="module")
def cpu_evaluator():
    """One worker for a module's checks: reuse is part of what is under test."""
    backend = load_registry().backend("cpu")
    settings = EvaluationSettings(seeds=(0,), timeout_s=60, timing=False,
                                  max_jobs_per_worker=SUITE_JOBS_PER_JUDGE)
    with Evaluator.for_backend(backend, settings) as evaluator:
        yield evaluator


def kgb(*args: str, env: dict[str, str] | None = None, timeout: float = 600,
        cwd: Path | None = None) -> subprocess.CompletedProcess:
    """Run the real console entry point in a subprocess, as a user would."""
    full_env = {**os.environ, **(env or {})}
    return subprocess.run([sys.executable, "-c", "from kgb_core.cli import main; main()", *args],
                          capture_output=True, text=True, env=full_env, timeout=timeout,
                          cwd=str(cwd or REPO))


# -- scheduling the suite over xdist workers (.ci/run: -n 3 --dist loadfile) --------------------
# A module's tests run on one worker, so a module-scoped fixture that builds a store with real
# `kgb run`s (test_reports.py, test_method_labels.py, test_command_method.py, test_merge.py) is
# built once, not once per worker. (--dist loadgroup with xdist_group marks did not group them:
# xdist 3.8 names a group by editing Item._nodeid, which pytest 9.2 no longer reads.)
# The longest modules go first (whole `kgb run`s and sweeps): the workers then finish together
# instead of one running a long module alone at the end. Since xdist 3.7 the scheduler hands
# out the modules with the most tests first, so this order only breaks its ties. Turning that
# reordering off, so that this order ruled, made the suite slower both times it was measured
# (clean clone 973 s against 943 s; here 870 s against 804-842 s, 2026-12-07): the suite keeps
# both cores busy to its last 20 s either way, so its total work is what bounds it.
# Measured (seconds of test time on CI's machine): 270, 170, 120, 95, 80, 75, 70, 70, 65, ...
# (2026-12-06: the reference sweep 360 s, test_serve.py about 100, the stored-baseline and
# timed-worker modules about 65 each; left unlisted they ran last, alone, and the suite took
# 945 s. Tenth session: the reference sweep, one module, kept one worker of three busy for about
# 500 s while the suite took 1128 s; it is four modules now, reference_sweep.py says how.)
LONG_FIRST = ("test_reference_sweep_part3.py", "test_reference_sweep_part2.py",
              "test_reference_sweep_part1.py", "test_negative_controls.py", "test_scale_out.py",
              "test_cli.py", "test_serve.py", "test_benchmarks_cpu.py", "test_llm_method.py",
              "test_reports.py", "test_kgb_source_kernelbench.py", "test_agent_scaffolds.py",
              "test_method_labels.py", "test_baselines.py", "test_workers_per_device.py",
              "test_command_method.py", "test_agent_presets.py", "test_sweep.py",
              "test_agent_method.py", "test_kgb_source_gpumode.py",
              "test_reference_sweep_part0.py")


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    rank = {name: index for index, name in enumerate(LONG_FIRST)}
    items.sort(key=lambda item: rank.get(item.path.name, len(LONG_FIRST)))  # stable otherwise
