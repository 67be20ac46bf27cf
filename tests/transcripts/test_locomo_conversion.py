"""The LoCoMo eval's conversion: every utterance lands in exactly one turn, record uuids map back to dia_ids,
and malformed evidence ids are split or dropped."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest
from transcript_paths import LOCOMO, REPO

from tempera.transcripts import read_transcript, segment_turns

spec = importlib.util.spec_from_file_location("locomo_eval", REPO / "evals" / "locomo.py")
locomo = importlib.util.module_from_spec(spec)  # type: ignore[arg-type]
spec.loader.exec_module(locomo)  # type: ignore[union-attr]


@pytest.fixture(scope="module")
def sample() -> dict:
    return json.loads(LOCOMO.read_text(encoding="utf-8"))[0]


def test_every_utterance_is_in_one_turn(sample: dict, tmp_path: Path) -> None:
    cwd, by_uuid, texts = locomo.write_transcripts(sample, tmp_path)
    seen: list[str] = []
    files = sorted((tmp_path / sample["sample_id"]).glob("*.jsonl"))
    for f in files:
        for turn in segment_turns(read_transcript(f)):
            assert turn.cwd == cwd
            seen += [by_uuid[u] for u in turn.record_uuids if u in by_uuid]
    assert sorted(seen) == sorted(texts) and len(seen) == len(set(seen))
    assert len(files) == len(locomo.sessions(sample["conversation"]))
    assert texts["D1:3"] == "Caroline: I went to a LGBTQ support group yesterday and it was so powerful."


def test_session_opened_by_speaker_b_gets_a_dated_opening(sample: dict, tmp_path: Path) -> None:
    conv = sample["conversation"]
    number, turns, when = next(s for s in locomo.sessions(conv) if s[1][0]["speaker"] != conv["speaker_a"])
    locomo.write_transcripts(sample, tmp_path)
    path = next(
        p for p in (tmp_path / sample["sample_id"]).glob("*.jsonl") if turns[0]["text"] in p.read_text(encoding="utf-8")
    )
    first = segment_turns(read_transcript(path))[0]
    assert first.prompt == f"[{when}]" and first.final_text.endswith(turns[0]["text"])


def test_evidence_ids_are_split_and_checked() -> None:
    known = {"D8:6", "D9:17", "D1:3"}
    item = {"evidence": ["D8:6; D9:17", "D:11:26", "D1:3", "D1:3"]}
    assert locomo.evidence_ids(item, known) == ["D8:6", "D9:17", "D1:3"]
    assert locomo.evidence_ids({"evidence": []}, known) == []
