"""Scale-out on one machine: generation decoupled from evaluation through a queue, one worker
per device slot, the endpoint's concurrency limit and 429 cool-down, agents' turn order, and
kill -9 then resume with both on."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import threading
import time

import pytest

import kgb_test_plugins
from chat_server import ChatServer, Reply
from conftest import KERNELS, REPO
from kgb_core import hookimpl
from kgb_core.candidates import Candidate
from kgb_core.config import RunConfig, apply_overrides
from kgb_core.errors import UserError
from kgb_core.evaluation import verdicts
from kgb_core.evaluation.devices import parse_devices
from kgb_core.methods import Method
from kgb_core.plugins import load_registry
from kgb_core.store import ResultStore
from kgb_core.sweep import plan_sweep, run_sweep

KEY_ENV = {"KGB_TEST_LLM_KEY": "sk-loopback"}


class SlowScriptedMethod(Method):
    """Hands out the reference kernel, or a file of tests/kernels, after ``delay_s`` seconds,
    and remembers when each generation ran (to compare with when the devices were busy)."""

    name = "slow_scripted"
    generated: list[tuple[str, float, float]] = []

    def option_keys(self) -> frozenset[str]:
        return frozenset({"files", "delay_s"})

    def generate(self, op, quirks, ctx):
        started = time.monotonic()
        time.sleep(float(ctx.options.get("delay_s", 0.0)))
        filename = ctx.options.get("files", {}).get(op.id)
        source = ((KERNELS / filename).read_text() if filename else op.reference_kernel())
        SlowScriptedMethod.generated.append((op.id, started, time.monotonic()))
        return [Candidate(source=source, origin=filename or "reference")]


def _registry():
    plugin = type("SlowScriptedPlugin", (), {})()
    plugin.kgb_register_methods = hookimpl(lambda register: register(SlowScriptedMethod()))
    return load_registry(extra=[("kgb_test_plugins", kgb_test_plugins),
                                ("slow_scripted", plugin)])


# Good and bad kernels mixed: a crash (the worker is replaced), a wrong answer, a raise.
MIXED = {"aten.add": "add_wrong_values.py", "aten.neg": "relu_exits.py",
         "aten.abs": "relu_raises.py"}
MIXED_OPS = ["aten.add", "aten.neg", "aten.abs", "aten.relu", "aten.exp", "aten.sin"]


def _sweep(tmp_path, name, **config):
    registry = _registry()
    plan = plan_sweep(RunConfig(backend="cpu", seeds=[0], timing=False, timeout_s=60,
                                **config), registry)
    with ResultStore(tmp_path / f"{name}.db") as store:
        outcome = run_sweep(plan, registry, store, resume=False)
        rows = store.results(outcome.run_id)
        (run,) = store.runs()
    return outcome, rows, run


def test_two_device_slots_give_the_verdicts_of_one_worker_and_both_work(tmp_path):
    options = {"files": MIXED}
    one, one_rows, _ = _sweep(tmp_path, "one", ops=MIXED_OPS, method="slow_scripted",
                              method_options=options)
    two, two_rows, run = _sweep(tmp_path, "two", ops=MIXED_OPS, method="slow_scripted",
                                method_options=options, devices="0,1", concurrency=2)
    verdicts_one = {row["op"]: row["verdict"] for row in one_rows}
    assert verdicts_one == {"aten.add": verdicts.WRONG_OUTPUT, "aten.neg": verdicts.CRASHED,
                            "aten.abs": verdicts.RUNTIME_ERROR, "aten.relu": verdicts.PASS,
                            "aten.exp": verdicts.PASS, "aten.sin": verdicts.PASS}
    assert {row["op"]: row["verdict"] for row in two_rows} == verdicts_one
    assert len(two_rows) == len(MIXED_OPS)  # each once
    slots = {json.loads(row["detail"])["evaluated_on"] for row in two_rows}
    assert slots == {"0", "1"}, "both device slots must have evaluated candidates"
    assert [u.slot for u in two.usage] == ["0", "1"] and all(u.jobs for u in two.usage)
    assert sum(u.jobs for u in two.usage) == len(MIXED_OPS)
    workers = run["environment"]["evaluation"]["workers"]
    assert [w["device_index"] for w in workers] == ["0", "1"]
    assert run["environment"]["evaluation"]["devices"] == [0, 1]
    # The single-worker run is the old shape: one unpinned worker.
    assert [u.slot for u in one.usage] == ["0"] and one.usage[0].jobs == len(MIXED_OPS)


def test_generation_runs_while_the_device_is_busy(tmp_path):
    SlowScriptedMethod.generated.clear()
    ops = ["aten.neg", "aten.abs", "aten.relu", "aten.exp"]
    outcome, rows, _ = _sweep(tmp_path, "overlap", ops=ops, method="slow_scripted",
                              method_options={"delay_s": 0.4})
    assert [row["verdict"] for row in rows] == [verdicts.PASS] * len(ops)
    busy = outcome.usage[0].intervals
    assert len(busy) == len(ops)
    # Some operator was being generated while another's candidate was being evaluated.
    overlaps = [(op, start, end) for op, g_start, g_end in SlowScriptedMethod.generated
                for start, end in busy if g_start < end and start < g_end]
    assert overlaps, (SlowScriptedMethod.generated, busy)


def _answer(code: str) -> str:
    return f"```python\n{code}```"


def _op_of(body) -> str:
    prompt = body["messages"][0]["content"]
    return prompt.split("`")[1]  # "Write a Triton kernel for the operator `aten.neg`."


def test_concurrent_llm_generation_respects_the_endpoints_limit(tmp_path, monkeypatch):
    monkeypatch.setenv(*next(iter(KEY_ENV.items())))
    registry = load_registry()
    ops = ["aten.neg", "aten.abs", "aten.relu", "aten.exp", "aten.sin", "aten.cos"]
    kernels = {op: registry.operator(op).reference_kernel() for op in ops}
    respond = lambda body: Reply(_answer(kernels[_op_of(body)]), delay_s=0.5)  # noqa: E731
    results = {}
    for limit in (0, 2):
        with ChatServer(respond=respond) as server:
            outcome, rows, _ = _sweep(
                tmp_path, f"limit{limit}", ops=ops, method="llm", concurrency=4,
                method_options={"base_url": server.base_url, "model": "m", "max_retries": 0,
                                "api_key_env": "KGB_TEST_LLM_KEY",
                                "max_concurrent_requests": limit})
        results[limit] = (server.in_flight_max, len(server.requests),
                          sorted(row["verdict"] for row in rows))
    assert results[0] == (4, 6, [verdicts.PASS] * 6)  # four threads, all at once
    assert results[2] == (2, 6, [verdicts.PASS] * 6)  # the endpoint's limit holds them to 2


def test_a_429_cools_every_thread_down_for_retry_after(tmp_path, monkeypatch):
    monkeypatch.setenv(*next(iter(KEY_ENV.items())))
    registry = load_registry()
    ops = ["aten.neg", "aten.abs", "aten.relu", "aten.exp", "aten.sin", "aten.cos"]
    kernels = {op: registry.operator(op).reference_kernel() for op in ops}
    limited = []

    def respond(body):
        op = _op_of(body)
        if op == "aten.neg" and not limited:  # the first request for aten.neg is refused
            limited.append(time.monotonic())
            return Reply(status=429, headers={"retry-after": "1.5"})
        return Reply(_answer(kernels[op]), delay_s=0.2)

    with ChatServer(respond=respond) as server:
        _, rows, _ = _sweep(tmp_path, "ratelimit", ops=ops, method="llm", concurrency=3,
                            method_options={"base_url": server.base_url, "model": "m",
                                            "max_retries": 0, "rate_limit_retries": 2,
                                            "api_key_env": "KGB_TEST_LLM_KEY"})
    assert sorted(row["verdict"] for row in rows) == [verdicts.PASS] * len(ops)
    (refused_at,) = limited
    later = sorted(t - refused_at for t in server.arrivals if t > refused_at)
    # Requests already on their way when the 429 went out arrive at once (the three threads
    # start together); after that nothing reaches the endpoint until the cool-down is over,
    # though the other threads finish their answers in 0.2 s and have operators left.
    assert [t for t in later if 0.1 < t < 1.4] == [], later
    assert len([t for t in later if t >= 1.4]) >= 3, later
    neg = next(row for row in rows if row["op"] == "aten.neg")
    record = json.loads(neg["generation"])
    assert record["rate_limited"] == 1 and record["rate_limit_wait_s"] >= 1.4


def test_a_persistent_429_ends_as_no_candidate_after_the_retries(tmp_path, monkeypatch):
    monkeypatch.setenv(*next(iter(KEY_ENV.items())))
    with ChatServer(respond=lambda body: Reply(status=429,
                                               headers={"retry-after-ms": "50"})) as server:
        _, rows, _ = _sweep(tmp_path, "storm", ops=["aten.neg"], method="llm",
                            method_options={"base_url": server.base_url, "model": "m",
                                            "max_retries": 0, "rate_limit_retries": 2,
                                            "api_key_env": "KGB_TEST_LLM_KEY"})
    assert len(server.requests) == 3  # the first try and two more
    (row,) = rows
    assert row["verdict"] == verdicts.NO_CANDIDATE and "RateLimitError" in row["message"]


def test_concurrent_agents_keep_each_operators_turns_in_order(tmp_path, monkeypatch):
    monkeypatch.setenv(*next(iter(KEY_ENV.items())))
    registry = load_registry()
    wrong = (KERNELS / "add_wrong_values.py").read_text()
    ops = {"aten.add": wrong, "aten.mul": wrong}  # a - b: wrong for both
    rights = {op: registry.operator(op).reference_kernel() for op in ops}

    def respond(body):
        op, turn = _op_of(body), (len(body["messages"]) + 1) // 2
        return Reply(_answer(ops[op] if turn == 1 else rights[op]), delay_s=0.3)

    with ChatServer(respond=respond) as server:
        _, rows, _ = _sweep(tmp_path, "agents", ops=list(ops), method="agent", concurrency=2,
                            method_options={"base_url": server.base_url, "model": "m",
                                            "max_retries": 0, "max_turns": 3,
                                            "improve_after_pass": False,
                                            "api_key_env": "KGB_TEST_LLM_KEY"})
    assert server.in_flight_max == 2, "the two agents must have run side by side"
    for row in rows:
        record = json.loads(row["generation"])
        assert row["verdict"] == verdicts.PASS
        assert [t["verdict"] for t in record["turns"]] == [verdicts.WRONG_OUTPUT, verdicts.PASS]
    # Every second turn carried its own operator's first answer and verdict back.
    second_turns = [body for body in server.requests if len(body["messages"]) == 3]
    assert sorted(_op_of(body) for body in second_turns) == sorted(ops)
    for body in second_turns:
        assert body["messages"][1]["content"] == _answer(ops[_op_of(body)])
        assert "wrong_output" in body["messages"][2]["content"]


def test_devices_are_checked_before_anything_runs(registry):
    cpu = registry.backend("cpu")
    assert parse_devices(None, cpu) is None
    assert parse_devices("0,1", cpu) == [0, 1]
    assert parse_devices("0-1", cpu) == [0, 1]
    assert parse_devices("all", cpu) == list(range(os.cpu_count() or 1))
    for bad, message in (("0,0", "twice"), ("x", "device indices"), ("-1", "device indices"),
                         ("1-0", "device indices"), ("0-1,1", "twice"),
                         (str(10_000), "there is no device 10000")):
        with pytest.raises(UserError, match=message):
            parse_devices(bad, cpu)
    with pytest.raises(UserError, match="executor 'rey' is not known.*'ray'"):
        apply_overrides(RunConfig(), executor="rey")
    with pytest.raises(UserError, match="concurrency must be at least 1"):
        apply_overrides(RunConfig(), concurrency=0)


def test_a_backend_that_cannot_pin_refuses_several_devices(registry):
    metax_like = type("Unpinned", (type(registry.backend("cpu")),),
                      {"device_environment": lambda self, index: None,
                       "device_count": lambda self: 4})()
    with pytest.raises(UserError, match="does not say how to pin"):
        parse_devices("0,1", metax_like)
    assert parse_devices("0", metax_like) == [0]


def test_nvidia_pins_through_cuda_visible_devices(registry, monkeypatch):
    nvidia = registry.backend("nvidia")
    monkeypatch.delenv("CUDA_VISIBLE_DEVICES", raising=False)
    assert nvidia.device_environment(1) == {"CUDA_VISIBLE_DEVICES": "1"}
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "4,6")  # the harness already sees two of eight
    assert nvidia.device_environment(1) == {"CUDA_VISIBLE_DEVICES": "6"}
    with pytest.raises(UserError, match="not visible"):
        nvidia.device_environment(2)


KILL_OPS = ["aten.neg", "aten.exp", "aten.sin", "aten.cos", "aten.abs", "aten.relu",
            "aten.sigmoid", "aten.silu", "aten.tanh", "aten.gelu"]


def _count(db):
    try:
        conn = sqlite3.connect(db, timeout=5)
        try:
            return conn.execute("SELECT COUNT(*) FROM results").fetchone()[0]
        finally:
            conn.close()
    except sqlite3.OperationalError:
        return 0


def test_kill_9_of_a_concurrent_two_device_sweep_then_resume(tmp_path):
    db = str(tmp_path / "killed.db")
    args = [sys.executable, "-c", "from kgb_core.cli import main; main()", "run",
            "--backend", "cpu", "--method", "reference", "--db", db, "--seed", "0",
            "--devices", "0,1", "--concurrency", "3"]
    for op in KILL_OPS:
        args += ["--op", op]
    process = subprocess.Popen(args, cwd=str(REPO), stdout=subprocess.DEVNULL,
                               stderr=subprocess.DEVNULL, start_new_session=True)
    deadline = time.monotonic() + 240
    while _count(db) < 3 and time.monotonic() < deadline and process.poll() is None:
        time.sleep(0.05)
    os.killpg(process.pid, signal.SIGKILL)  # the harness, its threads and both workers
    process.wait()
    stored_before = _count(db)
    assert 3 <= stored_before < len(KILL_OPS), "the kill must land in the middle of the sweep"

    resumed = subprocess.run(args + ["--resume"], cwd=str(REPO), capture_output=True,
                             text=True, timeout=300)
    assert resumed.returncode == 0, resumed.stderr
    assert "continuing run 1" in resumed.stderr
    conn = sqlite3.connect(db)
    rows = conn.execute("SELECT op, COUNT(*) FROM results GROUP BY op").fetchall()
    assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    assert conn.execute("SELECT COUNT(*) FROM runs").fetchone()[0] == 1
    assert {v for (v,) in conn.execute("SELECT DISTINCT verdict FROM results")} == {"pass"}
    conn.close()
    assert sorted(op for op, _ in rows) == sorted(KILL_OPS)
    assert all(count == 1 for _, count in rows), rows


def test_the_store_is_written_by_the_sweeps_thread_only(tmp_path):
    """sqlite3 connections refuse use from another thread (check_same_thread): a generation
    or evaluation thread touching the store would fail the sweep, so passing shows it."""
    with ResultStore(tmp_path / "t.db") as store:
        errors = []

        def write():
            try:
                store.cache_answer("k", {"v": 1})
            except sqlite3.ProgrammingError as error:
                errors.append(error)

        thread = threading.Thread(target=write)
        thread.start()
        thread.join()
    assert errors and "thread" in str(errors[0])


def test_torch_device_backends_pin_through_their_vendors_variable(monkeypatch):
    from kgb_core.backends import ChipProfile, Quirks
    from kgb_core.torch_device import TorchDeviceBackend

    def backend(variable, module="cuda", device_type="cuda"):
        attributes = {"visible_devices_variable": variable,
                      "device_module_name": module, "probe": lambda self: None,
                      "profile": ChipProfile(name="v", quirks=Quirks(device_type=device_type))}
        return type("VendorBackend", (TorchDeviceBackend,), attributes)()

    for name in ("HIP_VISIBLE_DEVICES", "ROCR_VISIBLE_DEVICES", "ASCEND_RT_VISIBLE_DEVICES"):
        monkeypatch.delenv(name, raising=False)
    # Two variables named (AMD): only the first is set, since ROCR then HIP would narrow twice.
    assert backend("HIP_VISIBLE_DEVICES/ROCR_VISIBLE_DEVICES").device_environment(2) == \
        {"HIP_VISIBLE_DEVICES": "2"}
    ascend = backend("ASCEND_RT_VISIBLE_DEVICES", "npu", "npu")
    assert ascend.device_environment(1) == {"ASCEND_RT_VISIBLE_DEVICES": "1"}
    assert ascend.ray_resources() == {"resources": {"NPU": 1}}
    assert backend(None).device_environment(0) is None  # unknown: refuse, never guess
    assert backend("HIP_VISIBLE_DEVICES").ray_resources() == {"num_gpus": 1}
