"""Code structure from git history (read through `core/gitrepo.py`) into the fact graph, one transaction per commit.

Each commit of the first-parent history becomes a :commit/<sha> entity (hash, author, date, subject,
parents). Each file it adds, modifies, renames or deletes is compared with its version in the parent: the
structural facts that appear (the file, its module, imports as :depends-on, functions, classes and types,
:contains, :calls: pycode.py for Python, codefacts.py for Go, TypeScript, JavaScript, Rust and Java) become valid
from the commit's time, and the ones that disappear have their valid time closed at it, so `:valid-at` answers
"what did the code look like then" and `:as-of` "what had we ingested by then". Files also get :introduced-by,
:modified-in and :renamed-from edges to commits. A source file whose language has no grammar here is skipped and
counted (IngestReport.unparsed_files).

Incremental: the last ingested commit is kept as a fact of :ingestion/<repository>, and the next run starts
after it. Progress of a background run is written to a small JSON status file next to the database.
"""

from __future__ import annotations

import argparse
import json
import os
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from tempera.core import gitrepo, paths, processes
from tempera.core.atomic import write_atomic
from tempera.core.languages import LANGUAGES as SOURCE_LANGUAGES
from tempera.facts.codefacts import Fact, ParseCache, Snapshot, attr, context_units, kw, unit_of
from tempera.facts.pycode import analyse
from tempera.facts.store import FactStore
from tempera.facts.values import Keyword

LANGUAGES = {**SOURCE_LANGUAGES, ".md": "markdown"}


@dataclass
class IngestReport:
    repository: str
    commits: int
    last_commit: str | None
    seconds: float
    unparsed_files: int = 0  # versions of source files whose language has no grammar here: skipped


def file_facts(snap: Snapshot, path: str) -> set[Fact]:
    """The facts one file at one commit stands for: its own, and a Python module's structure (pycode.py; the
    other languages' structure is their unit's, codefacts.py)."""
    f = kw("file", path)
    facts: set[Fact] = {(f, attr("path"), path)}
    suffix = Path(path).suffix
    if suffix in LANGUAGES:
        facts.add((f, attr("language"), LANGUAGES[suffix]))
    if suffix != ".py":
        return facts
    index = snap.python
    structure = analyse(snap.source(path).decode("utf-8", errors="replace"), path, index)
    if structure is None:
        return facts
    module = kw("module", structure.module)
    facts |= {(module, attr("path"), path), (module, attr("language"), "python"), (module, attr("defined-in"), f)}
    facts |= {(module, attr("depends-on"), kw("module", m)) for m in structure.imports}
    facts |= {(module, attr("depends-on"), kw("package", p)) for p in structure.external}
    kinds = {**{n: "function" for n in structure.functions}, **{n: "class" for n in structure.classes}}
    for name, kind in kinds.items():
        facts |= {(kw(kind, name), attr("name"), name.rsplit(".", 1)[-1]), (kw(kind, name), attr("file"), path)}
    for owner, member in structure.members:
        facts.add((kw(kinds.get(owner, "module"), owner), attr("contains"), kw(kinds[member], member)))
    facts |= {(kw("function", a), attr("calls"), kw(kinds.get(b, "function"), b)) for a, b in structure.calls}
    return facts


class Snapshots:
    """The last two commits' snapshots (each commit is the next one's parent) and the files parsed so far."""

    def __init__(self) -> None:
        self.parsed = ParseCache()
        self.recent: dict[str, Snapshot] = {}
        self.unparsed = 0

    def of(self, commit: Any | None) -> Snapshot:
        if commit is None:
            return Snapshot({}, self.parsed)
        if commit.hexsha not in self.recent:
            if len(self.recent) >= 2:
                self.recent.pop(next(iter(self.recent)))
            self.recent[commit.hexsha] = Snapshot(gitrepo.blobs(commit), self.parsed)
        return self.recent[commit.hexsha]


def _entity_now(store: FactStore, entity: Keyword) -> set[Fact]:
    rows = store.query("[:find ?a ?v :in ?e :where [?e ?a ?v]]", [entity]).rows
    return {(entity, a, v) for a, v in rows}


def commit_changes(store: FactStore, commit: Any, snaps: Snapshots) -> tuple[set[Fact], set[Fact]]:
    """(facts to add, facts to close) for one commit, compared with its first parent."""
    parent = commit.parents[0] if commit.parents else None
    c = kw("commit", commit.hexsha)
    add: set[Fact] = {
        (c, attr("hash"), commit.hexsha),
        (c, attr("author"), commit.author.name or ""),
        (c, attr("date"), commit.committed_datetime.isoformat()),
        (c, attr("subject"), commit.summary),
    }
    add |= {(c, attr("parent"), kw("commit", p.hexsha)) for p in commit.parents}
    close: set[Fact] = set()
    before, after = snaps.of(parent), snaps.of(commit)
    units: set[str] = set()
    for change, old, new in gitrepo.changes(parent, commit):
        if change in ("D", "R"):
            close |= file_facts(before, old) | _entity_now(store, kw("file", old))
        if change in ("A", "R"):
            add |= file_facts(after, new) | {(kw("file", new), attr("introduced-by"), c)}
        if change == "R":
            add.add((kw("file", new), attr("renamed-from"), kw("file", old)))
        if change in ("M", "T"):
            was, now = file_facts(before, old), file_facts(after, new)
            add |= (now - was) | {(kw("file", new), attr("modified-in"), c)}
            close |= was - now
        units |= {u for u in (unit_of(old) if old else None, unit_of(new) if new else None) if u}
        if change in ("A", "D", "R") or Path(new or "").name == "go.mod":
            units |= {u for p in {old, new} if p for u in context_units((before, after), p)}
        if new and change != "D" and _unparsed(after, new):
            snaps.unparsed += 1
    for unit in units:
        was, now = before.unit_facts(unit), after.unit_facts(unit)
        add |= now - was
        close |= was - now
    return add - close, close - add


def _unparsed(snap: Snapshot, path: str) -> bool:
    """A source file whose structure is not read: no grammar for its language, or its grammar is not installed."""
    suffix = Path(path).suffix
    if suffix not in SOURCE_LANGUAGES or suffix == ".py":
        return False
    return unit_of(path) is None or snap.code(path) is None


def ingest(
    store: FactStore,
    repo_path: str | Path,
    *,
    since: str | None = None,
    rev: str = "HEAD",
    on_commit: Callable[[int, int, str], None] | None = None,
) -> IngestReport:
    """Ingest the first-parent history up to `rev`, after `since` (default: after the last ingested commit)."""
    started = time.monotonic()
    history = gitrepo.History(repo_path)
    root = history.root
    mark = kw("ingestion", root)
    previous = _entity_now(store, mark)
    start = since or next((v for _, a, v in previous if a == attr("hash")), None)
    commits = history.first_parent(f"{start}..{rev}" if start else rev)
    snaps = Snapshots()
    for done, commit in enumerate(commits, 1):
        add, close = commit_changes(store, commit, snaps)
        store.change(
            add=add | {(mark, attr("hash"), commit.hexsha)},
            close=close | {f for f in previous if f[1] == attr("hash")},
            at=commit.committed_datetime,
            reason=f"git {commit.hexsha[:12]} {commit.author.name}: {commit.summary}",
        )
        previous = {(mark, attr("hash"), commit.hexsha)}
        if on_commit:
            on_commit(done, len(commits), commit.hexsha)
    last = commits[-1].hexsha if commits else None
    return IngestReport(root, len(commits), last, time.monotonic() - started, snaps.unparsed)


def skipped_text(unparsed_files: int) -> str:
    """What an ingestion left out, to end its outcome line with ('' when nothing)."""
    if not unparsed_files:
        return ""
    return f"; {unparsed_files} source file version(s) skipped: no grammar for their language"


# -- background runs ---------------------------------------------------------------------------------------------


def status_path(db_path: Path) -> Path:
    return db_path.parent / paths.FACTS_INGEST_STATUS_NAME


def write_status(path: Path, **fields: Any) -> None:
    """Replace the status file atomically, so a reader never sees half of it."""
    write_atomic(path, json.dumps(fields, default=str).encode("utf-8"), None)


def read_status(path: Path) -> dict[str, Any]:
    """The last run's status; a 'running' run whose process is gone is reported as failed."""
    if not path.exists():
        return {"state": "idle"}
    status = json.loads(path.read_text())
    if status.get("state") == "running" and not processes.alive(int(status.get("pid", 0))):
        status.update(state="failed", error="the ingestion process exited before finishing")
    return status


def run_with_status(db_path: Path, repo: str, since: str | None) -> IngestReport:
    """Ingest while keeping the status file up to date (what a background run does)."""
    from tempera.core.migrations import connect

    path = status_path(db_path)
    base = {"repository": repo, "pid": os.getpid(), "started_at": time.time()}
    write_status(path, state="running", processed=0, total=None, **base)
    db = connect(db_path)
    try:
        report = ingest(
            FactStore(db),
            repo,
            since=since,
            on_commit=lambda done, total, sha: write_status(
                path, state="running", processed=done, total=total, current_commit=sha, **base
            ),
        )
    except Exception as exc:
        write_status(path, state="failed", error=f"{type(exc).__name__}: {exc}", finished_at=time.time(), **base)
        raise
    finally:
        db.close()
    write_status(
        path,
        state="done",
        processed=report.commits,
        total=report.commits,
        finished_at=time.time(),
        **{**base, **asdict(report)},
    )
    return report


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description="Ingest a git repository into the fact graph.")
    parser.add_argument("--db", type=Path, required=True)
    parser.add_argument("--since")
    parser.add_argument("repo")
    args = parser.parse_args(argv)
    run_with_status(args.db, args.repo, args.since)


if __name__ == "__main__":
    main()
