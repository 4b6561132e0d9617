"""`kgb doctor`, `kgb backends` with distributions, and an emulated run from the command line."""

from __future__ import annotations

import json
import textwrap

import pytest

from conftest import kgb
from kgb_core.backends import Availability, Backend, ChipProfile, ProbeCheck, Quirks


def test_doctor_prints_every_backends_checks_and_exits_0_when_the_selection_can_run():
    done = kgb("doctor", "--json")
    assert done.returncode == 0, done.stdout + done.stderr
    report = json.loads(done.stdout)
    backends = {b["backend"]: b for b in report["backends"]}
    assert {"cpu", "nvidia"} <= set(backends)
    assert backends["cpu"]["distribution"] == "kernelgenbench 0.1.0"
    assert {c["what"] for c in backends["cpu"]["checks"]} >= {"installed torch", "installed triton"}
    assert report["selected"]["can_run"]
    text = kgb("doctor", "--backend", "cpu").stdout
    assert "ok      installed triton" in text and "selected: cpu can run" in text


def test_doctor_exits_1_when_the_named_backend_cannot_run(tmp_path):
    # A backend that is never available, installed as a distribution would be.
    dist = tmp_path / "kgb_absent-0.2.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: kgb-absent\nVersion: 0.2\n")
    (dist / "entry_points.txt").write_text("[kgb]\nabsent = kgb_absent\n")
    (tmp_path / "kgb_absent.py").write_text(textwrap.dedent("""\
        from kgb_core import hookimpl
        from kgb_core.backends import Availability, Backend, ChipProfile, ProbeCheck, Quirks

        class Absent(Backend):
            profile = ChipProfile(name="absent", quirks=Quirks(device_type="absent"))
            def probe(self):
                return Availability.from_checks([
                    ProbeCheck("import torch_absent", False, "No module named 'torch_absent'")])
            def setup(self): raise AssertionError
            def synchronize(self): raise AssertionError
            def make_timer(self, settings): raise AssertionError

        @hookimpl
        def kgb_register_backends(register):
            register(Absent())
        """))
    env = {"PYTHONPATH": str(tmp_path)}
    done = kgb("doctor", "--backend", "absent", env=env)
    assert done.returncode == 1, done.stdout + done.stderr
    assert "absent [kgb-absent 0.2; kgb_absent]: NOT AVAILABLE" in done.stdout
    assert "MISSING import torch_absent: No module named 'torch_absent'" in done.stdout
    assert "selected: absent CANNOT run" in done.stdout
    # auto-detection is not fooled by it, and `kgb backends` names its distribution
    assert kgb("doctor", env=env).returncode == 0
    listing = {b["name"]: b for b in json.loads(kgb("backends", "--json", env=env).stdout)}
    assert listing["absent"]["distribution"] == "kgb-absent 0.2"
    assert not listing["absent"]["available"]
    unknown = kgb("doctor", "--backend", "tpu")
    assert unknown.returncode == 2 and "unknown backend 'tpu'" in unknown.stderr


def test_a_probe_that_raises_is_a_reason_not_a_traceback():
    class Raising(Backend):
        profile = ChipProfile(name="raising", quirks=Quirks(device_type="raising"))

        def probe(self):
            raise OSError("driver exploded")

        setup = synchronize = make_timer = None

    availability = Raising.safe_probe(Raising.__new__(Raising))
    assert not availability.available and "driver exploded" in availability.reason
    # plain tuples are accepted as checks, for plugins that do not import ProbeCheck
    assert Availability(True, "", (("a", True, "x"),)).checks == (ProbeCheck("a", True, "x"),)


def test_an_emulated_run_and_its_report_are_labelled_from_the_command_line(tmp_path, registry):
    if "example" not in registry.names("backend"):
        pytest.skip("kgb-backend-example is not installed (scripts/setup.sh installs it)")
    db = str(tmp_path / "emulated.db")
    run = kgb("run", "--backend", "cpu", "--emulate", "example", "--op", "aten.neg",
              "--op", "aten.sort", "--seed", "0", "--no-timing", "--db", db)
    assert run.returncode == 0, run.stdout + run.stderr
    assert "cpu (emulating example)" in run.stderr and "no example hardware" in run.stderr
    report = kgb("report", "--db", db, "--per-op")
    assert report.returncode == 0, report.stderr
    assert "skipped_denied" in report.stdout and "cpu (emulating example)" in report.stdout
    assert "not results of that hardware" in report.stdout
    (summary,) = json.loads(kgb("report", "--db", db, "--json").stdout)["summary"]
    assert (summary["backend_label"], summary["operators"], summary["skipped"],
            summary["correct"]) == ("cpu (emulating example)", 1, 1, 1)


def test_the_cpu_probe_finds_torch_and_triton_without_importing_them(monkeypatch):
    """Every kgb run on the CPU probes its backend in the harness, which runs no kernel: an
    import of torch there cost each run about 1.4 s. Found, not imported; a missing one is
    still a clear reason."""
    import subprocess
    import sys

    probe = ("import sys\nfrom kgb_core.plugins import load_registry\n"
             "a = load_registry().backend('cpu').safe_probe()\n"
             "print(a.available, 'torch' in sys.modules, 'triton' in sys.modules)\n")
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True,
                          timeout=120)
    assert done.stdout.split() == ["True", "False", "False"], done.stdout + done.stderr

    import importlib.util

    from kgb_core.plugins import load_registry

    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec",
                        lambda name, *a: None if name == "torch" else real(name, *a))
    missing = load_registry().backend("cpu").safe_probe()
    assert not missing.available and "no torch" in missing.reason
    assert [(c.what, c.ok) for c in missing.checks] == [("installed torch", False)]
