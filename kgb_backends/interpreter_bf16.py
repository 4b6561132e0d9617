"""bf16 arithmetic in Triton's interpreter, done as the hardware does it (issue 22).

The interpreter keeps a bf16 block as its raw bits in a numpy ``uint16`` array (numpy has no
bf16) and hands those bits to numpy's arithmetic as if they were integers: ``a * b + a`` on two
bf16 blocks came out near 1e37, ``tl.dot`` of bf16 tiles near 3e10, a max over negative values
picked the wrong one, and a bf16 block cast to an int or to fp64 was its bit pattern. Only the
casts between bf16 and fp32 were right. So the CPU backend skipped every bf16 case, and every
bf16 path of a candidate went unchecked on the embedded default.

This shim wraps the interpreter builder's arithmetic at the points every operation passes
through (``binary_op``, ``unary_op``, ``ternary_op``, ``create_fma``, ``create_erf``,
``create_rsqrt``, ``create_dot``, ``cast_impl``) and the reductions and scans that compute
without the builder (max, min, argmax, argmin, sum, cumsum, cumprod): a bf16 operand is widened
to fp32 exactly (its bits shifted left by 16), the operation is computed in fp32, and a bf16
result is rounded back to bf16 (round to nearest, ties to even, NaN kept a NaN) after every
operation, as a GPU computing bf16 through fp32 registers does. Comparisons come back as
booleans, untouched.

Atomics on bf16 memory went to the interpreter's C++, which added the bit patterns as
integers: ``tl.atomic_add`` and ``tl.atomic_xchg`` on bf16 are done here lane by lane (the
interpreter runs one program at a time, so one lane after another is atomic); Triton refuses
the other read-modify-write atomics on bf16 anyway (``atomic_max does not support bf16``), and
one reaching the interpreter would raise here, never compute on bits. ``tl.dot_scaled`` widens
its operands itself in the interpreter and is left alone (not measured here).
"""

from __future__ import annotations

from typing import Any, Callable

import numpy as np



def widen(bits: np.ndarray) -> np.ndarray:
    """bf16 bits (uint16) as fp32 values: exact, bf16 being fp32's upper half."""
    return (np.asarray(bits, dtype=np.uint16).astype(np.uint32) << np.uint32(16)).view(np.float32)


def narrow(values: Any) -> np.ndarray:
    """fp32 values rounded to bf16 bits (uint16): to nearest, ties to even; a NaN stays a
    (quiet) NaN of the same sign, an infinity an infinity."""
    bits = np.asarray(values, dtype=np.float32).view(np.uint32)
    rounding = np.uint32(0x7FFF) + ((bits >> np.uint32(16)) & np.uint32(1))
    rounded = ((bits.astype(np.uint64) + rounding) >> np.uint64(16)).astype(np.uint16)
    nan = np.isnan(np.asarray(values, dtype=np.float32))
    if nan.any():
        quiet = ((bits >> np.uint32(16)) | np.uint32(0x0040)).astype(np.uint16)
        rounded = np.where(nan, quiet, rounded)
    return rounded


def install(interpreter: Any) -> bool:
    """Wrap the interpreter's builder, reductions and scans; False where this Triton's
    interpreter lacks a hook (nothing is then changed)."""
    import triton.language as tl

    builder = getattr(interpreter, "InterpreterBuilder", None)
    handle_type = getattr(interpreter, "TensorHandle", None)
    reduce_ops = getattr(interpreter, "ReduceOps", None)
    scan_ops = getattr(interpreter, "ScanOps", None)
    methods = ("binary_op", "unary_op", "ternary_op", "create_fma", "create_erf",
               "create_rsqrt", "create_dot", "cast_impl")
    if builder is None or handle_type is None or reduce_ops is None or scan_ops is None or \
            not all(hasattr(builder, name) for name in methods) or \
            not all(hasattr(reduce_ops, name) for name in ("min_max", "sum", "to_tensor")) or \
            not all(hasattr(scan_ops, name) for name in ("cumsum", "cumprod")):
        return False
    if getattr(builder, "_kgb_bf16", False):
        return True
    bf16 = tl.bfloat16

    def is_bf16(handle: Any) -> bool:
        return getattr(getattr(handle, "dtype", None), "scalar", None) == bf16

    def data_of(handle: Any) -> np.ndarray:
        return widen(handle.data) if is_bf16(handle) else handle.data

    def result(values: np.ndarray, like: Any) -> Any:
        """A bf16 operation's result: booleans as they are, numbers rounded to bf16."""
        if np.asarray(values).dtype == np.bool_:
            return handle_type(values, like.dtype.scalar)
        return handle_type(narrow(values), bf16)

    def elementwise(original: Callable[..., Any]) -> Callable[..., Any]:
        """binary_op / ternary_op: (self, *operands, op), the result typed like the last."""
        def wrapped(self: Any, *args: Any) -> Any:
            *operands, op = args
            if not any(is_bf16(h) for h in operands):
                return original(self, *args)
            return result(op(*[data_of(h) for h in operands]), operands[-1])
        return wrapped

    def unary(original: Callable[..., Any]) -> Callable[..., Any]:
        def wrapped(self: Any, arg: Any, op: Any) -> Any:
            if not is_bf16(arg):
                return original(self, arg, op)
            return result(op(widen(arg.data)), arg)
        return wrapped

    def through_fp32(original: Callable[..., Any]) -> Callable[..., Any]:
        """A builder method of bf16 operands, computed on their fp32 widening and rounded."""
        def wrapped(self: Any, *handles: Any) -> Any:
            if not any(is_bf16(h) for h in handles):
                return original(self, *handles)
            wide = [handle_type(widen(h.data), tl.float32) if is_bf16(h) else h
                    for h in handles]
            out = original(self, *wide)
            return handle_type(narrow(out.data), bf16) if is_bf16(handles[-1]) else out
        return wrapped

    original_dot = builder.create_dot

    def create_dot(self: Any, a: Any, b: Any, d: Any, *rest: Any) -> Any:
        if not (is_bf16(a) or is_bf16(b) or is_bf16(d)):
            return original_dot(self, a, b, d, *rest)
        wide = [handle_type(widen(h.data), tl.float32) if is_bf16(h) else h for h in (a, b, d)]
        out = original_dot(self, *wide, *rest)
        return handle_type(narrow(out.data), bf16) if is_bf16(d) else out

    original_cast = builder.cast_impl

    def cast_impl(self: Any, src: Any, dst_type: Any) -> Any:
        source, target = src.dtype.scalar, dst_type.scalar
        if source != bf16 and target != bf16:
            return original_cast(self, src, dst_type)
        if source == target:
            return handle_type(src.data, target)
        values = widen(src.data) if source == bf16 else src.data
        if target == bf16:  # the compiler rounds to nearest even, from any type
            return handle_type(narrow(np.asarray(values).astype(np.float32)), bf16)
        return handle_type(np.asarray(values).astype(interpreter._get_np_dtype(target)),
                           target)

    builder.binary_op = elementwise(builder.binary_op)
    builder.ternary_op = elementwise(builder.ternary_op)
    builder.unary_op = unary(builder.unary_op)
    for name in ("create_fma", "create_erf", "create_rsqrt"):
        setattr(builder, name, through_fp32(getattr(builder, name)))
    builder.create_dot = create_dot
    builder.cast_impl = cast_impl
    if hasattr(builder, "create_atomic_rmw") and hasattr(interpreter, "_interpreter"):
        builder.create_atomic_rmw = _atomic_rmw(builder.create_atomic_rmw, interpreter,
                                                handle_type, is_bf16)
    _install_reductions(reduce_ops, scan_ops, bf16)
    builder._kgb_bf16 = True
    return True


def _atomic_rmw(original: Callable[..., Any], interpreter: Any, handle_type: Any,
                is_bf16: Callable[[Any], bool]) -> Callable[..., Any]:
    """create_atomic_rmw with bf16 values: add and exchange on the values, one lane after
    another (two lanes on one address each see the other's write, as atomics do)."""
    native = interpreter._interpreter

    def atomic_rmw(self: Any, op: Any, ptr: Any, val: Any, mask: Any, *rest: Any) -> Any:
        if not is_bf16(val):
            return original(self, op, ptr, val, mask, *rest)
        name = str(getattr(op, "name", op)).rsplit(".", 1)[-1].upper()
        if name not in ("FADD", "XCHG"):
            raise NotImplementedError(
                f"atomic {name.lower()} on bf16 memory cannot run in Triton's interpreter on "
                f"the CPU backend (it would compare bit patterns as integers); it runs on GPUs")
        addresses = np.asarray(ptr.data, dtype=np.uint64)
        values = np.broadcast_to(np.asarray(val.data, dtype=np.uint16), addresses.shape)
        active = np.broadcast_to(np.asarray(mask.data, dtype=bool), addresses.shape)
        old = np.zeros(addresses.shape, dtype=np.uint16)
        for index in np.ndindex(addresses.shape):
            if not active[index]:
                continue
            where = addresses[index].reshape(1)
            one = np.ones(1, dtype=bool)
            bits = native.load(where, one, np.zeros(1, dtype=np.uint16), np.dtype(np.uint16))
            old[index] = bits[0]
            new = values[index] if name == "XCHG" else \
                narrow(widen(bits) + widen(values[index].reshape(1)))[0]
            native.store(where, np.asarray([new], dtype=np.uint16), one)
        return handle_type(old, val.dtype.scalar)

    return atomic_rmw


def _install_reductions(reduce_ops: Any, scan_ops: Any, bf16: Any) -> None:
    """max/min/argmax/argmin/sum and cumsum/cumprod of a bf16 block: on its values, not bits.
    A sum is rounded to bf16 once, at the end; a GPU adds bf16 in a tree, rounding each step
    (``tl.sum`` keeps a float's dtype), so here a bf16 accumulation is closer to the reference
    than on a GPU, never further."""
    original_min_max = reduce_ops.min_max

    def min_max(self: Any, input: Any, val_reduce_op: Any, idx_reduce_op: Any = None) -> Any:
        value = input[0] if isinstance(input, tuple) else input
        if value.dtype.scalar != bf16:
            return original_min_max(self, input, val_reduce_op, idx_reduce_op)
        data = widen(value.handle.data)
        found = []
        if val_reduce_op:
            found.append(self.to_tensor(narrow(val_reduce_op(data, axis=self.axis,
                                                             keepdims=self.keep_dims)),
                                        value.dtype))
        if idx_reduce_op:
            import triton.language as tl

            found.append(self.to_tensor(idx_reduce_op(data, axis=self.axis,
                                                      keepdims=self.keep_dims), tl.int32))
        if not found:
            raise ValueError("val_reduce_op and idx_reduce_op are both None")
        return tuple(found) if len(found) == 2 else found[0]

    def widened(original: Callable[..., Any], numpy_op: Callable[..., Any],
                scan: bool) -> Callable[..., Any]:
        def wrapped(self: Any, input: Any) -> Any:
            if input.dtype.scalar != bf16:
                return original(self, input)
            data = widen(input.handle.data)
            if scan:
                return [self.to_tensor(narrow(numpy_op(data, axis=self.axis)), input.dtype)]
            return self.to_tensor(narrow(numpy_op(data, axis=self.axis, keepdims=self.keep_dims)),
                                  input.dtype)
        return wrapped

    reduce_ops.min_max = min_max
    reduce_ops.sum = widened(reduce_ops.sum, np.sum, scan=False)
    scan_ops.cumsum = widened(scan_ops.cumsum, np.cumsum, scan=True)
    scan_ops.cumprod = widened(scan_ops.cumprod, np.cumprod, scan=True)
