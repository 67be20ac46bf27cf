"""What an episode line tells the next session, captured from transcripts in Claude Code's format into a real SQLite
file and rendered as the hooks inject it: the outcome from the unit's final evidence, never an error on the way;
"agent said" quoting the unit's conclusion, never an interim remark; a plan's title as its request; tool output
only when it carries information; a line cut to the budget keeping its files."""

from __future__ import annotations

from pathlib import Path

from transcript_writer import SessionWriter

from tempera.core.memory import Memory
from tempera.core.models import Episode
from tempera.core.project import ProjectRef
from tempera.inject import render
from tempera.inject.hits import episode_hit
from tempera.transcripts import capture_transcript

ROOT = "/nonexistent/work/shop"


def line_of(ep: Episode) -> str:
    return render.episode_line(episode_hit(ep, ProjectRef(ep.project_id, ep.project_name, ep.project_path), score=1.0))


def session(tmp_path: Path, name: str) -> SessionWriter:
    return SessionWriter(tmp_path / "projects" / "-work-shop" / f"{name}.jsonl", cwd=ROOT)


def captured(mem: Memory, s: SessionWriter) -> Episode:
    """The one episode the capture of what `s` wrote since the last capture added."""
    (ep,) = capture_transcript(mem, s.path).added
    return ep


def edit(
    s: SessionWriter, name: str, result: str = "The file has been updated.", *, ok: bool = True, text: str | None = None
) -> None:
    """An Edit of `name` under ROOT, its message opening with `text`."""
    change = {"file_path": f"{ROOT}/{name}", "old_string": "a", "new_string": "b"}
    s.tool("Edit", change, result, is_error=not ok, text=text)


def test_an_error_on_the_way_is_not_the_outcome_the_final_evidence_is(kw_memory: Memory, tmp_path: Path) -> None:
    s = session(tmp_path, "a")
    s.prompt("add the CSV export button to the invoices page")
    s.bash("bun run tset", 'error: Script not found "tset"', ok=False)  # a bun subcommand error on the way
    edit(s, "src/export.ts", "<tool_use_error>String to replace not found in file.</tool_use_error>", ok=False)
    edit(s, "src/invoices.tsx")
    s.bash("bunx tsc --noEmit", "")
    s.say("All tests pass (1290/1290) and lint is clean. The invoices page has a CSV export button.")
    ep = captured(kw_memory, s)
    assert ep.outcome.status == "success"
    assert "error text" not in line_of(ep) and "Script not found" not in ep.summary
    # the unit's last command failing is its final evidence: that stays partial, with the error quoted
    s.prompt("now push it")
    s.bash("git push origin feat/export", "error: failed to push some refs to 'origin'", ok=False)
    s.say("Pushing needs your credentials.")
    pushed = line_of(captured(kw_memory, s))
    assert pushed.startswith("- [2025-06-02, partial, id") and 'error text: "error: failed to push some refs' in pushed


def test_agent_said_quotes_the_conclusion_never_an_interim_remark(kw_memory: Memory, tmp_path: Path) -> None:
    s = session(tmp_path, "b")
    s.prompt("show the Packmind section on the remediation page")
    s.tool(
        "Read",
        {"file_path": f"{ROOT}/src/Remediation.tsx"},
        "1\texport function Remediation() {}",
        text="I have a thorough understanding of all the files. I'll begin with the frontend changes.",
    )
    edit(
        s,
        "src/Remediation.tsx",
        text="Now add the persistent Packmind section after <RemediationHistory items={items} />:",
    )
    s.say("The Packmind section now shows under the history.")
    ep = captured(kw_memory, s)
    assert 'agent said: "The Packmind section now shows under the history."' in line_of(ep)
    # a unit that ends on a tool call has no conclusion: no "agent said" rather than its interim remark
    s.prompt("and the same on the audit page")
    edit(
        s,
        "src/Audit.tsx",
        text="Now I have all the information needed. Now add the same section to the audit page, after the table:",
    )
    audit = captured(kw_memory, s)
    assert "agent said" not in line_of(audit) and "information needed" not in audit.summary
    # ... unless it reported on the way that the checks pass: that sentence, and only it
    s.prompt("limit the device name to letters and digits")
    edit(s, "src/device.dto.ts", text="All 478 API tests pass. Now add the same check to the DTO:")
    assert 'agent said: "All 478 API tests pass."' in line_of(captured(kw_memory, s))


def test_a_plan_handed_over_is_asked_by_its_title(kw_memory: Memory, tmp_path: Path) -> None:
    s = session(tmp_path, "c")
    # origin: entire-cli session 13da966e (line 4), shared/data/transcripts/entire-cli, MIT (see data/entire-cli)
    s.prompt(
        "Implement the following plan:\n\n# Plan: Change Session Subfolder Numbering to 1-Based\n\n## Goal\n"
        "Change session subfolder numbering from 0-based (`/0`, `/1`, `/2`) to 1-based (`/1`, `/2`, `/3`).\n\n"
        "**Current behavior:** First session creates folder `0/`, second creates `1/`, etc.\n"
    )
    edit(s, "cmd/entire/cli/checkpoint/committed.go")
    s.say("Session subfolders are now numbered from 1; the checkpoint reader accepts both.")
    ep = captured(kw_memory, s)
    assert ep.intent.extracted == "Change Session Subfolder Numbering to 1-Based"
    assert 'user asked: "Change Session Subfolder Numbering to 1-Based"; agent said' in line_of(ep)


def test_tool_output_is_quoted_only_with_what_the_run_counted(kw_memory: Memory, tmp_path: Path) -> None:
    s = session(tmp_path, "d")
    s.prompt("fix the rounding in the invoice total")
    edit(s, "src/total.ts")
    s.bash(
        "bun run test 2>&1 | tail -5",
        " 1290 pass\n 0 fail\n 3048 expect() calls\nRan 1290 tests across 80 files. [2.31s]\n",
    )
    s.say("Totals now round half up, as the invoices were printed before the refactor.")
    s.prompt("and in the checkout too")
    edit(s, "checkout/total.go")
    s.bash("go test ./checkout/...", "ok  \tgithub.com/shop/checkout\t0.31s")
    s.say("Checkout totals now round half up as well, through the same helper.")
    counted, bare = capture_transcript(kw_memory, s.path).added
    assert 'tool output: "1290 tests."' in line_of(counted)
    assert bare.outcome.verification.value == "tests_pass" and "tool output" not in line_of(bare)


def test_a_line_cut_to_the_budget_keeps_its_files() -> None:
    quoted = "the invoice total rounds half up now; " * 8
    line = f'- [2026-02-03, success, id 1a2b3c4d] user asked: "{quoted}". Files: src/total.ts, src/invoice.ts.'
    text = render.render_blocks([(render.HEADER_PROMPT, [line])], len(render.HEADER_PROMPT) + 250)
    (shown,) = [ln for ln in text.splitlines() if ln.startswith("- [")]
    assert len(shown) < len(line) and shown.endswith('…". Files: src/total.ts, src/invoice.ts.')


def test_a_failed_command_is_got_past_only_by_the_same_program_succeeding(kw_memory: Memory, tmp_path: Path) -> None:
    s = session(tmp_path, "k")
    s.prompt("the api cannot reach the database in dev, have a look")
    s.bash("psql -h localhost -U app -c 'select 1'", "psql: error: connection refused", ok=False)
    s.bash("docker ps", "CONTAINER ID   IMAGE")  # another program succeeding says nothing of the database
    s.say("Postgres refuses connections on localhost; the containers listed are not the database.")
    assert captured(kw_memory, s).outcome.status == "partial"
    s.prompt("start it and try again")
    s.bash("docker compose up -d db", "Container db Started")
    s.bash("cd api && PGPASSWORD=x psql -h localhost -U app -c 'select 1' | head", " ?column? \n 1")
    s.say("The database container is up and answers queries.")
    assert captured(kw_memory, s).outcome.status == "success"
