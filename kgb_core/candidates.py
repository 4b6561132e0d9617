"""A candidate kernel: one Python source file, and what it cost to make.

The contract (README, "The candidate contract"): the file defines ``kernel(...)`` with the
operator's signature, returns what the reference returns, and launches at least one
``@triton.jit`` kernel. The harness, not the candidate, makes the inputs.
"""

from __future__ import annotations

import ast
import re
import threading
from dataclasses import asdict, dataclass, field
from typing import Any

from kgb_core.module_contract import MODULE_CLASS, PACKED_FUNCTION

ENTRY_POINT = "kernel"

# A fence opens a line: three or more backticks or tildes, then any info string (python, py,
# triton, none at all); the block ends at a line of the same character, at least as long.
_OPENING = re.compile(r"^[ ]{0,3}(?P<fence>`{3,}|~{3,})[ \t]*(?P<info>[^`\n]*)$")
# Reasoning a model shows before its answer: never the answer's code.
_THINKING = re.compile(r"<(think|thinking|reasoning)>.*?</\1>", re.DOTALL | re.IGNORECASE)
# The entry points an answer may define: kgb's ``kernel``, KernelBench's ``class ModelNew``,
# GPU MODE's ``custom_kernel`` (kgb_core/module_contract.py).
_DEFINES_ENTRY = re.compile(rf"^(def {ENTRY_POINT}\s*\(|class {MODULE_CLASS}\b"
                            rf"|def {PACKED_FUNCTION}\s*\()", re.MULTILINE)


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


def fenced_blocks(text: str) -> list[str]:
    """The contents of the fenced code blocks of a Markdown text, in order. A block never closed
    runs to the end of the text (an answer cut off at its token limit)."""
    blocks: list[str] = []
    lines = text.splitlines(keepends=True)
    index = 0
    while index < len(lines):
        opening = _OPENING.match(lines[index].rstrip("\n"))
        index += 1
        if opening is None:
            continue
        fence = opening.group("fence")
        closing = re.compile(rf"^[ ]{{0,3}}{re.escape(fence[0])}{{{len(fence)},}}[ \t]*$")
        body: list[str] = []
        while index < len(lines) and not closing.match(lines[index].rstrip("\n")):
            body.append(lines[index])
            index += 1
        index += 1  # past the closing fence
        blocks.append("".join(body))
    return blocks


_PARSING = threading.Lock()


def parse_python(source: str) -> ast.Module:
    """``ast.parse``, one thread at a time: CPython 3.11's AST constructor keeps its recursion
    depth in state the interpreter's threads share, so two parses at once in a sweep's threads
    can fail with "SystemError: AST constructor recursion depth mismatch"
    (python/cpython#106905; seen in this suite with three LLM requests in flight)."""
    with _PARSING:
        return ast.parse(source)


def _is_python(source: str) -> bool:
    try:
        parse_python(source)
    except SyntaxError:
        return False
    return True


def extract_code(answer: str) -> str:
    """The kernel source in a model's answer, by these rules, in order (README.md, "Methods"):

    1. Reasoning blocks (``<think>...</think>``, ``<thinking>``, ``<reasoning>``) are dropped:
       code drafted while thinking is not the answer.
    2. Fenced blocks are found whatever their label (```` ```python ````, ```` ```triton ````,
       ```` ```py ````, none) and fence (three or more backticks or tildes).
    3. Of those, the last that defines ``kernel`` at the top level is the answer (or, for
       another benchmark's problems, ``class ModelNew`` or ``def custom_kernel``): models show
       a usage example or the problem's own code before or after it, and revise a draft.
    4. Where none defines ``kernel``: the last block that is valid Python; else the last block.
    5. No block at all: the whole answer if it is Python, else no code ("", which the screen
       names as such).
    """
    answer = _THINKING.sub("", answer)
    blocks = fenced_blocks(answer)
    if not blocks:
        return answer.strip() + "\n" if _is_python(answer) else ""
    defining = [b for b in blocks if _DEFINES_ENTRY.search(b)]
    python = [b for b in blocks if _is_python(b)]
    chosen = (defining or python or blocks)[-1]
    return chosen.strip() + "\n"
