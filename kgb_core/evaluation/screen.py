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

from kgb_core.candidates import ENTRY_POINT
from kgb_core.evaluation import verdicts

# A candidate is one source file; a larger one is not a kernel (and may be an attack on the
# harness's memory or store).
MAX_SOURCE_BYTES = 1_000_000

# Top-level module names a kernel never needs, and why they are refused.
FORBIDDEN_IMPORTS = {
    "kgb_core": "the harness", "kgb_sources": "the reference implementations",
    "kgb_methods": "the harness", "kgb_backends": "the harness", "vllm": "the reference (vLLM)",
    "cupy": "a vendor library", "ctypes": "raw memory access", "cffi": "raw memory access",
    "subprocess": "other processes", "multiprocessing": "other processes",
    "threading": "work the timer cannot see", "_thread": "work the timer cannot see", "concurrent": "work the timer cannot see",
    "asyncio": "work the timer cannot see", "signal": "the harness's signals",
    "socket": "the network", "gc": "the harness's objects", "inspect": "the harness's frames",
    "sys": "the harness's modules and frames", "importlib": "hidden imports",
    "builtins": "monkeypatching builtins", "pickle": "hidden code", "marshal": "hidden code",
    "shutil": "the file system", "tempfile": "the file system", "os": "the file system and "
    "environment", "pathlib": "the file system", "io": "the file system", "glob": "the file "
    "system", "mmap": "raw memory access", "resource": "the worker's limits",
}
FORBIDDEN_CALLS = {"exec", "eval", "compile", "__import__", "globals", "locals", "vars",
                   "breakpoint", "open", "input", "setattr", "delattr"}
FORBIDDEN_ATTRIBUTES = {
    "__dict__", "__globals__", "__builtins__", "__code__", "__closure__", "__subclasses__",
    "__bases__", "__mro__", "__class__", "__getattribute__", "__reduce__", "tb_frame", "f_back",
    "f_locals", "f_globals", "gi_frame", "cr_frame", "_getframe",
}
# Attribute chains (after resolving import aliases) that reach torch's op tables, its C
# internals, dispatch-mode control or graph capture.
FORBIDDEN_CHAINS = (
    "torch.ops", "torch._C", "torch._ops", "torch.library", "torch.utils._python_dispatch",
    "torch.overrides", "torch.cuda.graph", "torch.cuda.CUDAGraph", "torch.cuda.graphs",
    "torch.cuda.make_graphed_callables", "torch.compile", "torch._dynamo", "torch._inductor",
    "torch.jit", "torch.backends", "triton.runtime.jit.JITFunction", "triton.testing",
)
MEMOIZERS = {"lru_cache", "cache", "cached_property"}
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
        self.module_containers: set[str] = set()

    # -- imports -----------------------------------------------------------------------------
    def _check_module(self, name: str, node: ast.AST) -> None:
        root = name.split(".")[0]
        if root in FORBIDDEN_IMPORTS:
            raise _Refusal(f"imports {name} ({FORBIDDEN_IMPORTS[root]})", node)
        self._check_chain(name, node)

    def visit_Import(self, node: ast.Import) -> None:
        for alias in node.names:
            self._check_module(alias.name, node)
            self.aliases[alias.asname or alias.name.split(".")[0]] = (
                alias.name if alias.asname else alias.name.split(".")[0])

    def visit_ImportFrom(self, node: ast.ImportFrom) -> None:
        if node.level:
            raise _Refusal("uses a relative import (a candidate is one file)", node)
        module = node.module or ""
        self._check_module(module, node)
        for alias in node.names:
            self._check_module(f"{module}.{alias.name}", node)
            self.aliases[alias.asname or alias.name] = f"{module}.{alias.name}"

    # -- names, calls, attributes ----------------------------------------------------------
    def _resolve(self, node: ast.AST) -> str | None:
        dotted = _dotted(node)
        if dotted is None:
            return None
        head, _, rest = dotted.partition(".")
        base = self.aliases.get(head, head)
        return f"{base}.{rest}" if rest else base

    def _check_chain(self, chain: str, node: ast.AST) -> None:
        for forbidden in FORBIDDEN_CHAINS:
            if chain == forbidden or chain.startswith(forbidden + "."):
                raise _Refusal(f"reaches {forbidden}", node)

    def visit_Attribute(self, node: ast.Attribute) -> None:
        if node.attr in FORBIDDEN_ATTRIBUTES:
            raise _Refusal(f"reads the internal attribute {node.attr}", node)
        chain = self._resolve(node)
        if chain:
            self._check_chain(chain, node)
        self.generic_visit(node)

    def visit_Name(self, node: ast.Name) -> None:
        if node.id in ("__builtins__", "__loader__", "__spec__"):
            raise _Refusal(f"uses {node.id}", node)
        chain = self.aliases.get(node.id)
        if chain:
            self._check_chain(chain, node)

    def visit_Call(self, node: ast.Call) -> None:
        if isinstance(node.func, ast.Name) and node.func.id in FORBIDDEN_CALLS:
            raise _Refusal(f"calls {node.func.id}()", node)
        if isinstance(node.func, ast.Name) and node.func.id == "getattr":
            if len(node.args) < 2 or not isinstance(node.args[1], ast.Constant):
                raise _Refusal("calls getattr with a computed attribute name", node)
            if str(node.args[1].value) in FORBIDDEN_ATTRIBUTES:
                raise _Refusal(f"reads the internal attribute {node.args[1].value}", node)
            target = self._resolve(node.args[0])
            if target:
                self._check_chain(f"{target}.{node.args[1].value}", node)
        self.generic_visit(node)

    # -- monkeypatching and caches ---------------------------------------------------------
    def _check_store(self, target: ast.AST, node: ast.AST, in_function: bool) -> None:
        if isinstance(target, ast.Attribute):
            root = _dotted(target)
            head = root.split(".")[0] if root else None
            if head in self.aliases:
                raise _Refusal(f"assigns to {root} (monkeypatching an imported module)", node)
        if isinstance(target, ast.Subscript) and in_function:
            name = _dotted(target.value)
            if name in self.module_containers:
                raise _Refusal(f"writes into the module-level container {name} from a function "
                               f"(a result cache)", node)
        if isinstance(target, (ast.Tuple, ast.List)):
            for element in target.elts:
                self._check_store(element, node, in_function)

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
    screen.visit(tree)
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
                    screen._check_store(target, node, in_function=True)
            if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                    and node.func.attr in MUTATORS
                    and _dotted(node.func.value) in screen.module_containers):
                raise _Refusal(f"mutates the module-level container {_dotted(node.func.value)} "
                               f"from a function (a result cache)", node)
    for node in tree.body:
        if isinstance(node, ast.Assign):
            for target in node.targets:
                screen._check_store(target, node, in_function=False)
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
    for name in jitted:
        function = module_level[name]
        if not isinstance(function, (ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        local = {arg.arg for arg in ast.walk(function.args) if isinstance(arg, ast.arg)}
        local |= {n.id for n in ast.walk(function) if isinstance(n, ast.Name)
                  and isinstance(n.ctx, (ast.Store, ast.Del))}
        for node in ast.walk(function):
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
        tree = ast.parse(source)
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
