"""What torch did during a candidate's call: the detectors of ``reference_used`` and ``host_read``.

Two modes are active for every call of the candidate, checked and timed alike (``Recording``):

- a ``TorchDispatchMode`` sees every aten op the candidate's Python code causes, whatever name it
  was reached by (``torch.relu``, ``x.relu()``, an alias, a wrapper). A candidate may allocate,
  make views and copy data (staging inputs, converting dtypes); any other op means torch, not the
  candidate's Triton kernel, computed something. It also counts the elements copied from a
  device to the host (``.cpu()``, ``.to("cpu")``, a ``copy_`` into a host tensor);
- a ``TorchFunctionMode`` sees the tensor methods that read values on the host without any aten
  op: ``numpy``, ``tolist``, ``item``, ``float(t)``, ``__array__``, ``__dlpack__``, the storage,
  ``repr``. A kernel may read a few scalars (sizes that steer a launch); past
  ``HOST_READ_BUDGET`` elements per call the values may be computed on the host, and the verdict
  is ``host_read``, whatever the Triton kernels did.

Threads a call starts record into the call too (``install_thread_recording``: torch's modes
are per thread). The modes cannot be switched off from inside unseen: the stacks must be empty
before the call (a mode pushed at import is ``tampering``), hold exactly these two at every
Triton launch (``LaunchCounter`` checks) and again when the call returns. Each launch suspends
both (``suspended``), since Triton's interpreter itself moves data with torch; the launch's grid
callable and pre-run hooks, which Triton would call inside, are called before the suspension
(``kgb_core.evaluation.launches``).
"""

from __future__ import annotations

import bisect
import contextlib
import functools
import linecache
import os
import sys
import threading
from typing import Any

import torch
from torch._C import DisableTorchFunction, _len_torch_dispatch_stack, _len_torch_function_stack
from torch.overrides import TorchFunctionMode
from torch.utils._python_dispatch import TorchDispatchMode

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
    # composites of views and copies, which torch's profiler names where the recorders see
    # only the views they become (and nothing at all when there is nothing to do)
    "broadcast_tensors", "broadcast_to", "expand_as", "view_as", "reshape_as", "type_as",
    "chunk", "tensor_split", "swapaxes", "swapdims", "moveaxis",
    "clone", "copy_", "_to_copy", "to", "contiguous", "_local_scalar_dense", "is_nonzero",
    "detach_", "resolve_conj", "resolve_neg", "_conj", "_neg_view",
    "result_type", "sym_size", "sym_stride", "sym_numel", "sym_storage_offset", "dim",
    "size", "stride", "numel", "is_contiguous", "is_same_size",
})

# Tensor values a call may read on the host, in elements: a few sizes or flags that steer a
# launch (a count read back to size an output), never an operand.
HOST_READ_BUDGET = 16


def _methods(*names: str) -> frozenset[Any]:
    return frozenset(getattr(torch.Tensor, name) for name in names if hasattr(torch.Tensor, name))


# Methods that read one value on the host, and methods that hand over every value.
_READS_ONE = _methods("item", "__float__", "__int__", "__bool__", "__index__", "__complex__")
_READS_ALL = _methods("numpy", "tolist", "__array__", "__dlpack__", "untyped_storage",
                      "storage", "_typed_storage", "__repr__", "__str__", "__format__",
                      "__reduce_ex__", "__getstate__")
_numel = torch.Tensor.numel


class StagedCopies:
    """Torch copies of the inputs that rearranged memory during a checked call, kept for the
    judge.

    A copy is how a kernel stages an input (``x.contiguous()``, ``x.t().contiguous()`` for a
    GEMM operand), so the op recorder allows it; but for an operator whose work is moving data
    (``t``, ``permute``, ``expand``) such a copy can be the whole answer, which a Triton kernel
    then only copies into the output. So each copy of the inputs' values (an input, or what a
    torch copy made of one, followed from storage to storage) whose source and destination are
    laid out differently (a transposed, strided or expanded view on either side) is kept, as
    made, for the judge to compare with the output: a kept copy that already held the answer
    means torch did the work (``reference_used``). Not kept:

    - copies between two contiguous layouts of one shape (a dtype conversion, a flat copy):
      they rearrange nothing;
    - copies of what the call allocated itself (``torch.empty`` and the like), such as a
      buffer a Triton kernel wrote in another layout and torch copies into the output's: the
      values are the kernels' (a softmax over dim 0 computed with the dim moved last). Unless
      the buffer holds an input's values, in order (``INPUT_RTOL``): then the kernel only
      copied the input, for torch to rearrange, and the buffer counts as the input's. A
      kernel that shuffled the input on the way is not told here from one that sorted it
      (but see ``moves_data``, below).

    A copy into part of a buffer (``buf[:, :half] = x[:half].t()``) holds only its part; pieces
    assembled so hold the answer together, however small each or plain (a roll made of copies
    between contiguous runs at shifted offsets). So such a buffer is kept whole too, as the
    next Triton launch finds it (what a kernel could read), or as the call leaves it (an
    output assembled after the last launch); the judge looks for the answer inside one up to
    four times its size (``checker._pitched``). Pieces in buffers of their own are not put
    together: where the operator only moves data, each piece alone is found out (below).

    For an operator that only moves data (``moves_data``: a transpose, a cat, a pad), torch's
    copies are judged by what they are, not by what they hold, since torch moving values *is*
    the operator there, and pieces small or laundered enough hold neither an input nor the
    answer (a buffer a Triton kernel filled with the input shuffled or scaled, rearranged by
    torch and undone by another kernel; the answer copied an element at a time). A copy is
    staging only when it copies an input as it is (the input's own view, or a staging copy of
    it) into a row-major destination, with room to spare or not (``x.contiguous()``,
    ``x.to(torch.float32)``, ``padded[:r, :c] = x``); a whole buffer may also be copied flat
    into another (a kernel's float32 result into the output). Any other copy, of any size, is
    named in ``moved`` and the judge gives ``reference_used``. A copy into a transposed view
    (``buf.t().copy_(x)``) is not staging: its memory is the answer.

    Kept at most ``budget`` bytes in all (staging needs about the inputs' size), and as much
    again for assembled buffers; a call that rearranges more of the inputs with torch is
    refused rather than half-checked. Checked calls only: a timed call keeps nothing, and its
    copies cost it time like any other work.
    """

    # The fewest elements a copy needs to be compared: a smaller one can match by chance.
    MIN_ELEMENTS = 16
    # How close a buffer the call allocated must be to an input, value for value in order and
    # relative to the input's largest, to hold that input's values: a copy is exact, a nudge
    # the operator's tolerance lets through is smaller, a computed result differs more.
    INPUT_RTOL = 1e-3

    def __init__(self, budget: int, inputs: Any = (), moves_data: bool = False) -> None:
        self.budget = budget
        self.moves_data = moves_data
        # Where the operator only moves data: the copies that moved it (their sites), and the
        # views that hold an input as it is (the inputs', then each staging copy's).
        self.moved: list[str] = []
        self.kept: list[torch.Tensor] = []
        self.sites: list[str] = []
        self.nbytes = 0
        self.assembled_nbytes = 0
        self.refused: str | None = None
        self.inputs = [t for t in inputs if isinstance(t, torch.Tensor)]
        # The storages that hold the inputs' values: the inputs', then each copy's of one.
        self.derived = {_storage_key(t) for t in self.inputs}
        # Buffers that copies of the inputs' values wrote in part, by storage: kept whole at
        # the next launch (at_launch), or at the call's end.
        self.assembling: dict[int, tuple[torch.Tensor, str]] = {}
        self.as_is = {_geometry(t) for t in self.inputs}

    def allocated(self, result: Any) -> None:
        """A new storage (at an address a freed copy may have had) holds no input's values."""
        if isinstance(result, torch.Tensor):
            key = _storage_key(result)
            self.derived.discard(key)
            self.as_is = {view for view in self.as_is if view[0] != key}

    def copied(self, name: str, args: Any, result: Any) -> None:
        if name in ("copy_", "fill_"):
            if len(args) < 2 or not isinstance(args[1], torch.Tensor):
                return
            source, made = args[1], args[0]
        else:
            source, made = args[0] if args else None, result
        if not isinstance(source, torch.Tensor) or not isinstance(made, torch.Tensor):
            return
        if self.moves_data:
            self._judge_move(name, source, made)
        rearranging = _numel(made) >= self.MIN_ELEMENTS and not (
            source.shape == made.shape and source.is_contiguous() and made.is_contiguous())
        if _storage_key(source) not in self.derived:
            if not (rearranging and self._holds_an_input(source)):
                if name != "copy_":
                    self.derived.discard(_storage_key(made))
                return
            self.derived.add(_storage_key(source))  # found once, not searched again
        key = _storage_key(made)
        self.derived.add(key)
        nbytes = _numel(made) * made.element_size()
        with suspended():
            whole = made.untyped_storage().nbytes()
        # Part of a buffer, by any copy, however small or plain (``b[o, s:] = a[o, :-s]`` rolls
        # by offset): the buffer is kept whole as the next launch finds it.
        partial = (nbytes < whole and whole >= self.MIN_ELEMENTS * made.element_size()
                   and key not in self.assembling)
        if not (partial or rearranging):
            return
        where = _copy_site(name)
        if partial:
            self.assembling[key] = (made, where)
        if not rearranging:
            return
        if self.nbytes + nbytes > self.budget:
            self.refused = self.refused or where
            return
        self.nbytes += nbytes
        with suspended():
            self.kept.append(made.detach().clone())
        self.sites.append(where)

    def wrote_in_place(self, name: str, made: Any) -> None:
        """For an operator that only moves data: ``zero_`` or a scalar ``fill_`` on part of a
        buffer that holds an input's values (a staged copy, clearing a triangle or writing a
        pad's border) assembles the answer there as a copy into part of it would, so the
        buffer is kept whole, as the next launch finds it or as the call leaves it."""
        if not self.moves_data or not isinstance(made, torch.Tensor):
            return
        key = _storage_key(made)
        if key not in self.derived or key in self.assembling:
            return
        self.assembling[key] = (made, _copy_site(name))

    def _judge_move(self, name: str, source: torch.Tensor, made: torch.Tensor) -> None:
        """For an operator that only moves data: a copy of an input as it is into a row-major
        destination, or one laid out as the input is, stages it (and the destination then
        holds the input as it is too); a whole buffer copied flat into another moves nothing;
        any other copy moved data."""
        with suspended():
            # Row-major, or laid out as the source is (``x.to(dtype)`` keeps a transposed
            # input's strides): either way the memory holds the input in an order it had.
            # Of the source's shape: a copy_ that broadcasts its source is an expand.
            if (_geometry(source) in self.as_is and made.shape == source.shape
                    and (_row_major(made) or made.stride() == source.stride())):
                self.as_is.add(_geometry(made))
                return
            if (_whole_and_flat(source) and _whole_and_flat(made)
                    and _numel(source) == _numel(made)):
                return
        if len(self.moved) < 20:
            self.moved.append(_copy_site(name))

    def at_launch(self, kernel_name: str) -> None:
        """Keep each buffer that copies wrote in part, whole, as this launch finds it (and, at
        the call's end, as the call leaves it: an output torch assembled after the last
        launch)."""
        assembling, self.assembling = self.assembling, {}
        for made, where in assembling.values():
            with suspended(), _RANGE(HARNESS_RANGE):
                nbytes = made.untyped_storage().nbytes()
                if self.assembled_nbytes + nbytes > self.budget:
                    self.refused = self.refused or f"the buffer {where} wrote into"
                    return
                self.assembled_nbytes += nbytes
                whole = made.detach().as_strided((nbytes // made.element_size(),), (1,), 0)
                self.kept.append(whole.clone())
            self.sites.append(f"the buffer {where} wrote into, as {kernel_name} found it"
                              if kernel_name else f"the buffer {where} wrote into, as the "
                                                  f"call left it")

    def _holds_an_input(self, tensor: torch.Tensor) -> bool:
        """Whether the memory under ``tensor`` (a view a copy is rearranging), from its first
        element to its last, holds one input's values in order: a Triton kernel copied the
        input there unchanged, for torch to rearrange. In order only: a kernel whose work is
        a permutation (a sort, a top-k) writes the input's values in another order, and torch
        may then copy them into the output's layout."""
        with suspended(), _RANGE(HARNESS_RANGE):
            span = _memory_span(tensor.detach())
            return span is not None and any(
                _numel(given) == _numel(span) and given.device == span.device
                and given.is_floating_point() == span.is_floating_point()
                and not given.is_complex() and not span.is_complex()
                and _same_values(span, given.detach().reshape(-1),
                                 self.INPUT_RTOL if given.is_floating_point() else 0.0)
                for given in self.inputs)


def _memory_span(tensor: torch.Tensor) -> torch.Tensor | None:
    """The elements from a view's first in memory to its last, as a flat tensor (None for an
    empty view)."""
    if _numel(tensor) == 0:
        return None
    extent = 1 + sum((size - 1) * abs(stride)
                     for size, stride in zip(tensor.shape, tensor.stride()) if size > 0)
    return tensor.as_strided((extent,), (1,), tensor.storage_offset())


def _same_values(made: torch.Tensor, given: torch.Tensor, rtol: float,
                 chunk: int = 1 << 22) -> bool:
    """Whether ``made`` holds ``given``'s values in order, each within ``rtol`` of the largest
    of them (so a nudge too small for the operator's tolerance to see is no escape); a chunk at
    a time, so a buffer that is no copy is told in its first."""
    wide = (torch.float64 if torch.float64 in (made.dtype, given.dtype)
            else torch.float32 if given.is_floating_point() else torch.int64)
    atol = rtol * float(given.abs().max().to(torch.float64)) if rtol else 0.0
    for start in range(0, _numel(given), chunk):
        if not torch.allclose(made[start:start + chunk].to(wide),
                              given[start:start + chunk].to(wide), rtol=0.0, atol=atol,
                              equal_nan=True):
            return False
    return True


def _geometry(tensor: torch.Tensor) -> tuple:
    """A view exactly: its memory, where it starts, its shape, strides and dtype."""
    return (_storage_key(tensor), tensor.storage_offset(), tuple(tensor.shape),
            tuple(tensor.stride()), tensor.dtype)


def _row_major(tensor: torch.Tensor) -> bool:
    """Whether a view reads its memory in its own order, rows at some pitch: each dim of more
    than one element steps over the whole of the dims after it, the last by one element."""
    span = 1
    for size, stride in reversed(list(zip(tensor.shape, tensor.stride()))):
        if size == 1:
            continue
        if stride < span or (span == 1 and stride != 1):
            return False
        span = stride * size
    return True


def _whole_and_flat(tensor: torch.Tensor) -> bool:
    """A contiguous view of the whole of its memory, from its start."""
    return (tensor.is_contiguous() and tensor.storage_offset() == 0
            and _numel(tensor) * tensor.element_size() == tensor.untyped_storage().nbytes())


def _storage_key(tensor: torch.Tensor) -> int:
    return tensor.untyped_storage().data_ptr()


def _dynamo_disabled_once_imported(dispatch: Any) -> Any:
    """``dispatch`` with TorchDynamo kept out of it, as torch keeps it out of every dispatch
    mode's ``__torch_dispatch__`` (``torch._disable_dynamo``), but without importing
    ``torch._dynamo`` while nothing has: torch's wrapper imports it on the first call, 1 s of
    every runner template's start (the CPU suite's judges start about 250 templates). Until
    ``torch._dynamo`` is imported nothing can be compiling, so ``dispatch`` runs as it is;
    after, through torch's wrapper, as before."""
    disabled = torch._disable_dynamo(dispatch, recursive=True)  # imports on its first call

    @functools.wraps(dispatch)
    def kept_out(*args: Any, **kwargs: Any) -> Any:
        if "torch._dynamo" in sys.modules:
            return disabled(*args, **kwargs)
        return dispatch(*args, **kwargs)

    return kept_out


class TorchOpRecorder(TorchDispatchMode):
    """aten ops other than allocation, views and copies; elements copied device to host; in a
    checked call, the copies that rearranged memory (``StagedCopies``)."""

    @classmethod
    def _should_skip_dynamo(cls) -> bool:
        # torch would wrap __torch_dispatch__ in its own _disable_dynamo; it is wrapped below
        # (_dynamo_disabled_once_imported), to the same effect, without the import
        return False

    def __init__(self, staged: StagedCopies | None = None, poisoned: bool = False) -> None:
        super().__init__()
        self.forbidden: list[str] = []
        # Where each of ``forbidden`` was called from: the candidate's line, for its author.
        self.sites: list[str] = []
        self.copied_to_host = 0
        self.staged = staged
        # Under ghost replay: every uninitialised allocation is filled with POISON_BYTE.
        self.poisoned = poisoned

    def __torch_dispatch__(self, func: Any, types: Any, args: Any = (), kwargs: Any = None) -> Any:
        kwargs = kwargs or {}
        name = func.overloadpacket.__name__ if hasattr(func, "overloadpacket") else str(func)
        if name not in ALLOWED_OPS and len(self.forbidden) < 20:
            self.forbidden.append(f"aten.{name}")
            self.sites.append(_caller_line())
        if name in ("_to_copy", "copy_"):
            self.copied_to_host += _to_host(name, args, kwargs)
        result = func(*args, **kwargs)
        if self.poisoned and name in _UNINITIALISED and isinstance(result, torch.Tensor):
            _poison(result)
        if self.staged is not None:
            if name in _COPIES:
                self.staged.copied(name, args, result)
            elif (name == "fill_" and self.staged.moves_data and len(args) > 1
                  and isinstance(args[1], torch.Tensor)):  # a value moved, as by copy_
                self.staged.copied(name, args, result)
            elif name in ("fill_", "zero_") and args:
                self.staged.wrote_in_place(name, args[0])
            elif name in _ALLOCATES:
                self.staged.allocated(result)
        return result


# The ops that copy values into a new layout: ``contiguous``, ``reshape`` of a strided view,
# ``to`` and slice assignment reach the dispatcher as these.
_COPIES = frozenset({"clone", "_to_copy", "copy_", "lift_fresh_copy"})
# The ops whose new storage holds whatever was there before.
_UNINITIALISED = frozenset({"empty", "empty_like", "empty_strided", "new_empty",
                            "new_empty_strided"})
# What ghost replay fills those with: every float dtype reads NaN (fp8 included), every
# integer -1, so an output no launch wrote never reads as a constant answer (zeros, say), as
# memory the device hands out fresh, or a block another allocation took first, could.
POISON_BYTE = 0xFF


def _poison(tensor: torch.Tensor) -> None:
    storage = tensor.untyped_storage()
    if storage.nbytes():
        with suspended(), _RANGE(HARNESS_RANGE):
            torch.empty(0, dtype=torch.uint8, device=tensor.device).set_(storage).fill_(
                POISON_BYTE)


# The ops whose result holds none of the inputs' values: a new storage, or (``out=``) one
# written through. Not ``resize_``: a resized storage keeps its values, and a no-op resize of a
# copy of the inputs must not make it look like the call's own.
_ALLOCATES = _UNINITIALISED | frozenset({
    "zeros", "zeros_like", "ones", "ones_like", "full", "full_like", "new_zeros", "new_ones",
    "new_full", "arange", "scalar_tensor"})


_NOT_THE_CANDIDATES_FILES = tuple(os.path.dirname(module.__file__) + os.sep
                                  for module in (torch, contextlib, threading)) + (
    os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep,)


def _copy_site(name: str) -> str:
    """``aten.copy_ (line N: source)``: the op, and the candidate's line that called it."""
    site = _caller_line()
    return f"aten.{name} ({site})" if site else f"aten.{name}"


def _caller_line() -> str:
    """``line N: source`` of the innermost frame outside torch, the standard library and kgb
    (the candidate's, in a runner), or "" where there is none."""
    frame = sys._getframe(2)
    while frame is not None:
        filename = frame.f_code.co_filename
        if not filename.startswith(_NOT_THE_CANDIDATES_FILES) and not filename.startswith("<"):
            source = linecache.getline(filename, frame.f_lineno).strip()
            return f"line {frame.f_lineno}: {source}" if source else f"line {frame.f_lineno}"
        frame = frame.f_back
    return ""


def _to_host(name: str, args: Any, kwargs: dict[str, Any]) -> int:
    """Elements this copy moves from a device to the host (0 for any other copy)."""
    if name == "_to_copy":
        source, target = args[0], kwargs.get("device")
        target_type = torch.device(target).type if target is not None else source.device.type
    else:
        if len(args) < 2 or not isinstance(args[1], torch.Tensor):
            return 0
        source, target_type = args[1], args[0].device.type
    if source.device.type != "cpu" and target_type == "cpu":
        return _numel(source)
    return 0


TorchOpRecorder.__torch_dispatch__ = _dynamo_disabled_once_imported(  # type: ignore[method-assign]
    TorchOpRecorder.__dict__["__torch_dispatch__"])


class HostReadRecorder(TorchFunctionMode):
    """Tensor methods that read values on the host, and how many values they read."""

    def __init__(self) -> None:
        super().__init__()
        self.elements = 0
        self.methods: list[str] = []

    def __torch_function__(self, func: Any, types: Any, args: Any = (), kwargs: Any = None) -> Any:
        if func in _READS_ONE or func in _READS_ALL:
            tensor = args[0] if args else None
            count = 1 if func in _READS_ONE or not isinstance(tensor, torch.Tensor) \
                else _numel(tensor)
            self.elements += count
            name = getattr(func, "__name__", "?")
            if name not in self.methods and len(self.methods) < 8:
                self.methods.append(name)
        return func(*args, **(kwargs or {}))


class _Active:
    """The recording of the call now running (None between calls), for threads it starts."""

    recording: "Recording | None" = None


ACTIVE = _Active()


def install_thread_recording() -> None:
    """Make every ``threading.Thread`` record its work into the call that started it: torch's
    modes are per thread, so work handed to a thread started during a call (and joined before
    the call returns, so that nothing is left running) would otherwise go unseen. Installed by
    the runner template before any candidate runs; the integrity guard then holds it."""
    original = threading.Thread.run
    if getattr(original, "_kgb_recorded", False):
        return

    @functools.wraps(original)
    def recorded_run(self: threading.Thread) -> None:
        call = ACTIVE.recording
        if call is None:
            return original(self)
        local = Recording(staged=call.ops.staged, poisoned=call.ops.poisoned)
        call.threads.append(local)
        with local:
            return original(self)

    recorded_run._kgb_recorded = True  # type: ignore[attr-defined]
    threading.Thread.run = recorded_run  # type: ignore[method-assign]


class Recording:
    """Both recorders around a candidate's calls, and the check that nothing else was pushed.

    ``tampered`` says what was wrong with the mode stacks, if anything: a mode left before the
    call (pushed at import or in an earlier call), or a stack the call changed. The stacks are
    emptied on the way out in every case, so the runner's own code never runs under a
    candidate's mode.
    """

    def __init__(self, counter: Any = None, profiled: bool = False,
                 staged: StagedCopies | None = None, poisoned: bool = False) -> None:
        self.ops = TorchOpRecorder(staged, poisoned)
        self.reads = HostReadRecorder()
        self.counter = counter
        self.tampered: str | None = None
        # The recordings of threads started during the call (install_thread_recording).
        self.threads: list[Recording] = []
        # The calls' profile at the dispatcher (OpProfile), around the modes: checked and timed
        # calls alike, or a timed call could tell itself apart by the profiler's absence.
        self.profile: OpProfile | None = OpProfile() if profiled else None

    def __enter__(self) -> "Recording":
        if self.profile is not None:
            self.profile.__enter__()
            if self.counter is not None:
                self.counter.profiling = True
        if _len_torch_dispatch_stack() or _len_torch_function_stack():
            self.tampered = "a torch mode was left on the stack (pushed at import or in an " \
                            "earlier call)"
            clear_modes()
        self.ops.__enter__()
        self.reads.__enter__()
        if self.counter is not None:
            self.counter.expected_modes = (1, 1)
            ACTIVE.recording = self
        return self

    def __exit__(self, *exc: Any) -> None:
        if self.counter is not None:
            self.counter.expected_modes = None
            ACTIVE.recording = None
        if (_len_torch_dispatch_stack(), _len_torch_function_stack()) == (1, 1):
            self.reads.__exit__(None, None, None)
            self.ops.__exit__(None, None, None)
        else:
            self.tampered = self.tampered or "the call changed torch's mode stack (a mode " \
                                             "pushed, or the recorder's removed)"
            clear_modes()
        if self.profile is not None:
            if self.counter is not None:
                self.counter.profiling = False
            self.profile.__exit__(None, None, None)

    def forbidden(self) -> list[str]:
        """aten ops other than allocation, views and copies, on the call's thread or its own."""
        return self.ops.forbidden + [op for thread in self.threads for op in thread.forbidden()]

    def forbidden_sites(self) -> list[str]:
        """``forbidden``, each with the candidate's line that called it where it is known."""
        own = [f"{op} ({site})" if site else op
               for op, site in zip(self.ops.forbidden, self.ops.sites)]
        return own + [op for thread in self.threads for op in thread.forbidden_sites()]

    def host_reads(self) -> int:
        """Elements read on the host: device-to-host copies and host reads of tensor values,
        on the call's thread and on those it started."""
        return (self.ops.copied_to_host + self.reads.elements
                + sum(thread.host_reads() for thread in self.threads))

    def host_read_message(self, calls: int = 1) -> str | None:
        """Why the reads exceed the budget (``calls`` calls recorded), or None."""
        if self.host_reads() <= HOST_READ_BUDGET * max(calls, 1):
            return None
        how = ", ".join(self.reads.methods + (["device-to-host copies"]
                                              if self.ops.copied_to_host else []))
        per_call = "" if calls <= 1 else f" over {calls} calls"
        return (f"kernel(...) read {self.host_reads()} tensor values on the host{per_call} "
                f"({how}); a call may read at most {HOST_READ_BUDGET} (sizes that steer a "
                f"launch), or the values may be computed there rather than by its Triton kernels")


LAUNCH_RANGE = "kgb::launch"  # the profiler range each Triton launch runs in (launches.py)
# The range the runner's own work between timed calls runs in (new input values, TimedCalls).
HARNESS_RANGE = "kgb::harness"
_NOT_THE_CANDIDATES = (LAUNCH_RANGE, HARNESS_RANGE)


# The C++ range (about 0.8 us a launch on the host, where record_function's op dispatch cost
# about 8 us), looked up once: every launch of a timed call enters one; record_function where
# a torch lacks it.
_RANGE = getattr(torch._C._profiler, "_RecordFunctionFast", None) or \
    torch.autograd.profiler.record_function


def profile_range(name: str, counter: Any):  # noqa: ANN201 - a context manager
    """A profiler range named ``name`` while ``counter``'s calls are profiled (OpProfile);
    nothing otherwise."""
    if not getattr(counter, "profiling", False):
        return contextlib.nullcontext()
    return _RANGE(name)


class OpProfile:
    """The aten ops of a call, checked or timed, as torch's profiler saw them, at the dispatcher
    (its RecordFunction callbacks), where no Python mode stack can switch them off: a candidate
    that computes inside ``_disable_current_modes()`` or ``DisableTorchDispatch`` hides from
    the recorders but not from this. Ops inside a Triton launch (the interpreter's own data
    movement, in ``LAUNCH_RANGE``), the runner's own work between timed calls (in
    ``HARNESS_RANGE``) and ops nested in another op are not the candidate's.
    ``broken`` says why the profile could not be read (a candidate that stopped it)."""

    def __init__(self) -> None:
        from torch.autograd import profiler

        self._profile = profiler.profile(use_cpu=True)
        self.broken: str | None = None

    def __enter__(self) -> "OpProfile":
        self._profile.__enter__()
        return self

    def __exit__(self, *exc: Any) -> None:
        try:
            self._profile.__exit__(None, None, None)
        except Exception as error:  # the candidate stopped or replaced the profiler
            self.broken = f"{type(error).__name__}: {error}"

    def forbidden(self) -> list[str]:
        """aten ops the candidate's own code caused, other than allocation, views, copies.

        Read from the profiler's raw events (``kineto_results``), not its ``function_events``:
        building those is Python work per event, about 0.2 ms each, and a timed case's ~2000
        calls make some 20000 events (its flush, its new input values, the candidate's ops):
        1 to 4 s of host time per timed case, most of a timed sweep's time on the H100
        (benchmarks/results/h100-profile-11237ad.txt).
        """
        if self.broken is not None:
            return []
        try:
            events = self._profile.kineto_results.events()
        except Exception as error:
            self.broken = f"{type(error).__name__}: {error}"
            return []
        return _forbidden_in(events)


def _forbidden_in(events: Any) -> list[str]:
    """The candidate's forbidden aten ops among a profile's raw events (at most 20).

    An op inside a ``LAUNCH_RANGE`` or ``HARNESS_RANGE`` on its thread (its interval within
    the range's, as torch's ``function_events`` nests them) is not the candidate's. An op that
    only decomposes into others (CompositeImplicitAutograd: linear into addmm, item into
    _local_scalar_dense) is judged by those, as the dispatch recorder, which never sees it,
    judges them; any other op computes, whatever it calls inside (sum's as_strided and fill_,
    cumsum's to): taking every op with an inner op for a hand-off let torch.cumsum through
    under switched-off modes (tests/adversarial/modes_off_op_with_view_children.py).

    Only the name of most events is read: a timed case's 20000 events cost about 30 ms.
    """
    ranges: list[Any] = []
    suspects: list[tuple[Any, str]] = []
    for event in events:
        name = event.name()
        if name in _NOT_THE_CANDIDATES:
            ranges.append(event)
        elif name.startswith(_ATEN) and name[6:] not in ALLOWED_OPS:
            suspects.append((event, name))
    if not suspects:
        return []
    from torch.autograd import DeviceType

    def synchronous(event: Any) -> bool:
        return event.device_type() == DeviceType.CPU and not event.is_async() and \
            event.start_thread_id() == event.end_thread_id()

    # Per thread, the outermost ranges' intervals, sorted (nested ranges merge into them).
    outermost: dict[int, tuple[list[int], list[int]]] = {}
    spans: dict[int, list[tuple[int, int]]] = {}
    for event in filter(synchronous, ranges):
        spans.setdefault(event.start_thread_id(), []).append((event.start_ns(), event.end_ns()))
    for thread, intervals in spans.items():
        starts: list[int] = []
        ends: list[int] = []
        for start, end in sorted(intervals):
            if ends and start < ends[-1]:
                ends[-1] = max(ends[-1], end)
            else:
                starts.append(start)
                ends.append(end)
        outermost[thread] = (starts, ends)
    found: list[str] = []
    for event, name in suspects:
        if not synchronous(event):
            continue
        starts, ends = outermost.get(event.start_thread_id(), ((), ()))
        start = event.start_ns()
        index = bisect.bisect_right(starts, start) - 1
        if index >= 0 and event.end_ns() <= ends[index]:
            continue  # the harness's own work, or inside a launch
        overload = getattr(event, "overload_name", lambda: "")() or ""
        if not _decomposes(name, overload):
            found.append(f"aten.{name[6:]}")
            if len(found) == 20:
                break
    return found


_ATEN = "aten::"


@functools.lru_cache(maxsize=None)
def _decomposes(name: str, overload: str) -> bool:
    """Whether the op ``name`` (``aten::linear``), of this overload, is CompositeImplicitAutograd:
    torch runs it as other ops, which the profile holds too."""
    try:
        return bool(torch._C._dispatch_has_kernel_for_dispatch_key(
            f"{name}.{overload}" if overload else name, "CompositeImplicitAutograd"))
    except Exception:  # an op torch's dispatcher does not know by that name
        return False


def clear_modes() -> None:
    """Pop every torch function and dispatch mode: the runner's code runs under none."""
    from torch.overrides import _pop_mode as pop_function_mode
    from torch.utils._python_dispatch import _pop_mode as pop_dispatch_mode

    while _len_torch_function_stack():
        pop_function_mode()
    while _len_torch_dispatch_stack():
        pop_dispatch_mode()


def modes_depth() -> tuple[int, int]:
    """(dispatch modes, torch function modes) on the stacks now."""
    return _len_torch_dispatch_stack(), _len_torch_function_stack()


def suspended():  # noqa: ANN201 - a context manager
    """No mode while the harness's own code runs inside a candidate's call.

    Every Triton launch passes through here, timed ones included, so it is cheap: torch's C++
    guards that skip Python dispatch and torch-function handling, about 0.8 us on the host,
    where popping and re-pushing the modes cost about 8 us, host time the timer saw on
    kernels of tens of microseconds (benchmarks/RESULTS.md, 2026-12-05). Without a mode on
    either stack it costs nothing.
    """
    if not _len_torch_dispatch_stack() and not _len_torch_function_stack():
        return contextlib.nullcontext()
    return _Suspension()


class _Suspension:
    __slots__ = ("_dispatch", "_function")

    def __enter__(self) -> None:
        self._dispatch = torch._C._DisableTorchDispatch()
        self._function = DisableTorchFunction()
        self._dispatch.__enter__()
        self._function.__enter__()

    def __exit__(self, *exc: Any) -> None:
        self._function.__exit__(None, None, None)
        self._dispatch.__exit__(None, None, None)
