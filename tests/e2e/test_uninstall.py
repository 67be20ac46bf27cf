"""Scenario 5, uninstall: after `tempera uninstall --scope user` a session runs with no Tempera hook firing, and the
user's own hooks and settings, seeded before the install, are exactly as they were and still work.

"No hook firing" is shown from both sides: Claude Code reports no SessionStart hook (Tempera held the only one) and
records no Tempera Stop hook in the transcript; Tempera gets no injection into the request although the prompt is
one it would answer, writes nothing new to hooks.log and captures no episode of that session.
"""

from __future__ import annotations

import json
import time

from projects import CALC, FIX_PROMPT, fix_add_session
from replies import say
from request_log import agent_requests, memory_blocks
from sandbox import Sandbox

from tempera.installer.hookconfig import owned_verb
from tests.support.datadir import wait_for

FOREIGN_HOOK = 'echo "prompt seen, setting=$E2E_USER_SETTING" >> "$HOME/foreign-hook.log"'
USER_SETTINGS = {
    "env": {"E2E_USER_SETTING": "kept"},
    "cleanupPeriodDays": 45,
    "hooks": {"UserPromptSubmit": [{"matcher": "", "hooks": [{"type": "command", "command": FOREIGN_HOOK}]}]},
}
QUIET_PERIOD_S = 10.0  # longer than the daemon's transcript-watch debounce (5 s): time enough to capture


def _tempera_stop_hooks(box: Sandbox, session_id: str) -> list[str]:
    """Tempera's Stop hooks that Claude Code recorded running in this session's transcript."""
    commands = []
    for line in box.transcript(session_id).read_text().splitlines():
        rec = json.loads(line)
        if rec.get("subtype") == "stop_hook_summary":
            commands += [
                str(h.get("command")) for h in rec.get("hookInfos", []) if owned_verb({"command": h.get("command")})
            ]
    return commands


def test_uninstall_leaves_no_tempera_hook_and_the_users_settings(sandbox: Sandbox) -> None:
    box = sandbox
    box.settings_file.parent.mkdir(parents=True)
    seeded = json.dumps(USER_SETTINGS, indent=2) + "\n"
    box.settings_file.write_text(seeded)
    box.install()
    repo = box.repo("work/calc-app", CALC)

    before = box.claude(FIX_PROMPT, cwd=repo, script=fix_add_session(repo), stream=True)
    assert before.hooks_started() == ["SessionStart:startup"] and _tempera_stop_hooks(box, before.session_id)
    wait_for(lambda: box.episodes(before.session_id), timeout=60)
    foreign_log = box.home / "foreign-hook.log"
    assert foreign_log.read_text().count("setting=kept") == 1  # the user's hook ran beside ours

    box.tempera("uninstall", "--scope", "user")
    assert box.settings_file.read_text() == seeded  # byte for byte what the user had
    claude_json = json.loads((box.home / ".claude.json").read_text())
    assert "tempera" not in (claude_json.get("mcpServers") or {})
    log_before = box.hook_log_text()
    episodes_before = len(box.episodes())

    after = box.claude(
        "add() in calc.py returned the wrong sum, test_calc failed", cwd=repo, script=[say("Looking.")], stream=True
    )
    assert after.hooks_started() == [], after.hooks_started()
    assert _tempera_stop_hooks(box, after.session_id) == []
    assert all(memory_blocks(r) == [] for r in agent_requests(after.requests)), "Tempera injected after uninstall"
    assert foreign_log.read_text().count("setting=kept") == 2  # the user's hook and env still work
    listing = box.claude_command("mcp", "list", cwd=repo)
    assert "tempera" not in listing.stdout, listing.stdout

    assert box.hook_log_text() == log_before
    deadline = time.monotonic() + QUIET_PERIOD_S
    while time.monotonic() < deadline and not box.episodes(after.session_id):
        time.sleep(0.5)
    jobs = box.rows("SELECT id, payload FROM jobs WHERE payload LIKE ?", (f"%{after.session_id}%",))
    assert box.episodes(after.session_id) == [], (
        f"a session run after uninstall was captured as an episode; capture jobs for it: {jobs}"
    )
    assert len(box.episodes()) == episodes_before
