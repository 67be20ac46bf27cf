"""At UserPromptSubmit the brief and the facts the prompt touches share the budget with related past work but may
not crowd it out: a file with many logged corrections still leaves room for the episodes about it."""

from __future__ import annotations

from pathlib import Path


from tempera.core.capture_input import CaptureInput
from tempera.core.memory import Memory
from tempera.core.selfimprove.mistakes import CorrectionInput, log_correction
from tempera.inject.payload import HookPayload
from tempera.inject.warm import answer


def test_a_long_brief_leaves_room_for_related_episodes(one_row_suffices: None, tmp_path: Path) -> None:
    """About the budget: each one-off row is shown (`one_row_suffices`)."""
    repo = tmp_path / "shop"
    (repo / ".git").mkdir(parents=True)
    with Memory() as mem:
        episodes = [
            mem.capture(
                CaptureInput(
                    summary=f"Fixed the flaky checkout test in src/cart/checkout.py, case {n}: the fixture reused a "
                    f"stale basket; each test now builds its own basket and the suite passes ten runs in a row.",
                    files_modified=["src/cart/checkout.py"],
                    project=str(repo),
                )
            )
            for n in range(3)
        ]
        for category in (
            "wrong_assumption",
            "scope_creep",
            "wrong_convention",
            "broke_behavior",
            "skipped_verification",
            "wrong_location",
        ):
            log_correction(
                mem.store,
                CorrectionInput(
                    category=category,
                    files=["src/cart/checkout.py"],
                    episode=episodes[0].id,
                    description="Assumed the basket fixture is per test; it is shared by the whole module and the "
                    "checkout tests leak state into each other through it.",
                    correction=f"({category}) Build a fresh basket in each test instead of reusing the module fixture, "
                    "and run the checkout suite ten times before saying it is fixed.",
                ),
            )
        text = answer(
            mem,
            HookPayload(
                event="UserPromptSubmit",
                session_id="s1",
                cwd=str(repo),
                prompt="the checkout test in src/cart/checkout.py is flaky again, fix it",
            ),
        )
    brief = text.split("\n\n")[0]
    assert "Tempera brief" in brief and brief.count("\n- ") >= 2
    assert len(brief) <= 600  # a quarter of the 2,000-character budget, and its header
    assert all(f"id {ep.id[:8]}" in text for ep in episodes)
