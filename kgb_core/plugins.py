"""Plugin discovery and the registries of sources, backends and methods.

Every plugin, built-in or third-party, is an entry point in the ``kgb`` group. Each one loads
inside its own try/except, so a broken plugin is reported (``kgb plugins`` shows it with its
error) and the rest of the tool keeps working; ``KGB_STRICT_PLUGINS=1`` re-raises instead, for
plugin authors. ``KGB_LOAD_PLUGINS`` (allow-list) and ``KGB_DISABLE_PLUGINS`` (block-list) take
comma-separated entry-point names; ``KGB_EXTRA_PLUGINS`` names extra modules to register, which
is how tests hand their own plugins to evaluation workers.
"""

from __future__ import annotations

import importlib
import os
import traceback
from dataclasses import dataclass, field
from typing import Any, Callable, Iterable

import pluggy

try:  # the backport is a declared dependency; the stdlib module does the same job on 3.10+
    import importlib_metadata
except ImportError:  # pragma: no cover - e.g. a GPU image that ships without the backport
    import importlib.metadata as importlib_metadata  # type: ignore[no-redef]

from kgb_core import hookspecs
from kgb_core.backends import Backend
from kgb_core.errors import PluginError, UserError
from kgb_core.methods import Method
from kgb_core.operators import OperatorSource, OperatorSpec

ENTRY_POINT_GROUP = "kgb"
KINDS = ("source", "backend", "method")
_HOOK_OF_KIND = {
    "source": "kgb_register_sources",
    "backend": "kgb_register_backends",
    "method": "kgb_register_methods",
}
_TYPE_OF_KIND = {"source": OperatorSource, "backend": Backend, "method": Method}


@dataclass
class PluginInfo:
    name: str
    distribution: str = ""
    version: str = ""
    module: str = ""
    provides: list[tuple[str, str]] = field(default_factory=list)
    error: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "distribution": self.distribution,
            "version": self.version,
            "module": self.module,
            "provides": [{"kind": kind, "name": name} for kind, name in self.provides],
            "error": self.error,
        }


def _env_names(variable: str) -> set[str] | None:
    raw = os.environ.get(variable)
    if raw is None:
        return None
    return {name.strip() for name in raw.split(",") if name.strip()}


def _strict() -> bool:
    return os.environ.get("KGB_STRICT_PLUGINS", "") not in ("", "0", "false")


class Registry:
    """Sources, backends and methods by name, and the plugins that provided them."""

    def __init__(self) -> None:
        self.plugins: list[PluginInfo] = []
        self._entries: dict[str, dict[str, Any]] = {kind: {} for kind in KINDS}
        self._providers: dict[tuple[str, str], str] = {}
        self._managers: list[tuple[PluginInfo, pluggy.PluginManager]] = []

    # -- registration ------------------------------------------------------------------------
    def _add(self, kind: str, item: Any, plugin: PluginInfo) -> None:
        expected = _TYPE_OF_KIND[kind]
        if not isinstance(item, expected):
            raise PluginError(
                f"plugin {plugin.name!r} registered a {type(item).__name__} as a {kind}; "
                f"expected a {expected.__name__}")
        name = getattr(item, "name", "")
        if not name or not isinstance(name, str) or "." in name:
            raise PluginError(f"plugin {plugin.name!r} registered a {kind} with invalid name "
                              f"{name!r} (non-empty, no '.')")
        previous = self._providers.get((kind, name))
        if previous is not None:
            raise PluginError(f"{kind} {name!r} is registered by both plugin {previous!r} and "
                              f"plugin {plugin.name!r}; disable one with KGB_DISABLE_PLUGINS")
        self._entries[kind][name] = item
        self._providers[(kind, name)] = plugin.name
        plugin.provides.append((kind, name))

    def load_plugin(self, plugin_object: Any, info: PluginInfo) -> None:
        """Register one plugin's hooks, recording (or in strict mode raising) any failure."""
        manager = pluggy.PluginManager(hookspecs.PROJECT_NAME)
        manager.add_hookspecs(hookspecs)
        self.plugins.append(info)
        try:
            manager.register(plugin_object, name=info.name)
            for kind, hook_name in _HOOK_OF_KIND.items():
                hook = getattr(manager.hook, hook_name)
                hook(register=self._register_callback(kind, info))
            self._managers.append((info, manager))
        except Exception as error:  # a broken plugin must not take the tool down
            if _strict():
                raise
            info.error = f"{type(error).__name__}: {error}"
            info.provides.clear()
            for key in [k for k, owner in self._providers.items() if owner == info.name]:
                del self._providers[key]
                del self._entries[key[0]][key[1]]

    def _register_callback(self, kind: str, info: PluginInfo) -> Callable[[Any], None]:
        def register(item: Any) -> None:
            self._add(kind, item, info)

        return register

    def add_cli(self, app: Any) -> None:
        """Let each plugin add ``kgb`` sub-commands, handing it this registry; a failing plugin
        is reported, not fatal."""
        for info, manager in self._managers:
            try:
                manager.hook.kgb_add_cli(app=app, registry=self)
            except Exception as error:
                if _strict():
                    raise
                info.error = f"kgb_add_cli failed: {type(error).__name__}: {error}"

    # -- lookup ----------------------------------------------------------------------------
    def names(self, kind: str) -> list[str]:
        return sorted(self._entries[kind])

    def _get(self, kind: str, name: str) -> Any:
        try:
            return self._entries[kind][name]
        except KeyError:
            known = ", ".join(self.names(kind)) or "none"
            raise UserError(f"unknown {kind} {name!r}; known {kind}s: {known} "
                            f"(`kgb plugins` lists what is installed)") from None

    def source(self, name: str) -> OperatorSource:
        return self._get("source", name)

    def backend(self, name: str) -> Backend:
        return self._get("backend", name)

    def method(self, name: str) -> Method:
        return self._get("method", name)

    def backends(self) -> list[Backend]:
        return [self._entries["backend"][n] for n in self.names("backend")]

    def fallback_backend(self) -> Backend:
        """The backend that declares itself the fallback (``Backend.fallback``; the first by
        name where several do): run where no chip is found, the default emulation host."""
        declared = [backend for backend in self.backends() if backend.fallback]
        if not declared:
            raise UserError("no installed backend declares itself the fallback (the CPU "
                            "interpreter's does); name one with --backend")
        return declared[0]

    def default_method(self) -> Method:
        """The method that declares itself the default (``Method.default``; the first by name
        where several do): what ``kgb run`` uses when none is named."""
        declared = [method for method in self.methods() if method.default]
        if not declared:
            raise UserError("no installed method declares itself the default (the reference "
                            "method's does); name one with --method")
        return declared[0]

    def methods(self) -> list[Method]:
        return [self._entries["method"][n] for n in self.names("method")]

    def modules_providing(self, kind: str) -> list[str]:
        """The modules of the plugins that register a ``kind`` ("source": what a runner's
        sandbox masks)."""
        return [p.module for p in self.plugins if any(k == kind for k, _ in p.provides)]

    def backend_module(self, backend: Backend) -> str:
        """The module that registers ``backend``: all a runner imports to get it (never the
        registry, which would import every source)."""
        provider = self.provider("backend", backend.name)
        return provider.module if provider else type(backend).__module__

    def provider(self, kind: str, name: str) -> PluginInfo | None:
        owner = self._providers.get((kind, name))
        return next((p for p in self.plugins if p.name == owner), None)

    def operators(self, sources: Iterable[str] = (), tags: Iterable[str] = ()) -> list[OperatorSpec]:
        """Operators of the named sources (all when none), having every given tag."""
        wanted_sources = list(sources) or self.names("source")
        wanted_tags = set(tags)
        specs = []
        for source_name in wanted_sources:
            for spec in self.source(source_name).operators():
                if wanted_tags <= spec.tags:
                    specs.append(spec)
        return specs

    def operator(self, op_id: str) -> OperatorSpec:
        source_name, dot, name = op_id.partition(".")
        if not dot or not name:
            raise UserError(f"operator id {op_id!r} must look like <source>.<name>, "
                            f"e.g. aten.softmax")
        source = self.source(source_name)
        for spec in source.operators():
            if spec.name == name:
                return spec
        close = [s.id for s in source.operators() if name in s.name or s.name in name][:5]
        hint = f"; did you mean {', '.join(close)}?" if close else "; `kgb ops` lists them"
        raise UserError(f"unknown operator {op_id!r} in source {source_name!r}{hint}")


def _distribution_of(entry_point: Any) -> tuple[str, str]:
    dist = getattr(entry_point, "dist", None)
    if dist is None:
        return "", ""
    return dist.metadata["Name"] or "", dist.version or ""


def discover_entry_points() -> list[Any]:
    allowed = _env_names("KGB_LOAD_PLUGINS")
    blocked = _env_names("KGB_DISABLE_PLUGINS") or set()
    found = []
    seen: set[str] = set()
    for entry_point in importlib_metadata.entry_points(group=ENTRY_POINT_GROUP):
        if entry_point.name in seen:  # the same distribution seen twice on sys.path
            continue
        seen.add(entry_point.name)
        if allowed is not None and entry_point.name not in allowed:
            continue
        if entry_point.name in blocked:
            continue
        found.append(entry_point)
    return sorted(found, key=lambda ep: ep.name)


def load_registry(*, entry_points: bool = True,
                  extra: Iterable[tuple[str, Any]] = ()) -> Registry:
    """A fresh registry: every entry point (unless disabled), then ``extra`` (name, object) pairs.

    Tests pass ``entry_points=False`` and their own objects, so nothing that happens to be
    installed leaks into them.
    """
    registry = Registry()
    if entry_points:
        for entry_point in discover_entry_points():
            distribution, version = _distribution_of(entry_point)
            info = PluginInfo(name=entry_point.name, distribution=distribution, version=version,
                              module=entry_point.value)
            try:
                plugin_object = entry_point.load()
            except Exception as error:
                if _strict():
                    raise
                info.error = f"{type(error).__name__}: {error}"
                info.error += "\n" + traceback.format_exc(limit=3)
                registry.plugins.append(info)
                continue
            registry.load_plugin(plugin_object, info)
        for module_name in sorted(_env_names("KGB_EXTRA_PLUGINS") or ()):
            info = PluginInfo(name=module_name, module=module_name)
            try:
                plugin_object = importlib.import_module(module_name)
            except Exception as error:
                if _strict():
                    raise
                info.error = f"{type(error).__name__}: {error}"
                registry.plugins.append(info)
                continue
            registry.load_plugin(plugin_object, info)
    for name, plugin_object in extra:
        registry.load_plugin(plugin_object, PluginInfo(name=name, module=repr(plugin_object)))
    return registry
