"""`evals/real_sessions.py --explain` on a real store: imported real Entire CLI sessions, the real model, a prompt
that names nothing of the work (one of the eval's misses, "let's respond to the PR feedback"). The report must say
where the relevant episode ranked, what it embeds and how near each part of it is, and what came above it."""

from __future__ import annotations

from pathlib import Path

from transcript_paths import DATA

from evals import real_sessions
from tempera.core.memory import Memory
from tempera.transcripts.pipeline import capture_and_learn

SESSIONS = DATA / "entire-cli"


def test_explain_reports_a_miss_with_its_ranks_text_and_what_outranked_it(tmp_path: Path) -> None:
    project = tmp_path / "cli"
    project.mkdir()
    with Memory() as mem:
        assert mem.embedder is not None
        for name in ("deeac353-lines-144-268.jsonl", "8b418ea5-895d-4ad5-abe8-4489d36e454f.jsonl"):
            capture_and_learn(mem, SESSIONS / name, project=str(project))
        episodes = list(mem.store.iter_episodes())
        project_id = episodes[0].project_id
        relevant = sorted(
            e.id for e in episodes if any(f.endswith("claudecode/claude.go") for f in e.context.files_modified)
        )
        assert relevant and len(relevant) < len(episodes)
        case = {"session_id": "later", "prompt": "let's respond to the PR feedback", "relevant": relevant}
        real_sessions.retrieval_figures(mem, project_id, [case])
        misses = real_sessions.explain_misses(mem, project_id, [case], episodes)
    assert case["ranks"]["hybrid"] is None or case["ranks"]["hybrid"] > real_sessions.K
    [miss] = misses
    best = next(e for e in episodes if e.id == miss["best"])
    assert miss["best"] in relevant and miss["relevant"] == len(relevant)
    assert miss["best_embedded_text"] == best.embed_text()[:400]
    assert 0 < miss["best_word_pieces"] <= 512
    assert set(miss["cosine"]) == {"embedded text", "intent", "summary", "file names"}
    assert all(-1 <= c <= 1 for c in miss["cosine"].values())
    assert miss["nearest_cosine"] >= miss["cosine"]["embedded text"] - 1e-3  # the stored vector is of that text
    assert not {o["id"] for o in miss["outranked_by"]} & set(relevant)
