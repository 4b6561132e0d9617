"""What a candidate's source may name: the modules it may import and the APIs it may reach.

A Triton kernel file needs little: torch to allocate, view and copy tensors and to ask about
dtypes and devices; triton and triton.language to write and launch kernels; some arithmetic on
the host. Everything else is refused by the static screen (``kgb_core.evaluation.screen``)
before the candidate runs: an allow-list, not a deny-list, because torch and triton re-export
what a deny-list forgets (``torch.os``, a module that imports ``_disable_current_modes``). What
torch computes is still caught at run time (the recorders), so this list is about escape hatches
and reflection, and about saying plainly what a kernel may use.

What the list costs published kernels (FlagGems, Liger-Kernel, Triton's tutorials, vLLM's
Triton ops), where they would be submitted as a candidate: imports of their own package
(``flag_gems.utils``, ``vllm.platforms``, loggers) must be inlined, since a candidate is one
file; ``torch.library`` registration and ``torch.autograd.Function`` wrappers go (the harness
calls ``kernel`` itself); ``triton.testing`` and ``triton.runtime.jit`` internals are refused;
``numpy`` is refused (a host scalar is rounded with ``struct``). Everything their kernels and
wrappers do with tensors and launches is here.
"""

from __future__ import annotations

# Modules a candidate may import, and why. A name ending in ".*" allows its submodules too.
ALLOWED_MODULES = {
    "torch": "tensors: allocation, views, copies, dtypes and device queries",
    "triton": "@triton.jit, autotune, heuristics, Config and the launch helpers",
    "triton.language": "the kernel language",
    "triton.language.*": "the kernel language's modules (libdevice math: extra, math)",
    "triton.tools.tensor_descriptor": "host-side TMA tensor descriptors (Hopper kernels)",
    "math": "scalar arithmetic on the host (block sizes, scales)",
    "struct": "rounding a Python float to fp32 on the host (pack and unpack 'f')",
    "typing": "annotations", "typing_extensions": "annotations", "__future__": "annotations",
    "functools": "partial and reduce (its caches are refused as result caches)",
    "itertools": "loops over shapes and configs", "operator": "arithmetic as functions",
    "dataclasses": "plain records", "enum": "constants", "collections": "named tuples",
    "collections.abc": "annotations",
    "warnings": "a warning for a shape it handles slowly",
    "torch.nn": "a module class holding its parameters (KernelBench's ModelNew answer)",
}

# Modules whose every attribute a candidate may use (pure functions on Python values), except
# the reflective ones named in REFLECTIVE.
FREE_MODULES = ("math", "struct", "typing", "typing_extensions", "functools", "itertools",
                "operator", "dataclasses", "enum", "collections", "warnings", "triton.language")
REFLECTIVE = {"attrgetter", "methodcaller"}
# Memoizers keep results across calls: a result cache (the timer would time a lookup).
MEMOIZERS = {"lru_cache", "cache", "cached_property"}

# torch APIs a candidate may reach, by chain (an entry allows itself and what lies under it).
TORCH_DTYPES = (
    "float16", "float32", "float64", "bfloat16", "half", "float", "double", "int8", "int16",
    "int32", "int64", "uint8", "uint16", "uint32", "uint64", "bool", "short", "int", "long",
    "complex64", "complex128", "cfloat", "cdouble", "chalf", "complex32", "float8_e4m3fn",
    "float8_e5m2", "float8_e4m3fnuz", "float8_e5m2fnuz", "float8_e8m0fnu", "float4_e2m1fn_x2",
)
TORCH_APIS = (
    # allocation
    "empty", "empty_like", "empty_strided", "zeros", "zeros_like", "ones", "ones_like", "full",
    "full_like", "arange", "tensor", "as_tensor", "scalar_tensor",
    # views and copies (what the op recorder allows at run time)
    "as_strided", "broadcast_tensors", "broadcast_to", "view_as_real", "view_as_complex",
    "reshape", "flatten", "unflatten", "squeeze", "unsqueeze", "transpose", "permute",
    "movedim", "narrow", "select", "split", "chunk", "unbind", "t", "diagonal",
    # types, shapes and dtype rules
    "Tensor", "dtype", "device", "Size", "finfo", "iinfo", "is_tensor", "is_floating_point",
    "is_complex", "promote_types", "result_type", "can_cast", "get_default_dtype",
    "broadcast_shapes", "contiguous_format", "channels_last", "channels_last_3d",
    "preserve_format", "strided", "memory_format", "layout",
    # no autograd bookkeeping in a kernel's wrapper
    "no_grad", "inference_mode",
    # device and stream queries
    "cuda.current_device", "cuda.current_stream", "cuda.get_device_properties",
    "cuda.get_device_capability", "cuda.get_device_name", "cuda.device_count",
    "cuda.is_available", "cuda.device", "cuda.synchronize", "version.cuda", "version.hip",
    "get_device_module",
    # a module-class answer (kgb_core/module_contract.py): the class and its parameters; the
    # layers it may hold its weights in are allowed below (their math is the recorders' to see)
    "nn.Module", "nn.Parameter", "nn.ParameterList", "nn.ParameterDict", "nn.ModuleList",
    "nn.ModuleDict", "nn.Sequential",
)
TRITON_APIS = (
    "jit", "autotune", "heuristics", "Config", "cdiv", "next_power_of_2", "language",
    "set_allocator", "runtime.driver.active.get_current_device",
    "runtime.driver.active.get_current_target",
    "runtime.driver.active.utils.get_device_properties",
    "tools.tensor_descriptor.TensorDescriptor",
)
_MISSING = object()
ALLOWED_CHAINS = (tuple(f"torch.{name}" for name in TORCH_DTYPES + TORCH_APIS)
                  + tuple(f"triton.{name}" for name in TRITON_APIS))

# Dunder attributes a candidate may read; every other one is reflection.
ALLOWED_DUNDERS = {"__init__", "__name__", "__version__", "__doc__"}


def module_refusal(name: str) -> str | None:
    """Why ``import name`` is refused, or None when it is allowed."""
    if name in ALLOWED_MODULES:
        return None
    if any(name.startswith(allowed[:-1]) for allowed in ALLOWED_MODULES
           if allowed.endswith(".*")):
        return None
    return "not a module a Triton kernel file needs"


def chain_refusal(chain: str) -> str | None:
    """Why reaching ``chain`` (a dotted name rooted at an imported module) is refused."""
    parts = chain.split(".")
    for part in parts[1:]:
        if part.startswith("__") and part.endswith("__"):
            if part not in ALLOWED_DUNDERS:
                return f"{part} is reflection"
        elif part.startswith("_"):
            return f"{part} is private"
    if parts[-1] in REFLECTIVE:
        return f"{parts[-1]} reaches attributes by name"
    if parts[-1] in MEMOIZERS:
        return f"{parts[-1]} keeps results across calls (a result cache)"
    for free in FREE_MODULES:
        if chain == free or chain.startswith(free + "."):
            return _walked_refusal(parts)
    if chain in ("torch", "triton", "triton.language", "torch.nn"):
        return None
    if len(parts) == 3 and parts[:2] == ["torch", "nn"] and parts[2][:1].isupper():
        return None  # a layer class (nn.Linear, nn.Conv2d): where a ModelNew keeps weights
    for allowed in ALLOWED_CHAINS:
        if chain == allowed or chain.startswith(allowed + "."):
            return None
    if parts[-1] == "__version__" and len(parts) == 2:
        return None
    return ("not on the allow-list of torch and triton APIs a kernel may use (allocation, "
            "views, copies, dtypes, device queries, kernels and their launches)")


def _walked_refusal(parts: list[str]) -> str | None:
    """A chain into a module whose every attribute is allowed may still end in a module it
    imported (``typing.sys``, ``warnings.sys``): walked here, attribute by attribute, through
    the modules' own namespaces (no lazy attribute runs), and refused where it meets a module
    that is not allowed. The walk imports only allowed modules."""
    import importlib
    import types

    value: object = _MISSING
    start = 0
    for cut in range(len(parts), 0, -1):
        name = ".".join(parts[:cut])
        if module_refusal(name) is None:
            try:
                value = importlib.import_module(name)
            except ImportError:
                continue  # no module by that name: an attribute of a shorter one
            start = cut
            break
    for part in parts[start:]:
        namespace = vars(value) if isinstance(value, types.ModuleType) else None
        if namespace is None:
            return None  # past a module: a class or function, whose attributes are not modules
        value = namespace.get(part, _MISSING)
        if value is _MISSING:
            return None
        if isinstance(value, types.ModuleType) and module_refusal(value.__name__) is not None:
            return f"{part} is the module {value.__name__}, which a kernel file does not need"
    return None
