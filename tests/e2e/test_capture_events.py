"""PreCompact and SessionEnd, fired by the real Claude Code CLI in `-p` mode, each queue a capture on their own.

Why each alone: Stop, SessionEnd and the daemon's transcript watcher all lead to the same capture, so with all of
them on, an episode proves nothing about any one. Here the watcher is off and Tempera's capturing hooks are cut
down to the one under test, so the episode exists only because that hook fired and queued the capture.
SubagentStop is not registered (see tempera/installer/hookconfig.py), and PostCompact adds nothing over the
SessionStart(compact) that follows it.
"""

from __future__ import annotations

import json

from projects import CALC, FIX_PROMPT, fix_add_session
from replies import say
from sandbox import Sandbox

from tests.support.datadir import wait_for
from tempera.installer.hookconfig import owned_verb

CAPTURE_TIMEOUT_S = 60.0
CAPTURING_VERBS = {"stop", "pre-compact", "session-end"}


def _keep_only(box: Sandbox, verb: str) -> None:
    """Remove Tempera's capturing hooks but `verb` from the user's settings, and the watcher from its config."""
    doc = json.loads(box.settings_file.read_text())
    for groups in doc["hooks"].values():
        for group in groups:
            group["hooks"] = [h for h in group["hooks"] if owned_verb(h) not in CAPTURING_VERBS - {verb}]
    box.settings_file.write_text(json.dumps(doc, indent=2))
    box.env_extra["TEMPERA_DAEMON__WATCH_TRANSCRIPTS"] = "false"


def _capture_jobs(box: Sandbox) -> list[tuple[object, ...]]:
    return box.rows("SELECT id FROM jobs WHERE kind = 'capture'")


def _assert_fix_captured(box: Sandbox, session_id: str) -> None:
    episodes = wait_for(lambda: box.episodes(session_id), timeout=CAPTURE_TIMEOUT_S)
    assert len(episodes) == 1, episodes
    assert [f.rsplit("/", 1)[-1] for f in episodes[0]["context"]["files_modified"]] == ["calc.py"], episodes[0]
    box.assert_no_hook_errors()


def test_session_end_queues_the_capture(installed: Sandbox) -> None:
    box = installed
    _keep_only(box, "session-end")
    repo = box.repo("work/calc-app", CALC)

    run = box.claude(FIX_PROMPT, cwd=repo, script=fix_add_session(repo))

    _assert_fix_captured(box, run.session_id)


def test_pre_compact_queues_the_capture_of_what_it_compacts(installed: Sandbox) -> None:
    box = installed
    _keep_only(box, "pre-compact")
    repo = box.repo("work/calc-app", CALC)
    work = box.claude(FIX_PROMPT, cwd=repo, script=fix_add_session(repo))
    assert _capture_jobs(box) == []  # no Stop, no SessionEnd, no watcher: nothing queued the work

    compact = box.claude(
        "/compact",
        cwd=repo,
        script=[say("Summary: fixed add() in calc.py; tests pass.")],
        args=("--resume", work.session_id),
    )

    assert compact.output.get("local_command") == "compact", compact.describe()
    _assert_fix_captured(box, work.session_id)
