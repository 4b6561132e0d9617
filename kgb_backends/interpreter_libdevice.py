"""``triton.language.extra.libdevice`` for Triton's interpreter (a CPU-backend shim, issue 22).

In the interpreter every libdevice function is the stub the compiler replaces with the GPU's
library (``def erf(arg0): ...``): it returns None, and a correct kernel that calls
``libdevice.erf`` fails with "cannot convert None to tensor" (and ``extra.cuda.libdevice``'s,
builtins that need the compiler, raise). Published kernels call it
constantly (erf in GELU, tanh, rsqrt, pow). This module gives the stubs an implementation on
the interpreter's blocks, through torch on the host, computed in float64 and rounded once to
the operand's dtype: at least as accurate as the GPU's library, so a kernel that passes on a
GPU is not failed here for its libdevice calls. Only the floating-point math kernels use is
covered (``LIBDEVICE``); a stub not listed still returns None, and the CPU backend's quirks
say so.
"""

from __future__ import annotations

import math
from typing import Any, Callable

# name -> (number of operands, torch implementation on float64 tensors, returns a mask)
_UNARY: dict[str, Callable[[Any], Any]] = {
    "abs": lambda x: x.abs(), "acos": lambda x: x.acos(), "acosh": lambda x: x.acosh(),
    "asin": lambda x: x.asin(), "asinh": lambda x: x.asinh(), "atan": lambda x: x.atan(),
    "atanh": lambda x: x.atanh(), "cbrt": lambda x: x.sign() * x.abs().pow(1.0 / 3.0),
    "ceil": lambda x: x.ceil(), "cos": lambda x: x.cos(), "cosh": lambda x: x.cosh(),
    "cospi": lambda x: (math.pi * x).cos(), "erf": lambda x: x.erf(), "erfc": lambda x: x.erfc(),
    "erfinv": lambda x: x.erfinv(), "exp": lambda x: x.exp(), "exp2": lambda x: x.exp2(),
    "exp10": lambda x: 10.0 ** x, "expm1": lambda x: x.expm1(), "floor": lambda x: x.floor(),
    "lgamma": lambda x: x.lgamma(), "log": lambda x: x.log(), "log10": lambda x: x.log10(),
    "log1p": lambda x: x.log1p(), "log2": lambda x: x.log2(), "rint": lambda x: x.round(),
    "nearbyint": lambda x: x.round(), "round": lambda x: x.sign() * (x.abs() + 0.5).floor(),
    "rcbrt": lambda x: 1.0 / (x.sign() * x.abs().pow(1.0 / 3.0)), "rsqrt": lambda x: x.rsqrt(),
    "sin": lambda x: x.sin(), "sinh": lambda x: x.sinh(), "sinpi": lambda x: (math.pi * x).sin(),
    "sqrt": lambda x: x.sqrt(), "tan": lambda x: x.tan(), "tanh": lambda x: x.tanh(),
    "trunc": lambda x: x.trunc(), "normcdf": lambda x: 0.5 * (-x / math.sqrt(2.0)).erfc(),
    "saturatef": lambda x: x.clamp(0.0, 1.0),
}
_UNARY.update({"fast_" + name + "f": _UNARY[name]
               for name in ("exp", "log", "log2", "log10", "sin", "cos", "tan", "tanh",
                            "exp10")})
_UNARY.update({"sqrt_rn": _UNARY["sqrt"], "rsqrt_rn": _UNARY["rsqrt"]})
_MASKS: dict[str, Callable[[Any], Any]] = {
    "isnan": lambda x: x.isnan(), "isinf": lambda x: x.isinf(), "signbit": lambda x: x.signbit(),
    "finitef": lambda x: x.isfinite(), "isfinited": lambda x: x.isfinite(),
}
_BINARY: dict[str, Callable[[Any, Any], Any]] = {
    "pow": lambda x, y: x.pow(y), "fast_powf": lambda x, y: x.pow(y),
    "atan2": lambda x, y: x.atan2(y), "fmod": lambda x, y: x.fmod(y),
    "hypot": lambda x, y: x.hypot(y), "rhypot": lambda x, y: 1.0 / x.hypot(y),
    "copysign": lambda x, y: x.copysign(y), "fdim": lambda x, y: (x - y).clamp(min=0.0),
    "remainder": lambda x, y: x - (x / y).round() * y, "nextafter": lambda x, y: x.nextafter(y),
    "fast_dividef": lambda x, y: x / y, "div_rn": lambda x, y: x / y,
    "add_rn": lambda x, y: x + y, "sub_rn": lambda x, y: x - y, "mul_rn": lambda x, y: x * y,
}
_TERNARY: dict[str, Callable[[Any, Any, Any], Any]] = {
    "fma": lambda x, y, z: x * y + z, "fma_rn": lambda x, y, z: x * y + z,
}
LIBDEVICE = tuple(sorted({*_UNARY, *_MASKS, *_BINARY, *_TERNARY}))


def _operand(value: Any) -> tuple[Any, Any]:
    """(numpy data, the tl.tensor or None) of a libdevice operand: a block, a scalar tensor,
    a constexpr or a Python number."""
    import numpy as np
    import triton.language as tl

    if isinstance(value, tl.constexpr):
        value = value.value
    if isinstance(value, tl.tensor):
        return value.handle.data, value
    return np.asarray(value, dtype=np.float64), None


def _implementation(compute: Callable[..., Any], mask: bool) -> Callable[..., Any]:
    def call(*args: Any, **_: Any) -> Any:
        import numpy as np
        import torch
        import triton.language as tl
        from triton.runtime.interpreter import TensorHandle

        from kgb_backends.interpreter_bf16 import narrow, widen

        operands = [_operand(arg) for arg in args]
        tensors = [tensor for _, tensor in operands if tensor is not None]
        if not tensors:
            raise TypeError("libdevice needs a tensor operand")
        scalar = tensors[0].handle.dtype
        # A bf16 block's data are its bits (interpreter_bf16.py): its values are computed on.
        values = [widen(data) if tensor is not None and tensor.handle.dtype == tl.bfloat16
                  else data for data, tensor in operands]
        result = compute(*[torch.from_numpy(np.asarray(data, dtype=np.float64))
                           for data in values]).numpy()
        element = tl.int1 if mask else scalar
        if not mask and scalar == tl.bfloat16:
            data = narrow(result.astype(np.float32))
        else:
            data = result.astype(np.bool_ if mask else tensors[0].handle.data.dtype)
        blocks = [t for t in tensors if t.type.is_block()]
        kind = tl.block_type(element, list(data.shape)) if blocks else element
        return tl.tensor(TensorHandle(data, element), kind)

    return call


# The generic module (stubs the compiler replaces) and the vendors' own (builtins that need
# the compiler: in the interpreter they raise "_semantic argument must be provided").
MODULES = ("triton.language.extra.libdevice", "triton.language.extra.cuda.libdevice",
           "triton.language.extra.hip.libdevice")


def install() -> bool:
    """Give the libdevice modules' math functions an implementation on interpreter blocks."""
    import importlib
    import importlib.util

    if importlib.util.find_spec("triton.runtime.interpreter") is None:
        return False
    installed = False
    for module_name in MODULES:
        try:
            module = importlib.import_module(module_name)
        except ImportError:
            continue
        if not getattr(module, "_kgb_libdevice", False):
            tables = ((_UNARY, False), (_BINARY, False), (_TERNARY, False), (_MASKS, True))
            for table, mask in tables:
                for name, compute in table.items():
                    if hasattr(module, name):
                        setattr(module, name, _implementation(compute, mask))
            module._kgb_libdevice = True
        installed = True
    return installed
