"""One KernelBench-format problem file: load it, scale its sizes, draw its values, run it.

Runs in the problem host only (``kgb_source_kernelbench.host``, a sandboxed process): loading a
problem file runs it, and neither the harness nor the judge ever runs a problem's code.

A problem file defines ``class Model(nn.Module)``, ``get_inputs()`` and ``get_init_inputs()``,
and module-level integers (``batch_size = 16``, ``dim = 16384``) that those functions read when
called. Those integers are a case's parameters: the ``large`` case uses them as written; the
``small`` case (and the held-out one) sets them scaled down before calling the functions, so
that Triton's interpreter runs the case in seconds. Integers up to ``KEEP_UP_TO`` (kernel
sizes, strides, a dim index, a handful of channels) are kept; larger ones are divided by one
common power of two until every tensor of the case holds at most ``SMALL_ELEMENTS`` values, no
smaller than ``MIN_SCALED``, and an odd size stays odd (odd sizes are where masks go wrong).
"""

from __future__ import annotations

import importlib.util
import inspect
import itertools
import sys
from types import ModuleType
from typing import Any

import torch

from kgb_core.api import describe_value

KEEP_UP_TO = 16
MIN_SCALED = 8
SMALL_ELEMENTS = 1 << 16
# Where no scaling fits SMALL_ELEMENTS, the least that fits this (still seconds in Triton's
# interpreter for one case).
SMALL_CAP = 1 << 18
# The held-out case: each scaled size grown by about this fraction (an even step: parity kept).
HELDOUT_GROWTH = 0.25

_numbers = itertools.count(1)


class ProblemError(Exception):
    """The file is no problem kgb can run, and why (shown by ``kgb ops``)."""


def load(path: str) -> ModuleType:
    """Run the problem file as a fresh module; it must define the three names."""
    name = f"kgb_problem_{next(_numbers)}"
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise ProblemError(f"cannot import {path}")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    missing = [n for n in ("Model", "get_inputs", "get_init_inputs")
               if not callable(getattr(module, n, None))]
    if missing:
        raise ProblemError(f"defines no {', '.join(missing)} (KernelBench's format: class "
                           f"Model(nn.Module), get_inputs(), get_init_inputs())")
    return module


def _is_size(value: Any) -> bool:
    """An integer, or a tuple of integers (``input_shape = (4096,)``, ``kernel_size = (3, 5)``)."""
    if type(value) is int:
        return True
    return type(value) is tuple and bool(value) and all(type(v) is int for v in value)


def sizes(module: ModuleType) -> dict[str, Any]:
    """The module-level sizes, in the file's order (booleans are no sizes); tuples as lists,
    so that a case's parameters are JSON."""
    return {name: list(value) if isinstance(value, tuple) else value
            for name, value in vars(module).items()
            if not name.startswith("_") and _is_size(value)}


def _scaled_one(value: int, divisor: int, keep: int = KEEP_UP_TO) -> int:
    if abs(value) <= keep or divisor == 1:
        return value
    new = max(MIN_SCALED, round(value / divisor))
    if new % 2 != value % 2:
        new += 1
    return min(new, value)


def scaled(params: dict[str, Any], divisor: int, keep: int = KEEP_UP_TO) -> dict[str, Any]:
    return {name: [_scaled_one(v, divisor, keep) for v in value] if isinstance(value, list)
            else _scaled_one(value, divisor, keep) for name, value in params.items()}


def _grown_one(value: int, original: int) -> int:
    return value + 2 * max(1, round(value * HELDOUT_GROWTH / 2)) if value != original else value


def grown(params: dict[str, Any], shown: dict[str, Any]) -> dict[str, Any]:
    """The held-out case: every size the small case scaled, grown by an even step."""
    return {name: [_grown_one(v, o) for v, o in zip(value, params[name])]
            if isinstance(value, list) else _grown_one(value, params[name])
            for name, value in shown.items()}


def set_sizes(module: ModuleType, params: dict[str, Any]) -> None:
    for name, value in params.items():
        setattr(module, name, tuple(value) if isinstance(value, list) else value)


def build(module: ModuleType, params: dict[str, int], seed: int) -> tuple[list, Any, list]:
    """(inputs, model, constructor arguments) for a case, drawn from ``seed`` as KernelBench
    draws them (the global generator seeded, the model built, then its inputs)."""
    set_sizes(module, params)
    torch.manual_seed(seed)
    init = list(module.get_init_inputs())
    model = module.Model(*init)
    inputs = list(module.get_inputs())
    return inputs, model, init


def tensors(value: Any) -> list[torch.Tensor]:
    if isinstance(value, torch.Tensor):
        return [value]
    if isinstance(value, (list, tuple)):
        return [t for item in value for t in tensors(item)]
    if isinstance(value, dict):
        return [t for item in value.values() for t in tensors(item)]
    return []


def state(model: Any) -> dict[str, torch.Tensor]:
    return dict(model.state_dict(keep_vars=True))


class _Trace(torch.utils._python_dispatch.TorchDispatchMode):
    """The largest number of terms any op of the forward sums into one output: the
    ``reduce_dim`` that scales atol (matmul's K, a convolution's window, a sum's extent).

    Only sums, as kgb's ATen operators do: a result whose scale does not grow with the terms (a
    mean, a softmax, a normalisation, a norm) keeps atol unscaled, since 1e-4 x N would let an
    all-zero softmax row of 4096 values pass (reductions.py, softmax.py, normalization.py of
    kgb_sources/aten say the same)."""

    _MATMULS = {"mm": 0, "bmm": 0, "addmm": 1, "baddbmm": 1, "addbmm": 1, "matmul": 0,
                "linear": 0, "addmv": 1, "mv": 0, "dot": 0, "vdot": 0}
    _ATTENTION = {"_scaled_dot_product_flash_attention_for_cpu",
                  "_scaled_dot_product_efficient_attention",
                  "_scaled_dot_product_flash_attention", "_scaled_dot_product_cudnn_attention"}
    _SUMS = {"sum", "nansum", "cumsum", "trace"}

    def __init__(self) -> None:
        super().__init__()
        self.terms = 1

    def __torch_dispatch__(self, func: Any, types: Any, args: Any = (), kwargs: Any = None) -> Any:
        kwargs = kwargs or {}
        out = func(*args, **kwargs)
        try:
            self.terms = max(self.terms, self._terms(func.overloadpacket.__name__, args, out))
        except Exception:  # noqa: BLE001 - an op whose arguments are not as expected adds nothing
            pass
        return out

    def _terms(self, name: str, args: Any, out: Any) -> int:
        first = args[0] if args and isinstance(args[0], torch.Tensor) else None
        if name in self._MATMULS:
            return int(args[self._MATMULS[name]].shape[-1])
        if name in self._ATTENTION:
            return int(args[1].shape[-2])  # the keys each output row sums over
        if name in ("convolution", "_convolution", "convolution_overrideable"):
            weight = args[1]
            transposed = bool(args[6]) if len(args) > 6 else False
            return int(weight.numel() // max(1, weight.shape[1 if transposed else 0]))
        if name == "cumsum" and first is not None:
            return int(first.shape[int(args[1])]) if first.dim() else 1
        if name in self._SUMS and first is not None:
            result = tensors(out)
            return int(first.numel() // max(1, result[0].numel())) if result else 1
        return 1


def trace(module: ModuleType, params: dict[str, int], device: str = "meta") -> dict[str, Any]:
    """Run one case on ``device`` (``meta``: shapes only, no memory, no time) and say what it
    holds: the largest tensor, the counts a report's roofline needs (estimates), the terms
    accumulated into one output."""
    from torch.utils.flop_counter import FlopCounterMode

    with torch.device(device):
        inputs, model, init = build(module, params, 0)
        counter, terms = FlopCounterMode(display=False), _Trace()
        with torch.no_grad(), counter, terms:
            out = model(*inputs)
    everything = tensors(inputs) + list(state(model).values()) + tensors(out)
    moved = sum(t.numel() * t.element_size() for t in everything)
    largest = max((t.numel() for t in everything), default=0)
    outputs = tensors(out)
    return {"largest": largest, "flops": float(max(counter.get_total_flops(),
                                                   sum(t.numel() for t in outputs))),
            "bytes": float(moved), "reduce_dim": terms.terms}


def small_params(module: ModuleType, params: dict[str, Any]
                 ) -> tuple[dict[str, Any], dict[str, Any] | None, str]:
    """The small case's sizes and their trace, or the reason the problem cannot be scaled: the
    least scaling whose largest tensor holds at most ``SMALL_ELEMENTS`` values; where none does
    (a 5-D convolution whose every dimension is at its floor), the smallest that traces, up to
    ``SMALL_CAP`` values."""
    if scaled(params, 1 << 20) == params:
        return params, None, "its shapes are not read from module-level integers"
    tried: list[tuple[dict[str, Any], dict[str, Any]]] = []
    why = ""
    # Sizes up to KEEP_UP_TO kept first; where nothing fits, those above MIN_SCALED scaled too
    # (a 5-D convolution's batch of 16).
    for keep in (KEEP_UP_TO, MIN_SCALED):
        for power in range(1, 21):
            candidate = scaled(params, 1 << power, keep)
            if tried and candidate == tried[-1][0]:
                break
            try:
                counts = trace(module, candidate)
            except Exception as error:  # noqa: BLE001 - a size the model refuses: scale on
                why = f" ({type(error).__name__}: {str(error)[:160]})"
                continue
            if counts["largest"] <= SMALL_ELEMENTS:
                return candidate, counts, ""
            tried.append((candidate, counts))
    fitting = [entry for entry in tried if entry[1]["largest"] <= SMALL_CAP]
    if fitting:
        return (*min(fitting, key=lambda entry: entry[1]["largest"]), "")
    return params, None, f"no scaling of its module-level sizes fits {SMALL_CAP} elements{why}"


def signature_names(function: Any, skip_self: bool, prefix: str, count: int) -> list[str]:
    """Parameter names of ``function`` for ``count`` arguments (``prefix<i>`` where the
    function takes ``*args`` or has fewer names)."""
    names: list[str] = []
    try:
        parameters = list(inspect.signature(function).parameters.values())
    except (TypeError, ValueError):
        parameters = []
    if skip_self and parameters and parameters[0].name == "self":
        parameters = parameters[1:]
    for parameter in parameters:
        if parameter.kind in (parameter.POSITIONAL_ONLY, parameter.POSITIONAL_OR_KEYWORD):
            names.append(parameter.name)
    names = names[:count]
    return names + [f"{prefix}{i}" for i in range(len(names), count)]


def written_state(module: ModuleType, params: dict[str, int]) -> list[str]:
    """The buffers and parameters the forward writes in place (BatchNorm's running statistics
    in training mode), found by running the small case on the host."""
    inputs, model, _ = build(module, params, 0)
    before = {name: value.detach().clone() for name, value in state(model).items()}
    with torch.no_grad():
        model(*inputs)
    return [name for name, value in state(model).items()
            if not torch.equal(before[name], value.detach())]


def describe(path: str) -> dict[str, Any]:
    """Everything the source needs to make an operator of the file, or the reason it cannot."""
    module = load(path)
    params = sizes(module)
    small, small_counts, unscalable = small_params(module, params)
    cases: dict[str, dict[str, Any]] = {}
    if small_counts is not None:
        cases["small"] = {"params": small, **small_counts}
        heldout = grown(params, small)
        try:
            counts = trace(module, heldout)
            if heldout != small and counts["largest"] <= 4 * SMALL_ELEMENTS:
                cases["heldout"] = {"params": heldout, **counts}
        except Exception:  # noqa: BLE001 - no held-out case where no other size runs
            pass
    try:
        cases["large"] = {"params": params, **trace(module, params)}
    except Exception as error:  # noqa: BLE001 - not traceable on meta: no counts
        cases["large"] = {"params": params, "largest": None, "flops": 0.0, "bytes": 0.0,
                          "reduce_dim": max([c["reduce_dim"] for c in cases.values()] or [1]),
                          "trace_error": f"{type(error).__name__}: {error}"}
    # Names, shapes and the output's structure from one build on the meta device; the
    # buffers the forward writes need values, so one run of the small case on the host.
    with torch.device("meta"), torch.no_grad():
        inputs, model, init = build(module, small, 0)
        output = model(*inputs)
    return {
        "doc": inspect.getdoc(module.Model) or "",
        "sizes": params,
        "unscalable": unscalable,
        "cases": cases,
        "inputs": signature_names(module.Model.forward, True, "x", len(inputs)),
        "input_values": describe_value(inputs),
        "state": list(state(model)),
        "state_values": {name: describe_value(value) for name, value in state(model).items()},
        "written": written_state(module, small) if not unscalable else [],
        "init": signature_names(module.Model.__init__, True, "init", len(init)),
        "init_values": describe_value(init),
        "output": describe_value(output),
    }
