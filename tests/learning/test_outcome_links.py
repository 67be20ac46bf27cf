"""Outcome links: a captured session links the earlier episodes that changed the files its turns changed to its
prompt, so a later prompt like it finds them though they were never shown. Real store, real transcripts through
the one capture pipeline, the offline embedding model."""

from __future__ import annotations

import contextlib
import sys
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest
from learnbook import NOW, Book

from tempera.core.db import Database
from tempera.core.migrations import connect
from tempera.core.forget import Selector, forget
from tempera.core.learning.explain import explain
from tempera.core.learning.outcomes import MAX_LINKS_PER_SESSION, link_session
from tempera.core.learning.retire import retire
from tempera.core.models import Episode
from tempera.core.retrieve import retrieve
from tempera.transcripts import cursor as cursors
from tempera.transcripts.pipeline import capture_and_learn

sys.path.append(str(Path(__file__).resolve().parents[1] / "transcripts"))
from transcript_writer import SessionWriter  # noqa: E402

from evals import learning_replay  # noqa: E402

LATER = "the discount is applied twice on invoice totals"
QUERY = "why is the discount applied twice on the invoice totals"
UNRELATED = "the rounding of line items looks wrong"  # retrieves the rounding episode, shares no word with LATER
# a real session (tests/transcripts/data/entire-cli/README.md): five prompts, the 2nd, 3rd and 5th edit telemetry.go,
# the 5th telemetry_test.go too; started 2026-01-14
REAL = Path(__file__).parents[1] / "transcripts" / "data" / "entire-cli" / "4e836284-4a0a-44a1-acb3-38c68db78007.jsonl"
TELEMETRY = "cmd/entire/cli/telemetry/"  # as the capture stores its files: relative to the session's checkout


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


def session_links(book: Book, sid: str) -> list[tuple[str, str, str, float]]:
    return book.memory.db.query(
        "SELECT episode_id, src_id, terms, weight FROM outcome_links WHERE session_id = ? ORDER BY 1, 2", (sid,)
    )


def relinked(book: Book, sid: str) -> list[tuple[str, str, str, float]]:
    """The rows a full relink of the whole session writes (it replaces the session's rows)."""
    link_session(book.memory.db, sid, book.project.id)
    return session_links(book, sid)


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


def test_the_replays_none_arm_measures_the_same_store_without_its_links(
    book: Book, rounding: Episode, tmp_path: Path
) -> None:
    """evals/learning_replay.py's none arm: the off arm's store through the eval's own retrieval, the link weight 0
    for that measurement only (it retrieves with the Memory's config, read when it opened)."""
    capture(book, session(book, tmp_path, "later", (LATER, ["billing/invoice.py"])))
    mem, weight = book.memory, book.memory.config.retrieval.outcome_link_weight
    assert weight > 0
    ranks = {}
    for arm in ("off", "none"):
        case = {"session_id": "q", "prompt": QUERY, "relevant": [rounding.id]}
        if arm == "off":
            learning_replay.retrieval_figures(mem, book.project.id, [case])
        else:
            with learning_replay.without_links(mem):
                assert mem.config.retrieval.outcome_link_weight == 0
                learning_replay.retrieval_figures(mem, book.project.id, [case])
        ranks[arm] = case["ranks"]["hybrid"]
    assert mem.config.retrieval.outcome_link_weight == weight  # restored for whatever is measured next
    assert ranks["off"] < (ranks["none"] or 99), ranks


@pytest.mark.parametrize("mode", ["keyword", "vector", "hybrid"])
def test_the_replays_explanation_gives_each_modes_query_factor(
    book: Book, rounding: Episode, tmp_path: Path, mode: str
) -> None:
    """evals/learning_replay.py's top 10 (what --explain prints, in --explain-mode): the linked episode's score is
    its relevance x salience x a query factor above 1; the same store without its links gives the factor 1."""
    capture(book, session(book, tmp_path, "later", (LATER, ["billing/invoice.py"])))
    case = {"session_id": "q", "prompt": QUERY, "relevant": [rounding.id]}
    factors = []
    for links_on in (True, False):
        with contextlib.nullcontext() if links_on else learning_replay.without_links(book.memory):
            top = learning_replay.top_hits(book.memory, book.project.id, case, mode)
            cfg = book.memory.config.retrieval
            ranked = retrieve(book.memory.store, QUERY, project_id=book.project.id, cfg=cfg, limit=10, mode=mode)
        assert [h["id"] for h in top] == [h.episode.id[:8] for h in ranked]  # the mode asked for
        factors.append(next(h["query_factor"] for h in top if h["relevant"]))
    assert factors[0] > 1 and factors[1] == 1, factors


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
    later = {eid for (eid,) in book.memory.db.query("SELECT id FROM episodes WHERE session_id = 'later'")}
    assert later & {e for e, _ in indexed(book.memory.db)}
    forget(book.memory.db, Selector("session", "later"))
    assert [(e, w) for e, _, w in links(book)] == [(rounding.id, 0.5)]
    assert not later & {e for e, _ in indexed(book.memory.db)}  # the files it changed go with it
    forget(book.memory.db, Selector("episode", rounding.id))
    assert links(book) == [] and rounding.id not in {e for e, _ in indexed(book.memory.db)}


def test_a_real_session_captured_as_it_grows_links_as_a_full_relink_does(book: Book, tmp_path: Path) -> None:
    """Captured every four lines, as the Stop hook and the watcher see it grow (mid-turn too: a turn's episode
    regrows with the files it changes later), each capture relinks only its prompts; the rows stay a full
    relink's."""
    before = (datetime(2026, 1, 13, tzinfo=timezone.utc) - NOW) / timedelta(hours=1)
    book.add("Added the posthog telemetry client", at=before - 3, modified=[TELEMETRY + "telemetry.go"])
    book.add(
        "Sent the command name", at=before - 2, modified=[TELEMETRY + "telemetry.go", TELEMETRY + "telemetry_test.go"]
    )
    book.add("Tested the telemetry opt-out", at=before - 1, modified=[TELEMETRY + "telemetry_test.go"])
    lines = REAL.read_bytes().splitlines(keepends=True)
    grown = tmp_path / REAL.name
    sid = REAL.stem
    for end in [*range(5, len(lines), 4), len(lines)]:
        grown.write_bytes(b"".join(lines[:end]))
        capture_and_learn(book.memory, grown, project=str(book.root))
        assert session_links(book, sid) == relinked(book, sid), end
    rows = session_links(book, sid)
    by_prompt = {src: sorted(w for _, s, _, w in rows if s == src) for src in {s for _, s, _, _ in rows}}
    assert sorted(by_prompt.values()) == [[0.5, 0.5], [0.5, 0.5], [0.5, 0.5, 1.0]]  # the 5th: both files


def test_the_cap_keeps_the_same_rows_whatever_captures_came(book: Book, tmp_path: Path) -> None:
    """More candidate rows than the cap, most of them tied at the cut (a hub file's 1/20), and a prompt repeated
    later with another file (its first turn's rows must grow): turn by turn, each capture's rows are a full
    relink's; capturing again, or a capture that relearns every episode (one killed before learning), changes
    none."""
    hub = [book.add(f"Tuned the export setting {i}", at=-100 + i, modified=["hub.go"]) for i in range(20)]
    shared = [book.add(f"Streamed export batch {i}", at=-70 + i, modified=["batch.go"]) for i in range(4)]
    one = book.add("Wrote the export checksum", at=-60, modified=["checksum.go"])
    w = SessionWriter(tmp_path / "t" / "cap.jsonl", session_id="cap", cwd=str(book.root), start=NOW - timedelta(1))
    prompts = [f"rework export step {i}" for i in range(12)]
    prompts[10] = prompts[2]  # the same prompt again: one prompt, its files the union of both turns'
    for i, prompt in enumerate(prompts):
        grow(w, prompt, ["hub.go"] + ["batch.go"] * (i % 3 == 0) + ["checksum.go"] * (i in (1, 10)))
        capture(book, w)
        assert session_links(book, "cap") == relinked(book, "cap"), i
    rows = session_links(book, "cap")
    assert len(rows) == MAX_LINKS_PER_SESSION
    heavy = [(e, s) for e, s, _, weight in rows if weight > 1 / 20]  # above the tie: all kept
    assert sorted(e for e, _ in heavy) == sorted([x.id for x in shared] * 4 + [one.id] * 2)  # batch.go 4 turns
    srcs: dict[str, str] = {}  # each prompt's first episode, which holds its rows
    for eid, prompt in book.memory.db.query(
        "SELECT id, json_extract(data, '$.intent.raw_prompt') FROM episodes WHERE session_id = 'cap' "
        "ORDER BY created_at, rowid"
    ):
        srcs.setdefault(prompt, eid)
    assert len(srcs) == len(set(prompts)) and {s for _, s in heavy} <= set(srcs.values())
    tied = sorted((s, e) for e, s, _, weight in rows if weight == pytest.approx(1 / 20))
    assert tied == sorted((s, x.id) for s in srcs.values() for x in hub)[: MAX_LINKS_PER_SESSION - len(heavy)]
    capture(book, w)
    assert session_links(book, "cap") == rows
    cur = cursors.load(book.memory.db, str(w.path.resolve()), "cap")
    ids = [eid for (eid,) in book.memory.db.query("SELECT id FROM episodes WHERE session_id = 'cap'")]
    with book.memory.db.transaction():
        cursors.mark_unlearned(book.memory.db, cur, ids)
    capture(book, w)
    assert session_links(book, "cap") == rows


def indexed(db: Database) -> list[tuple[str, str]]:
    return db.query("SELECT episode_id, file FROM episode_files ORDER BY 1, 2")


ODD = ['web/it\'s "odd" - file.tsx', "-/--.go", "docs/über/naïve.md"]  # quotes, dashes, no word, diacritics


def test_an_odd_path_links_and_a_path_only_mentioned_does_not(book: Book, tmp_path: Path) -> None:
    """The index holds the path itself, relative to the project: quotes, dashes, diacritics and a path of nothing
    but punctuation link like any other (as they did by FTS phrase and stored files), and an episode that only
    read a file is not linked to it."""
    odd = book.add("Styled the odd page", at=-50, modified=[f"{book.root}/{p}" for p in ODD])
    reader = book.add("Read the odd page for the review", at=-49, read=ODD, modified=["notes.md"])
    capture(book, session(book, tmp_path, "later", ("restyle the odd page", ODD)))
    assert [(e, w) for e, _, w in links(book)] == [(odd.id, 3.0)]  # each of the three files
    assert {p for e, p in indexed(book.memory.db) if e == odd.id} == set(ODD)  # stored absolute, indexed relative
    assert reader.id not in {e for e, _ in indexed(book.memory.db) if _ in ODD}


def test_an_updated_or_retired_episode_links_by_what_it_is_now(book: Book, tmp_path: Path) -> None:
    """A regrown episode's rows are rewritten with its files; a retired one (consolidated away) links nothing."""
    first = book.add("Drafted the export", at=-50, modified=["export.go"])
    other = book.add("Drafted the import", at=-49, modified=["import.go"])
    first.context.files_modified = ["import.go"]
    book.memory.store.update(first, reembed=False)
    assert [p for e, p in indexed(book.memory.db) if e == first.id] == ["import.go"]
    retire(book.memory.store, other.id, "consolidated", into_id=first.id)
    capture(book, session(book, tmp_path, "later", ("rework the import", ["import.go", "export.go"])))
    assert [(e, w) for e, _, w in links(book)] == [(first.id, 1.0)]


def test_a_database_from_before_the_index_is_filled_and_links_the_same(book: Book, tmp_path: Path) -> None:
    """The migration fills the index from the episodes already stored: the same rows capture writes, the same
    links (the real session's, whose files are stored relative to its checkout)."""
    before = (datetime(2026, 1, 13, tzinfo=timezone.utc) - NOW) / timedelta(hours=1)
    book.add("Added the posthog telemetry client", at=before - 3, modified=[TELEMETRY + "telemetry.go"])
    book.add("Tested the opt-out", at=before - 1, modified=[f"{book.root}/{TELEMETRY}telemetry_test.go"])
    capture_and_learn(book.memory, REAL, project=str(book.root))
    rows, sid = indexed(book.memory.db), REAL.stem
    written = session_links(book, sid)
    assert len(rows) > 2 and len(written) == 4  # the 2nd and 3rd prompts link the client, the 5th both
    with book.memory.db.transaction() as conn:  # as the code before the index left it
        conn.execute("DROP TABLE episode_files")
        conn.execute("DELETE FROM _tempera_migrations WHERE name = 'core.071_episode_files'")
        conn.execute("DELETE FROM outcome_links")
    db = connect(book.memory.db.path)
    try:
        assert indexed(db) == rows
        link_session(db, sid, book.project.id)
        assert (
            db.query(
                "SELECT episode_id, src_id, terms, weight FROM outcome_links WHERE session_id = ? ORDER BY 1, 2", (sid,)
            )
            == written
        )
    finally:
        db.close()


def test_sessions_imported_newest_first_link_as_in_time_order(book: Book, tmp_path: Path) -> None:
    """`tempera import` reads files in path order: each older session captured after a newer one relinks the
    newer ones whole, so the links end as if the sessions had come in time order (a full relink of each)."""
    older = session(book, tmp_path, "older", ("round the invoice totals", ["billing/invoice.py"]), days=3)
    middle = session(
        book, tmp_path, "middle", ("tax on invoice totals", ["billing/invoice.py", "billing/tax.py"]), days=2
    )
    newer = session(book, tmp_path, "newer", ("tax rates per country", ["billing/tax.py"]), days=1)
    for w in (newer, middle, older):
        capture(book, w)
    rows = {sid: session_links(book, sid) for sid in ("older", "middle", "newer")}
    assert rows["older"] == [] and rows["middle"] and rows["newer"]  # each later one links the one before it
    assert {sid: relinked(book, sid) for sid in rows} == rows


def test_forgetting_an_episode_leaves_a_file_of_that_name_in_the_data_dir(book: Book) -> None:
    """`forget` deletes the data dir's files that a forgotten row's `path` names (the dream cycle's pages); the
    index's project-relative names must never reach Tempera's own files."""
    own = book.memory.db.path.parent / "config.toml"
    own.write_text("[retrieval]\n")
    ep = book.add("Tuned the project's config", at=-5, modified=["config.toml"])
    assert (ep.id, "config.toml") in indexed(book.memory.db)
    forget(book.memory.db, Selector("episode", ep.id))
    assert own.read_text() == "[retrieval]\n" and indexed(book.memory.db) == []
