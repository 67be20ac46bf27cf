"""Code structure of a repository's history in the fact graph: ingest speed, and a differential against a direct
tree-sitter count over the files of the last commit.

Run: python evals/code_structure.py REPO [--rev REV] [--python]

Ingests the first-parent history up to REV into a fresh database (files/s, commits/s, seconds, peak RSS), then
compares, per language, what the graph holds as valid now (functions and methods, :calls edges, :depends-on
edges, through FactStore queries) with a count made directly from the files of REV (`git archive`) parsed by
core/code: functions are counted per module (Go: directory; else file), calls by the same by-name rule
(codefacts.callee_of), imports resolved on the file system. Any difference is a fact the history walk left open
or closed wrongly. With --python, compares the stdlib `ast` reading of the Python files of REV (pycode.py)
with tree-sitter's: definitions, imports, calls found, and the time each takes.
"""

from __future__ import annotations

import argparse
import io
import os
import posixpath
import resource
import subprocess
import tarfile
import tempfile
import time
from collections import defaultdict
from pathlib import Path

from tempera.core.code import FileCode, parse
from tempera.core.code.parse import language_of
from tempera.core.languages import LANGUAGES
from tempera.core.migrations import connect
from tempera.facts import FactStore
from tempera.facts.codefacts import callee_of, functions_of, script_import, script_module
from tempera.facts.ingest_git import ingest
from tempera.facts.pycode import ModuleIndex, analyse

Counts = dict[str, dict[str, int]]  # language -> {"functions", "calls", "depends-on"} -> count
COMPARED = ("go", "typescript", "javascript")  # the languages whose imports _target resolves
KINDS = ("functions", "calls", "depends-on")


def graph_counts(store: FactStore) -> Counts:
    """What the graph holds as valid now, per language of the file a fact comes from (Python left out)."""
    found: dict[str, dict[str, set[object]]] = defaultdict(lambda: defaultdict(set))
    for f, path in store.query("[:find ?f ?p :where [?f :name _] [?f :file ?p]]").rows:
        if str(f).startswith(":function/"):
            found[_language(path)]["functions"].add(f)
    for a, b, path in store.query("[:find ?a ?b ?p :where [?a :calls ?b] [?a :file ?p]]").rows:
        found[_language(path)]["calls"].add((a, b))
    for m, d, language in store.query("[:find ?m ?d ?l :where [?m :depends-on ?d] [?m :language ?l]]").rows:
        found[language]["depends-on"].add((m, d))
    return {k: {what: len(counts[what]) for what in KINDS} for k, counts in found.items() if k in COMPARED}


def _language(path: str) -> str:
    return LANGUAGES.get(posixpath.splitext(path)[1], "")


def direct_counts(root: Path) -> Counts:
    """The same counts straight from the files under root, parsed by core/code."""
    files = sorted(str(p.relative_to(root)) for p in root.rglob("*") if p.is_file())
    gomods = {}
    for gomod in root.rglob("go.mod"):
        gomods[gomod.read_text().split("module", 1)[1].split()[0]] = str(gomod.parent.relative_to(root))
    units: dict[tuple[str, str], list[tuple[str, FileCode]]] = defaultdict(list)
    for path in files:
        language = language_of(path)
        code = parse(path, (root / path).read_bytes()) if _language(path) in COMPARED else None
        if code is not None:
            key = f"module/{posixpath.dirname(path) or '.'}" if language == "go" else f"module/{script_module(path)}"
            units[(_language(path), key)].append((path, code))
    out: Counts = defaultdict(lambda: dict.fromkeys(KINDS, 0))
    for (language, key), parsed in units.items():
        functions = functions_of(c for _, c in parsed)
        calls = {(a, callee_of(a, b, functions)) for _, c in parsed for a, b in c.calls}
        deps = {t for path, c in parsed for i in c.imports if (t := _target(gomods, path, i)) != key}
        out[language]["functions"] += len(functions)
        out[language]["calls"] += len({(a, b) for a, b in calls if b is not None and b != a})
        out[language]["depends-on"] += len(deps - {None})
    return out


def _target(gomods: dict[str, str], path: str, spec: str) -> str | None:
    """Where an import of a Go or TS/JS file leads: "module/<name>", "package/<name>", or None (no edge). Go's is
    found here from the go.mod files; TS/JS's is the rule the graph uses (codefacts.script_import), since it reads
    the import's text alone."""
    if not path.endswith(".go"):
        target = script_import(path, spec)
        return target.name if target is not None else None
    module = max((m for m in gomods if spec == m or spec.startswith(m + "/")), key=len, default=None)
    if module is None:
        return f"package/{spec}"
    return "module/" + os.path.normpath(os.path.join(gomods[module], spec[len(module) + 1 :]))


def checkout(repo: str, rev: str, into: Path) -> Path:
    """The files of one commit, as `git archive` writes them."""
    data = subprocess.run(["git", "-C", repo, "archive", rev], check=True, capture_output=True).stdout
    with tarfile.open(fileobj=io.BytesIO(data)) as tar:
        tar.extractall(into, filter="data")
    return into


def python_comparison(root: Path) -> None:
    """ast (pycode.py) against tree-sitter (core/code) on the Python files under root."""
    files = sorted(str(p.relative_to(root)) for p in root.rglob("*.py"))
    sources = {p: (root / p).read_bytes() for p in files}
    index = ModuleIndex(files)
    started = time.perf_counter()
    structures = [analyse(s.decode("utf-8", errors="replace"), p, index) for p, s in sources.items()]
    ast_seconds = time.perf_counter() - started
    started = time.perf_counter()
    codes = [parse(p, s) for p, s in sources.items()]
    ts_seconds = time.perf_counter() - started
    ok = [s for s in structures if s is not None]
    print(f"python files: {len(files)} (ast could not parse {len(files) - len(ok)})")
    print(
        f"ast:         {sum(len(s.functions) + len(s.classes) for s in ok)} definitions, "
        f"{sum(len(s.imports) + len(s.external) for s in ok)} imports (modules resolved: "
        f"{sum(len(s.imports) for s in ok)}), {sum(len(s.calls) for s in ok)} calls resolved, {ast_seconds:.2f} s"
    )
    found = [c for c in codes if c is not None]
    same_file = 0
    for c in found:
        functions = functions_of([c])
        same_file += len({(a, t) for a, b in c.calls if (t := callee_of(a, b, functions)) and t != a})
    print(
        f"tree-sitter: {sum(len(c.definitions) for c in found)} definitions, {sum(len(c.imports) for c in found)} "
        f"imports, {sum(len(c.calls) for c in found)} calls by name ({same_file} resolved in their file), "
        f"{ts_seconds:.2f} s"
    )


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("repo")
    parser.add_argument("--rev", default="HEAD")
    parser.add_argument("--python", action="store_true", help="compare ast and tree-sitter on the Python files")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        root = checkout(args.repo, args.rev, Path(tmp) / "tree")
        if args.python:
            python_comparison(root)
            return
        db = connect(Path(tmp) / "facts.db")
        store = FactStore(db)
        started = time.perf_counter()
        report = ingest(store, args.repo, rev=args.rev)
        seconds = time.perf_counter() - started
        log = ["git", "-C", args.repo, "log", "--first-parent", "--format=", "--name-only", args.rev]
        files = sum(
            1 for line in subprocess.run(log, check=True, capture_output=True, text=True).stdout.split("\n") if line
        )
        rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
        print(
            f"ingest: {report.commits} commits, {files} file changes, {seconds:.1f} s, "
            f"{report.commits / seconds:.1f} commits/s, {files / seconds:.1f} files/s, peak RSS {rss:.0f} MB, "
            f"{report.unparsed_files} unparsed file versions"
        )
        graph, direct = graph_counts(store), direct_counts(root)
        for language in sorted(set(graph) | set(direct)):
            for what in KINDS:
                g, d = graph.get(language, {}).get(what, 0), direct[language][what]
                print(f"{language:11} {what:10} graph {g:6}  direct {d:6}  {'ok' if g == d else 'DIFFERS'}")
        db.close()


if __name__ == "__main__":
    main()
