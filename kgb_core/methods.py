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
from kgb_core.labels import default_label
from kgb_core.operators import OperatorSpec


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

    def option_keys(self) -> frozenset[str]:
        """TOML keys this method accepts under ``[method]``; others are rejected as typos."""
        return frozenset()

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
