"""Candidates in other benchmarks' answer shapes, called as ``kernel(...)``.

GPU MODE's ``custom_kernel(data)`` takes the problem's data as one value (``PackedContract``:
the tuple of kgb's arguments, or the one argument). KernelBench's is a module class
(``ModuleContract``): an ``nn.Module`` subclass built from the problem's
constructor arguments, whose ``forward`` takes the problem's inputs. kgb's judge only knows
``kernel(*arguments)``, and it must hand every value in, weights included, so that it draws
them from the seed and can rewrite them between calls. An operator whose source declares a
``ModuleContract`` therefore takes its arguments as

    kernel(*inputs, *state, *init_arguments)

where ``state`` is the problem's parameters and buffers, in its ``state_dict`` order, and a
``ModelNew`` answer is called through ``module_kernel``: the module is built once per set of
constructor arguments on the meta device (no values drawn, no work done under the recorders),
and each call runs its ``forward`` with the state handed in (``torch.func.functional_call``),
so the candidate computes with the judge's weights, never with its own.

The problem's own reference is called the same way (``kgb_source_kernelbench``): one rule for
both sides, so that a buffer the reference updates (BatchNorm's running statistics in training
mode) is an argument both write in place and the judge compares.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Sequence

MODULE_CLASS = "ModelNew"
# GPU MODE's answer: ``custom_kernel(data)``, data being what the problem's generate_input made.
PACKED_FUNCTION = "custom_kernel"


@dataclass(frozen=True)
class ModuleContract:
    """How ``kernel(*arguments)`` splits for a module-class answer: ``inputs`` positional inputs
    of ``forward``, then one argument per name of ``state`` (the module's parameters and
    buffers, as ``state_dict`` names them), then the constructor's arguments."""

    inputs: int
    state: tuple[str, ...]
    class_name: str = MODULE_CLASS

    def to_dict(self) -> dict[str, Any]:
        return {"kind": "module", "inputs": self.inputs, "state": list(self.state),
                "class_name": self.class_name}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> "ModuleContract":
        return cls(inputs=int(data["inputs"]), state=tuple(str(n) for n in data["state"]),
                   class_name=str(data.get("class_name") or MODULE_CLASS))

    def split(self, arguments: Sequence[Any]) -> tuple[tuple, tuple, tuple]:
        """(inputs, state, constructor arguments) of a call's arguments."""
        end = self.inputs + len(self.state)
        if len(arguments) < end:
            raise TypeError(f"expected at least {end} arguments ({self.inputs} inputs and "
                            f"{len(self.state)} parameters and buffers), got {len(arguments)}")
        return (tuple(arguments[:self.inputs]), tuple(arguments[self.inputs:end]),
                tuple(arguments[end:]))

    def adapter(self, namespace: dict[str, Any]) -> "ModuleKernel | None":
        """The candidate's module class made ``kernel(...)``, or None where it has none."""
        found = namespace.get(self.class_name)
        return ModuleKernel(found, self) if isinstance(found, type) else None


@dataclass(frozen=True)
class PackedContract:
    """A candidate answering ``function(data)`` (GPU MODE's ``custom_kernel``), where ``data``
    is the problem's input as one value: the tuple of kgb's arguments, or the one argument
    itself where ``single``."""

    single: bool = False
    function: str = PACKED_FUNCTION

    def to_dict(self) -> dict[str, Any]:
        return {"kind": "packed", "single": self.single, "function": self.function}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> "PackedContract":
        return cls(single=bool(data.get("single")),
                   function=str(data.get("function") or PACKED_FUNCTION))

    def adapter(self, namespace: dict[str, Any]) -> "PackedKernel | None":
        found = namespace.get(self.function)
        return PackedKernel(found, self.single) if callable(found) else None


def contract_from_dict(data: dict[str, Any]) -> "ModuleContract | PackedContract":
    """A contract as a load request carries it (``to_dict``)."""
    return PackedContract.from_dict(data) if data.get("kind") == "packed" \
        else ModuleContract.from_dict(data)


class PackedKernel:
    """``kernel(*arguments)`` calling ``function(data)``; nothing to build beforehand
    (``builds``: whether a runner prepares it before a call)."""

    builds = False

    def __init__(self, function: Callable[..., Any], single: bool) -> None:
        self.function = function
        self.single = single

    def __call__(self, *arguments: Any) -> Any:
        return self.function(arguments[0] if self.single else tuple(arguments))


def _hashable(value: Any) -> Any:
    if isinstance(value, (list, tuple)):
        return tuple(_hashable(v) for v in value)
    return value


class ModuleKernel:
    """``kernel(*arguments)`` over instances of a module class (see the module docstring).

    ``prepare`` builds the instance a call's constructor arguments need, before the call's
    recorders start (building runs the candidate's ``__init__``, like its import); a call then
    swaps its parameters and buffers in through ``functional_call`` and never builds anything
    under the recorders. With ``bind``, for the sets a timed run cycles through, it also builds
    an instance holding that set's state itself, so that each timed call is ``module(*inputs)``
    and carries no cost of kgb's: ``functional_call`` costs 37 us a call on this project's CPU
    machine, more than a small kernel's whole time on a GPU. ``release`` drops those instances
    (they keep their sets' tensors alive, and so their ids theirs) once the run is over."""

    builds = True

    def __init__(self, module_class: Callable[..., Any], contract: ModuleContract) -> None:
        self.module_class = module_class
        self.contract = contract
        self._built: dict[Any, Any] = {}
        self._bound: dict[tuple, Any] = {}

    def _build(self, init: tuple) -> Any:
        import torch

        with torch.device("meta"):
            module = self.module_class(*init)
        names = list(module.state_dict(keep_vars=True))
        if sorted(names) != sorted(self.contract.state):
            missing = sorted(set(self.contract.state) - set(names))
            extra = sorted(set(names) - set(self.contract.state))
            raise TypeError(f"{self.contract.class_name} must hold the problem's parameters "
                            f"and buffers under the problem's names: missing {missing}, "
                            f"not the problem's {extra}")
        return module

    @staticmethod
    def _state_key(init_key: Any, state: tuple) -> tuple:
        return (init_key, tuple(id(value) for value in state))

    def prepare(self, arguments: Sequence[Any], *, bind: bool = False) -> Any:
        """The instance built for ``arguments``' constructor arguments; with ``bind``, the one
        holding their parameters and buffers themselves."""
        _, state, init = self.contract.split(arguments)
        key = _hashable(init)
        if key not in self._built:
            self._built[key] = self._build(init)
        if not bind:
            return self._built[key]
        bound_key = self._state_key(key, state)
        if bound_key not in self._bound:
            module = self._build(init)
            module.load_state_dict(dict(zip(self.contract.state, state)), strict=True,
                                   assign=True)
            module.requires_grad_(False)
            self._bound[bound_key] = (module, state)
        return self._bound[bound_key][0]

    def release(self) -> None:
        self._bound.clear()

    def __call__(self, *arguments: Any) -> Any:
        import torch

        inputs, state, init = self.contract.split(arguments)
        key = _hashable(init)
        bound = self._bound.get(self._state_key(key, state))
        if bound is not None:
            return bound[0](*inputs)
        module = self._built.get(key)
        if module is None:
            raise TypeError(f"{self.contract.class_name} was not built for these constructor "
                            f"arguments before the call")
        return torch.func.functional_call(module, dict(zip(self.contract.state, state)), inputs,
                                          strict=True)
