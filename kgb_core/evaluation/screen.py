"""The static screen: what can be refused before a candidate runs at all.

A first filter, never the only one: everything it lets through is still checked by running.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass

from kgb_core.candidates import ENTRY_POINT
from kgb_core.evaluation import verdicts

# A candidate is one source file; a larger one is not a kernel (and may be an attack on the
# harness's memory or store).
MAX_SOURCE_BYTES = 1_000_000


@dataclass(frozen=True)
class ScreenFinding:
    verdict: str
    message: str
    line: int | None = None


def screen_source(source: str) -> ScreenFinding | None:
    """None when the source may run; otherwise the verdict and the offending line."""
    if len(source.encode("utf-8", errors="replace")) > MAX_SOURCE_BYTES:
        return ScreenFinding(verdicts.SCREEN_REJECTED,
                             f"source is larger than {MAX_SOURCE_BYTES} bytes")
    if "\x00" in source:
        return ScreenFinding(verdicts.SCREEN_REJECTED, "source contains NUL bytes (binary?)")
    try:
        tree = ast.parse(source)
    except SyntaxError as error:
        return ScreenFinding(verdicts.COMPILE_ERROR,
                             f"SyntaxError: {error.msg} (line {error.lineno})", error.lineno)
    defines_entry = any(
        isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name == ENTRY_POINT
        for node in tree.body
    ) or any(
        isinstance(node, ast.Assign) and any(
            isinstance(t, ast.Name) and t.id == ENTRY_POINT for t in node.targets)
        for node in tree.body
    )
    if not defines_entry:
        return ScreenFinding(verdicts.SCREEN_REJECTED,
                             f"no top-level `{ENTRY_POINT}` is defined (the candidate contract "
                             f"asks for `def {ENTRY_POINT}(...)`)")
    return None
