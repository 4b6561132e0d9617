"""The main job: every operator's reference kernel passes on the CPU backend, in every source.

The sweep runs in chunks of operators, each its own ``kgb run`` into its own store; together
the chunks cover every operator of every installed source exactly once. The chunks are shared
out over ``PARTS`` test modules (test_reference_sweep_part*.py): the suite's workers run with
``--dist loadfile``, which keeps a module on one worker, and the whole sweep in one module was
the suite's longest path (about 500 s on one worker of three, on a 2-core machine).
Correctness only (``--no-timing``): interpreter timings say nothing about a kernel, and the
timed path has its own tests (test_evaluation, test_cli).
"""

from __future__ import annotations

import json

from kgb_core.plugins import load_registry

from conftest import kgb

CHUNK = 42  # 8 `kgb run`s in all: each pays a judge's start, so fewer and larger
REGISTRY = load_registry()
CPU_SKIPPED = REGISTRY.backend("cpu").quirks.skipped_dtypes
SOURCES = [name for name in REGISTRY.names("source") if REGISTRY.operators([name])]
SPECS = {spec.id: spec for spec in REGISTRY.operators(SOURCES)}
CHUNKS = [(source, [spec.id for spec in REGISTRY.operators([source])][start:start + CHUNK])
          for source in SOURCES
          for start in range(0, len(REGISTRY.operators([source])), CHUNK)]


PARTS = 4


def part(index: int) -> dict[str, list]:
    """``pytest.mark.parametrize``'s arguments for the chunks of module ``index``."""
    chosen = [(i, chunk) for i, chunk in enumerate(CHUNKS) if i % PARTS == index]
    return {"argnames": ("source", "ops"), "argvalues": [chunk for _i, chunk in chosen],
            "ids": [f"{chunk[0]}-{i}" for i, chunk in chosen]}


def check_chunk(tmp_path, source: str, ops: list[str]) -> None:
    """One chunk's ``kgb run``: every operator of it passes (or is skipped where the CPU
    backend skips its every dtype)."""
    db = tmp_path / "reference.db"
    args = ["run", "--method", "reference", "--backend", "cpu", "--db", str(db), "--seed", "0",
            "--no-timing"]
    for op in ops:
        args += ["--op", op]
    done = kgb(*args, timeout=1800)
    assert done.returncode == 0, done.stderr[-3000:]
    report = json.loads(kgb("report", "--db", str(db), "--json").stdout)
    rows = {row["source"]: row for row in report["summary"]}
    assert list(rows) == [source]
    # An operator whose every dtype the CPU backend skips (none since its bf16 shim, but a
    # backend may skip some) is counted as skipped, never as passed: all the others must pass.
    skipped = [op for op in ops if all(dtype in CPU_SKIPPED for dtype in SPECS[op].dtypes)]
    assert rows[source]["skipped"] == len(skipped), skipped
    assert rows[source]["operators"] == len(ops) - len(skipped)
    assert rows[source]["correct"] == len(ops) - len(skipped), done.stdout
