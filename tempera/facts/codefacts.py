"""Code structure of the languages tree-sitter parses (core/code) -> facts, the way pycode.py does it for Python.

A *unit* is what one module entity stands for, as the language has it: Go's package is its directory (all its
.go files), a TypeScript, JavaScript or Rust module is its file, a Java module is its package + class (the file's
`package` and its name). Facts are computed per unit, so a change to one file of a Go package is compared with the
whole package before and after it.

Imports become :depends-on edges to the internal module they name (a directory of the repository under go.mod's
module path, a relative TS/JS path, a Rust `crate::`/`self::`/`super::` path to a module file, a Java class under
the file's own package prefix), or to :package/<name> when they name an outside package; an import of a
stylesheet, image or JSON file and a TS path alias give no edge. Calls are resolved by name inside the unit only:
a method of the caller's own owner first, then a top-level function; anything else gives no edge (no type
inference).
"""

from __future__ import annotations

import functools
import posixpath
import re
from collections import defaultdict
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from tempera.core.code import FileCode, parse
from tempera.core.code.parse import FUNCTIONS, language_of
from tempera.core.languages import LANGUAGES
from tempera.facts.pycode import ModuleIndex
from tempera.facts.values import Keyword

Fact = tuple[Keyword, Keyword, Any]
UNSAFE = re.compile(r"[^A-Za-z0-9*+!\-_?<>=.$%&/']")
NAMESPACES = {"function": "function", "method": "function", "class": "class", "interface": "interface", "type": "type"}
OWNERS = ("class", "interface", "type")
SCRIPT_SUFFIXES = (".ts", ".tsx", ".mts", ".cts", ".js", ".jsx", ".mjs", ".cjs")
ASSETS = {".css", ".scss", ".sass", ".less", ".json", ".svg", ".png", ".jpg", ".jpeg", ".gif", ".webp", ".ico", ".html"}
ASSETS |= {".md", ".txt", ".wasm", ".woff", ".woff2", ".ttf", ".yaml", ".yml", ".graphql", ".gql", ".vue", ".svelte"}
JAVA_PACKAGE = re.compile(rb"^\s*package\s+([\w.]+)\s*;", re.MULTILINE)
GO_MODULE = re.compile(r"^\s*module\s+(\S+)", re.MULTILINE)
RUST_ROOTS = ("lib.rs", "main.rs", "mod.rs")


def kw(namespace: str, name: str) -> Keyword:
    """A keyword such as :module/pkg.mod; characters a keyword cannot hold become '_'."""
    return Keyword(f":{namespace}/{UNSAFE.sub('_', name).strip('/') or '_'}")


def attr(name: str) -> Keyword:
    return Keyword(f":{name}")


PATH, LANGUAGE, DEFINED_IN, DEPENDS_ON = attr("path"), attr("language"), attr("defined-in"), attr("depends-on")
NAME, FILE, CONTAINS, CALLS = attr("name"), attr("file"), attr("contains"), attr("calls")


class Snapshot:
    """One commit's files, read as needed: the lookups that name units and resolve imports."""

    def __init__(self, blobs: Mapping[str, Any], parsed: ParseCache) -> None:
        self.blobs = blobs  # path -> git blob (core/gitrepo.blobs)
        self.paths = blobs.keys()
        self.parsed = parsed
        self.units: dict[str, set[Fact]] = {}  # a commit's units serve again when it is the next one's parent

    def unit_facts(self, unit: str) -> set[Fact]:
        if unit not in self.units:
            self.units[unit] = unit_facts(self, unit)
        return self.units[unit]

    @functools.cached_property
    def python(self) -> ModuleIndex:
        return ModuleIndex([p for p in self.paths if p.endswith(".py")])

    @functools.cached_property
    def by_dir(self) -> dict[str, list[str]]:
        out: dict[str, list[str]] = defaultdict(list)
        for p in sorted(self.paths):
            out[posixpath.dirname(p)].append(p)
        return out

    @functools.cached_property
    def go_modules(self) -> list[tuple[str, str]]:
        """(module path, its directory) of each go.mod, the longest module path first."""
        found = []
        for p in self.paths:
            if posixpath.basename(p) == "go.mod":
                m = GO_MODULE.search(self.source(p).decode("utf-8", errors="replace"))
                if m:
                    found.append((m.group(1), posixpath.dirname(p)))
        return sorted(found, key=lambda pair: len(pair[0]), reverse=True)

    def source(self, path: str) -> bytes:
        return bytes(self.blobs[path].data_stream.read())

    def code(self, path: str) -> FileCode | None:
        return self.parsed.get(self.blobs[path].hexsha, path, lambda: self.source(path))


class ParseCache:
    """Parsed files by blob: a file unchanged across commits is parsed once (each commit is the next's parent)."""

    def __init__(self, limit: int = 50_000) -> None:
        self.limit = limit
        self.entries: dict[tuple[str, str], FileCode | None] = {}

    def get(self, blob: str, path: str, read: Callable[[], bytes]) -> FileCode | None:
        key = (blob, language_of(path) or "")
        if key not in self.entries:
            if len(self.entries) >= self.limit:
                self.entries.clear()
            self.entries[key] = parse(path, read())
        return self.entries[key]


def unit_of(path: str) -> str | None:
    """The unit a parsed file belongs to (Go: its directory, prefixed `go:`), None when no grammar reads it."""
    language = language_of(path)
    if language is None or language == "python":
        return None
    return f"go:{posixpath.dirname(path)}" if language == "go" else f"file:{path}"


def context_units(snaps: tuple[Snapshot, Snapshot], path: str) -> set[str]:
    """Units whose imports resolve differently once `path` appears, goes or changes: every Go package when a
    go.mod changes, every file of a Rust crate when one of its module files comes or goes."""
    if posixpath.basename(path) == "go.mod":
        return {
            f"go:{d}" for snap in snaps for d, files in snap.by_dir.items() if any(f.endswith(".go") for f in files)
        }
    if not path.endswith(".rs"):
        return set()
    crate = {_rust_crate_dir(snap, path) for snap in snaps}
    return {f"file:{p}" for snap in snaps for p in snap.paths if p.endswith(".rs") and _within(p, crate)}


def _within(path: str, directories: set[str]) -> bool:
    return any(not d or path.startswith(d + "/") for d in directories)


def unit_facts(snap: Snapshot, unit: str) -> set[Fact]:
    """The structural facts of one unit at one commit (none when it has no parsed file there)."""
    kind, _, where = unit.partition(":")
    files = [p for p in snap.by_dir.get(where, []) if p.endswith(".go")] if kind == "go" else [where]
    parsed = [(p, code) for p in files if p in snap.paths and (code := snap.code(p)) is not None]
    if not parsed:
        return set()
    first_path, first = parsed[0]
    name = (where or ".") if kind == "go" else module_name(first_path, first.language, snap)
    module = kw("module", name)
    language = LANGUAGES.get(posixpath.splitext(first_path)[1].lower(), first.language)  # `.mts` is in one table only
    facts: set[Fact] = {(module, PATH, where or "."), (module, LANGUAGE, language)}
    entities: dict[str, Keyword] = {}
    for path, code in parsed:
        facts.add((module, DEFINED_IN, kw("file", path)))
        facts |= {(module, DEPENDS_ON, t) for i in code.imports if (t := resolve(snap, path, code, i, name))}
        for d in code.definitions:
            entities.setdefault(d.qualified, kw(NAMESPACES[d.kind], f"{name}.{d.qualified}"))
            e = entities[d.qualified]
            facts |= {(e, NAME, d.name), (e, FILE, path)}
    owners = {d.qualified for _, code in parsed for d in code.definitions if d.kind in OWNERS}
    functions = functions_of(code for _, code in parsed)
    for path, code in parsed:
        for d in code.definitions:
            owner = d.qualified.rpartition(".")[0]
            facts.add((entities[owner] if owner in owners else module, CONTAINS, entities[d.qualified]))
        for caller, callee in code.calls:
            target = callee_of(caller, callee, functions)
            if target is not None and target != caller:
                facts.add((entities[caller], CALLS, entities[target]))
    facts.discard((module, DEPENDS_ON, module))
    return facts


def functions_of(codes: Iterable[FileCode]) -> set[str]:
    """The qualified names of the functions and methods some files define: what `callee_of` resolves calls to."""
    return {d.qualified for code in codes for d in code.definitions if d.kind in FUNCTIONS}


def callee_of(caller: str, callee: str, functions: set[str]) -> str | None:
    """The unit's function a call by name reaches: the caller's owner's method, else a top-level function."""
    owner = caller.rpartition(".")[0]
    if owner and f"{owner}.{callee}" in functions:
        return f"{owner}.{callee}"
    return callee if callee in functions else None


def module_name(path: str, language: str, snap: Snapshot) -> str:
    """The module a file is (not Go, whose module is its directory): Java's package + class, Rust's file, a
    TS/JS file as its imports name it (script_module)."""
    stem = posixpath.splitext(path)[0]
    if language == "java":
        m = JAVA_PACKAGE.search(snap.source(path))
        return f"{m.group(1).decode()}.{posixpath.basename(stem)}" if m else posixpath.basename(stem)
    return stem if language == "rust" else script_module(path)


def script_module(path: str) -> str:
    """A TS/JS module's name: its path without the extension, and a folder's `index` file is the folder."""
    stem = posixpath.splitext(path)[0].removesuffix(".d")
    return posixpath.dirname(stem) or stem if posixpath.basename(stem) == "index" else stem


def resolve(snap: Snapshot, path: str, code: FileCode, spec: str, module: str) -> Keyword | None:
    """The :module/ or :package/ an import names, or None when it names nothing the graph should hold.

    Go, TS/JS and Java imports resolve from their text alone (and go.mod), so a file's edges do not depend on which
    other files exist; Rust's depend on the crate's module files, and its units are read again when those change.
    """
    if code.language == "go":
        return _resolve_go(snap, spec)
    if code.language == "java":
        return _resolve_java(module, spec)
    if code.language == "rust":
        return _resolve_rust(snap, path, spec)
    return script_import(path, spec)


def _resolve_go(snap: Snapshot, spec: str) -> Keyword:
    for module, directory in snap.go_modules:
        if spec == module or spec.startswith(module + "/"):
            return kw("module", posixpath.join(directory, spec[len(module) + 1 :]).strip("/") or ".")
    return kw("package", spec)


def script_import(path: str, spec: str) -> Keyword | None:
    """A TS/JS import: a relative one is the module at that path (none for a stylesheet, image or JSON file), a
    bare one the package (`@scope/name` or `name`); a project path alias (`@/x`, `~/x`, `#x`) gives none."""
    if spec.startswith("."):
        target = posixpath.normpath(posixpath.join(posixpath.dirname(path), spec))
        if posixpath.splitext(target)[1].lower() in ASSETS or target.startswith("../"):
            return None  # not code, or outside the repository
        named = target if target.endswith(SCRIPT_SUFFIXES) else f"{target}.js"  # `./quota.store` has no extension
        return kw("module", script_module(named))
    if spec.startswith(("/", "@/", "~", "#")):
        return None
    parts = spec.split("/")
    return kw("package", "/".join(parts[:2]) if spec.startswith("@") else parts[0])


def _resolve_java(module: str, spec: str) -> Keyword | None:
    """A class of the project (an import under the first two segments of the file's own package: the module of
    that class), else the outside package; a whole package of the project (`.*`) gives none."""
    parts = spec.split(".")
    first_class = next((i for i, p in enumerate(parts) if p[:1].isupper()), None)
    package = [p for p in parts[:first_class] if p != "*"]
    own = module.split(".")[:-1][:2]
    if own and package[: len(own)] == own:
        return kw("module", ".".join(parts[: first_class + 1])) if first_class is not None else None
    return kw("package", ".".join(package)) if package else None


def _resolve_rust(snap: Snapshot, path: str, spec: str) -> Keyword | None:
    segments = [s for s in spec.split("::") if s and not any(c in s for c in "{* ")]
    if not segments:
        return None
    head = segments[0]
    directory = _rust_children(path)
    if head == "crate":
        directory = _rust_crate_dir(snap, path)
    elif head == "super":
        directory = posixpath.dirname(directory)
        while segments[1:2] == ["super"]:
            segments.pop(0)
            directory = posixpath.dirname(directory)
    elif head != "self":
        if _rust_module(snap, directory, head) is None:
            return kw("package", head)  # a crate: std, serde...
        segments.insert(0, "self")  # a child module named without `self::`
    found = _rust_module_file(snap, directory)
    for segment in segments[1:]:
        child = _rust_module(snap, directory, segment)
        if child is None:
            break
        found, directory = child, posixpath.join(directory, segment)
    if found is None:
        return None
    return kw("module", posixpath.splitext(found)[0])


def _rust_children(path: str) -> str:
    """The directory a Rust file's child modules live in."""
    directory, base = posixpath.split(path)
    return directory if base in RUST_ROOTS else posixpath.join(directory, base[:-3])


def _rust_crate_dir(snap: Snapshot, path: str) -> str:
    directory = posixpath.dirname(path)
    while directory and not any(posixpath.join(directory, r) in snap.paths for r in RUST_ROOTS[:2]):
        directory = posixpath.dirname(directory)
    return directory


def _rust_module(snap: Snapshot, directory: str, name: str) -> str | None:
    for candidate in (posixpath.join(directory, f"{name}.rs"), posixpath.join(directory, name, "mod.rs")):
        if candidate in snap.paths:
            return candidate
    return None


def _rust_module_file(snap: Snapshot, directory: str) -> str | None:
    """The file that is the module whose children live in a directory."""
    for root in RUST_ROOTS:
        if posixpath.join(directory, root) in snap.paths:
            return posixpath.join(directory, root)
    return f"{directory}.rs" if f"{directory}.rs" in snap.paths else None
