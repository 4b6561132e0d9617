"""Every hook a kgb plugin can implement, in one place.

A plugin is any module or object with functions decorated ``@kgb_core.hookimpl`` whose names
match the specs below, found through the ``kgb`` entry-point group. Hooks take a ``register``
callback rather than returning values (the pattern of simonw/llm's ``register_models``): the
host owns the registry, validates each entry, names the plugin behind a duplicate, and can add
keyword arguments later without breaking old plugins.
"""

from __future__ import annotations

from typing import Any, Callable

import pluggy

PROJECT_NAME = "kgb"

hookspec = pluggy.HookspecMarker(PROJECT_NAME)
hookimpl = pluggy.HookimplMarker(PROJECT_NAME)


@hookspec
def kgb_register_sources(register: Callable[[Any], None]) -> None:
    """Register operator sources (``kgb_core.operators.OperatorSource``).

    Implemented by a source plugin (``aten``, ``vllm``, ...). Called once when the registry is
    built; ``register`` validates the source and raises ``PluginError`` on a duplicate name.
    The source's operators are built lazily, the first time someone asks for them. A source
    that takes options declares each key's default (``options``); ``build`` gets them as
    keyword arguments, set by ``[sources.<name>]`` or ``--source-opt NAME.KEY=VALUE``.

    Example::

        @hookimpl
        def kgb_register_sources(register):
            register(OperatorSource(name="mysrc", description="...", build=_build_specs))
            register(OperatorSource(name="myfiles", description="problems from a folder",
                                    build=_specs_in, options={"path": "."}))
    """


@hookspec
def kgb_register_backends(register: Callable[[Any], None]) -> None:
    """Register chip backends (subclasses of ``kgb_core.backends.Backend``).

    Implemented by a backend plugin, one per vendor. Called once in the harness, once in
    every judge process (which re-discovers plugins, so a third-party backend works there too)
    and in every candidate's runner, which imports only the module that registers the backend
    and calls only this hook there: keep source plugins out of that module. Registering must not import the vendor runtime: ``probe()`` does that, and may
    list its steps as ``ProbeCheck``s for ``kgb doctor``. The backend's ``Quirks`` (skipped
    dtypes, limits, prompt hints, ``denied_operators``) are data the core applies, also when
    another backend emulates it (``kgb run --backend cpu --emulate <name>``).
    ``plugins/kgb-backend-example`` is the smallest complete one.

    Example::

        @hookimpl
        def kgb_register_backends(register):
            register(MyChipBackend())
    """


@hookspec
def kgb_register_methods(register: Callable[[Any], None]) -> None:
    """Register generation methods (subclasses of ``kgb_core.methods.Method``).

    Implemented by a method plugin (``reference``, ``llm``, ``agent`` ...). A method turns an
    operator spec plus the backend's quirks into candidate kernel sources and token counts; it
    never decides a verdict.

    Example::

        @hookimpl
        def kgb_register_methods(register):
            register(MyMethod())
    """


@hookspec
def kgb_add_cli(app: Any, registry: Any) -> None:
    """Add sub-commands to the ``kgb`` Typer app.

    Optional. Called once when the CLI starts, after the built-in commands exist. ``registry``
    is the CLI's own (``kgb_core.plugins.Registry``, every plugin loaded): a command looks its
    operators, backends and methods up there, never in a registry of its own. An
    implementation may take ``app`` alone (pluggy passes the arguments it names).

    Example::

        @hookimpl
        def kgb_add_cli(app, registry):
            @app.command("count-ops")
            def count_ops() -> None:
                print(len(registry.operators()))
    """
