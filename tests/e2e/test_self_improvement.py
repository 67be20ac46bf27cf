"""Scenario 2, self-improvement through the real CLI: a user's correction and a failed vague request are learned
from the transcripts alone (no tool call), and the next session's model request carries what was learned."""

from __future__ import annotations

from pathlib import Path

from messages_stub import Reply
from projects import CALC, TEST_CMD, failed_fix_session
from replies import edit, say, write
from request_log import agent_requests, memory_blocks, request_text
from sandbox import Sandbox

from tests.support.datadir import wait_for

SHOP = {
    "app.py": "def export(rows):\n    return [dict(r) for r in rows]\n\n\n"
    "def import_rows(lines):\n    return [line.split(',') for line in lines]\n",
    "requirements.txt": "click\n",
}
CORRECTION = "No, don't add a new dependency, we use the standard library logging module"
CAPTURE_TIMEOUT_S = 60.0


def _loguru_work(repo: Path) -> list[Reply]:
    return [
        write(str(repo / "requirements.txt"), "click\nloguru\n", id="toolu_dep_write"),
        edit(
            str(repo / "app.py"),
            "def export(rows):\n",
            "from loguru import logger\n\n\ndef export(rows):\n    logger.info('exporting')\n",
            id="toolu_dep_edit",
        ),
        say("Added loguru and a log line to export() in app.py."),
    ]


def _stdlib_fix(repo: Path) -> list[Reply]:
    return [
        write(str(repo / "requirements.txt"), "click\n", id="toolu_fix_write"),
        edit(
            str(repo / "app.py"),
            "from loguru import logger\n",
            "import logging\n\nlogger = logging.getLogger(__name__)\n",
            id="toolu_fix_edit",
        ),
        say("Switched to the standard library logging module; no new dependency."),
    ]


def test_a_correction_reaches_the_next_session_on_the_same_files(installed: Sandbox) -> None:
    box = installed
    # one correction in one session: the brief's bar for repeated evidence (tests/selfimprove/test_brief_evidence.py)
    # is lowered, so this scenario shows the path from a transcript to the next session's request
    box.env_extra.update(TEMPERA_SELFIMPROVE__BRIEF_MIN_ROWS="1", TEMPERA_SELFIMPROVE__BRIEF_MIN_SESSIONS="1")
    repo = box.repo("work/shop", SHOP)
    first = box.claude("add logging to export() in app.py", cwd=repo, script=_loguru_work(repo))
    again = box.claude(CORRECTION, cwd=repo, args=("--resume", first.session_id), script=_stdlib_fix(repo))
    assert again.session_id == first.session_id
    assert "loguru" not in (repo / "requirements.txt").read_text()

    rows = wait_for(
        lambda: box.rows("SELECT category, correction FROM mistakes WHERE session_id = ?", (first.session_id,)),
        timeout=CAPTURE_TIMEOUT_S,
    )
    assert [category for category, _ in rows] == ["wrong_convention"], rows
    assert "standard library logging" in rows[0][1]

    second = box.claude("add logging to import_rows() in app.py", cwd=repo, script=[say("On it.")])
    request = agent_requests(second.requests)[0]
    lines = [
        line
        for block in memory_blocks(request)
        for line in block.splitlines()
        if line.startswith("- Correction category wrong_convention")
    ]
    assert lines, f"the correction is not in the next session's request:\n{request_text(request)[:3000]}"
    assert "app.py" in lines[0] and CORRECTION in lines[0], lines
    box.assert_no_hook_errors()


def test_an_ask_back_after_a_failed_vague_session_opens_the_next_one(installed: Sandbox) -> None:
    box = installed
    repo = box.repo("work/calc", CALC)
    failed = box.claude("fix it", cwd=repo, script=failed_fix_session(repo))
    assert "return a - b" in (repo / "calc.py").read_text()  # the work really left the bug in place
    pending = "SELECT question FROM ask_backs WHERE status = 'pending' AND session_id = ?"
    questions = wait_for(lambda: box.rows(pending, (failed.session_id,)), timeout=CAPTURE_TIMEOUT_S)
    assert len(questions) == 1 and "?" in questions[0][0], questions

    nxt = box.claude(f"run {TEST_CMD}", cwd=repo, script=[say("Running it.")])
    blocks = memory_blocks(agent_requests(nxt.requests)[0])
    assert any(questions[0][0] in b for b in blocks), f"the ask-back is not in the next request: {blocks}"
    assert box.rows(pending, (failed.session_id,)) == []  # shown once, then consumed
    box.assert_no_hook_errors()
