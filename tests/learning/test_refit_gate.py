"""`tempera learn refit-gate`: the prompt gate's weights refit on the user's own injections, each judged used or ignored
when the turn after it was captured. The store is real (SQLite file, the offline embedding model), its memory and
its later sessions are the real transcripts of tests/data, the prompts go through the warm hook's answer
(`inject/warm.py` `answer`, which logs what the gate saw), the sessions through the capture that judges them
(`transcripts.pipeline.capture_and_learn`), and the command runs as the user's shell runs it."""

from __future__ import annotations

import json
import os
import re
import shutil
import sqlite3
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

from tempera.core import paths
from tempera.core.config import InjectConfig, load_config, to_toml, Config
from tempera.core.memory import Memory
from tempera.inject import gatefit
from tempera.inject.payload import HookPayload
from tempera.inject.warm import GATE_FEATURES, answer, gate_probability
from tempera.transcripts.pipeline import capture_and_learn
from tests.conftest import TRANSCRIPTS
from tests.support.cli import tempera
from tests.support.longsession import write_long_session

SOURCES = sorted(TRANSCRIPTS.glob("*/*.jsonl"))
SESSIONS = 50  # later sessions: about 100 used and 100 ignored injections, enough to fit on and to check on


def build(data: Path, repo: Path, *, sessions: int, cold: int = 0) -> None:
    """Memory from one copy of each fixture transcript; then `sessions` later sessions, each a new copy of one of
    them whose prompts are asked first (the first `cold` of them keyword-only, as a daemon answers until its model
    is warm)."""
    work = data.parent / "transcripts"
    with Memory() as mem:
        prompts = {}
        for i, src in enumerate(SOURCES):
            t = write_long_session(src, work / f"past-{i}.jsonl", 1, session_id=f"past-{i}", cwd=repo)
            added = capture_and_learn(mem, t, session_id=f"past-{i}").added
            prompts[src] = [e.intent.raw_prompt for e in added if e.intent.raw_prompt.strip()]
        for k in range(sessions):
            src, sid = SOURCES[k % len(SOURCES)], f"later-{k:03d}"
            t = write_long_session(src, work / f"{sid}.jsonl", 1, session_id=sid, cwd=repo, first=1 + k)
            for prompt in prompts[src]:
                hp = HookPayload(event="UserPromptSubmit", session_id=sid, cwd=str(repo), prompt=prompt)
                answer(mem, hp, keyword_only=k < cold)
            capture_and_learn(mem, t, session_id=sid)


def verdicts(data: Path) -> dict[tuple[bool, bool], int]:
    """(has the gate's features, used) -> judged injections, read with plain SQL."""
    with sqlite3.connect(data / paths.DB_NAME) as conn:
        rows = conn.execute(
            "SELECT json_extract(scores, '$.gate') IS NOT NULL, used, COUNT(*) FROM injections "
            "WHERE evaluated_at IS NOT NULL GROUP BY 1, 2"
        ).fetchall()
    return {(bool(g), bool(u)): n for g, u, n in rows}


@pytest.fixture(scope="module")
def judged_store(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Path, Path]]:
    """A data dir with SESSIONS later sessions judged (built once for the module), and its repository."""
    base = tmp_path_factory.mktemp("refit")
    repo, data = base / "repo", base / "data"
    (repo / ".git").mkdir(parents=True)
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("TEMPERA_DATA_DIR", str(data))
        mp.setenv("FASTEMBED_CACHE_DIR", str(Path(__file__).resolve().parents[2] / ".pytest_cache" / "models"))
        build(data, repo, sessions=SESSIONS)
    yield data, repo


def test_too_few_verdicts_are_refused_with_the_numbers(data_dir: Path, tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)
    build(data_dir, repo, sessions=6, cold=2)
    counts = verdicts(data_dir)
    assert counts.get((False, True), 0) + counts.get((False, False), 0) > 0  # the keyword path's rows, no features
    done = tempera("learn", "refit-gate")
    assert done.returncode == 1 and "Traceback" not in done.stderr
    used, ignored = counts.get((True, True), 0), counts.get((True, False), 0)
    without = counts.get((False, True), 0) + counts.get((False, False), 0)
    line = done.stderr.strip()
    assert line.startswith("Error: too few judged injections to refit the gate: it needs 70 used and 70 ignored")
    found = re.search(r"the log has (\d+) used / (\d+) ignored to fit on and (\d+) / (\d+) to check on", line)
    assert found, line
    fit_used, fit_ignored, held_used, held_ignored = (int(n) for n in found.groups())
    assert (fit_used + held_used, fit_ignored + held_ignored) == (used, ignored)
    assert f"({without} more judged without the gate's features, left out)" in line
    assert not paths.config_path().exists()


def test_refit_reports_held_out_figures_and_writes_only_when_asked(
    judged_store: tuple[Path, Path], data_dir: Path
) -> None:
    built, repo = judged_store
    shutil.copytree(built, data_dir)
    counts = verdicts(data_dir)
    assert min(counts[(True, True)], counts[(True, False)]) >= 100, counts

    # what the gate saw is in the log: its P is the current weights' on the logged features
    with Memory(use_model=False) as mem:
        rows, without = gatefit.judged_rows(mem.db)
        logged = [json.loads(r[0]) for r in mem.db.query("SELECT scores FROM injections LIMIT 20")]
    assert without == 0 and len(rows) == counts[(True, True)] + counts[(True, False)]
    for s in logged:
        features = np.array([[s["gate"][k] for k in GATE_FEATURES]])
        assert abs(float(gate_probability(features, InjectConfig().gate_weights)[0]) - s["p_relevant"]) < 2e-3

    # the check is on later sessions than the fit, none of them seen by the fit
    fit, held = gatefit.split_by_session(rows)
    first = {r.session_id: r.created_at for r in reversed(rows)}
    assert max(first[r.session_id] for r in fit) < min(first[r.session_id] for r in held)
    assert 0.25 <= len(held) / len(rows) <= 0.4

    config = data_dir / paths.CONFIG_NAME
    text = "# my settings\n" + to_toml(Config(), commented=True).replace("# budget_chars = 2000", "budget_chars = 1500")
    config.write_text(text)
    report = json.loads(tempera("learn", "refit-gate", "--json", check=True).stdout)
    assert report["fit_rows"] == len(fit) and report["held_out_refit"]["rows"] == len(held)
    assert report["current"] == InjectConfig().gate_weights and len(report["refit"]) == len(GATE_FEATURES) + 1
    # on these sessions the shipped weights rate every copy of a past session alike; whether it was used is
    # learnable from the features, and the refit predicts it better on the sessions it did not see
    now, new = report["held_out_current"], report["held_out_refit"]
    assert new["log_loss"] < now["log_loss"] and new["brier"] < now["brier"], (now, new)
    assert new["calibration_error"] < now["calibration_error"] and new["auc"] > now["auc"]
    assert report["better"] and not report["written"] and config.read_text() == text

    written = json.loads(tempera("learn", "refit-gate", "--write", "--json", check=True).stdout)
    assert written["written"] and written["refit"] == report["refit"]
    after = config.read_text()
    assert after.startswith("# my settings\n") and "budget_chars = 1500" in after
    assert "# gate_bar = " in after and "# gate_weights" not in after  # the commented default became the key
    kept = [line for line in after.splitlines() if not line.startswith("gate_weights = ")]
    assert kept == [line for line in text.splitlines() if not line.startswith("# gate_weights = ")]
    assert f"gate_weights = [{', '.join(map(str, report['refit']))}]" in after.splitlines()
    assert load_config().inject.gate_weights == report["refit"] and load_config().inject.budget_chars == 1500

    # as text, with the weights in use set by the environment, which the file cannot override
    env = {**os.environ, "TEMPERA_INJECT__GATE_WEIGHTS": ", ".join(map(str, InjectConfig().gate_weights))}
    shown = tempera("learn", "refit-gate", "--write", env=env, check=True).stdout
    assert f"refit:   {report['refit']}" in shown and "log loss" in shown and "written to" in shown
    assert "TEMPERA_INJECT__GATE_WEIGHTS is set in this environment and overrides the file" in shown
    assert config.read_text() == after

    # the next prompt is gated with the refit weights
    hp = HookPayload(
        event="UserPromptSubmit", session_id="after-refit", cwd=str(repo), prompt="start phoenix in background"
    )
    with Memory() as mem:
        answer(mem, hp)
        scores = [
            json.loads(r[0]) for r in mem.db.query("SELECT scores FROM injections WHERE session_id = 'after-refit'")
        ]
    assert scores
    for s in scores:
        features = np.array([[s["gate"][k] for k in GATE_FEATURES]])
        assert abs(float(gate_probability(features, report["refit"])[0]) - s["p_relevant"]) < 2e-3


def test_a_refit_that_predicts_no_better_is_not_written(judged_store: tuple[Path, Path], data_dir: Path) -> None:
    """The weights in use are the best logistic fit of the held-out verdicts themselves, which no refit on the
    earlier sessions can beat on held-out log loss: --write reports it and leaves the config alone."""
    built, _ = judged_store
    shutil.copytree(built, data_dir)
    with Memory(use_model=False) as mem:
        rows, _ = gatefit.judged_rows(mem.db)
    _, held = gatefit.split_by_session(rows)
    x = np.array([r.features for r in held], dtype=np.float64)
    y = np.array([r.used for r in held], dtype=np.float64)
    best = [round(float(b), 4) for b in gatefit.fit_logistic(x, y, np.ones(len(held)), 1e-3)]
    env = {**os.environ, "TEMPERA_INJECT__GATE_WEIGHTS": ", ".join(map(str, best))}

    report = json.loads(tempera("learn", "refit-gate", "--write", "--json", env=env, check=True).stdout)
    assert report["current"] == best and report["refit"] != best
    assert report["held_out_refit"]["log_loss"] >= report["held_out_current"]["log_loss"], report
    assert not report["better"] and not report["written"] and report["env_override"]
    shown = tempera("learn", "refit-gate", "--write", env=env, check=True).stdout
    assert "predicts the held-out verdicts no better, or ranks them worse: the current weights stay" in shown
    assert "written to" not in shown and not paths.config_path().exists()
