"""The import graph of tempera/: the package graph, the imports that cross ARCHITECTURE.md's layers, and the circles.

Reads the source with `ast` (nothing is imported), so it runs on any checkout:
`python evals/import_graph.py [tempera dir]`. It prints three parts:
- the package graph, one `from -> to  count` line per pair of packages (count: import statements);
- every crossing, an import that does not point down the layers (entry points -> features -> the top package ->
  core), marked `allowed` when ALLOWED_CROSSINGS lists it (with its reason) and `NEW` when not;
- the module-level import circles (strongly connected components of the module graph), once counting only the
  imports that run when a module is imported (`top`) and once counting every import, those inside functions and
  under `if TYPE_CHECKING:` too (`all`), each marked `allowed` when it lies inside one of ALLOWED_CIRCLES.
It exits 1 when there is anything `NEW`; tests/core/test_architecture.py runs the same check.

`tempera` is the top package's own `__init__.py`: the version, and the wiring of a package above core into core
(core/project_movers.py). It sits between core and the features: it imports core, everything above imports it.
"""

from __future__ import annotations

import argparse
import ast
import sys
from collections import Counter, defaultdict
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

# The layers, lowest first: an import may point from a package to one on a lower layer, never sideways or up.
LAYERS: dict[str, int] = {
    "core": 0,
    "tempera": 1,
    **dict.fromkeys(("inject", "transcripts", "dream", "facts", "team", "evaluation"), 2),
    **dict.fromkeys(("cli", "hooks", "mcp_server", "ui", "daemon", "installer"), 3),
}

# The crossings kept on purpose, grouped by why; each entry is `importing module -> imported module`. Core imports
# nothing above it, so no entry starts in core (the test checks that too).
ALLOWED_CROSSINGS: dict[str, tuple[str, ...]] = {
    "a prompt's answer shows the currently valid facts the prompt names": (
        "tempera.inject.warm -> tempera.facts.promptfacts",
    ),
    "after a compaction SessionStart answers with the work in progress, read from the transcript (imported when "
    "called)": ("tempera.inject.sessionstart -> tempera.transcripts.inprogress",),
    "the fusion refit searches again with the prompt the hook searched with; draft.py, which folds later prompts "
    "into a stored prompt, is the one that takes them out again (`asked_prompt`)": (
        "tempera.inject.fusionfit -> tempera.transcripts.draft",
    ),
    "capture hands its turns to the fact extraction, which reads them through its own `TurnText` protocol and "
    "imports no transcript code (imported when called)": ("tempera.transcripts.pipeline -> tempera.facts.turnfacts",),
    "the dream's contradiction check reads the stances of the fact graph (imported when called)": (
        "tempera.dream.contradictions -> tempera.facts",
    ),
    "team sync pushes and pulls the facts of shared turns through FactStore; the team's fact tables point into "
    "the fact graph's, so its migrations run first": (
        "tempera.team.sync -> tempera.facts.store",
        "tempera.team.kinds -> tempera.facts.store",
        "tempera.team.local -> tempera.facts.schema",
    ),
    "the top package registers the fact graph's part of a project merge, since core imports no package above it "
    "(core/project_movers.py; imported when a merge runs)": ("tempera -> tempera.facts.store",),
    "starting the browser is what `tempera ui` is": ("tempera.cli.ui -> tempera.ui.server",),
    "the CLI's install, uninstall, doctor and its remedies are the installer's front": (
        "tempera.cli.install -> tempera.installer",
        "tempera.cli.install -> tempera.installer.changes",
        "tempera.cli.remedies -> tempera.installer",
        "tempera.cli.admin -> tempera.installer",
        "tempera.cli.admin -> tempera.installer.status",
    ),
    "the CLI asks and starts the daemon through the hooks' client, the one speaker of the socket protocol, runs "
    "the daemon in the foreground (`tempera daemon run`) and reads its failure marker from its log": (
        "tempera.cli.daemon -> tempera.hooks.client",
        "tempera.cli.install -> tempera.hooks.client",
        "tempera.cli.admin -> tempera.hooks.client",
        "tempera.cli.daemon -> tempera.daemon.server",
    ),
    "the daemon reads and answers in the one framing of the hook <-> daemon socket, hooks/wire.py, which relay.py "
    "loads by its path (so it lies beside it)": ("tempera.daemon.server -> tempera.hooks.wire",),
    "the hook command the installer writes names relay.py where the hooks package lies": (
        "tempera.installer.locations -> tempera.hooks",
    ),
    "the MCP end-of-turn tool captures as the Stop hook's job does, with that job's own handler": (
        "tempera.mcp_server.tools_turn -> tempera.daemon.worker",
    ),
}

# The module circles kept for now, each with why; a circle found passes when all its modules are in one listed
# under its kind (one that shrinks passes, one that grows or a new one fails). `top` counts only the imports that
# run when a module is imported (a circle there can fail at import); `all` counts every import.
ALLOWED_CIRCLES: dict[Literal["top", "all"], dict[str, frozenset[str]]] = {
    "top": {},
    "all": {
        "the browser app imports its routes when it is built, and they use its render and state": frozenset(
            {"tempera.ui.app", "tempera.ui.actions", "tempera.ui.pages"}
        ),
        "the hook's two processes: relay.py falls back to entry.py without a daemon, entry.py asks the daemon "
        "through relay.py's socket call (both imported when called)": frozenset(
            {"tempera.hooks.entry", "tempera.hooks.relay"}
        ),
        "the reader keeps the records on the conversation's chain; chain.py takes the reader's Record "
        "(its type only)": frozenset({"tempera.transcripts.chain", "tempera.transcripts.reader"}),
        "the turns take their signals from signals.py, which takes the turns' ToolCall (its type only)": frozenset(
            {"tempera.transcripts.signals", "tempera.transcripts.turns"}
        ),
    },
}

When = Literal["top", "lazy", "typing"]


@dataclass(frozen=True)
class Import:
    """One imported module: who imports it, on which line, and when the import runs."""

    source: str
    target: str
    line: int
    when: When


def package_of(module: str) -> str | None:
    """`tempera.core.config` -> `core`; `tempera` -> `tempera`; None for a module outside tempera."""
    parts = module.split(".")
    if parts[0] != "tempera":
        return None
    return parts[1] if len(parts) > 1 else "tempera"


def modules_of(root: Path) -> dict[str, Path]:
    """Every module of the package at `root`, by dotted name (a package by its `__init__.py`)."""
    out: dict[str, Path] = {}
    for path in sorted(root.rglob("*.py")):
        parts = path.relative_to(root.parent).with_suffix("").parts
        out[".".join(parts[:-1] if path.name == "__init__.py" else parts)] = path
    return out


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _statements(tree: ast.Module) -> list[tuple[ast.Import | ast.ImportFrom, When]]:
    """Every import statement of a module, with when it runs: at import (`top`, class bodies and module-level
    `if`/`try` included), inside a function (`lazy`), or only for the type checker (`typing`)."""
    found: list[tuple[ast.Import | ast.ImportFrom, When]] = []

    def visit(node: ast.AST, when: When) -> None:
        if isinstance(node, ast.Import | ast.ImportFrom):
            found.append((node, when))
            return
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda) and when == "top":
            when = "lazy"
        if isinstance(node, ast.If) and _is_type_checking(node.test):
            for statement in node.body:
                visit(statement, "typing")
            for statement in node.orelse:
                visit(statement, when)
            return
        for child in ast.iter_child_nodes(node):
            visit(child, when)

    visit(tree, "top")
    return found


def _targets(node: ast.Import | ast.ImportFrom, package: str, known: set[str]) -> list[str]:
    """The tempera modules one statement imports: `from a import b` names module `a.b` when there is one, else `a`."""

    def known_prefix(name: str) -> str | None:
        parts = name.split(".")
        while parts and ".".join(parts) not in known:
            parts.pop()
        return ".".join(parts) or None

    if isinstance(node, ast.Import):
        names = [known_prefix(alias.name) for alias in node.names]
    else:
        if node.level:
            base = package.split(".")[: len(package.split(".")) - node.level + 1]
            module = ".".join(base + ([node.module] if node.module else []))
        else:
            module = node.module or ""
        names = [
            f"{module}.{alias.name}" if f"{module}.{alias.name}" in known else known_prefix(module)
            for alias in node.names
        ]
    return sorted({name for name in names if name is not None})


def imports(root: Path) -> list[Import]:
    """Every import of one tempera module by another, one per imported module per statement."""
    modules = modules_of(root)
    known = set(modules)
    out: list[Import] = []
    for module, path in modules.items():
        package = module if path.name == "__init__.py" else module.rsplit(".", 1)[0]
        for node, when in _statements(ast.parse(path.read_text(encoding="utf-8"))):
            out.extend(Import(module, target, node.lineno, when) for target in _targets(node, package, known))
    return [imp for imp in out if imp.target != imp.source]


def graph(root: Path) -> Counter[tuple[str, str]]:
    """Import statements from each package to each other package."""
    counts: Counter[tuple[str, str]] = Counter()
    seen: set[tuple[str, str, int]] = set()
    for imp in imports(root):
        source, target = package_of(imp.source), package_of(imp.target)
        if source and target and source != target and (imp.source, target, imp.line) not in seen:
            seen.add((imp.source, target, imp.line))
            counts[(source, target)] += 1
    return counts


def layer_of(package: str) -> int:
    """The package's layer; a package LAYERS does not place is an error, so a new one is placed on purpose."""
    if package not in LAYERS:
        raise ValueError(f"package {package!r} has no layer: add it to LAYERS in evals/import_graph.py")
    return LAYERS[package]


def crossings(found: list[Import]) -> dict[str, list[Import]]:
    """The imports that do not point down the layers, by `source -> target` module pair."""
    out: dict[str, list[Import]] = defaultdict(list)
    for imp in found:
        source, target = package_of(imp.source), package_of(imp.target)
        if source and target and source != target and layer_of(target) >= layer_of(source):
            out[f"{imp.source} -> {imp.target}"].append(imp)
    return dict(out)


def allowed_crossing(pair: str) -> str | None:
    """Why a crossing is kept, or None when it is new."""
    return next((why for why, pairs in ALLOWED_CROSSINGS.items() if pair in pairs), None)


def circles(found: list[Import], kind: Literal["top", "run", "all"]) -> list[frozenset[str]]:
    """The modules that import each other round a circle (strongly connected components of two or more: the
    modules each reaches and is reached from), counting only the `top` imports, those that `run` (top and lazy:
    not the type checker's), or `all` of them; largest first."""
    counted: set[When] = {"top"} if kind == "top" else {"top", "lazy"} if kind == "run" else {"top", "lazy", "typing"}
    edges: dict[str, set[str]] = defaultdict(set)
    for imp in found:
        if imp.when in counted:
            edges[imp.source].add(imp.target)

    def reached(start: str) -> set[str]:
        seen: set[str] = set()
        todo = [start]
        while todo:
            for nxt in edges.get(todo.pop(), ()):
                if nxt not in seen:
                    seen.add(nxt)
                    todo.append(nxt)
        return seen

    reach = {module: reached(module) for module in edges}
    out = {
        frozenset(m for m in reach[module] if module in reach.get(m, ())) for module in reach if module in reach[module]
    }
    return sorted(out, key=lambda c: (-len(c), sorted(c)))


def allowed_circle(circle: frozenset[str], kind: Literal["top", "all"]) -> str | None:
    """Why a circle is kept (it lies inside a listed one), or None when it is new."""
    return next((why for why, kept in ALLOWED_CIRCLES[kind].items() if circle <= kept), None)


def report(root: Path) -> tuple[list[str], int]:
    """The printed lines, and how many crossings and circles are new."""
    found = imports(root)
    lines = ["# packages: import statements from -> to"]
    lines += [f"{source:>12} -> {target:<12} {n}" for (source, target), n in sorted(graph(root).items())]
    new = 0
    lines.append("\n# crossings (imports not pointing down entry points -> features -> tempera -> core)")
    for pair, where in sorted(crossings(found).items()):
        why = allowed_crossing(pair)
        new += why is None
        at = ", ".join(f"line {imp.line} {imp.when}" for imp in where)
        lines.append(f"{'allowed' if why else 'NEW':>8}  {pair}  ({at})")
    gone = sorted(set(pair for pairs in ALLOWED_CROSSINGS.values() for pair in pairs) - set(crossings(found)))
    lines += [f"{'gone':>8}  {pair}  (allowed, no longer imported: its line can go)" for pair in gone]
    for kind in ("top", "all"):
        found_circles = circles(found, kind)
        lines.append(f"\n# module circles, {kind} imports: {len(found_circles)}")
        for circle in found_circles:
            why = allowed_circle(circle, kind)
            new += why is None
            lines.append(f"{'allowed' if why else 'NEW':>8}  {len(circle)}: {' '.join(sorted(circle))}")
    return lines, new


def tempera_dir(argv: list[str], description: str) -> Path:
    """The one argument of this script and evals/structure.py: the tempera package directory to read."""
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument(
        "root",
        nargs="?",
        type=Path,
        default=Path(__file__).resolve().parent.parent / "tempera",
        help="the tempera package directory to read (default: this checkout's)",
    )
    root: Path = parser.parse_args(argv[1:]).root
    if not (root / "__init__.py").is_file():
        parser.error(f"{root} is not a package directory (no __init__.py)")
    return root.resolve()


def main(argv: list[str]) -> int:
    lines, new = report(tempera_dir(argv, __doc__.split("\n\n")[0]))
    print("\n".join(lines))
    return 1 if new else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
