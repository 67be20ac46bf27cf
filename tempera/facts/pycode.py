"""Python source -> its structure: the modules it imports, the functions and classes it defines, and which of
its functions call which (best effort, by name: no type inference)."""

from __future__ import annotations

import ast
from dataclasses import dataclass, field

DEFINITIONS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)


def module_name(path: str) -> str:
    """`src/pkg/mod.py` -> `src.pkg.mod`; a package's `__init__.py` is the package itself."""
    parts = path[:-3].split("/")
    if parts[-1] == "__init__" and len(parts) > 1:
        parts.pop()
    return ".".join(parts)


class ModuleIndex:
    """The repository's Python modules at one commit, to resolve `import pkg.mod` to a file in it.

    An import resolves to the module whose dotted path equals it or ends with it (so `pkg.mod` finds
    `src/pkg/mod.py` in a src layout); when several match, the shortest wins.
    """

    def __init__(self, paths: list[str]) -> None:
        self.by_suffix: dict[str, str] = {}
        for name in sorted((module_name(p) for p in paths if p.endswith(".py")), key=len, reverse=True):
            parts = name.split(".")
            for i in range(len(parts)):
                self.by_suffix[".".join(parts[i:])] = name

    def resolve(self, dotted: str) -> str | None:
        return self.by_suffix.get(dotted)


@dataclass
class Structure:
    """What one Python file holds. Names are dotted and absolute (module.Class.method)."""

    module: str
    imports: set[str] = field(default_factory=set)  # internal modules this one imports
    external: set[str] = field(default_factory=set)  # top-level names of outside packages it imports
    functions: set[str] = field(default_factory=set)
    classes: set[str] = field(default_factory=set)
    members: set[tuple[str, str]] = field(default_factory=set)  # (module or class, what it defines)
    calls: set[tuple[str, str]] = field(default_factory=set)  # (caller, callee)


def analyse(source: str, path: str, index: ModuleIndex) -> Structure | None:
    """The structure of a Python file, or None when it does not parse."""
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError):
        return None
    out = Structure(module_name(path))
    aliases: dict[str, str] = {}  # local name -> the absolute dotted name it stands for
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                _depend(out, index, alias.name)
                aliases[alias.asname or alias.name.split(".")[0]] = (
                    alias.name if alias.asname else alias.name.split(".")[0]
                )
        elif isinstance(node, ast.ImportFrom):
            base = _absolute(out.module, path, node.module or "", node.level)
            for alias in node.names:
                full = f"{base}.{alias.name}" if base else alias.name
                _depend(out, index, full if index.resolve(full) else base or full)
                aliases[alias.asname or alias.name] = full
    top_level = {n.name for n in tree.body if isinstance(n, DEFINITIONS)}
    _define(out, tree.body, out.module, _Names(out.module, aliases, index, top_level), None)
    return out


def _absolute(module: str, path: str, name: str, level: int) -> str:
    """The absolute name of `from <level dots><name> import ...`."""
    if level == 0:
        return name
    package = module.split(".")
    if not path.endswith("__init__.py"):
        package = package[:-1]
    package = package[: len(package) - (level - 1)]
    return ".".join(package + ([name] if name else []))


def _depend(out: Structure, index: ModuleIndex, dotted: str) -> None:
    target = index.resolve(dotted)
    if target is None:
        out.external.add(dotted.split(".")[0])
    elif target != out.module:
        out.imports.add(target)


@dataclass
class _Names:
    """How names inside one module resolve to absolute names of this repository's functions."""

    module: str
    aliases: dict[str, str]
    index: ModuleIndex
    top_level: set[str]  # functions and classes defined at module level

    def callee(self, dotted: str | None, cls: str | None, methods: set[str]) -> str | None:
        if dotted is None:
            return None
        head, _, rest = dotted.partition(".")
        if head == "self" and cls is not None:
            return f"{cls}.{rest}" if rest in methods else None
        if not rest and head in self.top_level:
            return f"{self.module}.{head}"
        if head not in self.aliases:
            return None
        owner, _, name = (self.aliases[head] + (f".{rest}" if rest else "")).rpartition(".")
        module = self.index.resolve(owner) if owner else None
        return f"{module}.{name}" if module else None


def _define(out: Structure, body: list[ast.stmt], container: str, names: _Names, cls: str | None) -> None:
    methods = {n.name for n in body if isinstance(n, DEFINITIONS)} if cls else set()
    for node in body:
        if isinstance(node, ast.ClassDef) and cls is None:
            name = f"{container}.{node.name}"
            out.classes.add(name)
            out.members.add((container, name))
            _define(out, node.body, name, names, name)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            name = f"{container}.{node.name}"
            out.functions.add(name)
            out.members.add((container, name))
            for call in (n for n in ast.walk(node) if isinstance(n, ast.Call)):
                callee = names.callee(_dotted(call.func), cls, methods)
                if callee and callee != name:
                    out.calls.add((name, callee))


def _dotted(expr: ast.expr) -> str | None:
    if isinstance(expr, ast.Name):
        return expr.id
    if isinstance(expr, ast.Attribute):
        head = _dotted(expr.value)
        return f"{head}.{expr.attr}" if head else None
    return None
