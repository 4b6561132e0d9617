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
- Module-level aliases of Triton builtins (``erf = tl.math.erf``): patched for a launch as
  ``tl``'s own attributes are (``_install_aliases``).
- bf16 arithmetic: the interpreter computed on bf16 blocks' bit patterns as integers; the
  shim computes through fp32 and rounds each result to bf16 (kgb_backends/interpreter_bf16.py).
- Loads, stores and atomics outside the launch's tensors: on a GPU a fault or memory of no concern to
  the harness, in the interpreter the runner's own heap (``crashed``, SIGABRT, a different glibc
  message each run, no failing case). Checked against the tensors the launch was passed, they
  raise OutOfBoundsAccess naming the kernel's line and how far outside which argument they went.
"""

from __future__ import annotations

import ast
import threading
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
    from kgb_backends import interpreter_bf16, interpreter_libdevice

    shims = (("and/or on blocks", _install_boolean),
             ("float and dtype arguments", _install_arguments),
             ("libdevice", lambda _: interpreter_libdevice.install()),
             # bf16 before the bounds check: an atomic's check then wraps its bf16 path too.
             ("bf16 arithmetic", interpreter_bf16.install),
             ("bounds-checked loads and stores", _install_bounds),
             ("module-level aliases of tl functions", _install_aliases),
             ("dtype table cached", _install_dtype_cache))
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


_PATCHING = threading.local()  # the launch being interpreted on this thread, if any


def _install_aliases(interpreter: Any) -> bool:
    """``erf = tl.math.erf`` (or ``from triton.language.math import rsqrt``) at a module's top
    level binds the builtin itself, which the compiler resolves inside a kernel; the interpreter
    patches ``tl``'s attributes for a launch (``_patch_lang``), not names that hold its
    builtins, and the kernel failed with "_semantic argument must be provided". Names of the
    launched kernel's module (and of every module whose jit functions it calls) that hold a
    Triton builtin are patched for the launch too.

    The same wrapper stops the interpreter repatching ``tl`` at every call of a jit helper
    inside a launch: ``_patch_lang`` walked every member of ``tl``, ``tl.math`` and
    ``tl.tensor`` (``inspect.getmembers``) each time, a third of softmax's interpreted time
    (benchmarks/runner_call_cost.py), to find them patched already by the launch."""
    original = getattr(interpreter, "_patch_lang", None)
    semantic = getattr(interpreter, "interpreter_semantic", None)
    if original is None or semantic is None:
        return False
    if getattr(original, "_kgb_aliases", False):
        return True
    import triton.language as tl

    is_builtin = getattr(tl.core, "is_builtin", None)
    if is_builtin is None:
        return False
    languages = (tl, tl.core)

    def interpreted(member: Callable[..., Any]) -> Callable[..., Any]:
        def call(*args: Any, **kwargs: Any) -> Any:
            kwargs.pop("_semantic", None)
            return member(*args, **kwargs, _semantic=semantic)
        call.__name__ = getattr(member, "__name__", "builtin")
        return call

    def patch_aliases(names: dict[str, Any], replaced: list[tuple[dict, str, Any]]) -> None:
        for name, value in list(names.items()):
            if not name.startswith("__") and callable(value) and is_builtin(value):
                replaced.append((names, name, value))
                names[name] = interpreted(value)

    def patch_lang(fn: Any) -> Any:
        names = fn.__globals__
        launch = getattr(_PATCHING, "launch", None)
        if launch is not None and id(names) in launch["modules"]:
            return launch["scope"]  # a helper of a module this launch has seen: all patched
        used = {id(value) for value in names.values() if any(value is m for m in languages)}
        if launch is not None and used <= launch["languages"]:
            # A jit helper of another module, called inside a launch: tl is patched already;
            # only that module's aliases may not be.
            launch["modules"].add(id(names))
            patch_aliases(names, launch["replaced"])
            return launch["scope"]
        scope = original(fn)
        if launch is not None:  # a helper using a language module the launch did not patch
            launch["languages"] |= used
            return scope
        replaced: list[tuple[dict, str, Any]] = []
        patch_aliases(names, replaced)
        launch = {"scope": scope, "languages": used, "modules": {id(names)},
                  "replaced": replaced}
        restore = scope.restore

        def restore_all() -> None:
            _PATCHING.launch = None
            restore()
            for owner, name, value in reversed(replaced):
                owner[name] = value
        scope.restore = restore_all
        _PATCHING.launch = launch
        return scope

    patch_lang._kgb_aliases = True  # type: ignore[attr-defined]
    interpreter._patch_lang = patch_lang
    return True


def _install_dtype_cache(interpreter: Any) -> bool:
    """``_get_np_dtype`` built its table of fifteen dtypes at every call, tens of thousands of
    times a softmax; the same answers, looked up once per dtype."""
    original = getattr(interpreter, "_get_np_dtype", None)
    if original is None:
        return False
    if getattr(original, "_kgb_cached", False):
        return True
    answers: dict[Any, Any] = {}

    def get_np_dtype(tt_dtype: Any) -> Any:
        try:
            return answers[tt_dtype]
        except KeyError:
            answer = answers[tt_dtype] = original(tt_dtype)
            return answer
        except TypeError:  # an unhashable type: as before
            return original(tt_dtype)

    get_np_dtype._kgb_cached = True  # type: ignore[attr-defined]
    interpreter._get_np_dtype = get_np_dtype
    return True


# -- bounds-checked loads and stores ----------------------------------------------------------
# The interpreter reads and writes through raw addresses: a load or store past a tensor's end
# touched the runner's own heap (a crash with a glibc message, or silently wrong memory). Each
# launch notes the byte ranges of the tensors it was passed; every load and store is checked
# against them (and, for a kernel that reads addresses from a table, every live tensor's), and
# one outside all of them raises, naming how far outside and which argument is nearest (the error shows the kernel's line: kgb_core/evaluation/runner.py, short_traceback).
_LAUNCH = threading.local()


class OutOfBoundsAccess(IndexError):
    """A load or store outside the launch's tensors; the runner classifies it by this name as
    a run-time fault (kgb_core/evaluation/runner.py, ``classify``)."""


def _ranges_of(names: list[str], values: list[Any]) -> list[tuple[int, int, str]]:
    ranges: list[tuple[int, int, str]] = []

    def visit(name: str, value: Any) -> None:
        if isinstance(value, (list, tuple)):
            for item in value:
                visit(name, item)
        elif hasattr(value, "untyped_storage"):
            storage = value.untyped_storage()
            ranges.append((storage.data_ptr(), storage.data_ptr() + storage.nbytes(), name))
        elif hasattr(value, "base") and hasattr(value.base, "untyped_storage"):
            visit(name, value.base)  # a tensor descriptor

    for name, value in zip(names, values):
        visit(name, value)
    return ranges


def _check(kind: str, addresses: Any, mask: Any, itemsize: int) -> None:
    import numpy as np

    ranges = getattr(_LAUNCH, "ranges", None)
    if not ranges:
        return
    active = np.asarray(addresses, dtype=np.uint64)[np.asarray(mask, dtype=bool)] \
        if np.ndim(mask) else (np.asarray(addresses, dtype=np.uint64).ravel()
                               if bool(mask) else np.zeros(0, dtype=np.uint64))
    if active.size == 0:
        return
    inside = _inside(active, itemsize, ranges)
    if inside.all():
        return
    # Kernels that load their operands' addresses from a table (cuBLAS's batched routines,
    # grouped GEMMs) reach tensors the launch was not passed: any live tensor's storage is
    # memory the kernel may touch, found once per launch, and only when it is needed.
    if not getattr(_LAUNCH, "searched", False):
        _LAUNCH.searched = True
        ranges.extend(_live_tensor_ranges())
        inside = _inside(active, itemsize, ranges)
        if inside.all():
            return
    outside = active[~inside]
    first = int(outside.flat[0])
    low, high, name = min(ranges, key=lambda r: min(abs(first - r[0]), abs(first - r[1])))
    where = (f"at byte {first - low} of '{name}', which holds {high - low}" if first >= low
             else f"{low - first} bytes before '{name}'")
    raise OutOfBoundsAccess(f"out-of-bounds {kind}: {outside.size} of {active.size} addresses lie "
                     f"outside every tensor passed to this launch; the first is {where} "
                     f"(a mask that lets lanes past the tensor's end through?)")


def _inside(active: Any, itemsize: int, ranges: list[tuple[int, int, str]]) -> Any:
    import numpy as np

    inside = np.zeros(active.shape, dtype=bool)
    for low, high, _ in ranges:
        inside |= (active >= low) & (active + itemsize <= high)
    return inside


def _live_tensor_ranges() -> list[tuple[int, int, str]]:
    """The storages of every CPU tensor alive in the process."""
    import gc

    import torch

    found: dict[int, tuple[int, int, str]] = {}
    for thing in gc.get_objects():
        # type(), not isinstance: a deprecated proxy answers __class__ with a warning.
        if issubclass(type(thing), torch.Tensor) and thing.device.type == "cpu":
            try:
                storage = thing.untyped_storage()
            except (RuntimeError, NotImplementedError):
                continue
            start = storage.data_ptr()
            if start:
                found[start] = (start, start + storage.nbytes(), "a tensor the launch reached "
                                                                 "through an address table")
    return list(found.values())


def _install_bounds(interpreter: Any) -> bool:
    executor = getattr(interpreter, "GridExecutor", None)
    builder = getattr(interpreter, "InterpreterBuilder", None)
    if executor is None or builder is None or not hasattr(executor, "_init_args_hst") or \
            not hasattr(builder, "create_masked_load") or \
            not hasattr(builder, "create_masked_store"):
        return False
    if getattr(builder.create_masked_load, "_kgb_bounds", False):
        return True
    import numpy as np

    init_args, load, store = (executor._init_args_hst, builder.create_masked_load,
                              builder.create_masked_store)

    def init_args_hst(self: Any, args_dev: Any, kwargs: Any) -> Any:
        args_hst, kwargs_hst = init_args(self, args_dev, kwargs)
        names = list(getattr(self, "arg_names", [])) or [f"#{i}" for i in range(len(args_hst))]
        _LAUNCH.ranges = (_ranges_of(names, list(args_hst))
                          + _ranges_of(list(kwargs_hst), list(kwargs_hst.values())))
        _LAUNCH.searched = False
        return args_hst, kwargs_hst

    def masked_load(self: Any, ptrs: Any, mask: Any, other: Any, *rest: Any) -> Any:
        element = interpreter._get_np_dtype(ptrs.get_element_ty())
        _check("load", ptrs.data, mask.data, np.dtype(element).itemsize)
        return load(self, ptrs, mask, other, *rest)

    def masked_store(self: Any, ptrs: Any, value: Any, mask: Any, *rest: Any) -> Any:
        _check("store", ptrs.data, mask.data, np.asarray(value.data).dtype.itemsize)
        return store(self, ptrs, value, mask, *rest)

    masked_load._kgb_bounds = True  # type: ignore[attr-defined]
    executor._init_args_hst = init_args_hst
    builder.create_masked_load = masked_load
    builder.create_masked_store = masked_store
    _install_atomic_bounds(builder)
    return True


def _install_atomic_bounds(builder: Any) -> None:
    """Read-modify-write and compare-and-swap atomics, checked as loads and stores are (an
    atomic's load and store go through the interpreter's C++, not create_masked_*)."""
    import numpy as np

    rmw = getattr(builder, "create_atomic_rmw", None)
    cas = getattr(builder, "create_atomic_cas", None)
    if rmw is not None:
        def atomic_rmw(self: Any, op: Any, ptr: Any, val: Any, mask: Any, *rest: Any) -> Any:
            _check("atomic", ptr.data, mask.data, np.asarray(val.data).dtype.itemsize)
            return rmw(self, op, ptr, val, mask, *rest)

        builder.create_atomic_rmw = atomic_rmw
    if cas is not None:
        def atomic_cas(self: Any, ptr: Any, cmp: Any, val: Any, *rest: Any) -> Any:
            _check("atomic", ptr.data, True, np.asarray(val.data).dtype.itemsize)
            return cas(self, ptr, cmp, val, *rest)

        builder.create_atomic_cas = atomic_cas
