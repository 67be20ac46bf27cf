"""Capture -> retrieve on a real SQLite file with sqlite-vec and the real offline embedding model."""

from __future__ import annotations

from pathlib import Path

import pytest

from tempera.core.capture_input import CaptureInput
from tempera.core.errors import AmbiguousId, InvalidInput, NotFound
from tempera.core.memory import Memory

EPISODES = [
    ("Fixed login redirect loop by sanitizing the return URL in the auth middleware", "bugfix"),
    ("Set NODE_ENV=production in the Dockerfile so dev dependencies stop shipping", "setup"),
    ("Refactored the billing module into smaller invoice and payment services", "refactor"),
    ("Resolved error E0502 by cloning the config before borrowing it mutably in main.rs", "bugfix"),
    ("Added keyset pagination to the orders API endpoint for large result sets", "feature"),
    ("Documented the deployment runbook for the Kubernetes cluster upgrade", "docs"),
]


@pytest.fixture
def seeded(memory: Memory, tmp_path: Path) -> dict[str, str]:
    repo = tmp_path / "work" / "webshop"
    repo.mkdir(parents=True)
    ids = {}
    for summary, task in EPISODES:
        ep = memory.capture(CaptureInput(summary=summary, task_type=task, project=str(repo)))
        ids[summary.split()[1]] = ep.id
    return ids | {"_repo": str(repo)}


def test_vectors_use_the_offline_model(memory: Memory, seeded: dict[str, str]) -> None:
    status = memory.store.vectors.status()
    assert status.state == "ok"
    assert "MiniLM" in (status.model or "")
    assert memory.db.one("SELECT COUNT(*) FROM episode_vec")[0] == len(EPISODES)


@pytest.mark.parametrize("mode", ["keyword", "hybrid"])
def test_literal_tokens_found_by_keyword_and_hybrid(memory: Memory, seeded: dict[str, str], mode: str) -> None:
    for query, key in [("NODE_ENV", "NODE_ENV=production"), ("E0502 main.rs", "error")]:
        hits = memory.retrieve(query, project=seeded["_repo"], mode=mode)
        assert hits and hits[0].episode.id == seeded[key], (mode, query)


@pytest.mark.parametrize("mode", ["vector", "hybrid"])
def test_paraphrases_found_by_vector_and_hybrid(memory: Memory, seeded: dict[str, str], mode: str) -> None:
    hits = memory.retrieve(
        "users keep getting bounced back to the sign-in page after authenticating", project=seeded["_repo"], mode=mode
    )
    assert hits and hits[0].episode.id == seeded["login"]


def test_paraphrase_has_no_keyword_overlap(memory: Memory, seeded: dict[str, str]) -> None:
    """The paraphrase above shares no term with its episode: keyword mode alone cannot find it."""
    hits = memory.retrieve("bounced back sign-in page authenticating", project=seeded["_repo"], mode="keyword")
    assert seeded["login"] not in [h.episode.id for h in hits]


def test_same_folder_name_different_path_stays_apart(memory: Memory, tmp_path: Path) -> None:
    a, b = tmp_path / "one" / "api", tmp_path / "two" / "api"
    a.mkdir(parents=True)
    b.mkdir(parents=True)
    memory.capture(CaptureInput(summary="Rotated the Redis password in the api service", project=str(a)))
    assert memory.retrieve("Redis password", project=str(a))
    assert memory.retrieve("Redis password", project=str(b)) == []
    assert memory.retrieve("Redis password", project=str(b), mode="vector") == []


def test_git_root_defines_the_project(memory: Memory, tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)
    (repo / "src" / "pkg").mkdir(parents=True)
    memory.capture(CaptureInput(summary="Pinned numpy below 2 for the legacy pipeline", project=str(repo / "src")))
    assert memory.retrieve("numpy pinned", project=str(repo / "src" / "pkg"))


def test_cross_project_adds_only_transferable(memory: Memory, tmp_path: Path) -> None:
    a, b = tmp_path / "a", tmp_path / "b"
    a.mkdir()
    b.mkdir()
    memory.capture(
        CaptureInput(
            summary="asyncio.gather swallows cancellation unless return_exceptions is set",
            validity_scope="language:python",
            project=str(a),
        )
    )
    memory.capture(
        CaptureInput(
            summary="asyncio worker pool in this repo is capped at 8 by WORKERS env",
            validity_scope="project",
            project=str(a),
        )
    )
    found = memory.retrieve("asyncio gather cancellation", project=str(b), cross_project=True)
    assert [h.episode.scope.kind for h in found] == ["language"]
    assert memory.retrieve("asyncio gather cancellation", project=str(b)) == []


def test_feedback_moves_rank_and_retrieval_alone_does_not(memory: Memory, tmp_path: Path) -> None:
    repo = tmp_path / "r"
    repo.mkdir()
    a = memory.capture(
        CaptureInput(summary="Flaky checkout test fixed by freezing time with freezegun", project=str(repo))
    )
    b = memory.capture(
        CaptureInput(summary="Flaky checkout test fixed by seeding the random generator", project=str(repo))
    )
    query = "flaky checkout test fix"

    def order() -> list[str]:
        return [h.episode.id for h in memory.retrieve(query, project=str(repo), limit=2)]

    first = order()
    for _ in range(5):
        order()
    assert memory.store.get(a.id).utility.value == 0.5
    assert memory.store.get(b.id).utility.value == 0.5
    assert memory.store.get(a.id).utility.retrieval_count == 6
    assert order() == first

    loser = first[1]
    memory.feedback("helpful", [loser])
    assert memory.store.get(loser).utility.value > 0.5
    assert order()[0] == loser

    memory.feedback("unhelpful", [loser])
    memory.feedback("unhelpful", [loser])
    assert memory.store.get(loser).utility.value < 0.5
    assert order()[0] != loser


def test_id_prefixes(memory: Memory, seeded: dict[str, str]) -> None:
    eid = seeded["login"]
    assert memory.store.get(eid[:8]).id == eid
    with pytest.raises(InvalidInput):
        memory.store.get(eid[:5])
    with pytest.raises(NotFound):
        memory.store.get("ffffffff0000")
    memory.db.execute(
        "UPDATE episodes SET id = ? WHERE id = ?",
        (eid[:8] + "-0000-4000-8000-000000000000", seeded["NODE_ENV=production"]),
    )
    with pytest.raises(AmbiguousId):
        memory.store.get(eid[:8])


def test_model_change_is_detected_and_vectors_not_mixed(memory: Memory, seeded: dict[str, str]) -> None:
    memory.db.meta_set("embedding_model", "some/other-model")
    status = memory.store.vectors.status()
    assert status.state == "mismatch" and "reindex" in status.detail
    with pytest.raises(InvalidInput):
        memory.retrieve("login redirect", project=seeded["_repo"], mode="vector")
    hits = memory.retrieve("login redirect", project=seeded["_repo"], mode="hybrid")
    assert hits and all(h.similarity is None for h in hits)  # keyword-only, nothing mixed
    before = memory.db.one("SELECT COUNT(*) FROM episode_vec")[0]
    memory.capture(CaptureInput(summary="New episode while vectors are stale", project=seeded["_repo"]))
    assert memory.db.one("SELECT COUNT(*) FROM episode_vec")[0] == before  # not written with the wrong model
    assert memory.store.vectors.reindex(full=True) == len(EPISODES) + 1
    assert memory.store.vectors.status().state == "ok"


def test_keyword_only_without_model(tmp_path: Path) -> None:
    from tempera.core.config import load_config

    cfg = load_config(
        environ={
            "TEMPERA_EMBEDDING__USE_OFFLINE_PACKAGE": "false",
            "TEMPERA_EMBEDDING__MODEL": "BAAI/bge-small-en-v1.5",
        }
    )
    with Memory(cfg, use_model=True) as mem:
        assert mem.embedder is None
        mem.capture(CaptureInput(summary="Tuned RUST_LOG filters for the tokio runtime", project=str(tmp_path)))
        assert mem.store.vectors.status().state == "none"
        assert mem.retrieve("RUST_LOG", project=str(tmp_path))[0].similarity is None
        with pytest.raises(InvalidInput):
            mem.retrieve("RUST_LOG", project=str(tmp_path), mode="vector")


def test_episode_that_changed_the_named_file_outranks_shared_words(memory: Memory, tmp_path: Path) -> None:
    """A prompt naming a file (a pasted lint error, a plan's "Files to modify") is about the code that episodes
    which changed or named that file worked on; episodes that share only its words rank below them."""
    repo = tmp_path / "cli"
    repo.mkdir()
    changed = memory.capture(
        CaptureInput(
            summary="Wrote each session's metadata under its own numbered subfolder",
            files_modified=["cmd/entire/cli/checkpoint/committed.go"],
            project=str(repo),
        )
    )
    for summary in (
        "Renumbered the checkpoint session list in the status output so the folders read 1, 2, 3",
        "Explained to the user how checkpoint session folders are numbered and why the first is zero",
        "Changed the numbering of session folders in the checkpoint docs from zero-based to one-based",
    ):
        memory.capture(CaptureInput(summary=summary, project=str(repo)))
    prompt = "Change the checkpoint session folder numbering to 1-based; the folders are written in committed.go"

    def first() -> str:
        return memory.retrieve(prompt, project=str(repo), mode="hybrid", limit=4)[0].episode.id

    assert first() == changed.id
    memory.config.retrieval.hybrid_names_weight = 0.0  # without the names list, the shared words win
    assert first() != changed.id


def test_paraphrase_below_the_cosine_floor_still_ranks_its_nearest_episode(memory: Memory, tmp_path: Path) -> None:
    """Every cosine here stands under `min_standing` (MiniLM scores a paraphrase ~0.25 against long episode text);
    hybrid still counts the vector list's nearest hits, so the episode that answers the question ranks above one
    that only the keyword list found (a weak lexical overlap)."""
    repo = tmp_path / "ml"
    repo.mkdir()
    answer = memory.capture(
        CaptureInput(
            project=str(repo),
            summary=(
                "Loading the model in serving failed with \"AttributeError: Can't get attribute 'clean_text' on "
                "<module '__main__'>\" because the sklearn Pipeline pickled a function defined in a notebook. "
                "Moved clean_text into pipeline/text.py, imported it in the notebook and retrained."
            ),
        )
    )
    wordy = memory.capture(
        CaptureInput(
            project=str(repo),
            summary=(
                "A task returned a DataFrame via XCom and wrote a 200MB row into the Airflow metadata DB, which then "
                "slowed every scheduler loop. Intermediate data is now written to s3://ml-pipeline/tmp/{{ ds }}/ as "
                "parquet and only the key is passed through XCom."
            ),
        )
    )
    prompt = "deserializing the trained artifact in production can't find a helper I wrote interactively"

    def ranked() -> list[str]:
        return [h.episode.id for h in memory.retrieve(prompt, project=str(repo), mode="hybrid")]

    assert memory.retrieve(prompt, project=str(repo), mode="vector") == []  # below the floor: the premise
    assert ranked() == [answer.id, wordy.id]
    memory.config.retrieval.hybrid_vector_window = 0.0  # the fixed floor alone drops the vector list
    assert ranked() == [wordy.id]


def test_a_file_that_most_episodes_name_does_not_outvote_the_prompts_words(memory: Memory, tmp_path: Path) -> None:
    """A name at least as many episodes mention as the candidate pool holds (a hub file every task touches) says
    nothing about which of them the prompt means: it gets no names list, and the prompt's words decide."""
    repo = tmp_path / "shop"
    repo.mkdir()
    target = memory.capture(
        CaptureInput(
            project=str(repo),
            summary=("Postgres deadlock between two checkout requests: now locking the rows in id order"),
        )
    )
    for topic in (
        "login redirect loop",
        "jwt expiry",
        "pandas merge",
        "kotlin coroutine",
        "swift optional",
        "redis eviction",
        "numpy dtype",
    ):
        memory.capture(
            CaptureInput(
                project=str(repo),
                summary=(f"Fixed the {topic} problem with a feature flag; saw src/auth/middleware.py"),
            )
        )
    memory.config.retrieval.candidates = 5  # the pool (limit 1: 5) is smaller than the 7 that name the file
    hits = memory.retrieve(
        "postgres deadlock is slow src/auth/middleware.py", project=str(repo), mode="hybrid", limit=1
    )
    assert [h.episode.id for h in hits] == [target.id]
