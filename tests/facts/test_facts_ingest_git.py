"""Git ingestion of a repository built here with known imports, a rename, a removed dependency and a deleted
file; then :valid-at and :as-of questions about the graph before and after each change."""

from __future__ import annotations

import json
from datetime import datetime, timezone
from pathlib import Path

import git
import pytest

from tempera.facts import FactStore, Keyword
from tempera.facts.audit import audit
from tempera.facts.ingest_git import ingest
from tests.support.cli import tempera

K = Keyword
DEPS = "[:find ?d {opts} :where [:module/pkg.a :depends-on ?d]]"


def _commit(
    repo: git.Repo,
    message: str,
    day: str,
    files: dict[str, str],
    remove: tuple[str, ...] = (),
    moves: tuple[tuple[str, str], ...] = (),
) -> git.Commit:
    root = Path(repo.working_tree_dir)
    for old, new in moves:
        repo.index.move([old, new])
    if remove:
        repo.index.remove(list(remove), working_tree=True)
    for path, text in files.items():
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        (root / path).write_text(text)
        repo.index.add([path])
    when = datetime.fromisoformat(day).replace(tzinfo=timezone.utc)
    who = git.Actor("Ada", "ada@example.com")
    return repo.index.commit(message, author=who, committer=who, author_date=when, commit_date=when)


@pytest.fixture
def repo(tmp_path: Path) -> git.Repo:
    repo = git.Repo.init(tmp_path / "repo")
    _commit(
        repo,
        "start",
        "2024-01-01",
        {
            "pkg/__init__.py": "",
            "pkg/a.py": "import requests\nfrom pkg import b\n\ndef fa():\n    return b.fb()\n",
            "pkg/b.py": "def fb():\n    return helper()\n\ndef helper():\n    return 1\n",
            "README.md": "# demo\n",
        },
    )
    _commit(
        repo,
        "add c",
        "2024-02-01",
        {
            "pkg/c.py": "def fc():\n    return 2\n",
            "pkg/a.py": "import requests\nfrom pkg import b, c\n\ndef fa():\n    return b.fb() + c.fc()\n",
        },
    )
    _commit(
        repo,
        "rename b to bee",
        "2024-03-01",
        {"pkg/a.py": "import requests\nfrom pkg import bee, c\n\ndef fa():\n    return bee.fb() + c.fc()\n"},
        moves=(("pkg/b.py", "pkg/bee.py"),),
    )
    _commit(
        repo,
        "drop c",
        "2024-04-01",
        {"pkg/a.py": "import requests\nfrom pkg import bee\n\ndef fa():\n    return bee.fb()\n"},
        remove=("pkg/c.py",),
    )
    return repo


def deps(store: FactStore, opts: str = "") -> set[Keyword]:
    return {row[0] for row in store.query(DEPS.format(opts=opts)).rows}


def test_dependencies_over_valid_time(store: FactStore, repo: git.Repo) -> None:
    report = ingest(store, repo.working_tree_dir)
    assert report.commits == 4 and store.current_tx() == 4
    b, bee, c, requests = K(":module/pkg.b"), K(":module/pkg.bee"), K(":module/pkg.c"), K(":package/requests")
    assert deps(store, ':valid-at "2024-01-15"') == {b, requests}
    assert deps(store, ':valid-at "2024-02-15"') == {b, c, requests}
    assert deps(store, ':valid-at "2024-03-15"') == {bee, c, requests}
    assert deps(store) == deps(store, ':valid-at "2024-04-15"') == {bee, requests}


def test_as_of_shows_what_had_been_ingested(store: FactStore, repo: git.Repo) -> None:
    ingest(store, repo.working_tree_dir)
    assert deps(store, ":as-of 2") == {K(":module/pkg.b"), K(":module/pkg.c"), K(":package/requests")}
    assert deps(store, ':as-of 2 :valid-at "2024-03-15"') == deps(store, ":as-of 2")  # c's removal not known yet
    assert deps(store, ":as-of 4") == deps(store)


def test_files_renames_calls_and_commits(store: FactStore, repo: git.Repo) -> None:
    ingest(store, repo.working_tree_dir)
    renamed = store.query(
        "[:find ?old :where [:file/pkg/bee.py :renamed-from ?f] [?f :path ?old] :any-valid-time]"
    ).rows
    assert renamed == [("pkg/b.py",)]
    assert store.query('[:find ?p :where [?f :path ?p] [(ends-with? ?p "c.py")]]').rows == []
    gone = store.query('[:find ?p :valid-at "2024-02-15" :where [:file/pkg/c.py :path ?p]]').rows
    assert gone == [("pkg/c.py",)]
    calls = set(store.query("[:find ?a ?b :where [?a :calls ?b]]").rows)
    assert calls == {
        (K(":function/pkg.a.fa"), K(":function/pkg.bee.fb")),
        (K(":function/pkg.bee.fb"), K(":function/pkg.bee.helper")),
    }
    subjects = store.query("[:find ?s :where [?c :subject ?s] [?c :hash _]]").rows
    assert {s for (s,) in subjects} == {"start", "add c", "rename b to bee", "drop c"}
    introduced = store.query(
        "[:find ?s :where [:file/pkg/c.py :introduced-by ?c] [?c :subject ?s] :any-valid-time]"
    ).rows
    assert introduced == [("add c",)]
    assert audit(store).violations == []


def test_ingestion_is_incremental(store: FactStore, repo: git.Repo) -> None:
    second = list(repo.iter_commits(first_parent=True, reverse=True))[1].hexsha
    assert ingest(store, repo.working_tree_dir, rev=second).commits == 2
    assert ingest(store, repo.working_tree_dir).commits == 2
    assert ingest(store, repo.working_tree_dir).commits == 0
    assert deps(store) == {K(":module/pkg.bee"), K(":package/requests")}


def test_cli_ingest_and_status(repo: git.Repo, tmp_path: Path) -> None:
    db = str(tmp_path / "cli.db")
    assert json.loads(tempera("facts", "--db", db, "ingest-status", "--json").stdout) == {"state": "idle"}
    out = tempera("facts", "--db", db, "ingest-git", str(repo.working_tree_dir), "--wait")
    assert out.returncode == 0 and out.stdout.startswith("ingested 4 commit(s)")
    status = tempera("facts", "--db", db, "ingest-status").stdout
    assert status.startswith("done: 4 commit(s)") and "last commit" in status
    bad = tempera("facts", "--db", db, "ingest-git", str(tmp_path), "--wait")
    assert bad.returncode == 1 and bad.stderr.startswith("Error: ") and "not inside a git repository" in bad.stderr
    rev = tempera("facts", "--db", db, "ingest-git", str(repo.working_tree_dir), "--wait", "--since", "nope")
    assert rev.returncode == 1 and len(rev.stderr.strip().splitlines()) == 1
