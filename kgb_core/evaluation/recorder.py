"""Which torch ops ran during a candidate's call: the detector of ``reference_used``.

A ``TorchDispatchMode`` sees every aten op the candidate's Python code causes, whatever name
it was reached by (``torch.relu``, ``x.relu()``, an alias, a wrapper). A candidate may allocate,
make views and copy data (staging inputs, converting dtypes); any other op means torch, not
the candidate's Triton kernel, computed something. The launch hook suspends the recorder while
a Triton kernel runs, since Triton's interpreter itself moves data with torch ops.
"""

from __future__ import annotations

import contextlib
from typing import Any

from torch._C import _len_torch_dispatch_stack
from torch.utils._python_dispatch import TorchDispatchMode, _disable_current_modes

# aten op names (overload packets) a candidate may cause: allocation, views, layout, copies,
# and reading sizes or one scalar.
ALLOWED_OPS = frozenset({
    "empty", "empty_like", "empty_strided", "new_empty", "new_empty_strided", "zeros",
    "zeros_like", "ones", "ones_like", "full", "full_like", "new_zeros", "new_ones", "new_full",
    "arange", "scalar_tensor", "lift_fresh", "lift_fresh_copy", "fill_", "zero_", "resize_",
    "view", "_unsafe_view", "reshape", "_reshape_alias", "as_strided", "permute", "transpose",
    "t", "expand", "slice", "select", "unsqueeze", "squeeze", "alias", "detach", "unflatten",
    "flatten", "split", "split_with_sizes", "unbind", "narrow", "movedim", "view_as_real",
    "view_as_complex", "diagonal", "unfold",
    "clone", "copy_", "_to_copy", "to", "contiguous", "_local_scalar_dense", "is_nonzero",
    "result_type", "sym_size", "sym_stride", "sym_numel", "sym_storage_offset", "dim",
    "size", "stride", "numel", "is_contiguous", "is_same_size",
})


class TorchOpRecorder(TorchDispatchMode):
    def __init__(self) -> None:
        super().__init__()
        self.forbidden: list[str] = []

    def __torch_dispatch__(self, func: Any, types: Any, args: Any = (), kwargs: Any = None) -> Any:
        name = func.overloadpacket.__name__ if hasattr(func, "overloadpacket") else str(func)
        if name not in ALLOWED_OPS and len(self.forbidden) < 20:
            self.forbidden.append(f"aten.{name}")
        return func(*args, **(kwargs or {}))


def suspended():  # noqa: ANN201 - a context manager
    """No dispatch mode while the harness's own code runs inside a candidate's call.

    Every Triton launch passes through here. While timing no mode is active, and popping and
    pushing an empty mode stack still cost the host about 5 us per launch: on a kernel of tens
    of microseconds that is host time the timer can see (benchmarks/RESULTS.md, issue 9).
    """
    if _len_torch_dispatch_stack() == 0:
        return contextlib.nullcontext()
    return _disable_current_modes()
