"""Scenario 1, memory across sessions, through the real Claude Code CLI.

Session 1 does scripted work (a failing test run, an edit, a passing run) and never calls a Tempera tool; the Stop
hook and the daemon capture it. A new session in the same repository sends the model a request that holds that
memory. A repository of the same folder name at another path gets nothing at all.

Why an open session for the unrelated prompt: Claude Code fires SessionStart at the first prompt of every session,
and Tempera's SessionStart may bring past work into a new session (what the branch's name is about; nothing on the
default branch, as here), after which the prompt retrieval never repeats an episode. So one session is opened
before the work is captured; its later prompts show exactly what the prompt retrieval adds: nothing for an
unrelated prompt, the episode for a related one.
"""

from __future__ import annotations

from projects import CALC, FIX_PROMPT, fix_add_session
from replies import say
from request_log import agent_requests, memory_blocks, prompt_blocks, request_text
from sandbox import Sandbox

from tests.support.datadir import wait_for

CAPTURE_TIMEOUT_S = 60.0


def test_memory_across_sessions(installed: Sandbox) -> None:
    box = installed
    repo = box.repo("work/calc-app", CALC)
    waiting = box.open_session(repo)
    try:
        opened = box.turn(waiting, "hello, what files are in this repository?", script=[say("calc.py, test_calc.py")])
        assert memory_blocks(agent_requests(opened.requests)[0]) == []  # nothing is known yet

        first = box.claude(FIX_PROMPT, cwd=repo, script=fix_add_session(repo))
        assert "return a + b" in (repo / "calc.py").read_text()  # the scripted edit really ran
        episodes = wait_for(lambda: box.episodes(first.session_id), timeout=CAPTURE_TIMEOUT_S)
        assert len(episodes) == 1
        episode = episodes[0]
        assert [f.rsplit("/", 1)[-1] for f in episode["context"]["files_modified"]] == ["calc.py"], episode
        assert episode["outcome"]["status"] == "success", episode["outcome"]
        assert not [t for t in episode["context"]["tools"] if t.startswith("mcp__")]  # captured with no tool call
        short_id = episode["id"][:8]

        unrelated = box.turn(waiting, "write a haiku about autumn leaves", script=[say("Leaves fall.")])
        request = agent_requests(unrelated.requests)[0]
        assert short_id not in request_text(request), "an unrelated prompt was given the episode"
        assert prompt_blocks(request) == []

        related = box.turn(
            waiting, "add in calc.py returns the wrong sum again, test_calc fails", script=[say("Looking at it.")]
        )
        blocks = prompt_blocks(agent_requests(related.requests)[0])
        assert len(blocks) == 1 and short_id in blocks[0] and "calc.py" in blocks[0], blocks
    finally:
        waiting.close()

    fresh = box.claude("the add function in calc.py is broken", cwd=repo, script=[say("Looking at it.")])
    blocks = memory_blocks(agent_requests(fresh.requests)[0])
    assert any(short_id in b for b in blocks), f"episode {short_id} missing from a new session's request: {blocks}"

    twin = box.repo("elsewhere/calc-app", CALC)
    other = box.claude(FIX_PROMPT, cwd=twin, script=[say("Looking at it.")])
    for request in agent_requests(other.requests):
        assert memory_blocks(request) == [], "a different repository with the same folder name got memories"
    box.assert_no_hook_errors()
