"""Each capture replaces the temporal credit derived from its session (`replace_evidence(..., origin=...)`), so
finding a source's rows of one origin must not read every row of that source: with a year of sessions imported,
that read grew with each one (2,170 temporal rows per capture after 86 shared sessions). A real store: the rows
of other origins stay, and SQLite's plan for the replacement goes through the origin index."""

from __future__ import annotations

from pathlib import Path

from tempera.core.capture_input import CaptureInput
from tempera.core.learning.evidence import Evidence, _delete_scope, replace_evidence
from tempera.core.learning.schema import ORIGIN_INDEX
from tempera.core.memory import Memory


def test_replacing_one_origins_evidence_searches_the_origin_index_and_keeps_the_rest(
    data_dir: Path, tmp_path: Path
) -> None:
    with Memory(use_model=False) as mem:
        a, b = (
            mem.capture(CaptureInput(summary=f"Fixed the {w} export of the ledger.", project=str(tmp_path)))
            for w in ("csv", "pdf")
        )
        for origin in ("session-1", "session-2"):
            replace_evidence(
                mem.db,
                "temporal",
                [
                    Evidence(a.id, "helpful", 0.3, {"origin": origin}),
                    Evidence(b.id, "helpful", 0.2, {"origin": origin}),
                ],
                origin=origin,
            )
        replace_evidence(
            mem.db, "temporal", [Evidence(b.id, "helpful", 0.5, {"origin": "session-1"})], origin="session-1"
        )
        rows = mem.db.query(
            "SELECT episode_id, weight, json_extract(evidence, '$.origin') FROM feedback_events "
            "WHERE source = 'temporal' ORDER BY 3, 1"
        )
        assert sorted(map(tuple, rows)) == sorted(
            [(b.id, 0.5, "session-1"), (a.id, 0.3, "session-2"), (b.id, 0.2, "session-2")]
        )

        where, params = _delete_scope("session-1", None)
        plan = mem.db.query(
            f"EXPLAIN QUERY PLAN DELETE FROM feedback_events WHERE source = ?{where}", ["temporal", *params]
        )
        assert any(f"USING INDEX {ORIGIN_INDEX}" in r[-1] and "<expr>=?" in r[-1] for r in plan), plan
