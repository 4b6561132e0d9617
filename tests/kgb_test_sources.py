"""A source plugin with an option, for the tests of source options (tests/test_source_options.py);
handed to evaluation workers through KGB_EXTRA_PLUGINS like any installed plugin. A module of
its own, so that the sweeps over every installed source in other tests never meet it."""

from __future__ import annotations

import dataclasses

from kgb_core import hookimpl
from kgb_core.operators import OperatorSource, ShapeCase


def shaped_operators(shape=(16, 32)):
    """aten.neg with one case of the shape the option gives: another operator when the option
    changes, as a problem folder's operators would be."""
    from kgb_core.plugins import load_registry

    neg = load_registry().operator("aten.neg")
    case = ShapeCase("given", {"shape": tuple(int(n) for n in shape)})
    return [dataclasses.replace(neg, source="shaped", name="neg", cases=(case,))]


@hookimpl
def kgb_register_sources(register):
    register(OperatorSource(name="shaped", description="test: a source with an option",
                            build=shaped_operators, options={"shape": [16, 32]}))
