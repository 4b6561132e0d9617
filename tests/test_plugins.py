"""Plugin loading: registration rules, broken plugins, allow/block lists, strict mode."""

from __future__ import annotations

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
