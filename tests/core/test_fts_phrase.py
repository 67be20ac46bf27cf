"""The one FTS5 "words of this item, within the project" match (`textsearch.fts_phrase`) that outcome links and
implicit feedback's routine count look files and commands up by; a real store and its FTS index."""

from __future__ import annotations

from pathlib import Path

import pytest

from tempera.core.capture_input import CaptureInput
from tempera.core.memory import Memory
from tempera.core.textsearch import fts_phrase


def matching(memory: Memory, match: str | None) -> set[str]:
    return {
        summary
        for (summary,) in memory.db.query(
            "SELECT e.summary FROM episodes_fts f JOIN episodes e ON e.rowid = f.rowid WHERE episodes_fts MATCH ?",
            (match,),
        )
    }


@pytest.fixture
def project(memory: Memory, tmp_path: Path) -> str:
    """The id of the project "shop", which changed cmd/entire/cli/root.go; another project changed it too."""
    shop, other = tmp_path / "shop", tmp_path / "other"
    for repo, summary, files in [
        (shop, "Changed the root command", ["cmd/entire/cli/root.go"]),
        (shop, "Named the go cli root after the cmd", ["docs/cli.md"]),
        (other, "Changed the root command elsewhere", ["cmd/entire/cli/root.go"]),
    ]:
        repo.mkdir(exist_ok=True)
        memory.capture(CaptureInput(summary=summary, files_modified=files, project=str(repo)))
    return str(memory.db.one("SELECT project_id FROM episodes WHERE summary = 'Changed the root command'")[0])


def test_a_phrase_is_the_items_words_in_order_within_the_project(memory: Memory, project: str) -> None:
    assert matching(memory, fts_phrase("cmd/entire/cli/root.go", project)) == {"Changed the root command"}
    anywhere = fts_phrase("root cli go cmd", project, ordered=False)
    assert matching(memory, anywhere) == {"Changed the root command", "Named the go cli root after the cmd"}
    assert fts_phrase("/// --", project) is None


def test_a_project_id_is_quoted_not_parsed(memory: Memory, project: str) -> None:
    """A quote in the id ends no string early: the id `x" OR "root` scopes to no project, instead of OR-ing in
    every episode that says "root"."""
    assert matching(memory, fts_phrase("cmd/entire/cli/root.go", 'x" OR "root')) == set()
