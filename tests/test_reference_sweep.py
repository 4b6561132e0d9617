"""The main job: every operator's reference kernel passes on the CPU backend, in every source."""

from __future__ import annotations

import json

from conftest import kgb


def test_reference_method_passes_every_operator_of_every_source_on_cpu(tmp_path, registry):
    db = tmp_path / "reference.db"
    sources = [name for name in registry.names("source") if registry.operators([name])]
    args = ["run", "--method", "reference", "--backend", "cpu", "--db", str(db), "--seed", "0"]
    for source in sources:
        args += ["--source", source]
    done = kgb(*args, timeout=1800)
    assert done.returncode == 0, done.stderr[-3000:]
    report = json.loads(kgb("report", "--db", str(db), "--json").stdout)
    rows = {row["source"]: row for row in report["summary"]}
    assert sorted(rows) == sorted(sources)
    for source in sources:
        expected = len(registry.operators([source]))
        assert rows[source]["operators"] == expected
        assert rows[source]["correct"] == expected, done.stdout
