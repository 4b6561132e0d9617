"""Plugin loading: registration rules, broken plugins, allow/block lists, strict mode."""

from __future__ import annotations

import dataclasses
import types

import pytest

from kgb_backends.cpu import CpuInterpreterBackend
from kgb_core import hookimpl
from kgb_core.errors import UserError
from kgb_core.operators import OperatorSource
from kgb_core.plugins import load_registry


def _plugin(**hooks):
    return types.SimpleNamespace(**{name: hookimpl(fn) for name, fn in hooks.items()})


def _source(name):
    return OperatorSource(name=name, description="test", build=lambda: [])


def test_builtins_register_through_entry_points(registry):
    names = {p.name: p for p in registry.plugins}
    assert {"aten", "cpu", "nvidia", "reference"} <= set(names)
    assert names["aten"].distribution == "kernelgenbench"
    assert ("source", "aten") in names["aten"].provides
    assert all(p.error is None for p in registry.plugins)


def test_inline_plugins_register_without_entry_points():
    plugin = _plugin(kgb_register_sources=lambda register: register(_source("mine")))
    registry = load_registry(entry_points=False, extra=[("mine", plugin)])
    assert registry.names("source") == ["mine"]
    assert registry.names("backend") == []


def test_a_duplicate_name_is_an_error_naming_both_plugins():
    first = _plugin(kgb_register_sources=lambda register: register(_source("dup")))
    second = _plugin(kgb_register_sources=lambda register: register(_source("dup")))
    registry = load_registry(entry_points=False, extra=[("first", first), ("second", second)])
    failed = {p.name: p for p in registry.plugins}["second"]
    assert "first" in failed.error and "second" in failed.error
    assert registry.provider("source", "dup").name == "first"


def test_a_plugin_that_raises_is_reported_and_the_rest_still_load():
    def explode(register):
        register(_source("partial"))
        raise RuntimeError("boom")

    good = _plugin(kgb_register_backends=lambda register: register(CpuInterpreterBackend()))
    registry = load_registry(entry_points=False,
                             extra=[("bad", _plugin(kgb_register_sources=explode)), ("good", good)])
    bad = {p.name: p for p in registry.plugins}["bad"]
    assert "boom" in bad.error
    assert registry.names("source") == [], "a failed plugin's half-registration is undone"
    assert registry.names("backend") == ["cpu"]


def test_strict_mode_re_raises_for_plugin_authors(monkeypatch):
    monkeypatch.setenv("KGB_STRICT_PLUGINS", "1")

    def explode(register):
        raise RuntimeError("boom")

    with pytest.raises(RuntimeError, match="boom"):
        load_registry(entry_points=False, extra=[("bad", _plugin(kgb_register_sources=explode))])


def test_registering_the_wrong_kind_of_object_is_refused():
    plugin = _plugin(kgb_register_backends=lambda register: register(_source("oops")))
    registry = load_registry(entry_points=False, extra=[("wrong", plugin)])
    assert "expected a Backend" in registry.plugins[0].error


def test_block_and_allow_lists(monkeypatch):
    monkeypatch.setenv("KGB_DISABLE_PLUGINS", "nvidia")
    assert "nvidia" not in load_registry().names("backend")
    monkeypatch.delenv("KGB_DISABLE_PLUGINS")
    monkeypatch.setenv("KGB_LOAD_PLUGINS", "cpu,aten")
    registry = load_registry()
    assert registry.names("backend") == ["cpu"] and registry.names("method") == []


def test_unknown_names_are_user_errors_that_list_what_exists(registry):
    # Installed backend plugins (plugins/) join the list: match the built-ins in it.
    with pytest.raises(UserError, match="known backends: (.*, )?cpu, (.*, )?nvidia"):
        registry.backend("tpu")
    with pytest.raises(UserError, match="<source>.<name>"):
        registry.operator("softmax")
    with pytest.raises(UserError, match="unknown operator"):
        registry.operator("aten.softmaxx")


def test_a_plugins_command_is_handed_the_clis_registry_and_an_app_only_hook_still_works():
    import typer
    from typer.testing import CliRunner

    def with_registry(app, registry):
        @app.command("count-sources")
        def count_sources() -> None:
            print(f"sources: {','.join(registry.names('source'))}")

    def app_only(app):
        @app.command("hello")
        def hello() -> None:
            print("hi")

    registry = load_registry(entry_points=False, extra=[
        ("counts", _plugin(kgb_add_cli=with_registry,
                           kgb_register_sources=lambda register: register(_source("mine")))),
        ("greets", _plugin(kgb_add_cli=app_only))])
    app = typer.Typer()
    registry.add_cli(app)
    runner = CliRunner()
    assert runner.invoke(app, ["count-sources"]).stdout.strip() == "sources: mine"
    assert runner.invoke(app, ["hello"]).stdout.strip() == "hi"
    assert all(info.error is None for info in registry.plugins)


class _NoChip(CpuInterpreterBackend):
    """A backend that is never available: what a GPU backend is on this machine."""

    def __init__(self, name):
        super().__init__()
        self.profile = dataclasses.replace(CpuInterpreterBackend.profile, name=name,
                                           auto_detect=True, fallback=False)

    def probe(self):
        from kgb_core.backends import Availability

        return Availability(False, "no such chip here")


def test_the_fallback_backend_is_the_one_that_declares_it_not_the_one_named_cpu():
    from kgb_core.sweep import resolve_backend

    class Simulator(CpuInterpreterBackend):
        profile = dataclasses.replace(CpuInterpreterBackend.profile, name="simulator",
                                      description="a simulator", fallback=True)

    registry = load_registry(entry_points=False, extra=[("backends", _plugin(
        kgb_register_backends=lambda register: (register(_NoChip("chip")),
                                                register(Simulator()))))])
    backend, note = resolve_backend(registry, None)
    assert backend.name == "simulator" and "chip: no such chip here" in note
    emulating, _ = resolve_backend(registry, None, emulate="chip")
    assert emulating.name == "simulator" and emulating.emulates == "chip"
    assert type(emulating) is Simulator  # the host's own code, no proxy
    assert not emulating.fallback and not emulating.timings_measure_hardware  # the host's

    alone = load_registry(entry_points=False, extra=[("backends", _plugin(
        kgb_register_backends=lambda register: register(_NoChip("chip"))))])
    with pytest.raises(UserError, match="declares itself the fallback"):
        resolve_backend(alone, None)


def test_the_default_method_is_the_one_that_declares_it(registry):
    from kgb_methods.reference import ReferenceMethod

    assert registry.default_method().name == "reference"

    class Mine(ReferenceMethod):
        name, default = "mine", False

    class Chosen(ReferenceMethod):
        name = "chosen"  # default, as the reference method it derives from

    alone = load_registry(entry_points=False, extra=[("mine", _plugin(
        kgb_register_methods=lambda register: register(Mine())))])
    with pytest.raises(UserError, match="declares itself the default"):
        alone.default_method()
    both = load_registry(entry_points=False, extra=[("methods", _plugin(
        kgb_register_methods=lambda register: (register(Mine()), register(Chosen()))))])
    assert both.default_method().name == "chosen"


def test_conformance_wants_each_denied_operator_cited_as_the_plugin_names_its_sources():
    from kgb_core.plugin_conformance import BackendPluginConformance

    cpu = CpuInterpreterBackend.profile

    class Denying(CpuInterpreterBackend):
        profile = dataclasses.replace(cpu, name="denying", quirks=dataclasses.replace(
            cpu.quirks, denied_operators={
                "aten.sort": "no sort in the vendor's Triton (VendorDocs, section 4)"}))

    class Check(BackendPluginConformance):
        backend_class = Denying

    with pytest.raises(AssertionError, match="cites none of"):
        Check().test_denied_operators_are_real_operators_with_cited_reasons()
    Check.cited_sources = ("VendorDocs",)  # free-form: the plugin names its own sources
    Check().test_denied_operators_are_real_operators_with_cited_reasons()
    Denying.profile = dataclasses.replace(Denying.profile, quirks=dataclasses.replace(
        cpu.quirks,
        denied_operators={"aten.sort": "no sort (https://example.org/vendor/triton-notes)"}))
    Check.cited_sources = ()
    Check().test_denied_operators_are_real_operators_with_cited_reasons()  # a URL cites
