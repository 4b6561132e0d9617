"""Emulation and deny-lists: another backend's quirks on the CPU interpreter, labelled as
emulation in every stored result and report row; denied operators skipped, never judged."""

from __future__ import annotations

import json

import pytest

import kgb_test_plugins
from kgb_core.backends import Quirks
from kgb_core.config import RunConfig, config_from_mapping
from kgb_core.emulation import emulated_quirks
from kgb_core.errors import UserError
from kgb_core.evaluation import verdicts
from kgb_core.methods import GenerationContext
from kgb_core.plugins import load_registry
from kgb_core.report import render_results, render_summary, summarize
from kgb_core.store import ResultStore
from kgb_core.sweep import plan_sweep, run_sweep
from kgb_methods.prompts import render_prompt
from kgb_methods.reference import ReferenceMethod

from conftest import KERNELS


class SpyMethod(ReferenceMethod):
    """The shipped references, with a num_warps=8 launch for aten.abs (fakechip allows 4),
    remembering every operator it was asked for and the label the prompt would carry."""

    name = "spy"
    trusted = False
    asked: list[tuple[str, str]] = []

    def generate(self, op, quirks, ctx):
        SpyMethod.asked.append((op.id, ctx.backend_label))
        candidates = super().generate(op, quirks, ctx)
        if op.id == "aten.abs":
            for candidate in candidates:
                candidate.source = candidate.source.replace("BLOCK=block)",
                                                            "BLOCK=block, num_warps=8)")
        return candidates


def _registry():
    spy = type("SpyPlugin", (), {})()
    from kgb_core import hookimpl

    spy.kgb_register_methods = hookimpl(lambda register: register(SpyMethod()))
    return load_registry(extra=[("kgb_test_plugins", kgb_test_plugins), ("spy", spy)])


def test_emulated_quirks_take_the_targets_limits_and_the_hosts_tiers():
    registry = _registry()
    quirks = emulated_quirks(registry.backend("cpu"), registry.backend("fakechip"))
    assert quirks.skipped_dtypes["float16"].startswith("fakechip: ")
    assert "bfloat16" not in quirks.skipped_dtypes  # the CPU backend runs bf16
    assert quirks.denied_operators == {"aten.sort": "fakechip: test: no sort on fakechip"}
    assert quirks.max_num_warps == 4
    assert quirks.prompt_hints[0].startswith("fakechip hint")
    assert quirks.case_tiers == registry.backend("cpu").quirks.case_tiers
    prompt = render_prompt(registry.operator("aten.neg"), GenerationContext(
        backend_name="cpu", emulates="fakechip").backend_label, quirks)
    assert "cpu (emulating fakechip)" in prompt and "fakechip hint" in prompt
    assert "num_warps=4" in prompt


def test_emulation_is_refused_for_unknown_or_self_targets():
    registry = _registry()
    with pytest.raises(UserError, match="--emulate: unknown backend 'nochip'"):
        plan_sweep(RunConfig(ops=["aten.neg"], backend="cpu", emulate="nochip"), registry)
    with pytest.raises(UserError, match="cannot emulate itself"):
        plan_sweep(RunConfig(ops=["aten.neg"], backend="cpu", emulate="cpu"), registry)
    assert config_from_mapping({"run": {"emulate": "fakechip"}}).emulate == "fakechip"


def test_plain_plans_keep_their_resume_key():
    plan = plan_sweep(RunConfig(ops=["aten.neg"], backend="cpu"), _registry())
    assert "emulates" not in plan.describe()


def test_an_emulated_sweep_labels_every_result_skips_denied_ops_and_resumes(tmp_path,
                                                                             monkeypatch):
    registry = _registry()
    # The worker finds fakechip through KGB_EXTRA_PLUGINS, like any installed plugin.
    monkeypatch.setenv("KGB_EXTRA_PLUGINS", "kgb_test_plugins")
    monkeypatch.setenv("PYTHONPATH", str(KERNELS.parent))
    config = RunConfig(ops=["aten.abs", "aten.neg", "aten.sort"], method="spy", backend="cpu",
                       emulate="fakechip", seeds=[0], timing=False, timeout_s=120)
    plan = plan_sweep(config, registry)
    assert plan.backend.label == "cpu (emulating fakechip)"
    SpyMethod.asked.clear()
    with ResultStore(tmp_path / "r.db") as store:
        outcome = run_sweep(plan, registry, store, resume=False)
        rows = store.results(outcome.run_id)
        again = run_sweep(plan_sweep(config, registry), registry, store, resume=True)
    by_op = {row["op"]: row for row in rows}
    assert {op: row["verdict"] for op, row in by_op.items()} == {
        "aten.abs": verdicts.LIMIT_EXCEEDED, "aten.neg": verdicts.PASS,
        "aten.sort": verdicts.SKIPPED_DENIED}
    assert "num_warps=8" in by_op["aten.abs"]["message"]
    assert "no sort on fakechip" in by_op["aten.sort"]["message"]
    # the denied operator never reached the method: no prompt was made for it
    assert [op for op, _ in SpyMethod.asked] == ["aten.abs", "aten.neg"]
    assert {label for _, label in SpyMethod.asked} == {"cpu (emulating fakechip)"}
    for row in rows:  # the label is in the row and in the stored detail
        assert (row["backend"], row["emulates"]) == ("cpu", "fakechip")
        assert json.loads(row["detail"])["emulates"] == "fakechip"
    cases = json.loads(by_op["aten.neg"]["detail"])["cases"]
    assert {c["dtype"] for c in cases if c["status"] == "skipped"} == {"float16"}
    (summary,) = summarize(rows)
    assert (summary.operators, summary.skipped, summary.correct) == (2, 1, 1)
    text = render_summary([summary]) + render_results(rows)
    assert "cpu (emulating fakechip)" in text and "not results of that hardware" in text
    assert (again.evaluated, again.skipped_done, again.run_id) == (0, 3, outcome.run_id)


def test_a_store_made_before_emulation_is_read_and_resumed(tmp_path):
    import sqlite3

    from kgb_core.evaluation.results import EvalResult

    path = tmp_path / "v2.db"
    plan = {"operators": ["aten.add"], "method": "reference", "backend": "cpu"}
    with ResultStore(path) as store:  # make a store, then take it back to schema 2
        run = store.start_run(plan, {})
        store.record(run, "aten", EvalResult(op="aten.add", backend="cpu", verdict="pass",
                                             method="reference"), None)
    conn = sqlite3.connect(path)
    conn.execute("ALTER TABLE results DROP COLUMN emulates")
    conn.execute("UPDATE meta SET value='2' WHERE key='schema_version'")
    conn.commit()
    conn.close()
    with ResultStore(path) as store:
        assert store.latest_run_for(plan) == run
        assert len(store.done_keys(run)) == 1
        assert store.results()[0]["emulates"] == ""
    from kgb_core.store import SCHEMA_VERSION

    assert sqlite3.connect(path).execute(
        "SELECT value FROM meta WHERE key='schema_version'").fetchone() == (str(SCHEMA_VERSION),)


def test_denied_and_all_skipped_operators_leave_correct_pct_alone():
    def row(op, verdict):
        return {"op": op, "source": "aten", "method": "m", "backend": "b", "sample": 0,
                "verdict": verdict, "speedup": None, "prompt_tokens": 0,
                "completion_tokens": 0, "cost_usd": 0.0, "timing_label": ""}

    (summary,) = summarize([row("aten.a", "pass"), row("aten.b", "wrong_output"),
                            row("aten.c", verdicts.SKIPPED_DENIED),
                            row("aten.d", verdicts.SKIPPED_UNSUPPORTED)])
    assert (summary.operators, summary.skipped, summary.correct_pct) == (2, 2, 50.0)
    assert "emulating" not in render_summary([summary])
    assert Quirks(device_type="x").denied_operators == {}


def test_an_emulation_is_the_hosts_own_code_with_a_merged_profile(monkeypatch):
    """No proxy: the emulation is the host's runtime object (a copy), so every method, one
    added to Backend later included, is the host's; of the profile, emulation decides the
    quirks, its name of the target, auto-detection and the fallback, and every other field
    (one added later included) is the host's."""
    import dataclasses

    from kgb_backends.cpu import CpuInterpreterBackend
    from kgb_core.backends import ChipProfile
    from kgb_core.emulation import emulating
    from kgb_core.timing import TimingSettings

    class Host(CpuInterpreterBackend):
        profile = dataclasses.replace(
            CpuInterpreterBackend.profile, name="host",
            default_timing=TimingSettings(warmup_ms=1.0, rep_ms=2.0),
            watch_os_threads=not ChipProfile.watch_os_threads,
            timings_measure_hardware=not ChipProfile.timings_measure_hardware)

        def a_later_method(self):
            return ("the host's", self.name)

    host, amd = Host(), load_registry().backend("amd")
    emulation = emulating(host, amd)
    assert type(emulation) is Host and emulation is not host and host.emulates == ""
    assert emulation.a_later_method() == ("the host's", "host")
    own = {"emulates": "amd", "auto_detect": False, "fallback": False}
    for field in dataclasses.fields(ChipProfile):
        value = getattr(emulation, field.name)
        if field.name == "description":
            assert "emulation, not amd hardware" in value
        elif field.name == "quirks":
            assert value.max_num_warps == amd.quirks.max_num_warps
        else:
            assert value == own.get(field.name, getattr(host, field.name)), field.name


def test_a_backend_says_what_it_is_in_its_profile_only():
    """One way: a profile field set as a class attribute beside the profile would be read by
    some code and not by the rest, so it is refused when the class is made."""
    from kgb_backends.cpu import CpuInterpreterBackend

    with pytest.raises(TypeError, match="declares them in its profile"):
        class Beside(CpuInterpreterBackend):  # noqa: F841
            name = "beside"
