"""Transcripts recorded on Windows and macOS, captured here: the same session as its original (rewritten by
`platform_transcripts.rewrite`) gives the same episodes, its files relative to the checkout with `/`, and its
repository's project. Only the spelling is simulated: no Windows or macOS file system is at hand."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from platform_transcripts import rewrite
from transcript_paths import DATA, REAL
from transcript_writer import SessionWriter

from tempera.core.memory import Memory
from tempera.transcripts import capture_transcript
from tempera.transcripts.draft import project_files
from tempera.transcripts.reader import read_transcript
from tempera.transcripts.turns import segment_turns
from tempera.transcripts.units import work_units

ENTIRE = DATA / "entire-cli"
MAC_HOME = "/Users/soph/Work/entire/devenv/cli"

# (transcript, the checkout it ran in, its Windows root, the cwd and the file paths macOS may record for it)
SESSIONS = {
    "linux, with a subagent": (REAL, "/tmp/ccrun/proj", r"C:\Users\dev\ccrun\proj", "/private/tmp/ccrun/proj", None),
    "macos, a test run fixed": (
        ENTIRE / "deeac353-lines-144-268.jsonl",
        MAC_HOME,
        r"D:\Work\entire\devenv\cli",
        "/Users/Soph/Work/Entire/devenv/cli",
        "/users/soph/work/entire/devenv/cli",
    ),
    "macos, in a worktree": (
        ENTIRE / "58e50d6c-lines-4-157.jsonl",
        "/Users/alex/workspace/cli",
        r"C:\Users\alex\workspace\cli",
        "/Users/Alex/workspace/cli",
        "/users/alex/workspace/cli",
    ),
}


def _captured(monkeypatch: pytest.MonkeyPatch, store: Path, transcript: Path) -> list[Any]:
    """The episodes of one transcript captured into a store of its own, as the fields that must not depend on
    where it ran."""
    monkeypatch.setenv("TEMPERA_DATA_DIR", str(store))
    with Memory(use_model=False) as mem:
        added = capture_transcript(mem, transcript).added
    return [
        (
            ep.summary,
            ep.intent.raw_prompt,
            ep.outcome.model_dump(),
            ep.context.files_modified,
            ep.context.files_read,
            ep.project_name,
        )
        for ep in added
    ]


@pytest.mark.parametrize("name", SESSIONS)
@pytest.mark.parametrize("platform", ["windows", "macos"])
def test_a_session_from_another_platform_gives_its_originals_episodes(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, name: str, platform: str
) -> None:
    source, root, windows_root, mac_cwd, mac_files = SESSIONS[name]
    if platform == "windows":
        moved = rewrite(source, tmp_path / "projects", root, windows_root, windows=True)
        assert b"\r\n" in moved.read_bytes() and moved.parent.name.startswith(("C--Users-", "D--Work-"))
    else:
        moved = rewrite(source, tmp_path / "projects", root, mac_cwd, files_root=mac_files or root)
    original = _captured(monkeypatch, tmp_path / "original", source)
    assert original and any(files for *_, files, _read, _name in original)
    assert _captured(monkeypatch, tmp_path / "moved", moved) == original


def test_one_repository_is_one_project_whichever_platform_recorded_it(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """A checkout here, then the same work recorded on Windows and on macOS (spelled in another case) in a
    folder not on this machine: both join the checkout's project by the files they touched."""
    checkout = tmp_path / "cli"
    (checkout / ".git").mkdir(parents=True)
    source, root, windows_root, mac_cwd, mac_files = SESSIONS["macos, a test run fixed"]
    moved = [
        rewrite(source, tmp_path / "here", root, str(checkout)),
        rewrite(source, tmp_path / "windows", root, windows_root, windows=True),
        rewrite(source, tmp_path / "macos", root, mac_cwd, files_root=mac_files),
    ]
    with Memory(use_model=False) as mem:
        captured = [capture_transcript(mem, path) for path in moved]
    projects = {(r.project.id, r.project.path) for r in captured if r.project}
    assert projects == {(captured[0].project.id, str(checkout.resolve()))}


@pytest.mark.parametrize(
    ("path", "root", "stored"),
    [
        (r"c:/users/dev/proj/src\app.py", r"C:\Users\dev\proj", "src/app.py"),  # VS Code's lower-case drive
        (r"\\nas\share\proj\src\app.py", r"\\nas\share\proj", "src/app.py"),
        (r"C:\Users\dev\other\app.py", r"C:\Users\dev\proj", "C:/Users/dev/other/app.py"),
        ("/tmp/ccrun/proj/calc.py", "/private/tmp/ccrun/proj", "calc.py"),
        ("/private/var/folders/x/proj/a.go", "/var/folders/x/proj", "a.go"),
        ("/users/dev/REPO/Src/A.go", "/Users/Dev/repo", "Src/A.go"),
        ("/home/dev/REPO/a.go", "/home/dev/repo", "/home/dev/REPO/a.go"),  # Linux keeps case
    ],
)
def test_a_file_is_stored_relative_to_its_checkout_however_spelled(path: str, root: str, stored: str) -> None:
    assert project_files([path], root) == [stored]


def test_windows_scratch_files_are_no_part_of_the_work() -> None:
    root = r"C:\Users\dev\proj"
    assert project_files([r"C:\Users\dev\AppData\Local\Temp\x.txt", rf"{root}\.claude\..\a.py"], root) == ["a.py"]


def test_a_windows_session_is_cut_where_its_original_is_when_the_edits_change_folder(tmp_path: Path) -> None:
    """No stored session moves its edits to another folder mid-turn: this one is written, then rewritten."""
    s = SessionWriter(tmp_path / "s.jsonl", cwd="/Users/dev/cli")
    s.prompt("clean up the checkpoint package, then the strategy package")
    for folder, n in (("checkpoint", 4), ("strategy", 2)):
        for i in range(n):
            path = f"/Users/dev/cli/{folder}/f{i}.go"
            s.tool("Read", {"file_path": path}, "package x")
            s.tool("Edit", {"file_path": path, "old_string": "a", "new_string": "b"}, "The file has been updated.")
        item = f"Tidy the {folder} package"  # a unit is cut only where the work before it can be told apart
        s.tool("TodoWrite", {"todos": [{"content": item, "status": "completed", "activeForm": item}]}, "Updated")
        s.say(f"The {folder} package is tidy.")
    moved = rewrite(s.path, tmp_path / "projects", "/Users/dev/cli", r"C:\Users\dev\cli", windows=True)
    units = [work_units(segment_turns(read_transcript(path))) for path in (s.path, moved)]
    cut = [[(u.unit and u.unit.reason, [_last_two(f) for f in u.files_modified]) for u in found] for found in units]
    assert (
        cut[0]
        == cut[1]
        == [
            ("prompt", [f"checkpoint/f{i}.go" for i in range(4)]),
            ("files", [f"strategy/f{i}.go" for i in range(2)]),
        ]
    )


def _last_two(path: str) -> str:
    return "/".join(path.replace("\\", "/").split("/")[-2:])


@pytest.mark.parametrize(
    ("cwd", "quoted", "windows"),
    [(r"C:\Users\nick\proj", None, True), ("/Users/Nick/proj", "/users/nick/proj", False)],
)
def test_paths_the_agent_quotes_are_relative_in_the_summary(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, cwd: str, quoted: str | None, windows: bool
) -> None:
    """A written session quoting its files in the closing message (`\\n` and `\\t` in a Windows path are no
    escapes), and its rewrite: one summary, with the files relative."""
    s = SessionWriter(tmp_path / "s.jsonl", cwd="/home/nick/proj")
    s.prompt("add a script for the abandoned session case")
    s.tool("Write", {"file_path": "/home/nick/proj/scripts/test-abandoned.sh", "content": "#!/bin/sh"}, "Created.")
    s.say("Created /home/nick/proj/scripts/test-abandoned.sh, modelled on /home/nick/proj/scripts/test-second.sh.")
    moved = rewrite(s.path, tmp_path / "projects", "/home/nick/proj", cwd, windows=windows, files_root=quoted)
    summaries = [_captured(monkeypatch, tmp_path / str(n), path)[0][0] for n, path in enumerate((s.path, moved))]
    assert summaries[0] == summaries[1]
    assert "Created scripts/test-abandoned.sh, modelled on scripts/test-second.sh." in summaries[1]


@pytest.mark.parametrize(
    ("first", "second"),
    [(r"C:\Users\dev\ccrun\proj", r"c:\users\dev\ccrun\proj"), ("/Users/Dev/ccrun/proj", "/users/dev/ccrun/proj")],
)
def test_one_folder_spelled_in_two_cases_is_one_project(
    kw_memory: Memory, tmp_path: Path, first: str, second: str
) -> None:
    """Two sessions in one folder not on this machine, its case spelled differently (a terminal and an editor):
    the files they touched (calc.py, README.md) tell no repository apart, so only the folder can join them."""
    windows = first.startswith("C:")
    moved = [
        rewrite(REAL, tmp_path / str(n), "/tmp/ccrun/proj", root, windows=windows)
        for n, root in enumerate((first, second))
    ]
    projects = [capture_transcript(kw_memory, path).project for path in moved]
    assert projects[0] is not None and projects[1] == projects[0] and projects[0].name == "proj"
