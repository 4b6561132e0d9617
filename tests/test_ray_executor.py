"""``--executor ray`` on a local Ray instance (``ray.init(num_cpus=2)``): a sweep over two
actors with the verdicts of a local run, an actor killed mid-candidate whose candidate is
evaluated again elsewhere and recorded once, and ``kgb run --executor ray --address``."""

from __future__ import annotations

import dataclasses

import json
import sqlite3
import threading
import time

import pytest

ray = pytest.importorskip("ray")

from conftest import KERNELS, kgb  # noqa: E402
from kgb_core import hookimpl  # noqa: E402
from kgb_core.candidates import Candidate  # noqa: E402
from kgb_core.config import RunConfig  # noqa: E402
from kgb_core.evaluation import verdicts  # noqa: E402
from kgb_core.methods import Method  # noqa: E402
from kgb_core.plugins import load_registry  # noqa: E402
from kgb_core.ray_executor import RayPool  # noqa: E402
from kgb_core.store import ResultStore  # noqa: E402
from kgb_core.sweep import evaluation_settings, plan_sweep, run_sweep  # noqa: E402

# aten.exp's candidate takes 3 s to import: long enough to kill its actor mid-evaluation.
SLOW = "import time\ntime.sleep(3)\n"
FILES = {"aten.add": "add_wrong_values.py", "aten.neg": "relu_exits.py"}
EXPECTED = {"aten.add": verdicts.WRONG_OUTPUT, "aten.neg": verdicts.CRASHED,
            "aten.relu": verdicts.PASS, "aten.exp": verdicts.PASS, "aten.abs": verdicts.PASS}


class MixedMethod(Method):
    name = "mixed"

    def generate(self, op, quirks, ctx):
        if op.id in FILES:
            return [Candidate(source=(KERNELS / FILES[op.id]).read_text())]
        source = op.reference_kernel()
        return [Candidate(source=SLOW + source if op.id == "aten.exp" else source)]


def _registry():
    plugin = type("MixedPlugin", (), {})()
    plugin.kgb_register_methods = hookimpl(lambda register: register(MixedMethod()))
    return load_registry(extra=[("mixed", plugin)])


@pytest.fixture(scope="module")
def local_ray():
    started = time.monotonic()
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    print(f"ray.init(num_cpus=2) took {time.monotonic() - started:.1f} s")
    yield ray
    ray.shutdown()


def test_a_ray_sweep_survives_a_killed_actor_and_records_each_result_once(tmp_path, local_ray):
    registry = _registry()
    config = RunConfig(ops=list(EXPECTED), method="mixed", backend="cpu", seeds=[0],
                       timing=False, timeout_s=60, executor="ray")
    plan = plan_sweep(config, registry)
    # The slow import sleeps, which the static screen refuses: this tests the executor, not it.
    pool = RayPool(plan.backend, dataclasses.replace(evaluation_settings(config), screen=False))
    killed: list[str] = []

    def kill_the_slow_candidates_actor():
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline and not killed:
            for slot, handle, job in pool.running():
                if job.op == "aten.exp":
                    time.sleep(0.5)  # well inside its 3 s import
                    ray.kill(handle, no_restart=True)
                    killed.append(slot)
                    return
            time.sleep(0.05)

    killer = threading.Thread(target=kill_the_slow_candidates_actor, daemon=True)
    killer.start()
    with ResultStore(tmp_path / "ray.db") as store:
        outcome = run_sweep(plan, registry, store, resume=False, pool=pool)
        rows = store.results(outcome.run_id)
        (run,) = store.runs()
    killer.join(timeout=5)
    assert killed, "the actor evaluating aten.exp must have been killed mid-candidate"
    assert {row["op"]: row["verdict"] for row in rows} == EXPECTED
    assert len(rows) == len(EXPECTED)  # nothing twice, nothing lost
    usage = {u.slot: u for u in outcome.usage}
    assert usage[killed[0]].lost == 1
    assert pool.replacements == 1 and len(outcome.usage) == 3
    exp = next(row for row in rows if row["op"] == "aten.exp")
    assert json.loads(exp["detail"])["evaluated_on"] != killed[0], "retried on another actor"
    assert sum(u.jobs for u in outcome.usage) == len(EXPECTED)
    evaluation = run["environment"]["evaluation"]
    assert evaluation["executor"] == "ray"
    assert len(evaluation["workers"]) == 2 and all(w["host"] for w in evaluation["workers"])


def test_kgb_run_executor_ray_joins_a_cluster_by_address(tmp_path, local_ray):
    db = tmp_path / "cli.db"
    address = ray.get_runtime_context().gcs_address
    done = kgb("run", "--backend", "cpu", "--op", "aten.neg", "--op", "aten.abs",
               "--no-timing", "--seed", "0", "--db", str(db), "--executor", "ray",
               "--address", address, timeout=240)
    assert done.returncode == 0, done.stderr
    assert "evaluation workers: ray:0" in done.stdout
    conn = sqlite3.connect(db)
    verdict_rows = conn.execute("SELECT op, verdict FROM results ORDER BY op").fetchall()
    (environment,) = conn.execute("SELECT environment FROM runs").fetchone()
    assert verdict_rows == [("aten.abs", "pass"), ("aten.neg", "pass")]
    assert json.loads(environment)["evaluation"]["address"] == address


def test_ray_refuses_devices_and_address_needs_ray():
    from kgb_core.errors import UserError

    with pytest.raises(UserError, match="leave out --devices"):
        plan_sweep(RunConfig(ops=["aten.neg"], backend="cpu", executor="ray", devices="0,1"),
                   load_registry())
    done = kgb("run", "--backend", "cpu", "--op", "aten.neg", "--address", "127.0.0.1:1")
    assert done.returncode == 2 and "use it with --executor ray" in done.stderr
