"""Hybrid fusion on a real store with the real offline model: a question's every term outweighs a resemblance."""

from __future__ import annotations

from pathlib import Path

from tempera.core.capture_input import CaptureInput
from tempera.core.memory import Memory

# holds both of the question's terms (melanie, hurt) among much else, so its embedding is far from the question
NAMES_IT = (
    "Caroline: The adoption agency called back about the interview on Friday, and the art show needs three more "
    "paintings by June. The pottery class moved to Tuesdays. Melanie said she got hurt on the trail, nothing "
    "serious. The bakery on the corner closed, the bus timetable changed again and the choir needs altos. The "
    "library asked for volunteers for the reading hour, and my mentor wants a draft of the speech."
)
RESEMBLES_IT = "When did she get injured? I hope she is healing well."  # the nearest embedding, none of the terms


def test_a_hit_holding_every_term_outranks_the_nearest_embedding(memory: Memory, tmp_path: Path) -> None:
    """At full coverage the BM25 list outweighs the vector list: with equal weights the two lists' top hits tie,
    and then anything (here one helpful vote) decides, which on LoCoMo pushed keyword's answers out of the top 5."""
    repo = tmp_path / "chat"
    repo.mkdir()
    texts = [NAMES_IT, RESEMBLES_IT, "I fixed the garden fence this weekend", "The lemon cake turned out great"]
    ids = [memory.capture(CaptureInput(summary=t, task_type="other", project=str(repo))).id for t in texts]
    memory.feedback("helpful", [ids[1]])
    question = "When did Melanie get hurt?"
    assert [h.episode.id for h in memory.retrieve(question, project=str(repo), mode="keyword")] == [ids[0]]
    assert memory.retrieve(question, project=str(repo), mode="vector")[0].episode.id == ids[1]
    assert memory.retrieve(question, project=str(repo), mode="hybrid")[0].episode.id == ids[0]
