"""What `python -m pytest` runs on a default install: no e2e suite (it needs npm and a download), and the team
tests skipped with the reason when their extra is missing, instead of failing at collection."""

from __future__ import annotations

import subprocess
import sys

from tests.conftest import REPO


def pytest_run(*args: str, blocked: str = "") -> subprocess.CompletedProcess[str]:
    """A pytest process of its own in the repo; `blocked` names a module it cannot import, as when its extra was
    never installed (a None in sys.modules is Python's own marker for a module that must not import)."""
    code = f"import sys, pytest; sys.modules[{blocked!r}] = None; sys.exit(pytest.main({list(args)!r}))"
    return subprocess.run(
        [sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, timeout=120, check=False
    )


def test_the_default_run_deselects_the_e2e_suite_and_the_marker_selects_it() -> None:
    default = pytest_run("--co", "-q", "-p", "no:cacheprovider", "tests/e2e")
    assert default.returncode == 5 and " deselected" in default.stdout, default.stdout  # 5: nothing collected
    e2e = pytest_run("--co", "-q", "-p", "no:cacheprovider", "-m", "e2e", "tests/e2e")
    assert e2e.returncode == 0 and "tests/e2e/" in e2e.stdout, e2e.stdout


def test_team_tests_skip_with_the_reason_without_psycopg() -> None:
    r = pytest_run("-q", "-rs", "-p", "no:cacheprovider", "tests/team", blocked="psycopg")
    assert r.returncode == 5, r.stdout + r.stderr  # 5: nothing collected, every module skipped, none failed
    assert "pip install 'tempera-memory[team]'" in r.stdout and " skipped" in r.stdout, r.stdout
    assert " passed" not in r.stdout and " error" not in r.stdout, r.stdout
