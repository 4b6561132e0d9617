"""The main job: every aten operator's reference kernel passes on the CPU backend."""

from __future__ import annotations

import json

from conftest import kgb


def test_reference_method_passes_every_aten_operator_on_cpu(tmp_path, registry):
    db = tmp_path / "reference.db"
    done = kgb("run", "--source", "aten", "--method", "reference", "--backend", "cpu",
               "--db", str(db), timeout=1200)
    assert done.returncode == 0, done.stderr[-3000:]
    report = json.loads(kgb("report", "--db", str(db), "--json").stdout)
    (summary,) = report["summary"]
    expected = len(registry.operators(["aten"]))
    assert summary["operators"] == expected
    assert summary["correct"] == expected, done.stdout
