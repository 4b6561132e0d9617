"""The harness benchmarks' CPU paths run and print what they claim (their GPU paths run on the
H200 through benchmarks/h200_session.sh; speed targets are never asserted here)."""

from __future__ import annotations

import json
import os
import re
import sqlite3
import subprocess
import sys

import pytest

from conftest import REPO

from kgb_core.evaluation.sandbox import find_sandbox


def _bench(*args: str, timeout: float = 300) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(REPO),
                                                         os.environ.get("PYTHONPATH", "")])}
    done = subprocess.run([sys.executable, *args], capture_output=True, text=True, cwd=str(REPO),
                          env=env, timeout=timeout)
    assert done.returncode == 0, done.stderr[-3000:]
    return done


# A real timed reference sweep of three ATen operators (two pointwise, one reduction), made once
# for the module: speedup_by_category.py reads it, and the throughput test sweeps into a copy of
# it (a kept store that already holds a run of its own).
TIMED_OPS = ("aten.neg", "aten.relu", "aten.sum")


@pytest.fixture(scope="module")
def timed_sweep(tmp_path_factory):
    db = tmp_path_factory.mktemp("timed") / "sweep.db"
    _bench("-m", "kgb_core", "run", "--source", "aten", *(a for op in TIMED_OPS
                                                           for a in ("--op", op)),
           "--method", "reference", "--backend", "cpu", "--seed", "0", "--db", str(db))
    return db


def test_timer_fidelity_cpu_path_compares_two_clocks(tmp_path):
    raw = tmp_path / "fidelity.json"
    done = _bench("benchmarks/timer_fidelity.py", "--backend", "cpu", "--runs", "2",
                  "--kernel", "add 64K", "--kernel", "mm fp32 256", "--op", "aten.neg",
                  "--launch-counter", "--json", str(raw))
    data = json.loads(raw.read_text())
    assert data["clocks"] == ["kgb", "perf_counter loop"]
    assert data["timer"] == "torch-cpu-wallclock"  # torch on the CPU, not the interpreter
    assert [k["kernel"] for k in data["kernels"]] == [
        "torch add 64K fp32", "torch mm fp32 256", "aten.neg reference", "aten.neg torch"]
    reference, baseline = data["kernels"][2:]
    assert reference["bound"] == baseline["bound"] == "operator"
    assert reference["work"] == baseline["work"]  # the same timed case and dtype
    # The reference kernel runs in Triton's interpreter: far slower than torch's own neg.
    assert reference["median_ms"]["kgb"] > 10 * baseline["median_ms"]["kgb"]
    # Issuing the interpreted launch (through kgb's launch counter) costs the host its run.
    assert data["launch_counter"] is True
    assert reference["host_us"] > 10 * baseline["host_us"] > 0
    for kernel in data["kernels"]:
        assert all(len(values) == 2 and min(values) > 0 for values in kernel["runs"].values())
    header = done.stdout.splitlines()[1]
    assert "kgb vs perf_counter loop %" in header and "within 3 %" in header


def test_sweep_throughput_counts_operators_per_minute(tmp_path, timed_sweep):
    # A kept store may hold earlier runs: this one holds the module's timed sweep of three other
    # operators (a real `kgb run`), and the sweep counts only its own rows.
    kept = tmp_path / "t.db"
    source, copy = sqlite3.connect(timed_sweep), sqlite3.connect(kept)
    source.backup(copy)
    earlier = sorted(op for (op,) in copy.execute("SELECT op FROM results"))
    source.close()
    copy.close()
    assert earlier == sorted(TIMED_OPS)
    raw = tmp_path / "throughput.json"
    done = _bench("benchmarks/sweep_throughput.py", "--backend", "cpu", "--limit", "3",
                  "--no-timing", "--json", str(raw), "--db", str(kept))
    data = json.loads(raw.read_text())
    assert data["operators"] == 3 and data["passed"] == 3 and data["timing"] is False
    assert data["operators_per_minute"] == 60.0 * 3 / data["wall_s"]
    assert 0 < data["evaluation_s"] < data["wall_s"]
    assert re.search(r"^all\s+3\s", done.stdout, re.M)
    conn = sqlite3.connect(kept)  # both runs are in the store; only the new one was counted
    assert conn.execute("SELECT COUNT(*) FROM runs").fetchone()[0] == 2
    assert conn.execute("SELECT COUNT(*) FROM results").fetchone()[0] == 3 + len(TIMED_OPS)
    conn.close()


def test_worker_overhead_reports_overhead_against_timed_kernel_work():
    done = _bench("benchmarks/worker_overhead.py", "--backend", "cpu", "--candidates", "1",
                  "--distinct", "aten.neg", "--skip-fresh", "--timed-ops", "aten.relu")
    lines = done.stdout.splitlines()
    cost = [line for line in lines if line.startswith("this kgb")]
    assert [line.split()[-3] for line in cost] == [find_sandbox().name, "none"]
    assert all(float(line.split()[-1]) > 0 and float(line.split()[-2]) > 0 for line in cost)
    rows = [line.split() for line in lines if line.startswith("aten.relu")]
    assert [" ".join(row[1:3]) for row in rows] == ["fresh judge", "judge reused"]
    for row in rows:
        wall, work, overhead = float(row[5]), float(row[6]), float(row[7])
        assert work > 0 and abs(wall - work - overhead) < 0.2
    assert "timer: interpreter-wallclock" in done.stdout


def test_speedup_by_category_groups_a_real_sweep_and_agrees_with_the_report(timed_sweep):
    db = timed_sweep
    done = _bench("benchmarks/speedup_by_category.py", "--db", str(db), "--backend", "cpu")
    rows = {line.split()[0]: line.split() for line in done.stdout.splitlines()[3:]
            if line and not line.startswith("note")}
    assert [rows[name][1:3] for name in ("pointwise", "reduction", "all")] == [
        ["2", "2"], ["1", "1"], ["3", "3"]]
    report = json.loads(_bench("-m", "kgb_core", "report", "--db", str(db), "--json").stdout)
    geomean = report["summary"][0]["geomean_speedup"]
    assert float(rows["all"][3]) == float(f"{geomean:.3g}")
    assert "interpreter" in done.stdout  # CPU timings are flagged, never passed off as a chip's


def test_recorder_op_cost_prints_what_the_recorders_add_to_each_op():
    done = _bench("benchmarks/recorder_op_cost.py", "--calls", "300")
    assert done.returncode == 0, done.stderr[-2000:]
    costs = {line.rsplit(None, 1)[0]: float(line.rsplit(None, 1)[1])
             for line in done.stdout.splitlines()[1:] if line.strip()}
    # Its numbers are the benchmark's to report (no speed is asserted here): one per setting.
    assert set(costs) == {"bare", "recorders and profiler (a timed call)",
                          "recorders, no profiler", "recorders, suspended inside (harness work)"}
    assert all(value > 0 for value in costs.values()), costs
