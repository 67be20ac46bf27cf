"""What an episode line tells the next session, captured from transcripts in Claude Code's format into a real SQLite
file and rendered as the hooks inject it: the outcome from the unit's final evidence, never an error on the way;
"agent said" quoting the unit's conclusion, never an interim remark; a plan's title as its request; tool output
only when it carries information; a line cut to the budget keeping its files."""

from __future__ import annotations

from tempera.inject import render

def test_a_line_cut_to_the_budget_keeps_its_files() -> None:
    quoted = "the invoice total rounds half up now; " * 8
    line = f'- [2026-02-03, success, id 1a2b3c4d] user asked: "{quoted}". Files: src/total.ts, src/invoice.ts.'
    text = render.render_blocks([(render.HEADER_PROMPT, [line])], len(render.HEADER_PROMPT) + 250)
    (shown,) = [ln for ln in text.splitlines() if ln.startswith("- [")]
    assert len(shown) < len(line) and shown.endswith('…". Files: src/total.ts, src/invoice.ts.')
