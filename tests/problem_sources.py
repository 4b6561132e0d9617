"""What the tests of the sources of other benchmarks' problems share (plugins/kgb-source-*):
a `kgb run` of the files method over one such source, and an evaluator configured for it."""

from __future__ import annotations

import contextlib
import sqlite3
import textwrap
from pathlib import Path
from typing import Iterator

from conftest import kgb

from kgb_core.evaluation.evaluator import EvaluationSettings, Evaluator
from kgb_core.plugins import load_registry


def files_run(tmp_path: Path, source: str, problems: str, answers: dict[str, str],
              ) -> tuple[Path, list[tuple[str, int, str]]]:
    """``kgb run --method files`` over ``source`` with its path ``problems`` (relative to the
    repository) and the answers given as {file name: source}; the store and its (op, sample,
    verdict) rows."""
    folder = tmp_path / "answers"
    folder.mkdir()
    for name, text in answers.items():
        (folder / name).write_text(text)
    config = tmp_path / "run.toml"
    config.write_text(textwrap.dedent(f"""\
        [run]
        sources = ["{source}"]
        backend = "cpu"
        [sources.{source}]
        path = "{problems}"
        [method]
        name = "files"
        path = "{folder}"
        [evaluation]
        seeds = [0]
        timing = false
        """))
    db = tmp_path / "r.db"
    done = kgb("run", "--config", str(config), "--db", str(db))
    assert done.returncode == 0, done.stderr[-3000:]
    with sqlite3.connect(db) as conn:
        rows = sorted(conn.execute("SELECT op, sample, verdict FROM results").fetchall())
    return db, rows


@contextlib.contextmanager
def source_evaluator(source: str, problems: Path) -> Iterator[Evaluator]:
    """One CPU evaluator over ``source``'s problems in ``problems``, screen off (the cheats'
    headers say what the screen makes of them)."""
    settings = EvaluationSettings(seeds=(0, 1), timeout_s=120, timing=False, screen=False,
                                  source_options={source: {"path": str(problems)}})
    with Evaluator.for_backend(load_registry().backend("cpu"), settings) as made:
        yield made
