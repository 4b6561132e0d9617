"""A candidate kernel: one Python source file, and what it cost to make.

The contract (README, "The candidate contract"): the file defines ``kernel(...)`` with the
operator's signature, returns what the reference returns, and launches at least one
``@triton.jit`` kernel. The harness, not the candidate, makes the inputs.
"""

from __future__ import annotations

import ast
import re
from dataclasses import asdict, dataclass, field
from typing import Any

ENTRY_POINT = "kernel"

_FENCE = re.compile(r"```(?:python|py)?[ \t]*\n(.*?)```", re.DOTALL)


@dataclass
class Candidate:
    source: str
    sample: int = 0
    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    cost_usd: float | None = None
    origin: str = ""
    log: list[str] = field(default_factory=list)
    # For model-made candidates: the prompt, the raw answer, latency, whether tokens were
    # estimated. The store keeps it with the result.
    generation: dict[str, Any] | None = None

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def extract_code(answer: str) -> str:
    """The kernel source in a model's answer: the last fenced block that defines ``kernel``.

    Models often show a usage snippet after the code; the last block defining the entry point is
    the one meant. An answer with no fence is taken as bare source if it is Python, and as no
    code at all ("") otherwise, which the screen then names as such.
    """
    blocks = _FENCE.findall(answer)
    if not blocks:
        try:
            ast.parse(answer)
        except SyntaxError:
            return ""
        return answer.strip() + "\n"
    defining = [b for b in blocks if re.search(rf"^def {ENTRY_POINT}\s*\(", b, re.MULTILINE)]
    chosen = defining[-1] if defining else blocks[-1]
    return chosen.strip() + "\n"
