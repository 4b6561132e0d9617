"""What a generation method is: operator spec and chip quirks in, candidate sources out.

A method may be iterative: ``GenerationContext.evaluate`` runs the harness's own evaluator on an
intermediate source and returns its result, so an agent can feed compile errors, mismatches and
timings back to its model. The evaluator alone decides verdicts.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from typing import Any, Callable, Mapping, Protocol

from kgb_core.backends import Quirks
from kgb_core.candidates import Candidate
from kgb_core.errors import UserError
from kgb_core.labels import default_label
from kgb_core.operators import OperatorSpec

_TYPE_NAMES = {bool: "true or false", int: "a whole number", float: "a number", str: "a string",
               list: "a list", dict: "a table"}


@dataclass(frozen=True)
class MethodOption:
    """One key a method takes under ``[method]``: what it does, its default and the types its
    value may have, in one place. The core checks each given value's type before the method
    sees it (``check_options``) and ``kgb methods`` lists them; what the value means (a range,
    one of some words) the method still checks itself.

    ``types``: the accepted types; empty means the default's own (a float option takes an int
    too). A whole-number or number option never takes true or false. ``None`` is taken where
    the default is ``None`` (unset)."""

    name: str
    default: Any
    description: str
    types: tuple[type, ...] = ()

    def declared(self) -> tuple[type, ...]:
        return self.types or ((type(self.default),) if self.default is not None else ())

    def accepted(self) -> tuple[type, ...]:
        types = self.declared()
        return types + ((int,) if float in types and int not in types else ())

    def type_name(self) -> str:
        names = [_TYPE_NAMES.get(t, t.__name__) for t in self.declared()]
        return " or ".join(names) or "any value"

    def takes(self, value: Any) -> bool:
        if value is None and self.default is None:
            return True
        accepted = self.accepted()
        if not accepted:
            return True
        if isinstance(value, bool):
            return bool in accepted
        return isinstance(value, accepted)


def option_defaults(options: tuple[MethodOption, ...]) -> dict[str, Any]:
    """{name: default} of declared options (what a method merges given values onto)."""
    return {option.name: option.default for option in options}


def check_options(method: str, declared: tuple[MethodOption, ...],
                  given: Mapping[str, Any]) -> None:
    """A given value of the wrong type is a user error naming the key, what it takes and what
    it got."""
    for option in declared:
        if option.name in given and not option.takes(given[option.name]):
            raise UserError(f"method {method}: option {option.name} takes "
                            f"{option.type_name()}, got {given[option.name]!r}")


@dataclass
class GenerationContext:
    """What a method gets besides the operator: its options, the chip, and the evaluator."""

    options: Mapping[str, Any] = field(default_factory=dict)
    backend_name: str = ""
    # Set when the backend emulates another's quirks: ``backend_name`` runs the kernel, the
    # quirks (and so the prompt's hints) are ``emulates``'s. Prompts name ``backend_label``.
    emulates: str = ""
    evaluate: Callable[[str], Any] | None = None
    log: Callable[[str], None] = lambda message: None
    # Answers a method may reuse instead of paying for them again (e.g. on --resume); the
    # sweep backs it with the result store. None where there is no store (``kgb eval``).
    cache: "ResponseCache | None" = None
    # The run's source options (kgb_core/source_options.py): what a method that runs `kgb eval`
    # itself (an agent's eval.sh) must pass on, or the operator there is another one.
    source_options: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)


    @property
    def backend_label(self) -> str:
        from kgb_core.backends import backend_label

        return backend_label(self.backend_name, self.emulates)


class ResponseCache(Protocol):
    def get(self, key: str) -> dict[str, Any] | None: ...

    def put(self, key: str, value: dict[str, Any]) -> None: ...


class Method(ABC):
    name: str = ""
    description: str = ""
    # A method whose candidates are known-good code (the shipped references) is trusted; every
    # other method's output is treated as hostile. Kept as data so a report can show it.
    trusted: bool = False
    # Whether ``kgb run`` uses this method when none is named (``Registry.default_method``):
    # the reference method declares it, so a bare run checks the shipped kernels.
    default: bool = False

    # The keys it takes under ``[method]``, typed and described (``MethodOption``).
    options: tuple[MethodOption, ...] = ()

    def option_keys(self) -> frozenset[str]:
        """TOML keys this method accepts under ``[method]``; others are rejected as typos. The
        declared ``options`` by default."""
        return frozenset(option.name for option in self.options)

    def samples(self, options: Mapping[str, Any]) -> int:
        """How many candidates per operator ``generate`` makes with these options (pass@k)."""
        return 1

    def evaluated(self, candidate: Candidate, result: Any, options: Mapping[str, Any]) -> None:
        """Called once a candidate's result is stored (a method that keeps files while a
        candidate might fail can drop them once it passed); nothing by default."""

    def label(self, options: Mapping[str, Any]) -> str:
        """This method's label with these options, in the store and the report
        (kgb_core/labels.py): ``<name>/<model, preset, command or path>`` by default. A
        method that says otherwise here should say so in its docs: rows of stores written
        before labels existed are labelled by the default rule, from their runs' plans."""
        return default_label(self.name, options)

    @abstractmethod
    def generate(self, op: OperatorSpec, quirks: Quirks, ctx: GenerationContext) -> list[Candidate]:
        """Candidates for one operator (several for pass@k), each with its token usage."""
