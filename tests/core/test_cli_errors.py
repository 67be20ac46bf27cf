"""Bad input through the real `tempera` executable: one clear line, exit 1, stored data untouched."""

from __future__ import annotations

import json
import os
import shlex
import subprocess
from pathlib import Path

import pytest
from tests.support.cli import TEMPERA, command_tree, tempera
from tempera.core import paths


def db_bytes(data_dir: Path) -> bytes:
    return (data_dir / paths.DB_NAME).read_bytes()


@pytest.fixture
def one_episode(data_dir: Path, tmp_path: Path) -> Path:
    r = tempera("capture", "-s", "Fixed ECONNREFUSED by waiting for Postgres healthcheck", "--project", str(tmp_path))
    assert r.returncode == 0, r.stderr
    return tmp_path


def assert_clean_error(r: subprocess.CompletedProcess[str], *needles: str) -> None:
    assert r.returncode == 1, (r.returncode, r.stdout, r.stderr)
    assert "Traceback" not in r.stderr
    assert r.stderr.startswith("Error:"), r.stderr
    for n in needles:
        assert n in r.stderr, r.stderr


def count(project: Path) -> int:
    r = tempera("retrieve", "--all", "--json", "--project", str(project))
    return len(json.loads(r.stdout))


def test_malformed_json_on_stdin(one_episode: Path) -> None:
    assert_clean_error(tempera("capture", input='{"summary": "x",'), "not valid JSON")
    assert_clean_error(tempera("capture", input='{"summary": "ok"}\n[1, 2]\n'), "item 2")
    assert_clean_error(tempera("capture", input='{"summary": "ok", "outcome": "great"}'), "outcome")
    assert count(one_episode) == 1


def test_unknown_id_and_empty_query(one_episode: Path) -> None:
    assert_clean_error(tempera("retrieve", "deadbeef00", "--project", str(one_episode)), "no episode")
    assert_clean_error(tempera("retrieve", "deadbeef", "--project", str(one_episode)), "no episode")  # not a search
    assert_clean_error(tempera("retrieve", "  ", "--project", str(one_episode)), "QUERY")
    assert_clean_error(tempera("feedback", "helpful", "--episodes", "abc"), "too short")


def test_huge_summary_refused(one_episode: Path, data_dir: Path) -> None:
    before = count(one_episode)
    r = tempera("capture", "--project", str(one_episode), input=json.dumps({"summary": "x" * 1_000_000}))
    assert_clean_error(r, "1,000,000 characters")
    assert count(one_episode) == before


def test_database_that_is_not_sqlite(data_dir: Path) -> None:
    data_dir.mkdir(parents=True)
    (data_dir / paths.DB_NAME).write_bytes(b"this is not a database\n" * 10)
    before = db_bytes(data_dir)
    assert_clean_error(tempera("retrieve", "--all"), "not a SQLite database")
    assert_clean_error(tempera("capture", "-s", "anything"), "not a SQLite database")
    assert db_bytes(data_dir) == before


def run_read_only(data_dir: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """Run the CLI with the data dir read-only: chmod for a normal user; root ignores modes, so as root the
    data dir is bind-mounted read-only in a private mount namespace (unshare -m)."""
    if os.geteuid() != 0:
        os.chmod(data_dir / paths.DB_NAME, 0o400)
        os.chmod(data_dir, 0o500)
        try:
            return tempera(*args)
        finally:
            os.chmod(data_dir, 0o700)
            os.chmod(data_dir / paths.DB_NAME, 0o600)
    d = shlex.quote(str(data_dir))
    cmd = " ".join(shlex.quote(a) for a in [*TEMPERA, *args])
    script = f"mount --bind {d} {d} && mount -o remount,bind,ro {d} && exec {cmd}"
    return subprocess.run(["unshare", "-m", "sh", "-c", script], capture_output=True, text=True, timeout=120)


def test_read_only_data_dir(one_episode: Path, data_dir: Path) -> None:
    before = db_bytes(data_dir)
    assert_clean_error(run_read_only(data_dir, "capture", "-s", "more"), "read-only")
    assert db_bytes(data_dir) == before
    assert count(one_episode) == 1


def test_daemon_start_on_a_read_only_data_dir(one_episode: Path, data_dir: Path) -> None:
    r = run_read_only(data_dir, "daemon", "start", "--wait", "5")
    assert_clean_error(r, f"data dir {data_dir} is read-only")
    assert len(r.stderr.splitlines()) == 1


def run_on_full_disk(data_dir: Path, *args: str, free_kb: int = 60) -> subprocess.CompletedProcess[str]:
    """A real full disk: the data dir's database copied onto a 4 MB tmpfs in a private mount namespace, the rest
    of it filled with a file up to `free_kb` free. Needs root (mount)."""
    d = shlex.quote(str(data_dir))
    cmd = " ".join(shlex.quote(a) for a in [*TEMPERA, *args])
    script = (
        f"cp -a {d} {d}.copy && mount -t tmpfs -o size=4m,mode=0700 tmpfs {d} && cp -a {d}.copy/. {d}/ && "
        f"(dd if=/dev/zero of={d}/fill bs=4k 2>/dev/null; truncate -s -{free_kb}K {d}/fill; exec {cmd})"
    )
    return subprocess.run(["unshare", "-m", "sh", "-c", script], capture_output=True, text=True, timeout=120)


@pytest.mark.skipif(os.geteuid() != 0, reason="mounting a small tmpfs needs root")
def test_import_on_a_full_disk(one_episode: Path, data_dir: Path) -> None:
    from tests.conftest import TRANSCRIPTS

    r = run_on_full_disk(data_dir, "import", "--no-embed", "-q", str(TRANSCRIPTS))
    assert_clean_error(r, "disk", "full")
    assert len(r.stderr.splitlines()) == 1


def test_files_are_owner_only(one_episode: Path, data_dir: Path) -> None:
    assert data_dir.stat().st_mode & 0o777 == 0o700
    assert (data_dir / paths.DB_NAME).stat().st_mode & 0o777 == 0o600


def test_help_on_every_command() -> None:
    for path, cmd in command_tree():
        assert cmd.help, f"`tempera {' '.join(path)}` has no help text"
        r = tempera(*path, "--help")
        assert r.returncode == 0 and "Usage:" in r.stdout, path
