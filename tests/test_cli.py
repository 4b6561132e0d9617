"""The kgb command line, run as a user runs it: real subprocesses, real files."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from conftest import KERNELS, REPO, kgb

from kgb_core.plugins import load_registry


def test_plugins_json_lists_builtins_with_their_distribution():
    done = kgb("plugins", "--json")
    assert done.returncode == 0, done.stderr
    plugins = {p["name"]: p for p in json.loads(done.stdout)}
    assert plugins["cpu"]["provides"] == [{"kind": "backend", "name": "cpu"}]
    assert plugins["aten"]["distribution"] == "kernelgenbench"


def test_a_broken_installed_plugin_is_shown_and_does_not_break_kgb(tmp_path):
    """An installed distribution (dist-info on sys.path) whose entry point fails to import."""
    dist = tmp_path / "kgb_broken_plugin-0.1.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: kgb-broken-plugin\nVersion: 0.1\n")
    (dist / "entry_points.txt").write_text("[kgb]\nbroken = kgb_broken_plugin\n")
    (tmp_path / "kgb_broken_plugin.py").write_text("raise ImportError('needs vendor SDK 9')\n")
    env = {"PYTHONPATH": str(tmp_path)}
    done = kgb("plugins", "--json", env=env)
    assert done.returncode == 0, done.stderr
    plugins = {p["name"]: p for p in json.loads(done.stdout)}
    assert "needs vendor SDK 9" in plugins["broken"]["error"]
    assert plugins["broken"]["distribution"] == "kgb-broken-plugin"
    assert plugins["cpu"]["error"] is None
    table = kgb("plugins", env=env)
    assert "FAILED: ImportError: needs vendor SDK 9" in table.stdout
    assert kgb("ops", env=env).returncode == 0


def test_ops_listing_filters_and_show():
    listing = json.loads(kgb("ops", "--json").stdout)
    assert len(listing) >= 25
    activations = json.loads(kgb("ops", "--tag", "activation", "--json").stdout)
    assert activations and all("activation" in op["tags"] for op in activations)
    shown = kgb("ops", "show", "aten.add", "--json")
    info = json.loads(shown.stdout)
    assert info["id"] == "aten.add" and info["signature"].startswith("kernel(")
    assert {"flops", "bytes"} <= set(info["cases"][0]["counts"]["float32"])
    text = kgb("ops", "show", "aten.add").stdout
    assert "tolerance float16: rtol=0.001" in text and "row_broadcast" in text


def test_listing_operators_imports_no_torch():
    """`kgb ops` builds every operator and runs none: torch's import (1.3 s of its 1.8 s when
    the attention spec imported its rounding rule at once) waits for a check."""
    done = subprocess.run([sys.executable, "-c",
                           "import sys; from kgb_core.plugins import load_registry; "
                           "assert len(load_registry().operators()) >= 300; "
                           "print(sorted(m for m in ('torch', 'triton') if m in sys.modules))"],
                          capture_output=True, text=True, cwd=str(REPO))
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"


def test_backends_json_says_why_one_is_unavailable():
    entries = {e["name"]: e for e in json.loads(kgb("backends", "--json").stdout)}
    assert entries["cpu"]["available"] is True
    # bf16 runs on the CPU backend (its interpreter shim); what it cannot run is named.
    assert "bfloat16" not in entries["cpu"]["quirks"]["skipped_dtypes"]
    assert any("tanh" in gap for gap in entries["cpu"]["quirks"]["unsupported_tl"])
    # The rest of its profile: how the core treats it.
    assert entries["cpu"]["profile"]["fallback"] is True
    assert entries["cpu"]["profile"]["timings_measure_hardware"] is False
    assert entries["cpu"]["profile"]["default_timing"]["max_repetitions"] == 5
    if not entries["nvidia"]["available"]:
        assert "NVIDIA" in entries["nvidia"]["reason"] or "CUDA" in entries["nvidia"]["reason"]


@pytest.fixture(scope="module")
def gelu_eval(tmp_path_factory):
    """`kgb eval --json` of aten.gelu's reference kernel, timed: read by two tests (a judge's
    start and a whole evaluation, seconds, made once)."""
    spec = load_registry().operator("aten.gelu")
    kernel = tmp_path_factory.mktemp("gelu") / "gelu_kernel.py"
    kernel.write_text(spec.reference_kernel())
    return spec, kgb("eval", str(kernel), "--op", spec.id, "--backend", "cpu", "--json")


def test_eval_json_of_a_passing_reference_kernel(gelu_eval):
    _, done = gelu_eval
    assert done.returncode == 0, done.stdout + done.stderr
    result = json.loads(done.stdout)
    assert result["op"] == "aten.gelu" and result["backend"] == "cpu"
    assert result["verdict"] == "pass" and result["message"] == ""
    checked = [c for c in result["cases"] if c["status"] != "skipped"]
    assert checked and all("max_abs_error" in c and "max_rel_error" in c for c in checked)
    assert result["candidate_ms"] > 0 and result["reference_ms"] > 0 and result["speedup"] > 0
    assert result["timing_label"] == "interpreter-wallclock (no hardware)"


def test_eval_of_a_wrong_kernel_exits_1_with_the_verdict():
    done = kgb("eval", str(KERNELS / "add_wrong_values.py"), "--op", "aten.add",
               "--backend", "cpu", "--no-timing")
    assert done.returncode == 1
    assert "wrong_output" in done.stdout and "outside rtol" in done.stdout


@pytest.mark.parametrize("args,message", [
    (["eval", "missing.py", "--op", "aten.add", "--backend", "cpu"], "does not exist"),
    (["eval", str(KERNELS / "relu_raises.py"), "--op", "aten.nope", "--backend", "cpu"],
     "unknown operator 'aten.nope'"),
    (["eval", str(KERNELS / "relu_raises.py"), "--op", "aten.relu", "--backend", "tpu"],
     "unknown backend 'tpu'"),
    (["run", "--source", "cublaz"], "unknown source 'cublaz'"),
    (["run", "--method", "oracle"], "unknown method 'oracle'"),
])
def test_bad_input_is_one_line_and_exit_2(args, message):
    done = kgb(*args)
    assert done.returncode == 2, done.stdout + done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and message in lines[0] and lines[0].startswith("error: ")
    assert "Traceback" not in done.stderr


def test_binary_candidate_and_bad_config_are_user_errors(tmp_path):
    binary = tmp_path / "kernel.py"
    binary.write_bytes(b"\x7fELF\x00\x00binary")
    done = kgb("eval", str(binary), "--op", "aten.relu", "--backend", "cpu")
    assert done.returncode == 2 and "binary" in done.stderr
    config = tmp_path / "run.toml"
    config.write_text("[run]\nsorces = ['aten']\n")
    done = kgb("run", "--config", str(config))
    assert done.returncode == 2 and "did you mean 'sources'" in done.stderr


def test_run_then_report(tmp_path):
    db = tmp_path / "r.db"
    config = tmp_path / "run.toml"
    config.write_text('[run]\nops = ["aten.neg", "aten.mul"]\nbackend = "cpu"\n'
                      '[evaluation]\nseeds = [0]\n')
    done = kgb("run", "--config", str(config), "--db", str(db))
    assert done.returncode == 0, done.stderr
    assert "[2/2]" in done.stderr and "aten.mul" in done.stdout
    report = kgb("report", "--db", str(db), "--json")
    (summary,) = json.loads(report.stdout)["summary"]
    assert summary["operators"] == 2 and summary["correct"] == 2
    run = json.loads(report.stdout)["runs"][0]
    assert run["environment"]["worker"]["torch"] and run["environment"]["kgb"]
    assert kgb("report", "--db", str(tmp_path / "none.db")).returncode == 2


def test_a_candidate_that_is_not_a_python_file_is_refused(tmp_path):
    notes = tmp_path / "kernel.md"
    notes.write_text("# my kernel\n")
    done = kgb("eval", str(notes), "--op", "aten.relu", "--backend", "cpu")
    assert done.returncode == 2 and "not a Python file" in done.stderr
    huge = tmp_path / "huge.py"
    huge.write_text("#" * 1_000_001)
    done = kgb("eval", str(huge), "--op", "aten.relu", "--backend", "cpu")
    assert done.returncode == 2 and "at most" in done.stderr


def test_eval_output_never_names_or_describes_a_heldout_case(gelu_eval):
    spec, done = gelu_eval  # timed: its timings must not name a held-out case either
    result = json.loads(done.stdout)
    heldout = [c for c in result["cases"] if c["heldout"]]
    assert heldout and all(c["case"].startswith("heldout-") and "params" not in c for c in heldout)
    for case in spec.cases:
        if case.heldout:
            assert case.name not in done.stdout


def test_methods_lists_each_method_with_its_typed_options():
    done = kgb("methods", "--json")
    assert done.returncode == 0, done.stderr
    methods = {m["name"]: m for m in json.loads(done.stdout)}
    assert {"reference", "llm", "agent", "command", "files"} <= set(methods)
    assert methods["reference"]["default"] and not methods["llm"]["default"]
    llm = {o["name"]: o for o in methods["llm"]["options"]}
    assert llm["temperature"]["type"] == "a number" and llm["temperature"]["default"] == 0.0
    assert llm["model"]["default"] is None and "required" in llm["model"]["description"]
    assert all(o["description"] for m in methods.values() for o in m["options"])
    text = kgb("methods").stdout
    assert "reference (default)" in text and '[method] name = "llm" takes:' in text
