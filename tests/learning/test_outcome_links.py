"""Outcome links: a captured session links the earlier episodes that changed the files its turns changed to its
prompt, so a later prompt like it finds them though they were never shown. Real store, real transcripts through
the one capture pipeline, the offline embedding model."""

from __future__ import annotations

import sys
from datetime import timedelta
from pathlib import Path

import pytest
from learnbook import NOW, Book

from tempera.core.forget import Selector, forget
from tempera.core.learning.explain import explain
from tempera.core.learning.outcomes import link_session
from tempera.core.models import Episode
from tempera.transcripts.pipeline import capture_and_learn

sys.path.append(str(Path(__file__).resolve().parents[1] / "transcripts"))
from transcript_writer import SessionWriter  # noqa: E402

LATER = "the discount is applied twice on invoice totals"
QUERY = "why is the discount applied twice on the invoice totals"
UNRELATED = "the rounding of line items looks wrong"  # retrieves the rounding episode, shares no word with LATER


def session(book: Book, tmp_path: Path, sid: str, *turns: tuple[str, list[str]], days: float = 1) -> SessionWriter:
    """A transcript in the project, started `days` ago: each turn a prompt, an edit of each file, a closing line."""
    start = NOW - timedelta(days)
    w = SessionWriter(tmp_path / "t" / f"{sid}.jsonl", session_id=sid, cwd=str(book.root), start=start)
    for prompt, files in turns:
        grow(w, prompt, files)
    return w


def grow(w: SessionWriter, prompt: str, files: list[str]) -> None:
    w.prompt(prompt)
    for f in files:
        w.tool("Edit", {"file_path": f"{w.cwd}/{f}", "old_string": "a", "new_string": "b"}, "The file was updated.")
    w.say(f"Done: changed {', '.join(files)}.")


def capture(book: Book, w: SessionWriter) -> None:
    capture_and_learn(book.memory, w.path, project=str(book.root))


def links(book: Book) -> list[tuple[str, str, float]]:
    return book.memory.db.query("SELECT episode_id, src_id, weight FROM outcome_links ORDER BY 1, 2")


def rank_and_score(book: Book, query: str, ep: Episode, link_weight: float) -> tuple[int, float]:
    cfg = book.memory.config.retrieval
    cfg.query_evidence_effect, cfg.outcome_link_weight = 1.0, link_weight
    cfg.mmr_lambda = 1.0  # no diversity step: the ranks are the scores' order
    hits = book.memory.retrieve(query, project=str(book.root), limit=10)
    return next((i, h.score) for i, h in enumerate(hits, 1) if h.episode.id == ep.id)


@pytest.fixture
def rounding(book: Book) -> Episode:
    """Never injected; the invoice episodes below it match a discount prompt better by their words."""
    for i, text in enumerate(["Listed the invoice discount codes", "Discount applied to invoice emails", "Totals"]):
        book.add(f"{text} in the admin page", at=-50 - i, modified=[f"admin/page{i}.py"])
    return book.add("Reworked the rounding of invoice line items", at=-48, modified=["billing/invoice.py"])


def test_an_episode_whose_file_a_later_session_changed_ranks_higher_for_a_prompt_like_its(
    book: Book, rounding: Episode, tmp_path: Path
) -> None:
    capture(book, session(book, tmp_path, "later", (LATER, ["billing/invoice.py"])))
    assert [(e, w) for e, _, w in links(book)] == [(rounding.id, 1.0)]
    [why] = explain(book.memory, rounding.id)["outcome_links"]
    assert why["session_id"] == "later" and why["prompt_terms"] == "discount applied twice invoice totals"
    off, on = rank_and_score(book, QUERY, rounding, 0.0), rank_and_score(book, QUERY, rounding, 1.0)
    assert on[0] < off[0] and on[1] > off[1], (off, on)
    (rank_on, score_on), (rank_off, score_off) = (rank_and_score(book, UNRELATED, rounding, w) for w in (1.0, 0.0))
    assert rank_on == rank_off and score_on == pytest.approx(score_off)


def test_recapture_writes_no_duplicate_links(book: Book, rounding: Episode, tmp_path: Path) -> None:
    w = session(book, tmp_path, "later", (LATER, ["billing/invoice.py"]))
    capture(book, w)
    first = links(book)
    grow(w, "also check the invoice tax line", ["billing/invoice.py"])
    capture(book, w)  # the grown transcript: its links are written afresh, the first prompt's stay as they were
    grown = links(book)
    assert len(grown) == 2 and first[0] in grown and len({(e, s) for e, s, _ in grown}) == 2
    link_session(book.memory.db, "later", book.project.id)
    assert links(book) == grown


def test_a_hub_file_many_episodes_changed_links_weaker_than_a_file_one_changed(book: Book, tmp_path: Path) -> None:
    hub = [book.add(f"Tuned setting {i} in the config", at=-60 + i, modified=["config.go"]) for i in range(4)]
    both = book.add("Added the export flag to the config", at=-50, modified=["config.go", "export.go"])
    capture(book, session(book, tmp_path, "later", ("make the export faster", ["config.go", "export.go"])))
    weight = {e: w for e, _, w in links(book)}
    assert weight[both.id] == pytest.approx(1 + 1 / 5)  # its own file counts 1, the hub 1/5
    assert all(weight[e.id] == pytest.approx(1 / 5) for e in hub)


def test_forgetting_the_later_session_or_the_linked_episode_forgets_the_link(
    book: Book, rounding: Episode, tmp_path: Path
) -> None:
    """A link holds the words of the later session's prompt: `tempera forget` of either end takes them."""
    capture(book, session(book, tmp_path, "later", (LATER, ["billing/invoice.py"])))
    capture(book, session(book, tmp_path, "again", ("invoice totals wrong again", ["billing/invoice.py"]), days=0.5))
    linked = book.memory.db.query("SELECT session_id, episode_id = ? FROM outcome_links ORDER BY 1, 2", (rounding.id,))
    assert linked == [("again", 0), ("again", 1), ("later", 1)]  # "again" links the rounding and "later"'s episode
    forget(book.memory.db, Selector("session", "later"))
    assert [(e, w) for e, _, w in links(book)] == [(rounding.id, 0.5)]
    forget(book.memory.db, Selector("episode", rounding.id))
    assert links(book) == []
