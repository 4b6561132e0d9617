"""A failure that matches a backend's known gap says so (``EvalResult.backend_gap``).

A kernel that calls inline assembly fails in Triton's interpreter with an error that reads like
its own bug, while it may be right on a GPU. A backend lists the error messages of what it
cannot run (``Quirks.known_gaps``: a regular expression and what it means); a run-time or
compile error whose message matches one keeps its verdict (the kernel did not run here), and
the result names the gap, in ``backend_gap`` and at the end of its message.

The message comes from the runner, which a candidate controls: a candidate can make its failure
look like a gap, and gain nothing by it (the verdict stays a failure).
"""

from __future__ import annotations

import re
from typing import Any

from kgb_core.evaluation import verdicts

# Only failures of the kernel to run at all: a wrong value is never blamed on the backend.
NOTED_VERDICTS = frozenset({verdicts.RUNTIME_ERROR, verdicts.COMPILE_ERROR})


def known_gap(verdict: str, message: str, quirks: Any) -> str | None:
    """What the backend's known gap says, when this failure matches one; else None."""
    if verdict not in NOTED_VERDICTS:
        return None
    for pattern, meaning in getattr(quirks, "known_gaps", ()):
        if re.search(pattern, message):
            return meaning
    return None


def note_gap(result: Any, backend_name: str, quirks: Any) -> None:
    """Set ``result.backend_gap`` and add it to the message, when the failure matches a gap."""
    meaning = known_gap(result.verdict, result.message, quirks)
    if meaning is None:
        return
    result.backend_gap = meaning
    result.message += (f"\n(a known gap of the {backend_name} backend, not necessarily of this "
                       f"kernel: {meaning})")
