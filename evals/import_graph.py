"""The package import graph of tempera/: how many import statements in each package name another package.

Reads the source with `ast` (nothing is imported), so it runs on any checkout:
`python evals/import_graph.py [tempera dir]`. Each line is `from -> to  count`; the arrows ARCHITECTURE.md
allows point down (entry points -> features -> core), so any line starting `core ->` or ending `-> hooks` from
another package is a crossing. `tempera` is the top package's own `__init__.py`: the version, and the
wiring of a package above core into core (core/project_movers.py).
"""

from __future__ import annotations

import argparse
import ast
import sys
from collections import Counter
from pathlib import Path


def package_of(module: str) -> str | None:
    """`tempera.core.config` -> `core`; None for a module outside tempera."""
    parts = module.split(".")
    if parts[0] != "tempera":
        return None
    return parts[1] if len(parts) > 1 else "tempera"


def imported_modules(tree: ast.AST, here: str) -> list[str]:
    """The absolute module names a file imports (relative imports resolved against `here`, its package)."""
    out: list[str] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out.extend(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = here.split(".")[: len(here.split(".")) - node.level + 1]
                out.append(".".join(base + ([node.module] if node.module else [])))
            elif node.module:
                out.append(node.module)
                # `from tempera import hooks` names the package in the alias
                if node.module == "tempera":
                    out.extend(f"tempera.{alias.name}" for alias in node.names)
    return out


def graph(root: Path) -> Counter[tuple[str, str]]:
    counts: Counter[tuple[str, str]] = Counter()
    packages = {d.name for d in root.iterdir() if (d / "__init__.py").exists()} | {"tempera"}
    for path in sorted(root.rglob("*.py")):
        parts = path.relative_to(root.parent).with_suffix("").parts
        module = ".".join(parts[:-1] if path.name == "__init__.py" else parts)
        source = package_of(module)
        here = module if path.name == "__init__.py" else module.rsplit(".", 1)[0]
        for name in imported_modules(ast.parse(path.read_text(encoding="utf-8")), here):
            target = package_of(name)
            if source in packages and target in packages and target != source:
                counts[(source, target)] += 1
    return counts


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "root",
        nargs="?",
        type=Path,
        default=Path(__file__).resolve().parent.parent / "tempera",
        help="the tempera package directory to read (default: this checkout's)",
    )
    args = parser.parse_args(argv[1:])
    if not (args.root / "__init__.py").is_file():
        parser.error(f"{args.root} is not a package directory (no __init__.py)")
    for (source, target), n in sorted(graph(args.root).items()):
        print(f"{source:>12} -> {target:<12} {n}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
