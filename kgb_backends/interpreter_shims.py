"""Gaps of Triton's interpreter closed the compiler's way, for the CPU backend (issue 22).

Installed in the runner template before any candidate is imported
(``CpuInterpreterBackend.install_runtime_shims``), so every runner forked from it has them.
Each shim makes the interpreter do what the compiler does with the same source; none changes
what a kernel computes on a GPU.

- ``and`` / ``or`` between block tensors. The compiler turns ``a < M and b < N`` into
  ``logical_and`` of the two masks (``CodeGenerator.visit_BoolOp``, with a deprecation warning
  for blocks). The interpreter runs the body as Python, where ``and`` asks the left block's
  ``__bool__`` (``all()`` of it) and returns one side: a row mask that is not all true drops the
  column mask, the kernel stores out of bounds and corrupts the runner's heap (``crashed``, a
  different glibc message each run). The shim rewrites ``and``/``or`` in the interpreter's AST
  pass (``FunctionRewriter.ast_transformer``, which already rewrites chained comparisons) into
  the compiler's rule: constexpr operands short-circuit, block ones are combined elementwise.
- Python float and dtype arguments. The compiler passes a float argument as an fp32 scalar
  (so ``eps.to(tl.float32)`` works) and a dtype argument as a constexpr (so ``DTYPE.value``
  works); the interpreter passed both as they came, and each failed with an AttributeError
  that read like the kernel's own bug. The shim converts them at the launch, where the
  interpreter converts ints and bools (``_implicit_cvt``).
- ``triton.language.extra.libdevice``: stubs in the interpreter, given an implementation
  (kgb_backends/interpreter_libdevice.py).
"""

from __future__ import annotations

import ast
from typing import Any, Callable

# The helper's name in the rewritten kernel's globals (the interpreter's module globals are
# merged into them: FunctionRewriter._compile_and_exec).
BOOLEAN_HELPER = "_kgb_interpreter_boolean"


def _boolean(method: str, *operands: Callable[[], Any]) -> Any:
    """``CodeGenerator._apply_boolean_values`` for the interpreter: operands evaluated in order,
    a constexpr one that decides the result returns it, the block ones are combined."""
    import triton.language as tl

    blocks: list[Any] = []
    value: Any = None
    for operand in operands:
        value = operand()
        if isinstance(value, tl.tensor) and not isinstance(value, tl.constexpr):
            blocks.append(value)
            continue
        truth = bool(value.value if isinstance(value, tl.constexpr) else value)
        if (method == "logical_and" and not truth) or (method == "logical_or" and truth):
            return value
    if not blocks:
        return value
    result = blocks[0]
    for block in blocks[1:]:
        result = getattr(result, method)(block)
    return result


class _BooleanTransformer(ast.NodeTransformer):
    """``a and b`` -> ``helper("logical_and", lambda: a, lambda: b)``; ``or`` likewise."""

    def visit_BoolOp(self, node: ast.BoolOp) -> ast.AST:
        node = self.generic_visit(node)
        method = "logical_and" if isinstance(node.op, ast.And) else "logical_or"
        empty = ast.arguments(posonlyargs=[], args=[], kwonlyargs=[], kw_defaults=[], defaults=[])
        thunks = [ast.Lambda(args=empty, body=value) for value in node.values]
        call = ast.Call(func=ast.Name(id=BOOLEAN_HELPER, ctx=ast.Load()),
                        args=[ast.Constant(value=method), *thunks], keywords=[])
        return ast.copy_location(call, node)


def install() -> tuple[str, ...]:
    """Install the shims this Triton's interpreter has the hooks for; the names of those
    installed (one whose hook this Triton lacks is left out)."""
    try:
        from triton.runtime import interpreter
    except ImportError:
        return ()
    from kgb_backends import interpreter_libdevice

    shims = (("and/or on blocks", _install_boolean),
             ("float and dtype arguments", _install_arguments),
             ("libdevice", lambda _: interpreter_libdevice.install()))
    return tuple(name for name, shim in shims if shim(interpreter))


def _install_boolean(interpreter: Any) -> bool:
    rewriter = getattr(interpreter, "FunctionRewriter", None)
    base = getattr(rewriter, "ast_transformer", None)
    if rewriter is None or not isinstance(base, ast.NodeTransformer):
        return False
    if not getattr(base, "_kgb_boolean", False):
        class Transformer(type(base), _BooleanTransformer):  # type: ignore[misc, valid-type]
            _kgb_boolean = True

        rewriter.ast_transformer = Transformer()
        setattr(interpreter, BOOLEAN_HELPER, _boolean)
    return True


def _install_arguments(interpreter: Any) -> bool:
    original = getattr(interpreter, "_implicit_cvt", None)
    handle_type = getattr(interpreter, "TensorHandle", None)
    if original is None or handle_type is None:
        return False
    if getattr(original, "_kgb_arguments", False):
        return True
    import numpy as np
    import triton.language as tl

    def implicit_cvt(arg: Any) -> Any:
        if isinstance(arg, float):  # the compiler's fp32 scalar (its mangled type is "fp32")
            return tl.tensor(handle_type(np.array([arg], dtype=np.float32), tl.float32),
                             tl.float32)
        if isinstance(arg, tl.dtype):  # the compiler makes a dtype argument a constexpr
            return tl.constexpr(arg)
        return original(arg)

    implicit_cvt._kgb_arguments = True  # type: ignore[attr-defined]
    interpreter._implicit_cvt = implicit_cvt
    return True
