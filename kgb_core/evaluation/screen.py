"""The static screen: what can be refused before a candidate runs at all.

A first filter, never the only one: everything it lets through is still checked by running
(the op recorder, the integrity guard, ghost replay). It refuses, with the offending line:
imports of the harness, the reference or escape hatches (process, FFI, frame and GC access);
``exec``/``eval`` and friends; attribute tricks that reach torch's op tables or an object's
internals; assignments to attributes of imported modules (monkeypatching); CUDA graph capture;
and module-level result caches (a module-level container written from a function, ``global``,
memoizing decorators). Published anti-hack scanners refuse the same families
(shared/inventory/kernelgenbench-facts.md, section 3, layer L1).
"""

from __future__ import annotations

import ast
from dataclasses import dataclass

from kgb_core.candidates import ENTRY_POINT, parse_python
from kgb_core.module_contract import MODULE_CLASS, PACKED_FUNCTION
from kgb_core.evaluation import verdicts
from kgb_core.evaluation.allowlist import (ALLOWED_DUNDERS, ALLOWED_MODULES, MEMOIZERS,
                                           chain_refusal, module_refusal)

# A candidate is one source file; a larger one is not a kernel (and may be an attack on the
# harness's memory or store).
MAX_SOURCE_BYTES = 1_000_000

# Why some modules are refused, for the message (every module not in ALLOWED_MODULES is, a
# plugin's package or the library a source mirrors included, whatever its name).
REFUSED_BECAUSE = {
    "kgb_core": "the harness", "kgb_sources": "the reference implementations",
    "kgb_methods": "the harness", "kgb_backends": "the harness",
    "cupy": "a vendor library", "ctypes": "raw memory access", "cffi": "raw memory access",
    "subprocess": "other processes", "multiprocessing": "other processes",
    "threading": "work the timer cannot see", "_thread": "work the timer cannot see",
    "concurrent": "work the timer cannot see", "asyncio": "work the timer cannot see",
    "signal": "the harness's signals", "socket": "the network", "gc": "the harness's objects",
    "inspect": "the harness's frames", "sys": "the harness's modules and frames",
    "importlib": "hidden imports", "builtins": "monkeypatching builtins", "pickle": "hidden code",
    "marshal": "hidden code", "shutil": "the file system", "tempfile": "the file system",
    "os": "the file system and environment", "pathlib": "the file system", "io": "the file system",
    "glob": "the file system", "mmap": "raw memory access", "resource": "the runner's limits",
    "numpy": "computing on the host", "torch.nn": "torch computing the result",
}
# Builtins a candidate may not call: code from strings, reflection, files, identity.
FORBIDDEN_CALLS = {"exec", "eval", "compile", "__import__", "globals", "locals", "vars",
                   "breakpoint", "open", "input", "setattr", "delattr", "getattr", "type", "dir",
                   "id", "memoryview", "object"}
MUTATORS = {"append", "extend", "insert", "update", "setdefault", "add", "__setitem__",
            "pop", "popitem", "clear"}
CONTAINER_CALLS = {"dict", "list", "set", "defaultdict", "OrderedDict", "deque", "Counter",
                   "WeakValueDictionary", "WeakKeyDictionary"}


@dataclass(frozen=True)
class ScreenFinding:
    verdict: str
    message: str
    line: int | None = None


class _Refusal(Exception):
    def __init__(self, message: str, node: ast.AST) -> None:
        super().__init__(message)
        self.message = message
        self.line = getattr(node, "lineno", None)


def _prefixes(name: str) -> list[str]:
    """``a.b.c``, ``a.b``, ``a``: the longest first."""
    parts = name.split(".")
    return [".".join(parts[:i]) for i in range(len(parts), 0, -1)]


def _is_module(chain: str) -> bool:
    """Whether an allowed name from a ``from ... import`` is itself a module (``from
    triton.language.extra import libdevice``), found by importing it (only allowed modules
    get here; torch's allowed names are never modules)."""
    import importlib

    if chain.startswith("torch."):
        return False
    try:
        importlib.import_module(chain)
    except ImportError:
        return False
    return True


def _dotted(node: ast.AST) -> str | None:
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if isinstance(node, ast.Name):
        parts.append(node.id)
        return ".".join(reversed(parts))
    return None


class _Screen(ast.NodeVisitor):
    def __init__(self) -> None:
        self.aliases: dict[str, str] = {}  # local name -> the module path it stands for
        self.modules: set[str] = set()  # the local names that stand for a module
        self.module_containers: set[str] = set()

    # -- imports -----------------------------------------------------------------------------
    def _check_module(self, name: str, node: ast.AST) -> None:
        why = module_refusal(name)
        if why is not None:
            known = next((REFUSED_BECAUSE[p] for p in _prefixes(name) if p in REFUSED_BECAUSE),
                         why)
            raise _Refusal(f"imports {name} ({known}; a candidate may import "
                           f"{', '.join(m for m in ALLOWED_MODULES if not m.endswith('*'))})",
                           node)

    def visit_Import(self, node: ast.Import) -> None:
        for alias in node.names:
            self._check_module(alias.name, node)
            name = alias.asname or alias.name.split(".")[0]
            self.aliases[name] = alias.name if alias.asname else alias.name.split(".")[0]
            self.modules.add(name)

    def visit_ImportFrom(self, node: ast.ImportFrom) -> None:
        if node.level:
            raise _Refusal("uses a relative import (a candidate is one file)", node)
        module = node.module or ""
        self._check_module(module, node)
        for alias in node.names:
            if alias.name == "*":
                raise _Refusal(f"imports * from {module} (every name must be seen)", node)
            chain = f"{module}.{alias.name}"
            if module != "__future__":
                self._check_chain(chain, node)
            name = alias.asname or alias.name
            self.aliases[name] = chain
            if module_refusal(chain) is None and _is_module(chain):
                self.modules.add(name)

    # -- names, calls, attributes ----------------------------------------------------------
    def _resolve(self, node: ast.AST) -> str | None:
        dotted = _dotted(node)
        if dotted is None:
            return None
        head, _, rest = dotted.partition(".")
        base = self.aliases.get(head, head)
        return f"{base}.{rest}" if rest else base

    def _check_chain(self, chain: str, node: ast.AST) -> None:
        why = chain_refusal(chain)
        if why is not None:
            raise _Refusal(f"uses {chain}: {why}", node)

    def visit_Attribute(self, node: ast.Attribute) -> None:
        if node.attr.startswith("__") and node.attr.endswith("__") \
                and node.attr not in ALLOWED_DUNDERS:
            raise _Refusal(f"reads the attribute {node.attr} (reflection)", node)
        dotted = _dotted(node)
        if dotted is not None and dotted.split(".")[0] in self.aliases:
            # A chain from an imported name, checked whole; its root is not a bare use.
            self._check_chain(self._resolve(node), node)
            return
        self.generic_visit(node)

    def visit_Name(self, node: ast.Name) -> None:
        if node.id.startswith("__") and node.id.endswith("__") and node.id != "__name__":
            raise _Refusal(f"uses {node.id}", node)
        if node.id in self.modules and isinstance(node.ctx, ast.Load):
            raise _Refusal(f"uses the module {node.id} as a value (only its allowed attributes "
                           f"may be named)", node)
        chain = self.aliases.get(node.id)
        if chain and chain not in self.modules:
            self._check_chain(chain, node)

    def visit_Call(self, node: ast.Call) -> None:
        if isinstance(node.func, ast.Name) and node.func.id in FORBIDDEN_CALLS \
                and node.func.id not in self.aliases:
            raise _Refusal(f"calls {node.func.id}() (reflection, code from strings, or the "
                           f"file system)", node)
        if isinstance(node.func, ast.Name) and node.func.id == "hasattr":
            if len(node.args) != 2 or not isinstance(node.args[1], ast.Constant):
                raise _Refusal("calls hasattr with a computed attribute name", node)
            # hasattr(tl, "extra") asks about a module and hands back only a bool.
            if isinstance(node.args[0], ast.Name) and node.args[0].id in self.modules:
                return
        self.generic_visit(node)

    def visit_Assign(self, node: ast.Assign) -> None:
        for target in node.targets:
            self._check_patch(target, node)
        self.generic_visit(node)

    def visit_Delete(self, node: ast.Delete) -> None:
        # ``del torch.Tensor.new_empty`` undoes a patch inside a call: a patch all the same.
        for target in node.targets:
            self._check_patch(target, node)
        self.generic_visit(node)

    def take_module_aliases(self, tree: ast.Module) -> None:
        """``_T = torch.Tensor`` or ``_jit = triton.jit`` at module level: the name stands for
        the chain, as an import's would (so ``_T.new_empty = ...`` is a patch of torch, and
        ``@_jit`` is Triton's decorator)."""
        for node in tree.body:
            if (isinstance(node, ast.Assign) and len(node.targets) == 1
                    and isinstance(node.targets[0], ast.Name)
                    and isinstance(node.value, (ast.Name, ast.Attribute))):
                dotted = _dotted(node.value)
                if dotted is not None and dotted.split(".")[0] in self.aliases:
                    self.aliases[node.targets[0].id] = self._resolve(node.value) or dotted

    def visit_AugAssign(self, node: ast.AugAssign) -> None:
        self._check_patch(node.target, node)
        self.generic_visit(node)

    def visit_AnnAssign(self, node: ast.AnnAssign) -> None:
        self._check_patch(node.target, node)
        self.generic_visit(node)

    def _check_patch(self, target: ast.AST, node: ast.AST) -> None:
        """An assignment to an attribute of an imported name is monkeypatching, refused as such
        before its chain is looked at."""
        if isinstance(target, (ast.Tuple, ast.List)):
            for element in target.elts:
                self._check_patch(element, node)
        elif isinstance(target, ast.Attribute):
            root = _dotted(target)
            if root and root.split(".")[0] in self.aliases:
                raise _Refusal(f"assigns to {root} (monkeypatching an imported module)", node)

    # -- caches ----------------------------------------------------------------------------
    def _check_store(self, target: ast.AST, node: ast.AST) -> None:
        """A store, in a function, into a module-level container is a result cache."""
        if isinstance(target, ast.Subscript):
            name = _dotted(target.value)
            if name in self.module_containers:
                raise _Refusal(f"writes into the module-level container {name} from a function "
                               f"(a result cache)", node)
        if isinstance(target, (ast.Tuple, ast.List)):
            for element in target.elts:
                self._check_store(element, node)

    def visit_Global(self, node: ast.Global) -> None:
        raise _Refusal(f"declares global {', '.join(node.names)} (state kept across calls)", node)

    def visit_Nonlocal(self, node: ast.Nonlocal) -> None:
        raise _Refusal(f"declares nonlocal {', '.join(node.names)} (state kept across calls)", node)


def _is_container(value: ast.AST) -> bool:
    if isinstance(value, (ast.Dict, ast.List, ast.Set, ast.DictComp, ast.ListComp, ast.SetComp)):
        return True
    if isinstance(value, ast.Call):
        name = _dotted(value.func) or ""
        return name.split(".")[-1] in CONTAINER_CALLS
    return False


def _scan(tree: ast.Module) -> None:
    screen = _Screen()
    for node in tree.body:  # module-level containers are the candidates for result caches
        if isinstance(node, (ast.Assign, ast.AnnAssign)) and node.value is not None:
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            if _is_container(node.value):
                screen.module_containers.update(t.id for t in targets if isinstance(t, ast.Name))
    # Imports first (they may follow their use in the file), then the names bound to them,
    # then everything else once.
    imports = [node for node in tree.body if isinstance(node, (ast.Import, ast.ImportFrom))]
    for node in imports:
        screen.visit(node)
    screen.take_module_aliases(tree)
    for node in tree.body:
        if node not in imports:
            screen.visit(node)
    _check_names_are_bound(tree, screen)
    for function in ast.walk(tree):
        if not isinstance(function, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            continue
        for decorator in getattr(function, "decorator_list", []):
            name = (_dotted(decorator.func if isinstance(decorator, ast.Call) else decorator)
                    or "").split(".")[-1]
            if name in MEMOIZERS:
                raise _Refusal(f"memoizes {getattr(function, 'name', 'a function')} with "
                               f"@{name} (a result cache)", decorator)
        for node in ast.walk(function):
            if isinstance(node, (ast.Assign, ast.AugAssign, ast.AnnAssign)):
                targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                for target in targets:
                    screen._check_store(target, node)
            if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                    and node.func.attr in MUTATORS
                    and _dotted(node.func.value) in screen.module_containers):
                raise _Refusal(f"mutates the module-level container {_dotted(node.func.value)} "
                               f"from a function (a result cache)", node)
    _check_jit_bodies(tree, screen)


# Module-level names a @triton.jit body may use, besides Triton's own modules and other
# @triton.jit functions: values Triton's compiler accepts as globals.
_CONSTANT_NODES = (ast.Constant, ast.UnaryOp, ast.BinOp, ast.Tuple)


def _is_triton_jit(node: ast.AST, screen: "_Screen") -> bool:
    """Whether a decorator (or the callee of ``name = triton.jit(fn)``) is ``triton.jit``."""
    target = node.func if isinstance(node, ast.Call) else node
    return screen._resolve(target) in ("triton.jit", "triton.runtime.jit.jit",
                                       "triton.runtime.jit")


def _is_constant(value: ast.AST, screen: "_Screen") -> bool:
    if isinstance(value, ast.Call):  # tl.constexpr(...), Triton's own way to make a global
        return (screen._resolve(value.func) or "").endswith("constexpr") and all(
            _is_constant(arg, screen) for arg in value.args)
    if isinstance(value, ast.Constant):
        return True
    if isinstance(value, _CONSTANT_NODES):
        return all(_is_constant(child, screen) for child in ast.iter_child_nodes(value)
                   if isinstance(child, ast.expr))
    return False


def _check_names_are_bound(tree: ast.Module, screen: "_Screen") -> None:
    """Every name the file reads is one it binds, imports, or a builtin. Triton's interpreter
    copies its own module's globals (numpy, inspect, its classes) into a candidate's module at
    the first launch, where a name the file never binds would find them."""
    import builtins

    bound = set(dir(builtins)) | set(screen.aliases) | {"__name__"}
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and not isinstance(node.ctx, ast.Load):
            bound.add(node.id)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            bound.add(node.name)
        elif isinstance(node, ast.arg):
            bound.add(node.arg)
        elif isinstance(node, ast.ExceptHandler) and node.name:
            bound.add(node.name)
        elif isinstance(node, (ast.MatchAs, ast.MatchStar)) and node.name:
            bound.add(node.name)
        elif isinstance(node, ast.MatchMapping) and node.rest:
            bound.add(node.rest)
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load) \
                and node.id not in bound:
            raise _Refusal(f"uses the name {node.id}, which the file never defines or imports "
                           f"(only Triton's interpreter would put it there)", node)


def _walk_outside_functions(node: ast.AST):  # noqa: ANN202 - a generator of nodes
    """Every node under ``node`` but those inside a function or class it holds."""
    yield node
    for child in ast.iter_child_nodes(node):
        if not isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef,
                                  ast.Lambda)):
            yield from _walk_outside_functions(child)


def _check_jit_bodies(tree: ast.Module, screen: "_Screen") -> None:
    """A @triton.jit body may use, as globals, only Triton's modules, other @triton.jit
    functions and constants: Triton's compiler refuses anything else, but its interpreter (the
    CPU backend) runs the body as Python, where torch or numpy on a tensor reached as a global
    would compute the answer inside the launch, unseen by the recorders."""
    jitted: set[str] = set()
    module_level: dict[str, ast.AST] = {}
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            module_level[node.name] = node
            if any(_is_triton_jit(d, screen) for d in getattr(node, "decorator_list", [])):
                jitted.add(node.name)
        elif isinstance(node, (ast.Assign, ast.AnnAssign)) and node.value is not None:
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            for target in targets:
                if isinstance(target, ast.Name):
                    module_level[target.id] = node.value
                    if isinstance(node.value, ast.Call) and _is_triton_jit(node.value, screen):
                        jitted.add(target.id)
    # Names bound at module level other than by a plain def or assignment (a for, a with, an
    # if): a body's global among them is no constant Triton's compiler would take.
    blocks = {n.id for node in tree.body
              if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))
              for n in _walk_outside_functions(node)
              if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)} - set(module_level)
    for name in sorted(jitted):
        function = module_level[name]
        if isinstance(function, ast.Call) and function.args and isinstance(
                function.args[0], ast.Name):  # name = triton.jit(fn): fn's body
            function = module_level.get(function.args[0].id, function)
        if not isinstance(function, (ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        # The body and the arguments' defaults, not the decorators: a @triton.autotune's
        # configs and hooks are host code (Triton's tutorials name module-level ones there).
        parts = [*function.body, function.args]
        nodes = [node for part in parts for node in ast.walk(part)]
        local = {arg.arg for arg in ast.walk(function.args) if isinstance(arg, ast.arg)}
        local |= {n.id for n in nodes if isinstance(n, ast.Name)
                  and isinstance(n.ctx, (ast.Store, ast.Del))}
        for node in nodes:
            if not isinstance(node, ast.Name) or not isinstance(node.ctx, ast.Load) \
                    or node.id in local:
                continue
            alias = screen.aliases.get(node.id)
            if alias is not None:
                if alias.split(".")[0] == "triton":
                    continue
                raise _Refusal(f"the @triton.jit function {name} uses {node.id} ({alias}), "
                               f"which Triton's compiler refuses and only its interpreter "
                               f"would run", node)
            if node.id in blocks:
                raise _Refusal(f"the @triton.jit function {name} uses the global {node.id}, "
                               f"bound by a statement Triton's compiler would not take as a "
                               f"constant", node)
            bound = module_level.get(node.id)
            if bound is None or node.id in jitted or _is_constant(bound, screen):
                continue
            raise _Refusal(f"the @triton.jit function {name} uses the global {node.id}, which "
                           f"is no constant and no @triton.jit function: Triton's compiler "
                           f"refuses it, and only its interpreter would run it", node)


def screen_source(source: str) -> ScreenFinding | None:
    """None when the source may run; otherwise the verdict and the offending line."""
    if len(source.encode("utf-8", errors="replace")) > MAX_SOURCE_BYTES:
        return ScreenFinding(verdicts.SCREEN_REJECTED,
                             f"source is larger than {MAX_SOURCE_BYTES} bytes")
    if not source.strip():
        return ScreenFinding(verdicts.SCREEN_REJECTED,
                             "the candidate holds no code (a model's answer without a code block)")
    if "\x00" in source:
        return ScreenFinding(verdicts.SCREEN_REJECTED, "source contains NUL bytes (binary?)")
    try:
        tree = parse_python(source)
    except SyntaxError as error:
        return ScreenFinding(verdicts.COMPILE_ERROR,
                             f"SyntaxError: {error.msg} (line {error.lineno})", error.lineno)
    defines_entry = any(
        isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name == ENTRY_POINT
        for node in tree.body
    ) or any(
        isinstance(node, ast.Assign) and any(
            isinstance(t, ast.Name) and t.id == ENTRY_POINT for t in node.targets)
        for node in tree.body
    )
    # KernelBench's answer, a module class: taken where the operator declares a module
    # contract (kgb_core/module_contract.py); the runner refuses it anywhere else.
    # GPU MODE's, custom_kernel(data), likewise.
    defines_entry = defines_entry or any(
        (isinstance(node, ast.ClassDef) and node.name == MODULE_CLASS)
        or (isinstance(node, ast.FunctionDef) and node.name == PACKED_FUNCTION)
        for node in tree.body)
    if not defines_entry:
        return ScreenFinding(verdicts.SCREEN_REJECTED,
                             f"no top-level `{ENTRY_POINT}` is defined (the candidate contract "
                             f"asks for `def {ENTRY_POINT}(...)`)")
    try:
        _scan(tree)
    except _Refusal as refusal:
        return ScreenFinding(verdicts.SCREEN_REJECTED,
                             f"{refusal.message} (line {refusal.line})", refusal.line)
    return None
