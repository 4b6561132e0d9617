"""The adversarial corpus's file format (tests/adversarial/), read by its test and its benchmark.

Each file is a cheating candidate whose first comment lines say what it must get:

- ``# op: aten.relu``: the operator it pretends to implement;
- ``# expect: <verdict>``: what the run-time checks alone give it (the evaluator with its static
  screen turned off): every cheat must be caught by running, not only by reading;
  ``screen_rejected`` there means the screen is the only check that can (the cheat does
  nothing wrong at run time, or nothing a run on this backend can see), and the file says why;
- ``# screen: rejected``: the static screen refuses it as well (absent: the screen lets it
  through, and only running catches it);
- ``# expect-<backend>: <verdict>`` and ``# unsandboxed: <verdict>``: what it gets instead on
  that backend, or where runners have no OS sandbox;
- ``# timed: yes``: what it does wrong happens only in timed calls, so it is run with timing
  on (absent: with timing off, which is faster and changes nothing for a cheat that is wrong
  in checked calls); the verdict it gets comes from the timing stage.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from kgb_core.evaluation import verdicts


@dataclass(frozen=True)
class Cheat:
    name: str
    op: str
    expect: str
    screen_rejects: bool
    text: str
    timed: bool = False

    @property
    def screen_only(self) -> bool:
        """Caught by the static screen alone: nothing to run."""
        return self.expect == verdicts.SCREEN_REJECTED


def _header(text: str, key: str) -> str | None:
    found = re.search(rf"^# {re.escape(key)}: (\S+)", text, re.MULTILINE)
    return found.group(1) if found else None


def read_cheat(path: Path, backend: str = "", sandboxed: bool = True) -> Cheat:
    """One cheat file. ``backend``: where it will run; a ``# expect-<backend>:`` line, where
    the file has one for it, overrides ``# expect:``."""
    text = path.read_text()
    op, expect = _header(text, "op"), _header(text, "expect")
    if not op or not expect:
        raise ValueError(f"{path.name} lacks its '# op:' or '# expect:' line")
    expect = (_header(text, f"expect-{backend}") if backend else None) or expect
    if not sandboxed:
        expect = _header(text, "unsandboxed") or expect
    screen_rejects = _header(text, "screen") == "rejected" or expect == verdicts.SCREEN_REJECTED
    timed = _header(text, "timed")
    if timed not in (None, "yes"):  # a misspelt value would silently run it untimed
        raise ValueError(f"{path.name}: '# timed:' takes 'yes', not {timed!r}")
    return Cheat(path.stem, op, expect, screen_rejects, text, timed=timed == "yes")


def read_corpus(folder: Path, backend: str = "", sandboxed: bool = True) -> list[Cheat]:
    return [read_cheat(path, backend, sandboxed) for path in sorted(folder.glob("*.py"))]
