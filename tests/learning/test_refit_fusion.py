"""`tempera learn refit-fusion`: hybrid fusion's keyword weight, coverage power and rrf_k refit on the user's own
prompts, the injected episodes capture judged used being each prompt's relevant ones. The store is real (SQLite file,
the offline embedding model); each prompt's injections go through the hook's assembler and log (`inject/context.py`
`compose`, with the two episodes the prompt is about as what the gate let through), the verdicts are set as
capture's implicit feedback writes them, and the command runs as the user's shell runs it.

Each prompt has three content words and two episodes: a paraphrase holding none of them (found by the vector list
only) and an unrelated text holding two of them (found by BM25 only, coverage 2/3). The shipped fusion weighs the
BM25 hit 4 x (2/3)^2.5 = 1.45 against the vector hit's 1 and ranks the unrelated text first; a keyword weight of
2 (0.73) ranks the paraphrase first."""

from __future__ import annotations

import time
import json
import os
import sqlite3
import sys
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest

from tempera.core import paths
from tempera.core.capture_input import CaptureInput
from tempera.core.config import Config, RetrievalConfig, load_config, to_toml
from tempera.core.memory import Memory
from tempera.core.project import project_for_path
from tempera.core.retrieve import retrieve
from tempera.inject.context import compose
from tempera.inject.fusionfit import linked_prompts
from tempera.inject.payload import HookPayload
from tempera.inject.warm import shown
from tests.support.cli import tempera

sys.path.append(str(Path(__file__).resolve().parents[1] / "transcripts"))
from transcript_writer import SessionWriter  # noqa: E402

PROMPTS = {  # prompt: (the paraphrase, the unrelated text sharing two of its words)
    "python memory leak": (
        "the interpreter's RAM usage keeps growing until the operating system kills the process",
        "Holiday diary: at the reptile house a keeper let my niece hold a young python, a memory she will keep; "
        "afterwards we had ice cream by the lake, rented a rowing boat and watched ducks until sunset",
    ),
    "database connection refused": (
        "postgres will not accept our client's socket, the server rejects it on port 5432",
        "The art museum keeps a database of paintings with a connection to a famous collector; the guided tour "
        "covered Renaissance portraits and marble sculptures",
    ),
    "flaky integration tests": (
        "the end-to-end suite passes sometimes and fails other times without any code change",
        "Pastry recipe: a flaky croissant dough needs careful integration of cold butter, then folding three times "
        "and baking until golden",
    ),
    "git merge conflict": (
        "two branches edited the same lines and combining them stops with markers in the file",
        "Book club notes: the novel follows two farming villages whose families merge through a wedding, and the "
        "conflict over grazing rights; we drank tea, ate scones and picked next month's mystery",
    ),
    "slow api response": (
        "the REST endpoint takes ten seconds to answer each request under load",
        "A slow afternoon walk in the park with a friend, whose response to my poem about autumn leaves was warm",
    ),
    "docker image size": (
        "the container build produces a huge artifact of several gigabytes; trim the layers",
        "Garden journal: the seed packet image showed tomatoes of a remarkable size, so I planted them beside the "
        "basil, watered twice a week, and the neighbour's cat slept in the sun on the warm soil",
    ),
}
OTHER = [
    "renamed the config loader and updated its documentation",
    "added a changelog entry for the release",
    "fixed a typo in the README installation section",
    "bumped the linter version in CI",
]
SHIPPED = RetrievalConfig()


def build(data: Path, repo: Path, *, sessions: int, used: str) -> None:
    """The episodes, then `sessions` sessions each asking every prompt, the prompt's two episodes injected and
    the paraphrase (`used="paraphrase"`) or the unrelated text (`used="unrelated"`) judged used, the other ignored."""
    project = project_for_path(str(repo))
    with Memory() as mem:
        mem.store.projects.ensure(project)
        texts = [t for pair in PROMPTS.values() for t in pair] + OTHER
        ids = {e.summary: e.id for e in mem.capture_many([CaptureInput(summary=t, project=str(repo)) for t in texts])}
        for k in range(sessions):
            for prompt, pair in PROMPTS.items():
                found = {
                    h.episode.id: h
                    for h in retrieve(mem.store, prompt, project_id=project.id, cfg=SHIPPED, limit=10, mode="hybrid")
                }
                hits = [shown(found[ids[t]], project) for t in pair]
                hp = HookPayload(event="UserPromptSubmit", session_id=f"s-{k:02d}", cwd=str(repo), prompt=prompt)
                compose(
                    mem.db.conn, hp, project, budget=4000, hits=hits, brief=[], facts=None, started=time.perf_counter()
                )
        chosen = [ids[pair[0 if used == "paraphrase" else 1]] for pair in PROMPTS.values()]
        mem.db.execute("UPDATE injections SET evaluated_at = created_at, used = 0")
        mem.db.execute(f"UPDATE injections SET used = 1 WHERE episode_id IN ({','.join('?' * len(chosen))})", chosen)


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    path = tmp_path / "repo"
    (path / ".git").mkdir(parents=True)
    return path


def judged(data: Path) -> tuple[int, int]:
    """(judged injections, judged used), read with plain SQL."""
    with sqlite3.connect(data / paths.DB_NAME) as conn:
        return conn.execute("SELECT COUNT(*), SUM(used) FROM injections WHERE evaluated_at IS NOT NULL").fetchone()


def test_a_refit_that_ranks_the_used_episodes_higher_is_reported_and_written(data_dir: Path, repo: Path) -> None:
    build(data_dir, repo, sessions=6, used="paraphrase")
    assert judged(data_dir) == (6 * 2 * len(PROMPTS), 6 * len(PROMPTS))
    config = data_dir / paths.CONFIG_NAME
    text = "# my settings\n" + to_toml(Config(), commented=True).replace("# budget_chars = 2000", "budget_chars = 1500")
    config.write_text(text)

    done = tempera("learn", "refit-fusion", "--json", check=True)
    report = json.loads(done.stdout)
    # 36 labelled prompts, the same 6 asked in each session: each text is embedded once
    assert "embedding 6 prompts" in done.stderr and "grid point 48/48" in done.stderr
    assert (report["labelled"], report["judged_prompts"], report["labelled_by"]) == (
        36,
        36,
        {"verdicts": 36, "links": 0},
    )
    assert report["fit_current"]["queries"] + report["held_out_current"]["queries"] == 36
    assert report["held_out_current"]["queries"] >= 10 and report["held_out_sessions"] == 2
    # the shipped fusion ranks the unrelated text above every used paraphrase; the refit ranks the paraphrase first
    assert report["current"] == {"hybrid_keyword_max_weight": 4.0, "hybrid_keyword_coverage_power": 2.5, "rrf_k": 20}
    assert report["held_out_current"]["mrr"] == 0.5 and report["held_out_refit"]["mrr"] == 1.0, report
    assert report["fit_refit"]["mrr"] == 1.0 and report["better"] and not report["written"]
    assert report["refit"]["hybrid_keyword_max_weight"] < 4.0
    assert set(report["changed"]) <= set(report["current"]) and report["changed"]
    assert config.read_text() == text

    shown_text = tempera("learn", "refit-fusion", "--write", check=True).stdout
    assert "held out MRR@10" in shown_text and "written to" in shown_text
    after = config.read_text()
    assert after.startswith("# my settings\n") and "budget_chars = 1500" in after
    retrieval = load_config().retrieval
    assert {k: getattr(retrieval, k) for k in report["refit"]} == report["refit"]
    assert load_config().inject.budget_chars == 1500
    for key in set(report["current"]) - set(report["changed"]):  # an unchanged key stays a commented default
        assert f"\n{key} = " not in after

    # a prompt asked now ranks the paraphrase first
    with Memory() as mem:
        project = mem.store.projects.resolve(str(repo))
        top = retrieve(mem.store, "python memory leak", project_id=project.id, cfg=retrieval, limit=3, mode="hybrid")
    assert top[0].episode.summary == PROMPTS["python memory leak"][0]

    # the environment's value wins over the file: said, and nothing else changes
    env = {**os.environ, "TEMPERA_RETRIEVAL__HYBRID_KEYWORD_MAX_WEIGHT": "4"}
    again = tempera("learn", "refit-fusion", "--write", env=env, check=True).stdout
    assert "TEMPERA_RETRIEVAL__HYBRID_KEYWORD_MAX_WEIGHT is set in this environment and overrides the file" in again


def test_when_nothing_beats_the_current_fusion_nothing_is_written(data_dir: Path, repo: Path) -> None:
    """The unrelated texts judged used: the shipped fusion already ranks every one first, so no grid point can do
    better held out, and a tie is no reason to change. An episode stored after every prompt was asked, the very
    words of one, was not there to compete with them and does not."""
    build(data_dir, repo, sessions=6, used="unrelated")
    with Memory() as mem:
        mem.capture(CaptureInput(summary="python memory leak: python memory leak", project=str(repo)))
    report = json.loads(tempera("learn", "refit-fusion", "--write", "--json", check=True).stdout)
    assert report["held_out_current"]["mrr"] == 1.0 and report["held_out_refit"]["mrr"] == 1.0, report
    assert not report["better"] and not report["written"] and report["changed"] == {}
    shown_text = tempera("learn", "refit-fusion", "--write", check=True).stdout
    assert "ranks the held-out prompts' relevant episodes no higher (MRR@10): the current fusion stays" in shown_text
    assert "written to" not in shown_text and not paths.config_path().exists()


def test_too_few_labelled_prompts_are_refused_with_the_numbers(data_dir: Path, repo: Path) -> None:
    build(data_dir, repo, sessions=2, used="paraphrase")
    done = tempera("learn", "refit-fusion", "--write")
    assert done.returncode == 1 and "Traceback" not in done.stderr
    assert done.stderr.strip() == (
        "Error: too few labelled prompts to refit fusion: it needs 20 in the earlier sessions it fits on and 10 in "
        "the later sessions (30% of the prompts) it checks on; there are 6 and 6 (12 from verdicts (an injected "
        "episode judged used, of 12 judged prompts), 0 from outcome links (earlier episodes that changed the files "
        "its turns changed))"
    )
    assert not paths.config_path().exists()


def test_without_the_embedding_model_it_is_a_clean_error(data_dir: Path, repo: Path, tmp_path: Path) -> None:
    build(data_dir, repo, sessions=6, used="paraphrase")
    empty = tmp_path / "no-models"
    empty.mkdir()
    env = {**os.environ, "FASTEMBED_CACHE_DIR": str(empty), "TEMPERA_EMBEDDING__USE_OFFLINE_PACKAGE": "false"}
    done = tempera("learn", "refit-fusion", "--write", env=env)
    assert done.returncode == 1 and "Traceback" not in done.stderr, done.stderr
    assert done.stderr.startswith("Error: refit-fusion ranks in hybrid mode, which needs the embedding model"), done
    assert not paths.config_path().exists()


def write_sessions(folder: Path, repo: Path) -> None:
    """Transcripts in Claude Code's shape, imported as a user's history would be: first a session whose turns
    write the paraphrases (each editing its topic's files, one per later session) and the unrelated texts
    (notes); then six sessions asking every prompt, each turn editing its topic's file for that session, so every
    prompt is linked to its paraphrase and to no unrelated text."""
    start = datetime(2026, 1, 5, 9, 0, tzinfo=timezone.utc)

    def turn(w: SessionWriter, prompt: str, files: list[str]) -> None:
        w.prompt(prompt)
        for f in files:
            w.tool("Edit", {"file_path": f"{repo}/{f}", "old_string": "a", "new_string": "b"}, "The file was updated.")
        w.say(f"Done: changed {', '.join(files)}.")

    base = SessionWriter(folder / "base.jsonl", session_id="base", cwd=str(repo), start=start)
    for i, (paraphrase, unrelated) in enumerate(PROMPTS.values()):
        turn(base, paraphrase, [f"topic{i}/part{k}.py" for k in range(6)])
        turn(base, unrelated, [f"notes/note{i}.md"])
    for k in range(6):
        w = SessionWriter(
            folder / f"s-{k:02d}.jsonl", session_id=f"s-{k:02d}", cwd=str(repo), start=start + timedelta(days=k + 1)
        )
        for i, prompt in enumerate(PROMPTS):
            turn(w, prompt, [f"topic{i}/part{k}.py"])


def test_outcome_links_label_prompts_without_any_injection(data_dir: Path, repo: Path, tmp_path: Path) -> None:
    """A fresh import gives no verdicts, only links: refit-fusion fits on them, and a link to an episode that was
    never shown (nothing was) is a relevant label, the paraphrase the shipped fusion ranks below the unrelated
    text."""
    write_sessions(tmp_path / "t", repo)
    done = tempera("import", str(tmp_path / "t"), "--json", timeout=300)
    assert done.returncode == 0 and json.loads(done.stdout)["files_failed"] == 0, done
    with sqlite3.connect(data_dir / paths.DB_NAME) as conn:
        assert conn.execute("SELECT COUNT(*) FROM injections").fetchone() == (0,)

    with Memory() as mem:
        labels = linked_prompts(mem.db)
        paraphrase = {
            e.id: e.intent.raw_prompt
            for e in mem.store.iter_episodes()
            if e.session_id == "base" and e.intent.raw_prompt in {p for p, _ in PROMPTS.values()}
        }
    assert len(labels) == 6 * len(PROMPTS) and {q.prompt for q in labels} == set(PROMPTS)
    first = [q for q in labels if q.session_id == "s-00"]
    assert len(first) == len(PROMPTS)
    for q in first:  # the first asking session's only earlier episodes with its file: the paraphrase
        assert [paraphrase[e] for e in q.relevant] == [PROMPTS[q.prompt][0]], q

    report = json.loads(tempera("learn", "refit-fusion", "--json", check=True).stdout)
    assert (report["judged_prompts"], report["labelled_by"]) == (0, {"verdicts": 0, "links": 36}), report
    assert report["fit_current"]["queries"] + report["held_out_current"]["queries"] == 36
    # every prompt's only relevant episode is its never-shown paraphrase (each session edits a file of its own),
    # which the shipped fusion ranks below the unrelated text and the earlier sessions' askings, a lower keyword
    # weight higher
    assert report["fit_current"]["mrr"] < report["fit_refit"]["mrr"], report
    assert report["refit"]["hybrid_keyword_max_weight"] < 4.0, report

    refused = tempera("learn", "refit-fusion", "--labels", "verdicts")
    assert refused.returncode == 1 and "there are 0 and 0 (0 from verdicts" in refused.stderr, refused
