"""A long prompt (plan mode's "Implement the following plan: ...") is searched by its title, opening line and the
code it names, and its vector is its title's (`inject/longprompt.py`): one short model run and a bounded query
instead of four 254-piece runs and the plan's first 40 words, on a real plan prompt."""

from __future__ import annotations

import numpy as np

from tempera.core import textsearch
from tempera.core.capture_input import CaptureInput
from tempera.core.memory import Memory
from tempera.core.project import project_for_path
from tempera.inject import longprompt, warm
from tests.conftest import PLAN_PROMPT

PLAN = PLAN_PROMPT.read_text().strip()
TITLE = "Fix: output_filter not being applied when writing to entire/sessions"


def test_a_plan_is_searched_by_its_title_opening_line_and_the_code_it_names() -> None:
    text = longprompt.search_text(PLAN)
    assert len(PLAN) > 5000 and len(text) <= longprompt.LONG_CHARS
    lines = text.splitlines()
    assert lines[0] == TITLE
    assert lines[1].startswith("The  output_filter  setting")  # the line under "## Problem", markup dropped
    for name in ("filter.go", "settings.go", "temporary.go", "committed.go", "writeTranscript", "GetOutputFilter"):
        assert name in lines[2:]
    assert len(lines) - 2 <= longprompt.NAMES
    assert len(textsearch.query_terms(text)) < len(textsearch.query_terms(PLAN))
    assert longprompt.search_text(text) == text  # searching what it gives gives it back
    assert longprompt.vector_text(PLAN) == TITLE


def test_a_short_prompt_is_searched_and_embedded_as_it_is() -> None:
    prompt = "fix the output filter: GetOutputFilter returns nil when settings.json fails to load"
    assert longprompt.search_text(prompt) == prompt == longprompt.vector_text(prompt)


def test_a_long_prompt_without_headings_keeps_its_start_and_its_end() -> None:
    prompt = "Here is the log of the failing run:\n" + "step ok\n" * 200 + "why does the checkpoint writer time out?"
    lead = longprompt.vector_text(prompt)
    assert lead.startswith("Here is the log") and lead.endswith("why does the checkpoint writer time out?")
    assert len(lead) <= longprompt.LEAD_CHARS


def test_a_long_prompt_of_code_alone_is_searched_by_its_start() -> None:
    prompt = "```go\n" + "filteredTranscript, err := filter.Content(ctx, transcript, name)\n" * 40 + "```"
    text = longprompt.search_text(prompt)
    assert text and prompt.startswith(text) and len(text) <= longprompt.LONG_CHARS
    assert longprompt.vector_text(prompt) == text


def test_the_hook_embeds_a_plans_title_once(memory: Memory, tmp_path) -> None:  # type: ignore[no-untyped-def]
    repo = tmp_path / "cli"
    repo.mkdir()
    for summary in (
        "Added an output_filter setting that pipes transcripts through gitleaks-filter before they are written",
        "Logged why the filter package fell through when settings.json failed to load",
        "Renamed the session folders to 0-based indexes in committed.go",
    ):
        memory.capture(CaptureInput(summary=summary, task_type="bugfix", project=str(repo)))
    hits, with_vector = warm.candidates(memory, PLAN, project_for_path(str(repo)), set())
    assert with_vector and hits
    assert memory.embedder is not None
    title = memory.embedder.embed_one(TITLE)
    for h in hits:  # every cosine the gate reads is to the title's vector, not to the whole plan's
        assert h.similarity is not None and h.vector is not None
        assert abs(h.similarity - float(np.dot(title, h.vector))) < 1e-4
