"""Sweeps: bad candidates do not stop them, results are stored, resume skips what is done."""

from __future__ import annotations

import signal
import sqlite3
import subprocess
import sys
import time

import kgb_test_plugins
from kgb_core.config import RunConfig
from kgb_core.errors import UserError
from kgb_core.evaluation import verdicts
from kgb_core.plugins import load_registry
from kgb_core.progress import Progress
from kgb_core.store import ResultStore
from kgb_core.sweep import plan_sweep, run_sweep

import pytest

from conftest import REPO

FILES = {
    "aten.relu": "relu_hangs.py",
    "aten.neg": "relu_atomic_far_outside.py",
    "aten.add": "add_wrong_values.py",
    "aten.abs": "relu_exits.py",
}


def _registry():
    return load_registry(extra=[("kgb_test_plugins", kgb_test_plugins)])


def test_a_sweep_survives_hangs_crashes_and_wrong_answers(tmp_path):
    registry = _registry()
    config = RunConfig(ops=list(FILES) + ["aten.sin"], method="corpus", backend="cpu",
                       method_options={"files": FILES}, seeds=[0], timeout_s=8, timing=False)
    plan = plan_sweep(config, registry)
    with ResultStore(tmp_path / "r.db") as store:
        outcome = run_sweep(plan, registry, store, resume=False,
                            progress_factory=lambda total: Progress(total, stream=sys.stderr))
        rows = {row["op"]: row["verdict"] for row in store.results(outcome.run_id)}
    assert rows == {
        "aten.relu": verdicts.TIMEOUT,
        "aten.neg": verdicts.RUNTIME_ERROR,
        "aten.add": verdicts.WRONG_OUTPUT,
        "aten.abs": verdicts.CRASHED,
        "aten.sin": verdicts.NO_CANDIDATE,
    }


def test_an_unknown_method_option_is_refused_before_anything_runs():
    config = RunConfig(ops=["aten.relu"], method="corpus", backend="cpu",
                       method_options={"filez": {}})
    with pytest.raises(UserError, match="no option 'filez'.*files"):
        plan_sweep(config, _registry())


def test_an_unavailable_backend_says_what_it_needs(registry):
    if registry.backend("nvidia").probe().available:
        pytest.skip("this machine has an NVIDIA GPU")
    with pytest.raises(UserError, match="not available here: .*NVIDIA"):
        plan_sweep(RunConfig(ops=["aten.relu"], backend="nvidia"), registry)


KILL_OPS = ["aten.neg", "aten.exp", "aten.sin", "aten.cos", "aten.abs", "aten.relu",
            "aten.sigmoid", "aten.silu"]


def _count(db):
    try:
        conn = sqlite3.connect(db, timeout=5)
        try:
            return conn.execute("SELECT COUNT(*) FROM results").fetchone()[0]
        finally:
            conn.close()
    except sqlite3.OperationalError:
        return 0


def test_kill_9_then_resume_loses_nothing_and_duplicates_nothing(tmp_path):
    db = str(tmp_path / "killed.db")
    args = [sys.executable, "-c", "from kgb_core.cli import main; main()", "run",
            "--backend", "cpu", "--method", "reference", "--db", db, "--seed", "0"]
    for op in KILL_OPS:
        args += ["--op", op]
    process = subprocess.Popen(args, cwd=str(REPO), stdout=subprocess.DEVNULL,
                               stderr=subprocess.DEVNULL, start_new_session=True)
    deadline = time.monotonic() + 240
    while _count(db) < 3 and time.monotonic() < deadline and process.poll() is None:
        time.sleep(0.05)
    # kill -9 the whole process group: the harness and its worker, mid-sweep.
    import os

    os.killpg(process.pid, signal.SIGKILL)
    process.wait()
    stored_before = _count(db)
    assert 3 <= stored_before < len(KILL_OPS), "the kill must land in the middle of the sweep"

    resumed = subprocess.run(args + ["--resume"], cwd=str(REPO), capture_output=True, text=True,
                             timeout=300)
    assert resumed.returncode == 0, resumed.stderr
    assert "continuing run 1" in resumed.stderr
    conn = sqlite3.connect(db)
    rows = conn.execute("SELECT op, COUNT(*) FROM results GROUP BY op").fetchall()
    runs = conn.execute("SELECT COUNT(*) FROM runs").fetchone()[0]
    assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    conn.close()
    assert sorted(op for op, _ in rows) == sorted(KILL_OPS)
    assert all(count == 1 for _, count in rows), rows
    assert runs == 1
    verdict_rows = sqlite3.connect(db).execute("SELECT DISTINCT verdict FROM results").fetchall()
    assert verdict_rows == [("pass",)]


def test_a_time_limit_stops_handing_out_operators_and_resume_finishes_them(tmp_path):
    """``run_sweep(stop_at=...)``: what started finishes and is stored, nothing more starts,
    the run stays open, and a resumed run does the rest."""
    registry = _registry()
    ops = ["aten.neg", "aten.abs", "aten.relu"]
    config = RunConfig(ops=ops, backend="cpu", seeds=[0], timing=False, timeout_s=60)
    notes: list[str] = []
    with ResultStore(tmp_path / "r.db") as store:
        cut = run_sweep(plan_sweep(config, registry), registry, store, resume=False,
                        notes=notes.append, stop_at=time.monotonic())
        assert cut.stopped_by_budget.startswith("time limit reached; 3 operators not attempted")
        assert notes == [cut.stopped_by_budget] and not store.results(cut.run_id)
        (run,) = store.runs()
        assert not run["finished_at"], "a cut run stays open for --resume"
        rest = run_sweep(plan_sweep(config, registry), registry, store, resume=True)
        assert rest.run_id == cut.run_id and not rest.stopped_by_budget
        assert sorted(row["op"] for row in store.results(rest.run_id)) == sorted(ops)
