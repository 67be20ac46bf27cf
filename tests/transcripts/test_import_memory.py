"""An import's report keeps what it counts and names, not the transcripts it read (issue #39: every turn of every
file was held to the import's end, 70 MB of its peak over the 123 entire-cli sessions)."""

from __future__ import annotations

from pathlib import Path

from transcript_paths import DATA, TRANSCRIPTS

from tempera.core.memory import Memory
from tempera.transcripts.importer import find_sessions, import_transcripts


def test_the_report_lets_each_files_turns_go_once_learnt_from(tmp_path: Path) -> None:
    files = [f for f in find_sessions([TRANSCRIPTS, DATA]) if f.stat().st_size < 400_000][:4]
    assert len(files) >= 3
    with Memory(db_path=tmp_path / "import.db") as mem:
        report = import_transcripts(mem, files)
        learnt = mem.db.one("SELECT COUNT(*) FROM capture_unlearned")[0]
    assert report.added > 4 and not report.failures and learnt == 0  # the steps after capture ran on the turns
    assert [r.segmented for r in report.results] == [[] for _ in files]
    assert sum(p["episodes_added"] for p in report.projects()) == report.added  # what the report names is kept
