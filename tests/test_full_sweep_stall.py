"""benchmarks/full_sweep.py's stall watch: when no operator has finished for a while, it says
what each worker is running (a GPU sweep cut in the middle of a stall showed nothing else)."""

from __future__ import annotations

import importlib.util
import json
import re
import sys
import time

from conftest import REPO
from kgb_core.evaluation.devices import SlotUsage


def _full_sweep_module():
    sys.path.insert(0, str(REPO / "benchmarks"))  # its sibling import, sweep_throughput
    try:
        spec = importlib.util.spec_from_file_location("full_sweep",
                                                      REPO / "benchmarks" / "full_sweep.py")
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        return module
    finally:
        sys.path.remove(str(REPO / "benchmarks"))


class _Pool:
    def __init__(self, usage, statuses=None):
        self.slots, self.statuses = usage, statuses or {}

    def usage(self):
        return self.slots

    def judge_statuses(self):
        return self.statuses


def test_a_stall_names_the_jobs_running_and_a_finished_job_silences_it(capsys):
    watch_type = _full_sweep_module().StallWatch
    stuck = SlotUsage(slot="0#2", jobs=3, running="cublas.cublasCgeru_v2",
                      running_since=time.monotonic() - 100, sharing_cap=2, gate="sharing")
    idle = SlotUsage(slot="0", jobs=5)
    now = time.time()
    pool = _Pool([idle, stuck], {"0#2": {"op": "cublas.cublasCgeru_v2", "stage": "timing",
                                         "stage_since": now - 90, "lock": "waiting to hold alone",
                                         "lock_since": now - 45}, "0": {}})
    with watch_type(pool, after_s=0.3, every_s=0.05):
        time.sleep(0.6)
    said = capsys.readouterr().err
    assert "stall: no operator finished for" in said
    assert "0#2: cublas.cublasCgeru_v2 for 10" in said and "(sharing cap 2)" in said
    assert "at the gate sharing" in said
    # What the judge itself said it waits on: the stage and the device's lock, with how long.
    assert "judge: stage timing for 9" in said and "waiting to hold alone for 4" in said
    assert "0: " not in said.split("running:", 1)[1]  # the idle worker is not listed

    moving = SlotUsage(slot="0", jobs=0, running="aten.neg", running_since=time.monotonic())
    with watch_type(_Pool([moving]), after_s=0.3, every_s=0.05):
        for _ in range(8):
            time.sleep(0.08)
            moving.jobs += 1  # a job finishes every tick: never a stall
    assert "stall" not in capsys.readouterr().err


def test_a_sweep_that_outlasts_its_give_up_time_reports_what_finished(tmp_path):
    """--give-up-s: a job that never ends must not keep the summary past a device call's
    limit. A timed CPU sweep of six operators takes longer than 3 s here: the process ends at
    3 s with the jobs running named, and its last line counts only what finished."""
    import subprocess

    done = subprocess.run([sys.executable, "benchmarks/full_sweep.py", "--backend", "cpu",
                           "--limit", "6", "--give-up-s", "3", "--db", str(tmp_path / "s.db")],
                          capture_output=True, text=True, cwd=str(REPO), timeout=300)
    assert done.returncode == 3, done.stderr[-2000:]
    # A job running or the judge still starting (a loaded machine): either way, said so.
    assert re.search(r"gave up after 3 s with [01] job\(s\) still running", done.stdout), \
        done.stdout
    last = done.stdout.strip().splitlines()[-1]
    finished = int(last.split()[1].rstrip(","))
    assert last.startswith("operators ") and finished < 6, last


def test_a_judge_asked_for_its_stacks_writes_them_and_keeps_working():
    """A stalled sweep's stall line names a stage; the judge's stacks say which call it waits
    in. Asked on its signal, a real judge writes every thread's stack to its log, and still
    answers its next job."""
    from kgb_core.evaluation.evaluator import EvaluationSettings, Evaluator
    from kgb_core.plugins import load_registry

    registry = load_registry()
    settings = EvaluationSettings(seeds=(0,), timeout_s=60, timing=False)
    with Evaluator.for_backend(registry.backend("cpu"), settings) as evaluator:
        assert evaluator.ask_for_stacks() is None  # no judge started yet: nothing to ask
        evaluator.start()
        offset = evaluator.ask_for_stacks()
        deadline = time.monotonic() + 20
        while "judge.py" not in evaluator.stacks_since(offset) and time.monotonic() < deadline:
            time.sleep(0.1)
        stacks = evaluator.stacks_since(offset)
        assert "most recent call first" in stacks and "kgb_core/evaluation/judge.py" in stacks
        spec = registry.operator("aten.neg")
        result = evaluator.evaluate("aten.neg", spec.reference_kernel())
        assert result.verdict == "pass", result.message


def test_the_summary_names_the_jobs_that_held_the_most_device_memory():
    memory_peaks = _full_sweep_module().memory_peaks
    gib = 1 << 30

    def row(op, judge, runner):
        return {"op": op, "detail": json.dumps({"device_peak_judge_bytes": judge,
                                                "device_peak_runner_bytes": runner})}

    rows = [row("aten.neg", gib, gib), row("aten.mm", 3 * gib, 5 * gib),
            row("vllm.fused_moe", 3 * gib // 2, None)]
    said = memory_peaks(rows, top=2)
    assert "median 2.0" in said and "largest aten.mm 8.0, aten.neg 2.0" in said, said
    assert "in all 5.5 judges' and 6.0 runners'" in said, said
    assert "not recorded" in memory_peaks([row("aten.neg", None, None)])


def test_the_summary_says_which_stage_set_the_judges_peaks():
    by_stage = _full_sweep_module().judge_peaks_by_stage
    gib = 1 << 30

    def row(trials, timing):
        return {"op": "x", "detail": json.dumps({"judge_peak_by_stage": {
            "trials": trials * gib, "timing": timing * gib}})}

    said = by_stage([row(1, 3), row(2, 1), row(5, 2)])
    assert said.endswith("trials 2.0, 5.0; 2; timing 2.0, 3.0; 1"), said
    assert "not recorded" in by_stage([{"op": "x", "detail": "{}"}])


def test_the_rows_file_has_one_line_per_operator_with_its_waits_and_peaks():
    operator_rows = _full_sweep_module().operator_rows
    gib = 1 << 30
    rows = [{"op": "cublas.cublasDcopy_v2", "verdict": "pass", "duration_s": 23.6,
             "detail": json.dumps({"device_alone_s": 0.7, "device_wait_s": 2.2,
                                   "memory_wait_s": 41.0, "device_peak_judge_bytes": 26 * gib,
                                   "device_peak_runner_bytes": 27 * gib,
                                   "stage_s": {"trials": 7.6, "timing": 11.8},
                                   "retried_alone": "oom: CUDA out of memory"})},
            {"op": "aten.neg", "verdict": "wrong_output", "duration_s": 1.0,
             "detail": json.dumps({})}]
    header, dcopy, neg = operator_rows(rows).splitlines()
    assert header.split()[1:4] == ["op", "verdict", "duration_s"]
    assert dcopy.split()[:11] == ["cublas.cublasDcopy_v2", "pass", "23.6", "0.7", "2.2", "0.0",
                                  "41.0", "26.00", "27.00", "7.6", "11.8"]
    assert dcopy.endswith("'oom: CUDA out of memory'")
    # No peaks counted (the CPU): said as such, not as zero.
    assert neg.split()[7:9] == ["-", "-"] and neg.endswith("''")


def test_the_summary_adds_up_each_stages_shared_steps_across_operators():
    shared_steps = _full_sweep_module().shared_steps
    rows = [{"op": "aten.neg", "detail": json.dumps({"shared_steps": {
                "import": [1, 1.5, 1.5], "trials": [10, 2.0, 0.5]}})},
            {"op": "aten.mm", "detail": json.dumps({"shared_steps": {"trials": [30, 4.0, 2.25]}})},
            {"op": "aten.abs", "detail": json.dumps({})}]
    said = shared_steps(rows)
    assert "import 1, 1.5, 1.500, 1.50" in said and "trials 40, 6.0, 0.150, 2.25" in said, said
    longest = said.splitlines()[1]
    assert longest.endswith("2.25 aten.mm trials, 1.50 aten.neg import, 0.50 aten.neg trials")
    assert "none recorded" in shared_steps(rows[2:])


def test_the_devices_bound_adds_the_holds_and_shares_the_steps_among_the_workers():
    device_bound = _full_sweep_module().device_bound
    rows = [{"op": "aten.neg", "detail": json.dumps({
                "device_alone_s": 1.5, "shared_steps": {"trials": [10, 6.0, 1.0],
                                                        "timing": [4, 2.0, 0.5]}})},
            {"op": "aten.mm", "detail": json.dumps({
                "device_alone_s": 0.5, "shared_steps": {"trials": [30, 12.0, 2.25]}})}]
    # 2.0 s alone, one after another; 20 s of shared steps among 4 workers: 7.0 s.
    said = device_bound(rows, 4)
    assert "= 7.0 s for 2 operators (3.50 s each), operators/min 17.1 at most" in said, said
    assert "= 3.5 s for 2 operators" in device_bound(rows, 4, devices=2)
    assert "no shared steps" in device_bound([{"op": "aten.abs", "detail": "{}"}], 4)


def test_the_summary_says_where_the_shared_steps_seconds_went_per_step():
    step_parts = _full_sweep_module().step_parts
    rows = [{"op": "aten.neg", "detail": json.dumps({
                "shared_steps": {"trials": [2, 1.0, 0.6]},
                "step_parts": {"trials": {"draw": 0.1, "request": 0.6, "runner call": 0.5}}})},
            {"op": "aten.mm", "detail": json.dumps({
                "shared_steps": {"trials": [2, 1.0, 0.6]},
                "step_parts": {"trials": {"request": 0.6, "runner call": 0.4}}})}]
    said = step_parts(rows)
    # 4 steps, 2.0 s: draw 0.1, request 1.2 (the runner's 0.9 inside it), the rest other.
    assert said == ("inside the steps held shared, s per step: trials (4 steps): draw 0.025, "
                    "request 0.300, runner call 0.225, other 0.175"), said
    assert "none recorded" in step_parts([{"op": "aten.abs", "detail": "{}"}])


def test_the_summary_says_what_share_of_the_shared_seconds_went_to_compiling():
    """The runner's compiles (its "compile" phase) against every second held shared, the
    runner's start and end included: what compiling ahead would take out of the drains."""
    step_parts = _full_sweep_module().step_parts
    rows = [{"op": "aten.neg", "detail": json.dumps({
                "shared_steps": {"trials": [2, 1.0, 0.6], "runner start": [1, 1.0, 1.0]},
                "step_parts": {"trials": {"request": 0.8, "runner call": 0.7,
                                          "runner launches": 0.6, "runner compile": 0.5}}})}]
    said = step_parts(rows)
    assert said.endswith("; compiling in the runner 0.5 of 2.0 s held shared (25 %)"), said


def test_the_summary_spreads_the_candidates_repetitions_and_seconds_per_repetition():
    candidate_timings = _full_sweep_module().candidate_timings

    def timed(reps: int, median_ms: float, calls_s: float, outruns: int = 0) -> dict:
        return {"candidate": {"repetitions": reps, "median_ms": median_ms,
                              "lead_outruns": outruns},
                "hold_s": {"runner": {"timed calls": calls_s}}}

    rows = [{"op": "aten.neg", "detail": json.dumps({"timings": [
                timed(20, 0.01, 0.02, outruns=2), timed(40, 0.02, 0.08)]})},
            {"op": "aten.mm", "detail": json.dumps({"timings": [timed(1000, 1.0, 2.0)]})}]
    said = candidate_timings(rows)
    # Per repetition: 1 ms, 2 ms, 2 ms.
    assert said == ("candidate timings (3 cases): repetitions median 40, 90th percentile 1000; "
                    "kernel time median 0.02 ms, 90th percentile 1 ms; runner's timed calls "
                    "per repetition median 2 ms, 90th percentile 2 ms; cases with a call "
                    "that outran its device lead 1"), said
    assert "none recorded" in candidate_timings([{"op": "aten.abs", "detail": "{}"}])


def test_a_comparison_names_the_verdicts_that_differ_and_each_operators_speedup_ratio():
    compare = _full_sweep_module().compare
    before = [{"op": "aten.neg", "verdict": "pass", "speedup": 2.0},
              {"op": "aten.mm", "verdict": "pass", "speedup": 1.0},
              {"op": "vllm.silu", "verdict": "pass", "speedup": 4.0},
              {"op": "aten.abs", "verdict": "pass", "speedup": 1.0}]  # not in the later run
    after = [{"op": "aten.neg", "verdict": "pass", "speedup": 2.2},
             {"op": "aten.mm", "verdict": "pass", "speedup": 0.9},
             {"op": "vllm.silu", "verdict": "wrong_output", "speedup": None}]
    lines = compare(after, before)
    assert lines[0] == "compared with the other run: 3 operators in both, 1 verdicts differ"
    assert lines[1] == "  vllm.silu: pass -> wrong_output"
    assert "over 2 operators" in lines[2], lines
    assert lines[3] == "speedup ratio per operator (this / other): aten.mm 0.900, aten.neg 1.100"
