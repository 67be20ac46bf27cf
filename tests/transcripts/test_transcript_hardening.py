"""Issue 17: one bad record never blocks a session. A lone UTF-16 surrogate (Claude Code cuts strings inside an
emoji) is repaired; a line nested too deep or too large is skipped with a counted reason; the rest is stored, by
`tempera import` and by the Stop job alike."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest
from transcript_writer import SessionWriter

from tempera.core import jobs
from tempera.core.memory import Memory
from tempera.daemon.worker import work_one
from tempera.transcripts import reader
from tempera.transcripts.reader import read_transcript
from tempera.transcripts.turns import segment_turns
from tests.support.cli import tempera

CUT_EMOJI = "fix the \ud83d emoji bug in the login banner"
DEEP = b"[" * 5000 + b"]" * 5000


def _surrogate_session(path: Path, session_id: str = "5e0a1c2d-0000-4000-8000-000000000001") -> SessionWriter:
    """A session whose prompt and reply hold a lone high surrogate, written as Claude Code writes it: the JSON
    escape `\\ud83d`, which Python's json reads back as an unpaired surrogate."""
    s = SessionWriter(path, session_id=session_id)
    s.prompt(CUT_EMOJI.replace("\ud83d", "CUT"))
    s.bash("pytest tests/test_banner.py", "1 passed in 0.10s")
    s.say("The banner renders the emoji CUT now.")
    path.write_bytes(path.read_bytes().replace(b"CUT", b"\\ud83d"))
    return s


def _good_session(path: Path, session_id: str, topic: str) -> SessionWriter:
    s = SessionWriter(path, session_id=session_id)
    s.prompt(f"fix the {topic} test that fails on CI")
    s.bash(f"pytest tests/test_{topic}.py", "1 passed in 0.10s")
    s.say(f"The {topic} test passes now.")
    return s


def _import(*args: str, data_dir: Path) -> subprocess.CompletedProcess[str]:
    return tempera("import", *args, timeout=180, env={**os.environ, "TEMPERA_DATA_DIR": str(data_dir)})


def _episodes(session_id: str) -> list[tuple[str, str]]:
    with Memory(use_model=False) as mem:
        return mem.db.query("SELECT id, summary FROM episodes WHERE session_id = ?", (session_id,))


def _stop_job(path: Path) -> None:
    """What the Stop hook leaves in the queue, worked once by the daemon's worker."""
    with Memory(use_model=False) as mem:
        jobs.enqueue(mem.db.conn, "capture", {"transcript_path": str(path)}, dedupe_key=f"capture:{path}")
        assert work_one(mem)
        dead = mem.db.query("SELECT last_error FROM jobs WHERE status != 'done'")
        assert not dead, dead


def test_reader_repairs_a_lone_surrogate(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    _surrogate_session(path)
    t = read_transcript(path)
    assert t.records[0].text == CUT_EMOJI.replace("\ud83d", "\ufffd")
    assert all("\ud83d" not in json.dumps(r.raw, ensure_ascii=False) for r in t.records)
    pair = tmp_path / "pair.jsonl"
    SessionWriter(pair).prompt("a whole emoji PAIR stays whole")
    pair.write_bytes(pair.read_bytes().replace(b"PAIR", b"\\ud83d\\ude00"))
    assert read_transcript(pair).records[0].text == "a whole emoji \U0001f600 stays whole"


@pytest.mark.parametrize("embed", [False, True], ids=["no-embed", "embed"])
def test_import_stores_a_session_with_a_lone_surrogate(tmp_path: Path, data_dir: Path, embed: bool) -> None:
    path = tmp_path / "projects" / "-work-shop" / "5e0a1c2d-0000-4000-8000-000000000001.jsonl"
    _surrogate_session(path)
    done = _import(str(path), "--json", *([] if embed else ["--no-embed"]), data_dir=data_dir)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["episodes_added"] == 1
    [(_, summary)] = _episodes("5e0a1c2d-0000-4000-8000-000000000001")
    assert "\ufffd" in summary


def test_stop_job_stores_a_session_with_a_lone_surrogate(tmp_path: Path) -> None:
    path = tmp_path / "5e0a1c2d-0000-4000-8000-000000000001.jsonl"
    _surrogate_session(path)
    _stop_job(path)
    assert len(_episodes("5e0a1c2d-0000-4000-8000-000000000001")) == 1


def test_reader_skips_too_deep_and_too_large_lines_by_reason(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "s.jsonl"
    s = _good_session(path, "5e0a1c2d-0000-4000-8000-000000000002", "cart")
    with path.open("ab") as fh:
        fh.write(b'{"type": "user", "message": {"content": ' + DEEP + b"}}\n")
        fh.write(b'{"type": "user", "deep": ' + b'{"a": ' * 150 + b"1" + b"}" * 150 + b"}\n")
        fh.write(b'{"type": "user", "big": "' + b"x" * 20_000 + b'"}\n')
        fh.write(b"not json\n")
    s.prompt("and the checkout test too")
    monkeypatch.setattr(reader, "MAX_RECORD_BYTES", 15_000)
    t = read_transcript(path)
    assert t.skipped == {"too deep": 2, "too large": 1, "broken line": 1} and t.lines_skipped == 4
    assert [r.text for r in t.records if r.type == "user" and r.text][-1] == "and the checkout test too"


def test_import_of_a_folder_with_a_too_deep_line_stores_every_session(tmp_path: Path, data_dir: Path) -> None:
    folder = tmp_path / "projects" / "-work-shop"
    _good_session(folder / "a.jsonl", "5e0a1c2d-0000-4000-8000-00000000000a", "cart")
    bad = _good_session(folder / "b.jsonl", "5e0a1c2d-0000-4000-8000-00000000000b", "login")
    bad.raw({"type": "progress"})
    with bad.path.open("ab") as fh:
        fh.write(b'{"type": "user", "message": {"content": ' + DEEP + b"}}\n")
    _good_session(folder / "c.jsonl", "5e0a1c2d-0000-4000-8000-00000000000c", "search")
    done = _import(str(folder.parent), data_dir=data_dir)
    assert done.returncode == 0, done.stderr
    assert "too deep" in done.stdout
    for sid in (
        "5e0a1c2d-0000-4000-8000-00000000000a",
        "5e0a1c2d-0000-4000-8000-00000000000b",
        "5e0a1c2d-0000-4000-8000-00000000000c",
    ):
        assert len(_episodes(sid)) == 1, sid


def test_stop_job_stores_a_session_with_a_too_deep_line(tmp_path: Path) -> None:
    path = tmp_path / "5e0a1c2d-0000-4000-8000-000000000003.jsonl"
    s = _good_session(path, "5e0a1c2d-0000-4000-8000-000000000003", "cart")
    with path.open("ab") as fh:
        fh.write(b'{"type": "assistant", "message": {"content": ' + DEEP + b"}}\n")
    s.prompt("now make the checkout test pass too")
    _stop_job(path)
    assert len(_episodes("5e0a1c2d-0000-4000-8000-000000000003")) == 2


def test_capture_input_with_a_lone_surrogate_is_stored(data_dir: Path) -> None:
    """`tempera capture` reads JSON from stdin (and flags) as they come: a cut emoji is repaired, not refused."""
    done = tempera(
        "capture",
        "--json",
        timeout=120,
        input=json.dumps({"summary": CUT_EMOJI}),
        env={**os.environ, "TEMPERA_DATA_DIR": str(data_dir)},
    )
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)[0]["summary"] == CUT_EMOJI.replace("\ud83d", "\ufffd")


def test_a_huge_tool_output_is_kept_by_its_head_and_tail(tmp_path: Path) -> None:
    """Bounded memory: a record keeps its blocks' text clipped (what failed is at the end of a long output, so the
    tail stays) and a few fields of its line, not the parsed line (here a Write of 1 MB and its 2 MB output)."""
    path = tmp_path / "s.jsonl"
    s = SessionWriter(path, session_id="5e0a1c2d-0000-4000-8000-000000000009")
    s.prompt("fix the cart total test")
    s.tool("Write", {"file_path": "/repo/big.py", "content": "x = 1\n" * 200_000}, "File created")
    s.bash(
        "pytest tests/test_cart.py",
        "." * 2_000_000 + "\nFAILED tests/test_cart.py::test_total\n1 failed in 0.2s",
        ok=False,
    )
    s.bash("pytest tests/test_cart.py", "1 passed in 0.10s")
    s.say("The cart total test passes now.")
    t = read_transcript(path)
    texts = [b.text for r in t.records for b in r.blocks]
    texts += [v for r in t.records for b in r.tool_uses for v in b.input.values() if isinstance(v, str)]
    assert max(map(len, texts)) < reader.MAX_TEXT_CHARS + 100
    assert all("message" not in r.raw and len(json.dumps(r.raw)) < reader.MAX_TEXT_CHARS + 100 for r in t.records)
    (turn,) = segment_turns(t)
    assert turn.files_modified == ["/repo/big.py"]
    assert [(run.passed, run.summary) for run in turn.test_runs] == [
        (False, "1 failed in 0.2s"),
        (True, "1 passed in 0.10s"),
    ]


def test_import_of_a_folder_goes_on_past_a_file_that_raises(tmp_path: Path, data_dir: Path) -> None:
    """Any exception while capturing one file (here: a session whose working directory holds a NUL, which no path
    can, so resolving its checkout raises) costs that file only: the others are imported, the failure is counted
    in the table and the JSON and named with its reason."""
    folder = tmp_path / "projects" / "-work-shop"
    _good_session(folder / "a.jsonl", "5e0a1c2d-0000-4000-8000-0000000000e1", "cart")
    bad = SessionWriter(folder / "b.jsonl", session_id="5e0a1c2d-0000-4000-8000-0000000000e2", cwd="/work/sh\x00op")
    bad.prompt("fix the login test that fails on CI")
    bad.say("The login test passes now.")
    _good_session(folder / "c.jsonl", "5e0a1c2d-0000-4000-8000-0000000000e3", "search")
    done = _import(str(folder.parent), "--no-embed", "--json", data_dir=data_dir)
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert report["files"] == 2 and report["files_failed"] == 1, report
    [failure] = report["failures"]
    assert failure["path"].endswith("b.jsonl") and failure["error"].startswith("ValueError"), failure
    for sid in ("5e0a1c2d-0000-4000-8000-0000000000e1", "5e0a1c2d-0000-4000-8000-0000000000e3"):
        assert len(_episodes(sid)) == 1, sid
    table = _import(str(folder.parent), "--no-embed", data_dir=tmp_path / "fresh-data")
    assert table.returncode == 0, table.stderr
    assert "files failed" in table.stdout and "b.jsonl: failed (ValueError" in table.stdout, table.stdout


def test_a_record_time_without_a_zone_costs_nothing(tmp_path: Path, data_dir: Path) -> None:
    """A timestamp with no zone (a hand-edited or foreign transcript) is read as UTC, so it compares with the
    others: before, the steps after capture raised TypeError and the whole file was reported failed."""
    folder = tmp_path / "projects" / "-work-shop"
    s = _good_session(folder / "b.jsonl", "5e0a1c2d-0000-4000-8000-0000000000e4", "login")
    s.raw(
        {
            **s._base("user", s.last),
            "timestamp": "2025-06-02T09:10:00",
            "message": {"role": "user", "content": "and the logout test"},
        }
    )
    s.bash("pytest tests/test_logout.py", "1 passed in 0.10s")
    s.say("The logout test passes too.")
    done = _import(str(folder), "--no-embed", "--json", data_dir=data_dir)
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert report["files"] == 1 and report["files_failed"] == 0, report
    [(_, summary)] = _episodes("5e0a1c2d-0000-4000-8000-0000000000e4")
    assert "logout" in summary, summary
