"""The shape of tempera/ in a few figures, to compare a checkout before and after a structural change.

`python evals/structure.py [tempera dir]` prints: lines of Python (all, as `wc -l` counts them, and code: not blank,
not a `#` comment; docstrings count as code), in total and per package; the module import circles
(evals/import_graph.py: how many, and the largest, counting the imports that run at import time, those that run at
all, lazy ones inside functions too, and every import, those for the type checker too); the pairs of places that
share six or more lines (`duplicates --repo`, a tool on PATH); and how many functions take a `Memory` (a parameter
annotated `Memory`, whatever its name, and those named `mem`), the service locator #41 counts. It reads the files
(`ast`), imports none of them, so it runs on any checkout.
"""

from __future__ import annotations

import ast
import re
import shutil
import subprocess
import sys
from collections import Counter
from pathlib import Path

from import_graph import circles, imports, package_of, tempera_dir


def line_counts(root: Path) -> tuple[Counter[str], Counter[str]]:
    """Per package (`tempera` for the top `__init__.py`): every line, and the code lines."""
    lines: Counter[str] = Counter()
    code: Counter[str] = Counter()
    for path in sorted(root.rglob("*.py")):
        package = package_of(".".join(path.relative_to(root.parent).parts[:-1])) or "tempera"
        text = path.read_text(encoding="utf-8").splitlines()
        lines[package] += len(text)
        code[package] += sum(1 for line in text if line.strip() and not line.lstrip().startswith("#"))
    return lines, code


def _names_memory(annotation: ast.expr | None) -> bool:
    """`Memory`, `"Memory"`, `core.memory.Memory`."""
    if isinstance(annotation, ast.Constant) and isinstance(annotation.value, str):
        return annotation.value.strip() == "Memory" or annotation.value.endswith(".Memory")
    if isinstance(annotation, ast.Name):
        return annotation.id == "Memory"
    return isinstance(annotation, ast.Attribute) and annotation.attr == "Memory"


def memory_takers(root: Path) -> tuple[int, int]:
    """Functions with a parameter annotated `Memory`: any, and those where it is named `mem`."""
    any_name = named_mem = 0
    for path in sorted(root.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                a = node.args
                params = [p for p in [*a.posonlyargs, *a.args, *a.kwonlyargs] if _names_memory(p.annotation)]
                any_name += bool(params)
                named_mem += any(p.arg == "mem" for p in params)
    return any_name, named_mem


def duplicate_pairs(root: Path) -> str:
    """`duplicates --repo`'s count line: its pairs of places, or why there is none."""
    if shutil.which("duplicates") is None:
        return "not measured: `duplicates` is not on PATH"
    done = subprocess.run(
        ["duplicates", "--repo", str(root), "--most", "1", "--seconds", "120"],
        capture_output=True,
        text=True,
        check=False,
    )
    first = (done.stdout.splitlines() or ["no output"])[0]
    incomplete = [line for line in done.stdout.splitlines() if line.startswith("incomplete:")]
    found = re.match(r"(\d+) pairs? of places", first)
    pairs = found.group(1) if found else "0" if first.startswith("no duplicates") else "?"
    return f"{pairs}  ({first}{'; ' + incomplete[0] if incomplete else ''})"


def commit(root: Path) -> str:
    """The checkout's commit, so that a "before" and an "after" say what they measured."""
    head = subprocess.run(["git", "-C", str(root), "rev-parse", "--short", "HEAD"], capture_output=True, text=True)
    if head.returncode:
        return "not a git checkout"
    dirty = subprocess.run(["git", "-C", str(root), "status", "--porcelain", "--", "."], capture_output=True, text=True)
    return head.stdout.strip() + (" with uncommitted changes" if dirty.stdout.strip() else "")


def report(root: Path) -> list[str]:
    lines, code = line_counts(root)
    out = [f"{root} at {commit(root)}"]
    out += [
        f"tempera/ lines (wc -l): {sum(lines.values())}",
        f"tempera/ code lines (not blank, not #): {sum(code.values())}",
    ]
    out.append("per package: wc -l / code")
    out += [
        f"  {package:<12} {lines[package]:>6} {code[package]:>6}" for package in sorted(lines, key=lambda p: -lines[p])
    ]
    found = imports(root)
    for kind in ("top", "run", "all"):
        found_circles = circles(found, kind)
        largest = found_circles[0] if found_circles else frozenset()
        sizes = " ".join(str(len(c)) for c in found_circles) or "-"
        out.append(f"module import circles ({kind} imports): {len(found_circles)}  (sizes {sizes})")
        if largest:
            out.append(f"  largest, {len(largest)}: {' '.join(sorted(largest))}")
    out.append(f"duplicates --repo pairs: {duplicate_pairs(root)}")
    any_name, named_mem = memory_takers(root)
    out.append(f"functions taking a Memory: {any_name} (as `mem: Memory`: {named_mem})")
    return out


def main(argv: list[str]) -> int:
    print("\n".join(report(tempera_dir(argv, __doc__.split("\n\n")[0]))))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
