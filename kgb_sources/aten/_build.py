"""Helpers shared by the ATen operator families: spec construction, kernel files, counts."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any, Callable, Sequence

from kgb_core.operators import FLOAT_DTYPES
from kgb_core.source_kit import KernelFiles, spec_factory

SOURCE = "aten"
KERNELS = KernelFiles(Path(__file__).parent / "kernels")
# bfloat16 is checked on GPUs only: the CPU backend skips it (see kgb_backends/cpu.py).
FLOATS = FLOAT_DTYPES
kernel_file = KERNELS.text  # the text of a shipped reference kernel, kernels/<name>.py
# A reference kernel made from kernels/<template>.py's __FIELD__ markers (unary math, binary
# arithmetic): a fix to the template fixes every op made from it.
from_template = KERNELS.template
# An ATen spec: OperatorSpec's fields; the reference kernel is kernels/<name>.py unless given.
aten_op = spec_factory(SOURCE, KERNELS, dtypes=FLOATS)


def numel(shape: Sequence[int]) -> int:
    return math.prod(shape)


def in_fp32(call: Callable[..., Any]) -> Callable[..., Any]:
    """call on fp32 copies of fp16/bf16 tensors, its result rounded once to the first
    argument's dtype: the rule the kernels are held to (fp32 accumulation, one rounding at the
    store), where the native half-precision call rounds intermediates (torch's CPU reductions,
    cuDNN's conv before its bias); each user says why in its spec. fp32 passes straight."""
    def wrapped(x, *args):  # noqa: ANN001, ANN002, ANN202
        import torch

        if x.dtype in (torch.float16, torch.bfloat16):
            args = tuple(a.float() if isinstance(a, torch.Tensor) else a for a in args)
            return call(x.float(), *args).to(x.dtype)
        return call(x, *args)

    wrapped.__name__ = f"{call.__name__}_fp32"
    return wrapped
