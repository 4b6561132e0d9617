"""Static checks on the shipped Triton kernels for mistakes the interpreter cannot see.

The interpreter runs a @triton.jit body as Python, so an ``if CONSTEXPR: return x`` followed by
more statements behaves as Python does. Triton's compiler does not stop there: it compiles the
statements after a returning branch too, as dead code, and fails when they do not compile for
that specialization (tl.dot on fp64, a reshape to a zero-sized block). Four reference kernels
did this and failed only on the H200; this test keeps the pattern out of every shipped kernel.
"""
from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
KERNEL_FILES = sorted(
    path for folder in ("kgb_sources", "kgb_methods", "plugins")
    for path in (ROOT / folder).rglob("*.py") if "triton.jit" in path.read_text()
)


def returning_branches_with_code_after(tree: ast.Module) -> list[tuple[str, int]]:
    """(function, line) of each `if` in a @triton.jit function whose branch ends in a return
    while statements follow the `if` in the same block."""
    found: list[tuple[str, int]] = []

    def scan(name: str, body: list[ast.stmt]) -> None:
        for index, statement in enumerate(body):
            if isinstance(statement, ast.If):
                branch_returns = any(block and isinstance(block[-1], ast.Return)
                                     for block in (statement.body, statement.orelse))
                if branch_returns and index < len(body) - 1:
                    found.append((name, statement.lineno))
                scan(name, statement.body)
                scan(name, statement.orelse)
            elif isinstance(statement, (ast.For, ast.While, ast.With)):
                scan(name, statement.body)

    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef) and any(
                "jit" in ast.unparse(decorator) for decorator in node.decorator_list):
            scan(node.name, node.body)
    return found


def test_kernel_files_are_found() -> None:
    assert len(KERNEL_FILES) > 100


@pytest.mark.parametrize("path", KERNEL_FILES, ids=lambda p: str(p.relative_to(ROOT)))
def test_no_code_after_a_returning_branch(path: Path) -> None:
    found = returning_branches_with_code_after(ast.parse(path.read_text()))
    assert not found, "use if/else with one return: " + ", ".join(
        f"{name} line {line}" for name, line in found)


def test_the_check_sees_the_pattern() -> None:
    bad = ast.parse(
        "import triton\n"
        "@triton.jit\n"
        "def f(a, FP64: tl.constexpr):\n"
        "    if FP64:\n"
        "        return a\n"
        "    return tl.dot(a, a)\n")
    good = ast.parse(
        "import triton\n"
        "@triton.jit\n"
        "def f(a, FP64: tl.constexpr):\n"
        "    if FP64:\n"
        "        b = a\n"
        "    else:\n"
        "        b = tl.dot(a, a)\n"
        "    return b\n")
    assert returning_branches_with_code_after(bad) == [("f", 4)]
    assert returning_branches_with_code_after(good) == []
