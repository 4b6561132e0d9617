"""The ``reference`` method: the known-good Triton kernel each source ships for its operators.

It proves every operator is solvable and that the checker accepts a right answer; a source
that ships no kernel for an operator says so, and the operator is reported as not generated.
"""

from __future__ import annotations

from kgb_core import hookimpl
from kgb_core.backends import Quirks
from kgb_core.candidates import Candidate
from kgb_core.methods import GenerationContext, Method
from kgb_core.operators import OperatorSpec


class ReferenceMethod(Method):
    name = "reference"
    description = "the known-good Triton kernel shipped with each operator (no model, no tokens)"
    trusted = True
    default = True  # a bare `kgb run` checks the shipped kernels

    def generate(self, op: OperatorSpec, quirks: Quirks, ctx: GenerationContext) -> list[Candidate]:
        if op.reference_kernel is None:
            return []
        return [Candidate(source=op.reference_kernel(), sample=0, prompt_tokens=0,
                          completion_tokens=0, cost_usd=0.0, origin=f"reference:{op.id}")]


@hookimpl
def kgb_register_methods(register):
    register(ReferenceMethod())
