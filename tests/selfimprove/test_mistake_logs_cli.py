"""The mistakes and should-have-asked logs through the `tempera` command: writes, reads, --top, --json, errors."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from tempera.core.memory import Memory
from tempera.core.project import project_for_path
from tempera.core.selfimprove import mistakes
from tests.support.cli import command_path


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    root = tmp_path / "shop"
    (root / ".git").mkdir(parents=True)
    (root / "src" / "auth").mkdir(parents=True)
    return root


def test_log_correction_stores_paths_relative_to_the_project_root(tempera: Callable, repo: Path, mem: Memory) -> None:
    code, out, err = tempera(
        "lessons",
        "log-correction",
        "--category",
        "Lifetime Annotations",
        "--description",
        "assumed &str where &'a str was needed",
        "--correction",
        "use a named lifetime",
        "--files",
        "login.rs,../../README.md",
        cwd=repo / "src" / "auth",
    )
    assert (code, err) == (0, ""), err
    assert out.startswith("Logged correction #")
    [row] = mistakes.mistakes(mem.db)
    assert row.values["category"] == "lifetime_annotations"
    assert row.files == ["src/auth/login.rs", "README.md"]
    assert row.project_id == project_for_path(repo).id and row.scope == "project" and row.source == "manual"


def test_mistakes_list_top_and_json(tempera: Callable, repo: Path) -> None:
    for category in ("validation_skipped", "validation_skipped", "host_header_trust"):
        assert tempera("lessons", "log-correction", "--category", category, "--description", "d", cwd=repo)[0] == 0
    code, out, _ = tempera("lessons", "mistakes", "--top", "5", "--json")
    top = json.loads(out)
    assert code == 0 and [(r["category"], r["count"]) for r in top] == [
        ("validation_skipped", 2),
        ("host_header_trust", 1),
    ]
    _, out, _ = tempera("lessons", "mistakes", "--project", str(repo))
    assert out.count("validation_skipped") == 2 and "[shop]" in out
    _, out, _ = tempera("lessons", "mistakes", "--top", "1")
    assert "2x  validation_skipped" in out and "host_header_trust" not in out


def test_should_have_asked_log(tempera: Callable, repo: Path) -> None:
    code, _, _ = tempera(
        "lessons",
        "log-should-have-asked",
        "--trigger",
        "edit auth middleware",
        "--question",
        "Which auth provider is wired up?",
        "--answer",
        "No auth - internal-only service.",
        "--files",
        "src/auth/middleware.py",
        cwd=repo,
    )
    assert code == 0
    tempera(
        "lessons",
        "log-should-have-asked",
        "--trigger",
        "touch login",
        "--question",
        "Which auth provider is wired up?",
        cwd=repo,
    )
    _, out, _ = tempera("lessons", "asks", "--json")
    rows = json.loads(out)
    assert [r["files"] for r in rows] == [[], ["src/auth/middleware.py"]]
    assert rows[1]["answer"] == "No auth - internal-only service."
    _, out, _ = tempera("lessons", "asks", "--top", "3")
    assert "2x  Which auth provider is wired up?" in out


@pytest.mark.parametrize(
    "args, needle",
    [
        (["lessons", "log-correction", "--category", "  ", "--description", "x"], "category must not be empty"),
        (
            ["lessons", "log-correction", "--category", "c", "--description", "x", "--scope", "galaxy:far"],
            "bad validity scope",
        ),
        (
            ["lessons", "log-correction", "--category", "c", "--description", "x", "--episode", "deadbeef00"],
            "no episode",
        ),
        (["lessons", "mistakes", "--project", "no-such-project"], "unknown project"),
        (["lessons", "log-should-have-asked", "--trigger", "t", "--question", ""], "question must not be empty"),
        (["lessons", "templates", "get", "--task-type", "bugfix", "--project", "nope"], "unknown project"),
        (["lessons", "brief", "--files", "a.py", "--project", "nope"], "unknown project"),
    ],
)
def test_domain_errors_are_one_line(tempera: Callable, repo: Path, args: list[str], needle: str) -> None:
    code, out, err = tempera(*args, cwd=repo)
    assert code == 1 and "Traceback" not in err and err.startswith("Error:"), (code, out, err)
    assert needle in err


def test_every_command_has_help(tempera: Callable) -> None:
    from tempera.cli.selfimprove import COMMANDS, templates_group

    paths = [command_path(c) for c in COMMANDS + list(templates_group.commands.values())]
    for path in paths:
        code, out, _ = tempera(*path, "--help")
        assert code == 0 and "Usage:" in out and len(out.split("\n")) > 3, path


def test_correction_tied_to_an_episode_takes_its_project(
    tempera: Callable, repo: Path, tmp_path: Path, mem: Memory
) -> None:
    _, out, _ = tempera("capture", "-s", "Added the login rate limiter", "--project", str(repo), "--json")
    episode = json.loads(out)[0]["id"]
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    code, _, err = tempera(
        "lessons", "log-correction", "--category", "c", "--description", "d", "--episode", episode[:10], cwd=elsewhere
    )
    assert code == 0, err
    [row] = mistakes.mistakes(mem.db)
    assert (row.project_id, row.episode_id) == (project_for_path(repo).id, episode)
