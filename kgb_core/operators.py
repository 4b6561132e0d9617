"""The operator model: what a source declares about each operator it offers.

Specs are plain data plus a few callables. Building one must not import torch, so that
``kgb ops`` and ``kgb plugins`` stay fast; the callables import it when they run.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Callable, Mapping, Sequence

from kgb_core import draws
from kgb_core.errors import PluginError

if TYPE_CHECKING:  # pragma: no cover
    import torch

# Tiers of shape cases. "small" cases run in Triton's interpreter in seconds; "large" cases are
# the realistic sizes a GPU is timed on. A backend says which tiers it runs and times.
SMALL = "small"
LARGE = "large"
TIERS = (SMALL, LARGE)

FLOAT_DTYPES = ("float32", "float16", "bfloat16")
KNOWN_DTYPES = FLOAT_DTYPES + (
    "float64", "int8", "int16", "int32", "int64", "uint8", "bool",
)

# Relative tolerance per dtype, as the published KernelGenBench checker uses them
# (src/sandbox/utils/accuracy_utils.py; see shared/inventory/kernelgenbench-facts.md, section 4).
DEFAULT_RTOL: Mapping[str, float] = {
    "float32": 1e-5,
    "float64": 1e-5,
    "float16": 1e-3,
    "bfloat16": 1.6e-2,
    "int8": 0.0, "int16": 0.0, "int32": 0.0, "int64": 0.0, "uint8": 0.0, "bool": 0.0,
}
# The published atol is 1e-4 times the number of accumulated terms (its ``reduce_dim``).
BASE_ATOL = 1e-4


@dataclass(frozen=True)
class Tolerance:
    """``|actual - expected| <= atol + rtol * |expected|``, elementwise, like assert_close."""

    rtol: float
    atol: float

    @property
    def exact(self) -> bool:
        return self.rtol == 0.0 and self.atol == 0.0


@dataclass(frozen=True)
class WithTolerance:
    """A value a spec's ``compared`` returns with the tolerance it is compared at, where one
    output needs another rule than the rest: an fp8 tensor within one e4m3 step, its fp32
    scales at fp32 tolerance. Both sides' ``compared`` return it; the expected side's
    tolerance is the one used."""

    value: Any
    tolerance: Tolerance


@dataclass(frozen=True)
class Rounded:
    """A reference output rounded to the output dtype (``value``), with the wider value it was
    rounded from (``unrounded``: a tensor of the same shape, float64 say), for a reference
    that computes in a wider dtype anyway. The candidate is compared with ``value``; only
    where one side is the dtype's largest finite value and the other the infinity of the same
    sign does the comparison ask ``unrounded`` whether the truth lies within the tolerance of
    the overflow threshold, where a correct kernel may round either way
    (``kgb_core/evaluation/compare.py``, ``_overflow_edge``). Only a reference returns it."""

    value: Any
    unrounded: Any


@dataclass(frozen=True)
class ShapeCase:
    """One set of parameters an operator is checked on: shapes, dims, flags."""

    name: str
    params: Mapping[str, Any]
    tier: str = SMALL
    # Held-out cases are checked but never shown: no prompt, listing or error message reveals
    # their parameters, so a kernel fitted to the cases it was shown fails on them.
    heldout: bool = False

    def describe(self) -> str:
        return ", ".join(f"{key}={value}" for key, value in self.params.items())


@dataclass
class InputContext:
    """What an input factory gets: a case, a dtype, a seed, a device, and seeded generators.

    Values are drawn on the CPU from a generator seeded with ``seed`` and then moved to the
    device, so the same seed gives the same inputs on every chip; tensors of more than
    ``draws.CHUNK_ELEMENTS`` values are drawn in seeded chunks on threads (``kgb_core/draws.py``).
    """

    case: ShapeCase
    dtype_name: str
    seed: int
    device: str
    _generator: Any = field(default=None, repr=False)
    # A draw made ahead of the one that counts, with no device lock held (on "meta"): every
    # value is drawn as that one will draw it, the large draws kept in the judge's draw cache
    # for it, and the tensors handed back hold no values (``Evaluation._draw_ahead``).
    ahead: bool = False

    @property
    def params(self) -> Mapping[str, Any]:
        return self.case.params

    @property
    def torch(self):  # noqa: ANN201 - the torch module
        import torch

        return torch

    @property
    def dtype(self) -> "torch.dtype":
        return torch_dtype(self.dtype_name)

    @property
    def generator(self):  # noqa: ANN201 - a torch.Generator
        if self._generator is None:
            self._generator = self.torch.Generator(device="cpu").manual_seed(self.seed)
        return self._generator

    def randn(self, *shape: int, dtype: "torch.dtype | None" = None, scale: float = 1.0,
              shift: float = 0.0) -> "torch.Tensor":
        """Normal values; never all zeros, so an untouched output cannot pass by luck."""
        dtype = dtype or self.dtype

        def draw() -> "torch.Tensor":
            values = draws.normal(shape, self.generator)
            # In place, and skipped when it would change nothing: the same roundings as
            # values * scale + shift, without two more tensors of the draw's size to allocate.
            if scale != 1.0:
                values.mul_(scale)
            if shift != 0.0:
                values.add_(shift)
            return values.to(dtype)

        return self._on_device("normal", shape, dtype, draw, scale, shift)

    def uniform(self, *shape: int, low: float, high: float,
                dtype: "torch.dtype | None" = None) -> "torch.Tensor":
        dtype = dtype or self.dtype

        def draw() -> "torch.Tensor":
            values = draws.unit_uniform(shape, self.generator)
            return values.mul_(high - low).add_(low).to(dtype)

        return self._on_device("uniform", shape, dtype, draw, low, high)

    def randint(self, *shape: int, low: int, high: int,
                dtype: "torch.dtype | None" = None) -> "torch.Tensor":
        dtype = dtype or self.torch.int64

        def draw() -> "torch.Tensor":
            return draws.integers(shape, low, high, self.generator).to(dtype)

        return self._on_device("integers", shape, dtype, draw, low, high)

    def _on_device(self, kind: str, shape: tuple[int, ...], dtype: "torch.dtype",
                   draw: "Callable[[], torch.Tensor]", *bounds: float) -> "torch.Tensor":
        """``draw()`` (``kind`` of values, ``shape``, ``bounds``, in ``dtype``) moved to the
        device; a large one through the judge's draw cache (``kgb_core/draw_cache.py``), kept
        under what fixes its values, whose hit moves the generator on as the draw would.
        Drawn ahead (``ahead``): the generator moves on exactly as it will then, a large
        draw's values go into the draw cache, and a meta tensor stands for the values."""
        if self.device == "meta" and not self.ahead:
            # Shapes and dtypes only (evaluation/job_memory.py sizes a job's inputs there):
            # the values would be dropped, and drawing them took seconds an operator.
            return self.torch.empty(shape, dtype=dtype, device="meta")
        if not draws.is_chunked(shape):
            values = draw()  # drawn ahead too, small as it is: for the generator's sake
            return (self.torch.empty(shape, dtype=dtype, device="meta") if self.ahead
                    else values.to(self.device))
        from kgb_core import draw_cache

        what = (kind, shape, bounds, str(dtype))
        advance = functools.partial(draws.advance_past_a_chunked_draw, self.generator)
        if self.ahead:
            draw_cache.draw_ahead(self.generator, what, draw, advance,
                                  math.prod(shape) * dtype.itemsize)
            return self.torch.empty(shape, dtype=dtype, device="meta")
        return draw_cache.large_draw(self.generator, what, self.device, draw, advance)


def torch_dtype(name: str) -> "torch.dtype":
    import torch

    try:
        dtype = getattr(torch, name)
    except AttributeError:
        raise PluginError(f"unknown dtype name {name!r}") from None
    if not isinstance(dtype, torch.dtype):
        raise PluginError(f"{name!r} is not a torch dtype")
    return dtype


def dtype_itemsize(name: str) -> int:
    sizes = {"float64": 8, "int64": 8, "float32": 4, "int32": 4, "float16": 2, "bfloat16": 2,
             "int16": 2, "int8": 1, "uint8": 1, "bool": 1}
    return sizes[name]


def _one(_params: Mapping[str, Any]) -> int:
    return 1


# The ways a timed call's inputs get new values (OperatorSpec.timed_variation).
TIMED_VARIATIONS = frozenset({"scale", "shift"})


@dataclass(frozen=True)
class OperatorSpec:
    """Everything the harness, a prompt and a report need to know about one operator.

    ``reference`` is the plain PyTorch definition, called as ``reference(*inputs)``; a candidate's
    ``kernel(*inputs)`` must return what it returns (a ``Rounded``'s ``value``, where it returns
    one). ``make_inputs`` builds fresh inputs for one case, dtype and seed. ``mutated_args``
    lists the positions of arguments the operator writes in place; every other argument must
    come back unchanged. ``reduce_dim`` gives, per case, how many terms are accumulated into
    one output, which scales atol as in the published checker.
    ``baseline``, when given, is what the candidate is timed against instead of ``reference``:
    the native PyTorch call, where the reference must compute more accurately than it (e.g.
    fp16 cumsum accumulated in fp32) and so would make a slower, unfair baseline.
    ``compared``, when given, maps ``(returned value, arguments after the call)`` to what is
    compared with the reference's, replacing the default (the returned value, then each
    argument in ``mutated_args``): an fp8 output is compared after dequantising it with the
    scale the operator defines, for instance, since its raw bytes differ by rounding mode.
    """

    source: str
    name: str
    signature: str
    description: str
    reference: Callable[..., Any]
    make_inputs: Callable[[InputContext], Sequence[Any]]
    cases: tuple[ShapeCase, ...]
    dtypes: tuple[str, ...]
    flops: Callable[[Mapping[str, Any]], float]
    bytes_moved: Callable[[Mapping[str, Any], int], float]
    tags: frozenset[str] = frozenset()
    # The contract asks for a new contiguous tensor (an ATen view op, materialised): a returned
    # tensor that is not contiguous is ``wrong_shape_or_dtype``, however right its values (a
    # view of a plain copy of the input, permuted for free, would otherwise pass).
    contiguous_output: bool = False
    reduce_dim: Callable[[Mapping[str, Any]], int] = _one
    # A dtype's tolerance where DEFAULT_RTOL and the reduce_dim-scaled atol are not the rule
    # (``tolerance`` below), one of:
    # - a Tolerance, taken as it is (exact integer-valued results: Tolerance(0, 0));
    # - an rtol, keeping the scaled atol (the hardware's own arithmetic coarser than the dtype,
    #   such as fp8 tensor-core sums);
    # - a function of the case's parameters giving the rtol, keeping the scaled atol (rounding
    #   that grows with the case: a product of N fp32 factors).
    tolerances: Mapping[str, "Tolerance | float | Callable[[Mapping[str, Any]], float]"] = field(
        default_factory=dict)
    mutated_args: tuple[int, ...] = ()
    # How a timed call's floating inputs get new values (kgb_core/evaluation/runner.py,
    # vary_values): "scale" multiplies them by 1 + 1/64 to 1.25, "shift" adds 1/64 to 1/4
    # instead, for an operator whose inputs carry a contract that scaling breaks and shifting
    # keeps (top-p: a threshold drawn well away from every cumulative softmax sum, which a
    # shift of the logits leaves where it was). A shift must change every value it is added
    # to: for inputs of small magnitude only (fp16 at 2048 has a step of 2, and a value that
    # comes back the same lets an answer kept from an earlier call pass).
    # ``timed_varied_args``: the positions varied (None: every argument).
    timed_variation: str = "scale"
    timed_varied_args: tuple[int, ...] | None = None
    # fp32 and complex64 results held to the rounding bound of a sum of reduce_dim products
    # against a float64 reference (kgb_core/evaluation/products.py), not to rtol/atol: GEMMs.
    # "interleaved": fp32 buffers hold complex values as (re, im) pairs (cuBLAS's C, Z).
    product_bound: bool | str = False
    # Results held to the operator's own rounding bound instead of rtol/atol: a function of
    # the inputs and the dtype's Tolerance returning the exact output with its per-element
    # bound (a kgb_core.evaluation.products.Bounded), or None where rtol/atol alone rule; for
    # an operator that writes no argument (attention: kgb_core/evaluation/attention_bound.py,
    # fp32's rounding bound, and fp16/bf16's rtol/atol widened by P's rounding).
    rounding_bound: Callable[[Sequence[Any], Tolerance], Any] | None = None
    reference_kernel: Callable[[], str] | None = None
    baseline: Callable[..., Any] | None = None
    compared: Callable[[Any, Sequence[Any]], Any] | None = None
    # A candidate may answer in another benchmark's shape instead of ``kernel``: KernelBench's
    # ``ModelNew`` class, GPU MODE's ``custom_kernel(data)`` (kgb_core/module_contract.py).
    module_contract: Any = None
    # Where the problem defines its own check of an output (GPU MODE's check_implementation):
    # (the inputs as drawn, the candidate's output) -> "" when right, else why not. It replaces
    # the tolerance comparison with the reference everywhere the judge compares.
    check_output: Callable[[Sequence[Any], Any], str] | None = None
    # Where the reference must not run in the judge's process (a problem file is code, run in
    # a sandboxed process of its own): times the baseline there, given the timing settings and
    # the input sets, returning a kgb_core.timing.Timing. None: the judge times ``baseline``.
    time_baseline: Callable[[Mapping[str, Any], Sequence[Sequence[Any]]], Any] | None = None
    # A reference that computes on the host (a Python loop over the values, seconds to a minute
    # a call, as vLLM's convert_vertical_slash_indexes replays a CUDA state machine): the judge
    # hands it host copies of the inputs and lets the device's lock go while it runs
    # (checker.Evaluation._reference_on_host), then compares on the device as usual. Say so
    # only of a reference that gives the same values on the host: nothing else changes.
    host_reference: bool = False

    @property
    def id(self) -> str:
        return f"{self.source}.{self.name}"

    @property
    def moves_data(self) -> bool:
        """An operator whose whole work is moving values (tagged ``movement``: views, joins,
        splits, pads, copies): for it torch may only stage inputs, since a torch copy that
        rearranges values is the operator itself (``checker._staged_answer``)."""
        return "movement" in self.tags

    @property
    def timing_baseline(self) -> Callable[..., Any]:
        return self.baseline or self.reference

    def tolerance(self, dtype_name: str, params: Mapping[str, Any]) -> Tolerance:
        """The one rule: the dtype's entry in ``tolerances`` where there is one, else
        DEFAULT_RTOL (0 for integer and boolean dtypes: exact) with atol = BASE_ATOL x the
        case's ``reduce_dim``."""
        rule = self.tolerances.get(dtype_name)
        if isinstance(rule, Tolerance):
            return rule
        if rule is None:
            rtol = DEFAULT_RTOL.get(dtype_name, 0.0)
        else:
            rtol = float(rule(params) if callable(rule) else rule)
        if rtol == 0.0:
            return Tolerance(rtol=0.0, atol=0.0)
        return Tolerance(rtol=rtol, atol=BASE_ATOL * max(1, int(self.reduce_dim(params))))

    def cases_in(self, tiers: Sequence[str]) -> list[ShapeCase]:
        return [case for case in self.cases if case.tier in tiers]

    def validate(self) -> None:
        """Reject a spec the harness could only run wrongly; called when a source is built."""
        problems = []
        if not self.name or "." in self.name:
            problems.append("name must be non-empty and contain no '.'")
        if not self.cases:
            problems.append("no shape cases: a check that runs nothing must not exist")
        if not self.dtypes:
            problems.append("no dtypes")
        unknown = [d for d in self.dtypes if d not in KNOWN_DTYPES]
        if unknown:
            problems.append(f"unknown dtypes {unknown}")
        bad_tiers = sorted({c.tier for c in self.cases} - set(TIERS))
        if bad_tiers:
            problems.append(f"unknown case tiers {bad_tiers}")
        names = [c.name for c in self.cases]
        if len(names) != len(set(names)):
            problems.append("duplicate shape case names")
        if self.timed_variation not in TIMED_VARIATIONS:
            problems.append(f"timed_variation {self.timed_variation!r} is not one of "
                            f"{sorted(TIMED_VARIATIONS)}")
        if self.rounding_bound is not None and (self.mutated_args or self.compared):
            problems.append("rounding_bound judges the returned value alone: not with "
                            "mutated_args or compared")
        if problems:
            raise PluginError(f"operator {self.id}: " + "; ".join(problems))

    def argument_names(self) -> list[str]:
        """The parameter names of ``signature`` (``kernel(out: Tensor, x: Tensor) -> None``)."""
        inside = self.signature.partition("(")[2].rpartition(")")[0]
        names, depth, current = [], 0, ""
        for char in inside + ",":
            if char in "[(":
                depth += 1
            elif char in "])":
                depth -= 1
            if char == "," and depth == 0:
                name = current.split(":")[0].split("=")[0].strip().lstrip("*")
                if name:
                    names.append(name)
                current = ""
            else:
                current += char
        return names

    def written_args(self) -> list[str]:
        """The names of the arguments the operator writes (``mutated_args``), for listings."""
        names = self.argument_names()
        return [names[i] if i < len(names) else f"arg{i}" for i in self.mutated_args]

    def shown_cases(self) -> list[ShapeCase]:
        return [case for case in self.cases if not case.heldout]

    def describe(self) -> dict[str, Any]:
        """A JSON-ready description for ``kgb ops show`` and for prompts.

        Held-out cases are counted, never described: what a prompt or a listing shows can be
        fitted, and they exist to catch exactly that.
        """
        cases = []
        for case in self.shown_cases():
            counts = {
                dtype: {
                    "flops": float(self.flops(case.params)),
                    "bytes": float(self.bytes_moved(case.params, dtype_itemsize(dtype))),
                }
                for dtype in self.dtypes
            }
            cases.append({
                "name": case.name,
                "tier": case.tier,
                "params": dict(case.params),
                "reduce_dim": int(self.reduce_dim(case.params)),
                "counts": counts,
            })
        tolerances = {}
        for dtype in self.dtypes:
            tol = self.tolerance(dtype, self.cases[0].params)
            if tol.exact:
                atol: Any = "exact"
            elif isinstance(self.tolerances.get(dtype), Tolerance):
                atol = tol.atol
            else:
                atol = f"{BASE_ATOL:g} x reduce_dim"
            tolerances[dtype] = {"rtol": tol.rtol, "atol": atol}
            if self.product_bound and dtype in ("float32", "complex64"):
                # The judge's rule there (kgb_core/evaluation/products.py), not rtol/atol.
                tolerances[dtype] = {"bound": "gamma_(K+2) (|A| |B|) against a float64 "
                                              "reference (fp32 rounding of a sum of products)"}
            if self.rounding_bound is not None:
                where = f"{self.rounding_bound.__module__}.{self.rounding_bound.__name__}"
                if dtype == "float32":
                    tolerances[dtype] = {"bound": f"fp32 rounding bound against a float64 "
                                                  f"reference ({where})"}
                elif not tol.exact:
                    tolerances[dtype]["widened"] = (f"by the operator's own rounding bound for "
                                                    f"{dtype}, against a float64 reference "
                                                    f"({where})")
        return {
            "id": self.id,
            "source": self.source,
            "name": self.name,
            "signature": self.signature,
            "description": self.description,
            "dtypes": list(self.dtypes),
            "tags": sorted(self.tags),
            "mutated_args": list(self.mutated_args),
            "writes": self.written_args(),
            "tolerances": tolerances,
            "cases": cases,
            "heldout_cases": len(self.cases) - len(cases),
            "has_reference_kernel": self.reference_kernel is not None,
        }


@dataclass
class OperatorSource:
    """A named set of operators (``aten``, ``vllm``, ``cublas``...), built on first use.

    A source may take options (``options``: each key's default), which ``build`` then gets as
    keyword arguments: a loader of another benchmark's problem files takes the folder they are
    in. They are set by ``[sources.<name>]`` in a run config or ``--source-opt NAME.KEY=VALUE``
    (``kgb_core/source_options.py``), in the harness and in every judge alike."""

    name: str
    description: str
    build: Callable[..., Sequence[OperatorSpec]]
    options: Mapping[str, Any] = field(default_factory=dict)
    # Paths no candidate's runner may read (a problem folder: its references), given the
    # settings in force; the judge masks them in the sandbox like the sources' own folders.
    hidden: Callable[..., Sequence[str]] | None = None
    # Options that name files or folders: a relative one is resolved where kgb was started,
    # so that judges (started elsewhere) and the run's plan get the same absolute path.
    path_options: frozenset[str] = frozenset()
    # The tag of this source's operators that form the set every chip runs (the report's MC
    # view compares chips over them): ATen declares ``mc110``; a source with none leaves it "".
    cross_chip_tag: str = ""
    _specs: list[OperatorSpec] | None = field(default=None, repr=False)
    _settings: dict[str, Any] | None = field(default=None, repr=False)

    def configure(self, values: Mapping[str, Any]) -> None:
        """Set options (unknown keys refused, with the nearest known one); the operators are
        built again on next use."""
        import difflib

        from kgb_core.errors import UserError

        for key in values:
            if key not in self.options:
                close = difflib.get_close_matches(key, list(self.options), n=1)
                known = (f" (did you mean {close[0]!r}?)" if close else
                         f"; it takes: {', '.join(sorted(self.options))}" if self.options
                         else "; it takes none")
                raise UserError(f"source {self.name!r} has no option {key!r}{known}")
        values = self.resolved(values)
        settings = {**self.options, **values}
        if settings != self.settings:
            self._settings, self._specs = settings, None

    def resolved(self, values: Mapping[str, Any]) -> dict[str, Any]:
        """``values`` with every path option absolute (``~`` expanded); an empty one kept."""
        import os

        return {key: os.path.abspath(os.path.expanduser(value))
                if key in self.path_options and isinstance(value, str) and value else value
                for key, value in values.items()}

    @property
    def settings(self) -> dict[str, Any]:
        """The options in force: the defaults, then what ``configure`` set."""
        return dict(self._settings if self._settings is not None else self.options)

    def operators(self) -> list[OperatorSpec]:
        if self._specs is None:
            specs = list(self.build(**self.settings) if self.options else self.build())
            seen: set[str] = set()
            for spec in specs:
                if spec.source != self.name:
                    raise PluginError(
                        f"source {self.name!r} built operator {spec.id} that claims source "
                        f"{spec.source!r}")
                spec.validate()
                if spec.name in seen:
                    raise PluginError(f"source {self.name!r} defines {spec.id} twice")
                seen.add(spec.name)
            self._specs = specs
        return self._specs


    def hidden_paths(self) -> list[str]:
        """What the judge masks from runners for this source, beyond its plugin's folder."""
        if self.hidden is None:
            return []
        return [str(path) for path in self.hidden(**self.settings) if path]
