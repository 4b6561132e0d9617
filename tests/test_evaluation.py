"""Candidates that are wrong, raise, hang or kill their process each get their own verdict,
and the evaluator keeps going after every one of them."""

from __future__ import annotations

import pytest

from kgb_core.evaluation import verdicts
from kgb_core.evaluation.evaluator import EvaluationSettings, Evaluator
from kgb_core.plugins import load_registry

from conftest import KERNELS

CORPUS = [
    ("add_wrong_values.py", "aten.add", verdicts.WRONG_OUTPUT),
    ("relu_misses_tail.py", "aten.relu", verdicts.WRONG_OUTPUT),
    ("relu_raises.py", "aten.relu", verdicts.RUNTIME_ERROR),
    ("relu_torch_only.py", "aten.relu", verdicts.NO_TRITON_LAUNCH),
    ("relu_mutates_input.py", "aten.relu", verdicts.OUTPUT_ALIASES_INPUT),
    ("relu_scribbles_input.py", "aten.relu", verdicts.INPUT_MUTATED),
    ("relu_wrong_dtype.py", "aten.relu", verdicts.WRONG_SHAPE_OR_DTYPE),
    ("relu_syntax_error.py", "aten.relu", verdicts.COMPILE_ERROR),
    ("relu_bad_triton.py", "aten.relu", verdicts.COMPILE_ERROR),
    ("relu_exits.py", "aten.relu", verdicts.CRASHED),
    ("relu_kills_itself.py", "aten.relu", verdicts.CRASHED),
    ("relu_atomic_far_outside.py", "aten.relu", verdicts.RUNTIME_ERROR),
]


@pytest.mark.parametrize("filename,op,expected", CORPUS, ids=[c[0] for c in CORPUS])
def test_bad_candidate_gets_its_verdict(unscreened_cpu_evaluator, filename, op, expected):
    result = unscreened_cpu_evaluator.evaluate(op, (KERNELS / filename).read_text())
    assert result.verdict == expected, result.message
    assert result.message


def test_the_reference_kernel_passes_after_every_failure(cpu_evaluator, registry):
    """Runs after the corpus in this module: the judge still judges correctly."""
    spec = registry.operator("aten.relu")
    result = cpu_evaluator.evaluate(spec.id, spec.reference_kernel())
    assert result.verdict == verdicts.PASS, result.message
    checked = [c for c in result.cases if c["status"] != "skipped"]
    assert checked and all(c["status"] == verdicts.PASS for c in checked)
    assert all(c["launches"] >= 1 for c in checked)


def test_crashes_end_the_runner_not_the_judge(cpu_evaluator, registry):
    """A crash or a raise happens in the candidate's runner, which ends with it; the judge ran
    no candidate code and goes on (before runners, every crash cost a new worker's start).
    The module's judge (its settings are this test's): started, then never started again."""
    evaluator = cpu_evaluator
    evaluator.start()
    starts = evaluator.worker_starts
    evaluator.evaluate("aten.add", (KERNELS / "add_wrong_values.py").read_text())
    evaluator.evaluate("aten.relu", (KERNELS / "relu_torch_only.py").read_text())
    exited = evaluator.evaluate("aten.relu", (KERNELS / "relu_exits.py").read_text())
    raised = evaluator.evaluate("aten.relu", (KERNELS / "relu_raises.py").read_text())
    assert exited.verdict == verdicts.CRASHED and raised.verdict == verdicts.RUNTIME_ERROR
    spec = registry.operator("aten.relu")
    assert evaluator.evaluate(spec.id, spec.reference_kernel()).passed
    assert starts >= 1 and evaluator.worker_starts == starts


def test_a_judge_is_replaced_after_its_quota_of_jobs(registry):
    """``max_jobs_per_worker``: whatever a long-lived judge gathers is bounded by a new judge
    now and then (the suite's module evaluators set it out of reach: conftest.py)."""
    settings = EvaluationSettings(seeds=(0,), timeout_s=60, timing=False, max_jobs_per_worker=2)
    raising = (KERNELS / "relu_raises.py").read_text()
    with Evaluator.for_backend(registry.backend("cpu"), settings) as evaluator:
        pids = []
        for _ in range(3):
            assert evaluator.evaluate("aten.relu", raising).verdict == verdicts.RUNTIME_ERROR
            pids.append(evaluator.worker_pid)
        assert evaluator.worker_starts == 2
    # The first judge answered two jobs and was gone; a second answered the third.
    assert pids[0] is not None and pids[1] is None and pids[2] not in (None, pids[0])


def test_a_hanging_candidate_times_out_and_the_next_one_runs(registry):
    backend = registry.backend("cpu")
    settings = EvaluationSettings(seeds=(0,), timeout_s=5, timing=False,
                                  screen=False)  # what running does with it
    with Evaluator.for_backend(backend, settings) as evaluator:
        hung = evaluator.evaluate("aten.relu", (KERNELS / "relu_hangs.py").read_text())
        assert hung.verdict == verdicts.TIMEOUT
        assert 5 <= hung.duration_s < 30
        spec = registry.operator("aten.relu")
        assert evaluator.evaluate(spec.id, spec.reference_kernel()).passed


def test_timing_is_labelled_as_interpreter_time(registry):
    backend = registry.backend("cpu")
    settings = EvaluationSettings(seeds=(0,), timeout_s=120, timing=True)
    spec = registry.operator("aten.add")
    with Evaluator.for_backend(backend, settings) as evaluator:
        result = evaluator.evaluate(spec.id, spec.reference_kernel())
    assert result.passed, result.message
    assert result.timing_label == "interpreter-wallclock (no hardware)"
    fewest = backend.default_timing.min_repetitions
    assert result.timings and all(t["candidate"]["repetitions"] >= fewest for t in result.timings)
    assert result.speedup is not None and result.speedup > 0
    assert result.candidate_ms > 0 and result.reference_ms > 0


def test_bf16_cases_run_on_cpu(cpu_evaluator, registry):
    spec = registry.operator("aten.relu")
    result = cpu_evaluator.evaluate(spec.id, spec.reference_kernel())
    assert result.passed, result.message
    assert not [c for c in result.cases if c["status"] == "skipped"]
    assert {c["dtype"] for c in result.cases if c["status"] == "pass"} >= {"bfloat16"}


def test_the_screen_refuses_a_source_without_kernel(cpu_evaluator):
    result = cpu_evaluator.evaluate("aten.relu", "def not_the_entry(x):\n    return x\n")
    assert result.verdict == verdicts.SCREEN_REJECTED and "kernel" in result.message


def test_a_backend_that_rules_out_every_case_fails_loudly(monkeypatch):
    """A check that runs nothing is no pass (a published benchmark once let zeros pass so)."""
    import kgb_test_plugins

    registry = load_registry(extra=[("kgb_test_plugins", kgb_test_plugins)])
    backend = registry.backend("cpu_nofloats")
    # The worker finds this backend through KGB_EXTRA_PLUGINS, like any installed plugin.
    monkeypatch.setenv("KGB_EXTRA_PLUGINS", "kgb_test_plugins")
    monkeypatch.setenv("PYTHONPATH", str(KERNELS.parent))
    settings = EvaluationSettings(seeds=(0,), timeout_s=60, timing=False)
    spec = registry.operator("aten.relu")
    with Evaluator.for_backend(backend, settings) as evaluator:
        result = evaluator.evaluate(spec.id, spec.reference_kernel())
    assert result.verdict == verdicts.SKIPPED_UNSUPPORTED
    assert "runs nothing" in result.message


RUNNER_PROBE = """
import torch

def kernel(x):
    os = torch.os  # a re-export the static screen lets through; the runner is what holds
    fd = os.open("/proc/self/limits", os.O_RDONLY)
    limits = os.read(fd, 65536).decode()
    os.close(fd)
    rows = [line for line in limits.splitlines() if "address space" in line or "core" in line]
    env = os.environ
    raise RuntimeError("PROBE " + repr({
        "secret": any("-test-secret" in v for v in env.values()) or "HF_TOKEN" in env,
        "home": env.get("HOME"), "cwd": os.getcwd(), "interpret": env.get("TRITON_INTERPRET"),
        "fds": sorted(_target(os, fd) for fd in os.listdir("/proc/self/fd")), "limits": rows}))


def _target(os, fd):
    try:
        return os.readlink("/proc/self/fd/" + fd)
    except OSError:  # the descriptor listdir had open, gone by now
        return "closed"

"""


def test_neither_judge_nor_runner_has_secrets_and_the_runner_has_its_own_scratch_and_limits(
        monkeypatch, registry):
    import ast
    from pathlib import Path

    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-secret")
    monkeypatch.setenv("HF_TOKEN", "hf-test-secret")
    backend = registry.backend("cpu")
    settings = EvaluationSettings(seeds=(0,), timeout_s=60, timing=False,
                                  screen=False)  # what running does with it
    with Evaluator.for_backend(backend, settings) as evaluator:
        evaluator.start()
        proc = Path(f"/proc/{evaluator.worker_pid}")
        environ = dict(item.split(b"=", 1) for item in
                       (proc / "environ").read_bytes().split(b"\0") if b"=" in item)
        first = evaluator.evaluate("aten.neg", RUNNER_PROBE)
        second = evaluator.evaluate("aten.neg", RUNNER_PROBE)
    assert b"OPENAI_API_KEY" not in environ and b"HF_TOKEN" not in environ
    assert not any(b"-test-secret" in value for value in environ.values())
    reports = []
    for result in (first, second):
        assert result.verdict == verdicts.RUNTIME_ERROR, result.message
        text = result.message.split("PROBE ", 1)[1].splitlines()[0]
        reports.append(ast.literal_eval(text))
    for report in reports:
        assert report["secret"] is False
        assert report["home"] == report["cwd"] and report["interpret"] == "1"
        # stdin, stdout and stderr (its log), its channel, its two arenas (mapped: Python's
        # mmap holds a descriptor of its own), and the one listdir opened: nothing of the
        # harness's, no store, no other file.
        kinds = {target.split(":")[0] if target.startswith(("socket:", "/memfd:"))
                 else target for target in report["fds"]}
        assert kinds <= {"/dev/null", f"{report['home']}/runner.log", "socket", "/memfd",
                         "closed"}, report["fds"]
        assert sum(t.startswith("socket:") for t in report["fds"]) == 1, report["fds"]
        assert {t.split(" ")[0] for t in report["fds"] if t.startswith("/memfd:")} == {
            "/memfd:kgb-requests", "/memfd:kgb-replies"}, report["fds"]
        address_space = next(line for line in report["limits"] if "address space" in line)
        assert str(12 * (1 << 30)) in address_space
        core = next(line for line in report["limits"] if "core file" in line)
        assert core.split()[4] == "0", core  # "Max core file size  <soft> <hard> bytes"
    # Each candidate gets a fresh scratch folder.
    assert reports[0]["home"] != reports[1]["home"]


def test_a_worker_hoarding_host_memory_is_killed_as_oom_where_no_rlimit_can_bound_it(registry):
    """GPU backends cannot use RLIMIT_AS (the driver reserves huge address ranges), so the
    harness watches the worker's resident size instead; here on the CPU backend with a limit
    set by hand, and the address-space limit raised so that it is the watch that acts."""
    backend = registry.backend("cpu")
    settings = EvaluationSettings(seeds=(0,), timeout_s=60, timing=False,
                                  screen=False)  # what running does with it
    limits = {**backend.worker_limits(), "RLIMIT_AS": 64 << 30}
    hog = registry.operator("aten.neg").reference_kernel() + '''

_right = kernel


def kernel(x):
    hoard = torch.ones(3 << 30, dtype=torch.uint8)
    import time
    time.sleep(5)
    return _right(x) if hoard.numel() else None
'''
    with Evaluator(backend.name, backend.worker_environment(), settings, limits,
                   host_memory_limit=2 << 30) as evaluator:
        result = evaluator.evaluate("aten.neg", hog)
        assert result.verdict == verdicts.OOM, result.message
        assert "host memory" in result.message
        after = evaluator.evaluate("aten.neg", registry.operator("aten.neg").reference_kernel())
        assert after.verdict == verdicts.PASS


def test_a_compile_error_message_keeps_its_chained_cause():
    """Triton reports an error inside a called @triton.jit helper at the call site and puts
    the reason in the chained cause; the message an agent gets back must carry it."""
    from kgb_core.evaluation.runner import short_traceback as _short_traceback

    try:
        try:
            raise ValueError("unsupported dtype fp64 for tl.dot")
        except ValueError as inner:
            raise RuntimeError("at 49:16: acc_r = _mac(acc_r, ar, br, FP64)") from inner
    except RuntimeError as error:
        text = _short_traceback(error, "candidate.py")
    assert text.startswith("RuntimeError: at 49:16")
    assert text.endswith("caused by ValueError: unsupported dtype fp64 for tl.dot")


def test_the_blocks_of_the_last_calls_outputs_are_poisoned_before_the_next_call(registry):
    """An output that depends on no input (zeros, arange) finds the last call's right answer in
    the block the caching allocator hands it next, unless that block is NaN-filled first: on
    the H200, ghost replay of aten.zeros "matched" before this."""
    import torch

    from kgb_core.evaluation.arena import Arenas
    from kgb_core.evaluation.launches import LaunchCounter
    from kgb_core.evaluation.runner import Runner

    class RecordingBackend(type(registry.backend("cpu"))):
        poisoned: list[int] = []

        def poison_free_memory(self, nbytes: int) -> None:
            self.poisoned.append(nbytes)

    backend = RecordingBackend()
    # The runner's own logic, in-process.
    runner = Runner(backend, LaunchCounter(), io_dir=".", arenas=Arenas.create(1 << 30))
    runner.path = __file__
    runner.kernel = lambda n: (torch.empty(n, dtype=torch.float32), torch.empty(3))
    runner._call([1000], ghost=True)  # ghost: no Triton launch is required
    assert 4000 not in backend.poisoned
    runner._call([1000], ghost=True)
    assert {4000, 12} <= set(backend.poisoned)


def test_a_reply_names_the_inputs_a_call_left_unchanged_and_sends_a_written_one(registry,
                                                                               tmp_path):
    """The runner's own logic, in-process: an input the call left as it came is named in the
    reply ({"input": k}), not sent back; one it wrote comes back byte for byte."""
    import torch

    from kgb_core.evaluation import exchange
    from kgb_core.evaluation.arena import Arenas
    from kgb_core.evaluation.launches import LaunchCounter
    from kgb_core.evaluation.runner import Runner

    arenas = Arenas.create(1 << 30)  # the judge's and the runner's alike, in one process
    runner = Runner(registry.backend("cpu"), LaunchCounter(), io_dir=str(tmp_path),
                    arenas=arenas)
    runner.path = __file__
    x, y = torch.randn(100), torch.randn(50)

    def writes_its_second_input(a, b):
        b.add_(1.0)
        return a * 2

    runner.kernel = writes_its_second_input
    request = exchange.pack([x, y])
    reply = runner._call_request({"op": "call", "seq": 1, "ghost": True, "inputs": request.tree,
                                  "bytes": request.place(arenas.requests)})
    # [output, [the inputs after], [the copies kept for the judge]]
    first, second = reply["tree"]["list"][1]["list"]
    assert first["tensor"]["input"] == 0 and "at" not in first["tensor"]
    assert "at" in second["tensor"]  # written: its bytes come back
    assert reply["bytes"] == 448 + 200  # the output (400 bytes, padded to 64) and y, not x
    blob = arenas.replies.for_reading(reply["bytes"])
    output, (a, b), staged = exchange.unpack(reply["tree"], blob, "cpu", sent=request.sources)
    assert staged == []  # x * 2 copies nothing
    assert torch.equal(output, x * 2) and torch.equal(a, x) and torch.equal(b, y + 1.0)


def test_a_ghost_replays_output_never_lands_on_the_previous_calls_answer(registry, tmp_path):
    """Ghost replay calls again on the inputs of the call just before it; that call's output
    (the right answer) must stay alive through the replay, so an output the no-op launches
    never wrote cannot be handed its memory. On an H100, the caching allocator handed
    aten.linear's reference that block despite the NaN-filled one (ghost_replay_matched); the
    CPU's malloc does not reuse it here, so what is checked is that it is still held."""
    import torch

    from kgb_core.evaluation import exchange
    from kgb_core.evaluation.arena import Arenas
    from kgb_core.evaluation.launches import LaunchCounter
    from kgb_core.evaluation.runner import Runner

    arenas = Arenas.create(1 << 30)
    runner = Runner(registry.backend("cpu"), LaunchCounter(), io_dir=str(tmp_path),
                    arenas=arenas)
    runner.path = __file__
    outputs, alive_during_ghost = [], []

    def allocates_its_output(x):
        if runner.counter.ghost:
            held = {s.data_ptr() for s in getattr(runner, "_held_outputs", [])}
            alive_during_ghost.append(outputs[-1] in held)
        out = torch.empty(x.numel() // 4, dtype=x.dtype)
        outputs.append(out.data_ptr())
        if not runner.counter.ghost:
            out.copy_(x[: out.numel()])
            runner.counter.note_launch("copy")  # what the wrapped Triton launch notes
        return out

    runner.kernel = allocates_its_output
    x = torch.randn(4096)
    for seq, ghost in enumerate((False, True, False, True)):
        request = exchange.pack([x])
        runner._call_request({"op": "call", "seq": seq, "ghost": ghost, "inputs": request.tree,
                              "bytes": request.place(arenas.requests)})
    assert alive_during_ghost == [True, True]
    assert runner._held_outputs and runner._held_outputs[0].data_ptr() == outputs[-1]
