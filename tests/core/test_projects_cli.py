"""`tempera projects` and `tempera projects merge` through the real executable: the listing, a dry run, a merge
whose memory is then found from the target's checkouts, and one-line errors."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

from support.gitrepos import captured, found, git, repo, tempera


def projects_json(cwd: Path) -> list[dict[str, Any]]:
    r = tempera("projects", "--json", cwd=cwd)
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout)


def error(r: subprocess.CompletedProcess[str], *needles: str) -> None:
    assert r.returncode == 1, (r.stdout, r.stderr)
    assert r.stderr.startswith("Error:") and "Traceback" not in r.stderr, r.stderr
    assert len(r.stderr.strip().splitlines()) == 1, r.stderr
    for needle in needles:
        assert needle in r.stderr, r.stderr


def test_projects_lists_and_merges_through_the_cli(tmp_path: Path) -> None:
    shop, other_shop = repo(tmp_path / "a" / "webshop"), repo(tmp_path / "b" / "webshop", commit="another history")
    git(shop, "worktree", "add", "-q", str(tmp_path / "a" / "webshop-fix"))
    notes = tmp_path / "notes"
    notes.mkdir()
    in_shop = captured(shop, "Cached the product catalogue in Redis with a five minute TTL")
    in_worktree = captured(tmp_path / "a" / "webshop-fix", "Fixed the flaky cart test by freezing the clock")
    in_notes = captured(notes, "Kept the release checklist for the catalogue service in notes")
    captured(other_shop, "Unrelated history of another webshop")

    listed = {(p["name"], p["identified_by"]): p for p in projects_json(tmp_path)}
    assert set(listed) == {("webshop", "commit"), ("notes", "directory")}
    shops = [p for p in projects_json(tmp_path) if p["name"] == "webshop"]
    assert sorted(p["episodes"] for p in shops) == [1, 2]
    ours = next(p for p in shops if p["episodes"] == 2)
    assert ours["paths"] == [str(shop), str(tmp_path / "a" / "webshop-fix")]
    assert ours["key"] == git(shop, "rev-parse", "HEAD")
    text = tempera("projects", cwd=tmp_path)
    assert text.returncode == 0 and "root commit" in text.stdout and str(notes) in text.stdout

    error(tempera("projects", "merge", "notes", "webshop", cwd=tmp_path), "ambiguous", str(shop), str(other_shop))
    error(tempera("projects", "merge", "notes", str(notes), cwd=tmp_path), "same project")
    error(tempera("projects", "merge", "nowhere", "notes", cwd=tmp_path), "unknown project 'nowhere'")
    (tmp_path / "empty").mkdir()
    error(tempera("projects", "merge", str(tmp_path / "empty"), "notes", cwd=tmp_path), "not a project in memory")

    dry = tempera("projects", "merge", "notes", str(shop), "--dry-run", "--json", cwd=tmp_path)
    assert dry.returncode == 0, dry.stderr
    assert json.loads(dry.stdout)["counts"]["episodes"] == 1 and not json.loads(dry.stdout)["executed"]
    assert found(shop, "release checklist") == []

    done = tempera("projects", "merge", str(notes), ours["id"][:8], cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith(f"Merged notes ({listed[('notes', 'directory')]['id'][:8]}) into webshop")
    assert "1  episodes" in done.stdout and "1  vectors" in done.stdout
    assert found(tmp_path / "a" / "webshop-fix", "release checklist") == [in_notes]
    assert set(found(shop, "catalogue")) == {in_shop, in_notes}
    assert found(other_shop, "catalogue") == [] and in_worktree in found(shop, "flaky cart clock")
    assert [p["name"] for p in projects_json(tmp_path)].count("notes") == 0

    for args, says in (
        (("projects", "--help"), "How the project is identified"),
        (("projects", "merge", "--help"), "Move everything of each project SOURCE"),
    ):
        r = tempera(*args, cwd=tmp_path)
        assert r.returncode == 0 and says.lower() in " ".join(r.stdout.lower().split()), r.stdout
