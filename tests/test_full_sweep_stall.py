"""benchmarks/full_sweep.py's stall watch: when no operator has finished for a while, it says
what each worker is running (a GPU sweep cut in the middle of a stall showed nothing else)."""

from __future__ import annotations

import importlib.util
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
    def __init__(self, usage):
        self.slots = usage

    def usage(self):
        return self.slots


def test_a_stall_names_the_jobs_running_and_a_finished_job_silences_it(capsys):
    watch_type = _full_sweep_module().StallWatch
    stuck = SlotUsage(slot="0#2", jobs=3, running="cublas.cublasCgeru_v2",
                      running_since=time.monotonic() - 100, sharing_cap=2)
    idle = SlotUsage(slot="0", jobs=5)
    pool = _Pool([idle, stuck])
    with watch_type(pool, after_s=0.3, every_s=0.05):
        time.sleep(0.6)
    said = capsys.readouterr().err
    assert "stall: no operator finished for" in said
    assert "0#2: cublas.cublasCgeru_v2 for 10" in said and "(sharing cap 2)" in said
    assert "0: " not in said.split("running ", 1)[1]  # the idle worker is not listed

    moving = SlotUsage(slot="0", jobs=0, running="aten.neg", running_since=time.monotonic())
    with watch_type(_Pool([moving]), after_s=0.3, every_s=0.05):
        for _ in range(8):
            time.sleep(0.08)
            moving.jobs += 1  # a job finishes every tick: never a stall
    assert "stall" not in capsys.readouterr().err
