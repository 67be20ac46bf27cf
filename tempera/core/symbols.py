"""The code's symbols, for retrieval: which files of a project's work tree define each identifier, which symbols each
episode's edits touched, and, at a prompt, the episodes that touched the files and symbols the prompt names or the
work tree has changed.

- The index (`refresh`) is built from the work tree with the parser (`core/code/`), in the background after a
  capture (`transcripts/pipeline.py`), never on the prompt path: git lists the files and says which differ from
  HEAD (`gitrepo.work_tree_files`), and only files whose size or mtime moved since the last build are parsed
  again; a file gone from the tree loses its rows. Each file also stands for its own name and stem (`root.go`,
  `explain_test`), so one lookup answers for identifiers and file names alike.
- An episode's touched symbols (`touched`, from its edits: the definitions whose text the edit changed, which
  encloses the edited lines, and those the new text adds or the old text had) are stored on the episode
  (`Context.symbols_modified`) and indexed here beside its files (`episode_files.py`), by `EpisodeStore`.
- At a prompt (`code_hits`): the names the prompt writes (`textsearch.name_spans`) lead to the files defining them
  and to the episodes that touched those names; the episodes that changed those files or the files the work tree
  has changed count too. Three indexed reads, no git and no parse: retrieval fuses it as one more list
  (`retrieve._fusion_lists`, `hybrid_code_weight`).

Names are kept lowercased: a prompt writes `saveChanges` for `SaveChanges` as often as not."""

from __future__ import annotations

import json
import os
import posixpath
import re
import stat
from collections import defaultdict
from collections.abc import Iterable
from typing import TYPE_CHECKING

from tempera.core import gitrepo, textsearch
from tempera.core.db import Connection, Database, run_script
from tempera.core.episode_files import episode_table, replace_rows

if TYPE_CHECKING:
    from tempera.core.code import Definition

MAX_FILE_BYTES = 1 << 20  # a larger file is generated or data: not parsed
MAX_DEFINING_FILES = 5  # a name more files define (`New`, `main.go`) picks out no code
_PKG_MEMBER = re.compile(r"[A-Z]\w*|\w*_\w*")  # what follows the dot of `pkg.Func`, `module.func_name`


# -- the index ----------------------------------------------------------------------------------------------------
def refresh(db: Database, project_id: str, root: str) -> tuple[int, int] | None:
    """Bring the project's index up to the work tree at `root`: (files parsed again, files dropped), or None when
    git cannot list the tree (not a repository, git missing). Files whose size and mtime are as last indexed are
    not read."""
    listed = gitrepo.work_tree_files(root)
    if listed is None:
        return None
    files, changed = listed
    known = dict(db.query("SELECT file, stamp FROM code_files WHERE project_id = ?", (project_id,)))
    present: dict[str, str] = {}  # file -> its stamp
    for rel in files:
        try:
            st = os.stat(os.path.join(root, rel))
        except OSError:  # listed by git, gone from the work tree
            continue
        if stat.S_ISREG(st.st_mode):
            present[rel] = f"{st.st_mtime_ns}:{st.st_size}"
    fresh = {rel: stamp for rel, stamp in present.items() if known.get(rel) != stamp}
    gone = set(known) - set(present)
    parsed = {rel: _names_in(root, rel) for rel in fresh}
    with db.transaction():
        for rel in gone | set(fresh):
            db.execute("DELETE FROM code_symbols WHERE project_id = ? AND file = ?", (project_id, rel))
            db.execute("DELETE FROM code_files WHERE project_id = ? AND file = ?", (project_id, rel))
        for rel, stamp in fresh.items():
            db.execute("INSERT INTO code_files(project_id, file, stamp) VALUES (?, ?, ?)", (project_id, rel, stamp))
            db.execute(
                "INSERT OR IGNORE INTO code_symbols(project_id, name, file) SELECT ?, value, ? FROM json_each(?)",
                (project_id, rel, json.dumps(sorted(parsed[rel]))),
            )
        db.execute("DELETE FROM code_changed WHERE project_id = ?", (project_id,))
        db.execute(
            "INSERT OR IGNORE INTO code_changed(project_id, file) SELECT ?, value FROM json_each(?)",
            (project_id, json.dumps(changed)),
        )
    return len(fresh), len(gone)


def _names_in(root: str, rel: str) -> set[str]:
    """The names a file stands for: its name, its stem and (a parsed language) the definitions it holds."""
    from tempera.core.code import parse
    from tempera.core.code.parse import language_of

    base = posixpath.basename(rel).lower()
    names = {base, posixpath.splitext(base)[0]}
    if language_of(rel) is None:
        return names
    try:
        if os.path.getsize(os.path.join(root, rel)) > MAX_FILE_BYTES:
            return names
        with open(os.path.join(root, rel), "rb") as fh:
            source = fh.read()
    except OSError:
        return names
    code = parse(rel, source)
    if code is not None:
        names.update(d.name.lower() for d in code.definitions if d.name)
    return names


def defining_files(db: Database, project_id: str, names: Iterable[str]) -> dict[str, set[str]]:
    """name (lowercased) -> the project's files defining it (or named so), for the names the index knows."""
    out: dict[str, set[str]] = defaultdict(set)
    for name, file in db.query(
        "SELECT name, file FROM code_symbols WHERE project_id = ? AND name IN (SELECT value FROM json_each(?))",
        (project_id, json.dumps(sorted({n.lower() for n in names}))),
    ):
        out[name].add(file)
    return dict(out)


# -- an episode's touched symbols ---------------------------------------------------------------------------------
def touched(path: str, before: str | None, after: str) -> list[str]:
    """The definitions an edit of `path` touched, by name, in the order the new text holds them: those whose text
    differs between `before` (the file before the edit; None when unknown, e.g. a new file) and `after` (the file
    after it, or the new text alone when the file is unknown), and those only one side holds. An unparsed
    language touches nothing."""
    from tempera.core.code import parse

    new = parse(path, after.encode("utf-8", errors="surrogateescape"))
    if new is None:
        return []
    old = parse(path, before.encode("utf-8", errors="surrogateescape")) if before is not None else None
    old_texts = _definition_texts(before, old.definitions) if before is not None and old is not None else {}
    new_texts = _definition_texts(after, new.definitions)
    out = [q for q, text in new_texts.items() if old_texts.get(q) != text]
    out += [q for q in old_texts if q not in new_texts]
    names = {d.qualified: d.name for d in (*new.definitions, *(old.definitions if old else ()))}
    return list(dict.fromkeys(names[q] for q in out if names.get(q)))


def _definition_texts(source: str, definitions: Iterable[Definition]) -> dict[str, str]:
    """qualified name -> the definition's lines (1-based inclusive), joined (an overloaded name's, one after the
    other)."""
    lines = source.splitlines()
    out: dict[str, str] = {}
    for d in definitions:
        out[d.qualified] = out.get(d.qualified, "") + "\n".join(lines[d.start_line - 1 : d.end_line])
    return out


def write_episode(conn: Connection, episode_id: str, names: Iterable[str]) -> None:
    """Replace the episode's touched symbols with `names` (as stored on the episode)."""
    replace_rows(conn, "episode_symbols", "name", episode_id, sorted({n.lower() for n in names if n}))


# -- at a prompt --------------------------------------------------------------------------------------------------
def prompt_names(prompt: str) -> list[str]:
    """The names a prompt writes (`textsearch.name_spans`), lowercased, as the index holds them: a file's name, an
    identifier, and the member of `pkg.Func` / `module.func_name`."""
    out: dict[str, None] = {}
    for span in textsearch.name_spans(prompt):
        out.setdefault(span.lower(), None)
        head, dot, member = span.rpartition(".")
        if dot and head and _PKG_MEMBER.fullmatch(member) and len(member) > 2:
            out.setdefault(member.lower(), None)
    return list(out)


def code_hits(db: Database, prompt: str, project_id: str, n: int) -> list[tuple[int, float]]:
    """(episode rowid, score) of the project's live episodes that touched what the prompt names or the work tree
    has changed, best first, at most `n`. A name counts 1: in full for an episode whose edits touched it, else shared
    among the files defining it (a name more than MAX_DEFINING_FILES define counts nothing); a changed file counts
    1 / the number of changed files."""
    names = prompt_names(prompt)
    weights: dict[str, float] = defaultdict(float)  # file -> its weight
    for files in defining_files(db, project_id, names).values():
        if len(files) <= MAX_DEFINING_FILES:
            for f in files:
                weights[f] += 1 / len(files)
    changed = [f for (f,) in db.query("SELECT file FROM code_changed WHERE project_id = ?", (project_id,))]
    for f in changed:
        weights[f] += 1 / len(changed)
    score: dict[int, float] = defaultdict(float)
    for rowid, file in _live(db, "episode_files", "file", project_id, sorted(weights)):
        score[rowid] += weights[file]
    for rowid, _ in _live(db, "episode_symbols", "name", project_id, names):
        score[rowid] += 1.0
    return sorted(score.items(), key=lambda kv: (-kv[1], -kv[0]))[:n]


def _live(db: Database, table: str, key: str, project_id: str, values: list[str]) -> list[tuple[int, str]]:
    """(episode rowid, value) of the project's live episodes with a row of `values` in an `episode_table`. Read
    from the values to the episodes (CROSS JOIN fixes the order): SQLite's own plan walks every episode of the
    project and costs ~3 ms on a store of 700."""
    if not values:
        return []
    return [
        (int(rowid), value)
        for rowid, value in db.query(
            f"SELECT e.rowid, x.{key} FROM json_each(?) j CROSS JOIN {table} x ON x.{key} = j.value "
            "CROSS JOIN episodes e ON e.id = x.episode_id WHERE e.project_id = ? "
            "AND e.id NOT IN (SELECT episode_id FROM episode_retirements)",
            (json.dumps(values), project_id),
        )
    ]


# -- schema ----------------------------------------------------------------------------------------------------
def m074_code_symbols(conn: Connection) -> None:
    """The symbol index (`code_files`: each indexed file's stamp; `code_symbols`: name -> file; `code_changed`: the
    files the work tree had changed at the last build) and each episode's touched symbols (`episode_symbols`,
    keyed by name for the lookup, going with their episode as `episode_files` do). Per project, keyed by file for
    the rebuild of one file."""
    run_script(
        conn,
        """
    CREATE TABLE code_files (
        project_id TEXT NOT NULL,
        file TEXT NOT NULL,
        stamp TEXT NOT NULL,
        PRIMARY KEY (project_id, file)
    ) WITHOUT ROWID;
    CREATE TABLE code_symbols (
        project_id TEXT NOT NULL,
        name TEXT NOT NULL,
        file TEXT NOT NULL,
        PRIMARY KEY (project_id, name, file)
    ) WITHOUT ROWID;
    CREATE INDEX code_symbols_file ON code_symbols(project_id, file);
    CREATE TABLE code_changed (
        project_id TEXT NOT NULL,
        file TEXT NOT NULL,
        PRIMARY KEY (project_id, file)
    ) WITHOUT ROWID;
    """
        + episode_table("episode_symbols", "name"),
    )
