"""`tempera install` / `uninstall` through the real executable on a temporary HOME full of someone's settings."""

from __future__ import annotations

import json
import os
import shlex
import stat
import subprocess
import sys
from pathlib import Path

import pytest
from installer_support import CLAUDE_JSON, SETTINGS, foreign_commands, run_cli

from tempera.core.errors import TemperaError


def write(path: Path, text: str, mode: int = 0o600) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    os.chmod(path, mode)
    return path


@pytest.fixture
def settings(home: Path) -> Path:
    return write(home / ".claude" / "settings.json", SETTINGS, 0o640)


@pytest.fixture
def claude_json(home: Path) -> Path:
    return write(home / ".claude.json", CLAUDE_JSON, 0o600)


def backups(path: Path) -> list[Path]:
    return sorted(path.parent.glob(path.name + ".tempera-backup-*"))


def ok(*args: str, cwd: Path | None = None, **env: str) -> str:
    r = run_cli(*args, cwd=cwd, **env)
    assert r.returncode == 0, r.stderr
    return r.stdout


def test_install_merges_into_existing_settings(settings: Path, claude_json: Path) -> None:
    ok("install")
    doc, before = json.loads(settings.read_text()), json.loads(SETTINGS)
    assert {k: v for k, v in doc.items() if k != "hooks"} == {k: v for k, v in before.items() if k != "hooks"}
    commands = {e: [h["command"] for g in doc["hooks"][e] for h in g["hooks"]] for e in doc["hooks"]}
    assert foreign_commands(before) <= {(e, c) for e, cs in commands.items() for c in cs}
    session_group = doc["hooks"]["SessionStart"][0]["hooks"]
    assert [h["command"] for h in session_group] == ["~/bin/greet.sh"]  # the user's own group is as it was
    for event, verb in (
        ("SessionStart", "session-start"),
        ("UserPromptSubmit", "user-prompt-submit"),
        ("Stop", "stop"),
        ("PreCompact", "pre-compact"),
        ("SessionEnd", "session-end"),
    ):
        ours = [h for g in doc["hooks"][event] for h in g["hooks"] if h.get("args", [""])[-1] == verb]
        assert len(ours) == 1 and ours[0]["timeout"] == 10 and ours[0]["type"] == "command"
        python, (*flags, relay, _) = ours[0]["command"], ours[0]["args"]  # exec form: no shell in between
        assert Path(python).is_absolute() and os.access(python, os.X_OK) and flags == ["-I", "-S"]
        assert Path(relay).is_absolute() and Path(relay).is_file() and Path(relay).parent.name == "hooks"
    assert doc["hooks"]["PreToolUse"] == before["hooks"]["PreToolUse"]

    state = json.loads(claude_json.read_text())
    server = state["mcpServers"]["tempera"]
    assert server["type"] == "stdio" and server["args"] == [] and server["env"] == {}
    assert Path(server["command"]).is_absolute() and Path(server["command"]).name == "tempera-mcp"
    assert state["mcpServers"]["github"] == json.loads(CLAUDE_JSON)["mcpServers"]["github"]
    text = claude_json.read_text()
    assert '"lastCost": 1.50' in text and '"caf\\u00e9"' in text  # other members are not re-serialised


def test_second_install_changes_nothing(settings: Path, claude_json: Path) -> None:
    ok("install")
    first = settings.read_bytes(), claude_json.read_bytes()
    out = ok("install")
    assert (settings.read_bytes(), claude_json.read_bytes()) == first
    assert out.count("unchanged") == 2
    assert len(backups(settings)) == len(backups(claude_json)) == 1


def test_uninstall_restores_original_bytes(settings: Path, claude_json: Path) -> None:
    ok("install")
    ok("uninstall")
    assert settings.read_text() == SETTINGS
    assert claude_json.read_text() == CLAUDE_JSON
    n = len(backups(settings)), len(backups(claude_json))
    assert ok("uninstall").count("unchanged") == 2
    assert (len(backups(settings)), len(backups(claude_json))) == n
    assert settings.read_text() == SETTINGS


def test_uninstall_restores_other_formatting_semantically(home: Path) -> None:
    original = json.loads(SETTINGS)
    path = write(home / ".claude" / "settings.json", json.dumps(original, indent=4))
    ok("install")
    ok("uninstall")
    assert json.loads(path.read_text()) == original


def test_mode_kept_and_backup_written(settings: Path, claude_json: Path) -> None:
    out = ok("install")
    assert stat.S_IMODE(settings.stat().st_mode) == 0o640
    assert stat.S_IMODE(claude_json.stat().st_mode) == 0o600
    [backup] = backups(settings)
    assert backup.read_text() == SETTINGS and stat.S_IMODE(backup.stat().st_mode) == 0o640
    assert backup.name[len("settings.json.tempera-backup-") :][8] == "T" and str(backup) in out
    assert backups(claude_json)[0].read_text() == CLAUDE_JSON
    assert not list(settings.parent.glob(".settings.json.tempera-*"))  # no temp file left behind


BAD_FILES = [
    (".claude/settings.json", '{"hooks": {"Stop": [', "not valid JSON"),
    (".claude/settings.json", "[1, 2]", "must hold a JSON object, not an array"),
    (".claude/settings.json", '{"hooks": []}', "`hooks` must be an object, not an array"),
    (".claude/settings.json", '{"hooks": {"Stop": {"matcher": ""}}}', "`hooks.Stop` must be an array, not an object"),
    (".claude.json", '{"mcpServers": "none"}', "`mcpServers` must be an object, not a string"),
    (".claude.json", '{"numStartups": 3,}', "not valid JSON"),
]


@pytest.mark.parametrize("command", ["install", "uninstall"])
@pytest.mark.parametrize(("name", "content", "message"), BAD_FILES)
def test_bad_file_refused_and_untouched(home: Path, command: str, name: str, content: str, message: str) -> None:
    bad = write(home / name, content)
    good = write(home / (".claude.json" if name.startswith(".claude/") else ".claude/settings.json"), "{}\n")
    r = run_cli(command)
    assert r.returncode == 1, r.stdout
    assert r.stderr.startswith("Error:") and "Traceback" not in r.stderr and len(r.stderr.splitlines()) == 1
    assert str(bad) in r.stderr and message in r.stderr and "nothing was changed" in r.stderr
    assert bad.read_text() == content and good.read_text() == "{}\n"  # nothing written, not even the good file
    assert not backups(bad) and not backups(good)


def test_unreadable_file_is_a_clean_error(home: Path) -> None:
    (home / ".claude" / "settings.json").mkdir(parents=True)
    r = run_cli("install")
    assert r.returncode == 1
    assert r.stderr == f"Error: cannot read {home}/.claude/settings.json: Is a directory\n"
    assert not (home / ".claude.json").exists()


def test_read_only_directory_is_a_clean_error(settings: Path, claude_json: Path) -> None:
    """The settings dir read-only: chmod for a normal user; as root (modes do not stop root) a read-only bind
    mount in a private mount namespace."""
    directory = settings.parent
    if os.geteuid() != 0:
        directory.chmod(0o500)
        try:
            r = run_cli("install")
        finally:
            directory.chmod(0o700)
    else:
        d = shlex.quote(str(directory))
        script = (
            f"mount --bind {d} {d} && mount -o remount,bind,ro {d} && "
            f"exec {shlex.quote(sys.executable)} -m tempera.cli install"
        )
        r = subprocess.run(["unshare", "-m", "sh", "-c", script], capture_output=True, text=True, timeout=120)
    assert r.returncode == 1 and r.stderr.startswith(f"Error: cannot write {settings}: "), r.stderr
    assert settings.read_text() == SETTINGS and claude_json.read_text() == CLAUDE_JSON
    assert list(directory.iterdir()) == [settings]


def test_dry_run_prints_diff_and_writes_nothing(settings: Path, claude_json: Path) -> None:
    out = ok("install", "--dry-run")
    assert settings.read_text() == SETTINGS and claude_json.read_text() == CLAUDE_JSON
    assert not backups(settings) and not backups(claude_json)
    assert f"--- {settings}\n+++ {settings}\n" in out and f"+++ {claude_json}\n" in out
    assert 'relay.py",' in out and '"user-prompt-submit"' in out
    assert out.rstrip().endswith("dry run: nothing was written")


def test_dry_run_on_empty_home_creates_nothing(home: Path) -> None:
    out = ok("install", "--dry-run")
    assert "--- /dev/null" in out
    assert list(home.iterdir()) == []


def test_json_report(settings: Path, claude_json: Path) -> None:
    report = json.loads(ok("install", "--dry-run", "--json"))
    assert report["scope"] == "user" and report["dry_run"] is True
    assert [f["path"] for f in report["files"]] == [str(settings), str(claude_json)]
    assert all(f["changed"] and f["diff"].startswith("---") for f in report["files"])
    report = json.loads(ok("install", "--json"))
    assert [f["backup"] is not None for f in report["files"]] == [True, True]


def test_fresh_home_then_uninstall(home: Path) -> None:
    out = ok("install")
    assert out.count("created") == 2
    settings, state = home / ".claude" / "settings.json", home / ".claude.json"
    assert set(json.loads(settings.read_text())["hooks"]) == {
        "SessionStart",
        "UserPromptSubmit",
        "Stop",
        "PreCompact",
        "SessionEnd",
    }
    assert list(json.loads(state.read_text())["mcpServers"]) == ["tempera"]
    ok("uninstall")
    assert settings.read_text() == state.read_text() == "{}\n"


def test_project_scope(home: Path, tmp_path: Path) -> None:
    project = tmp_path / "proj"
    project.mkdir()
    ok("install", "--scope", "project", "--project-dir", str(project))
    hooks = json.loads((project / ".claude" / "settings.json").read_text())["hooks"]
    relay, verb = hooks["Stop"][0]["hooks"][0]["args"][-2:]
    assert relay.endswith("tempera/hooks/relay.py") and verb == "stop"
    assert "tempera" in json.loads((project / ".mcp.json").read_text())["mcpServers"]
    assert list(home.iterdir()) == []

    other = tmp_path / "other"
    other.mkdir()
    ok("install", "--scope", "project", cwd=other)  # default: the current directory (no git repo around it)
    assert (other / ".claude" / "settings.json").exists() and (other / ".mcp.json").exists()

    ok("uninstall", "--scope", "project", "--project-dir", str(project))
    assert json.loads((project / ".mcp.json").read_text()) == {}


def test_project_dir_needs_project_scope(home: Path, tmp_path: Path) -> None:
    r = run_cli("install", "--project-dir", str(tmp_path))
    assert r.returncode == 1 and r.stderr == "Error: --project-dir applies only to --scope project\n"


def test_claude_config_dir_replaces_dot_claude(home: Path, tmp_path: Path) -> None:
    config = tmp_path / "claude-config"
    ok("install", CLAUDE_CONFIG_DIR=str(config))
    assert (config / "settings.json").exists() and (config / ".claude.json").exists()
    assert list(home.iterdir()) == []


def test_outdated_entry_updated_in_place(home: Path) -> None:
    old = {
        "hooks": {
            "Stop": [
                {
                    "matcher": "",
                    "hooks": [
                        {"type": "command", "command": "notify-send done"},
                        {"type": "command", "command": "/old/venv/bin/tempera-hook stop", "timeout": 30},
                        {"type": "command", "command": "/older/bin/tempera-hook stop"},
                    ],
                }
            ]
        }
    }
    path = write(home / ".claude" / "settings.json", json.dumps(old, indent=2) + "\n")
    ok("install")
    [group] = json.loads(path.read_text())["hooks"]["Stop"]
    assert group["hooks"][0] == {"type": "command", "command": "notify-send done"}
    assert len(group["hooks"]) == 2 and group["hooks"][1]["timeout"] == 10
    assert not group["hooks"][1]["command"].startswith("/old") and group["hooks"][1]["args"][-1] == "stop"


def as_nobody_read_only(path: Path) -> None:
    """Someone else's file, mode 0444: root could write it anyway, so only ownership and mode can stop us."""
    os.chown(path, 65534, 65534)
    path.chmod(0o444)


@pytest.mark.parametrize("whose", ["another user's", "our own"])
def test_file_not_writable_as_it_is_is_refused(settings: Path, claude_json: Path, whose: str) -> None:
    if whose == "another user's":
        if os.geteuid() != 0:
            pytest.skip("only root can give a file to another user")
        as_nobody_read_only(settings)
    else:
        settings.chmod(0o444)
    before = settings.stat()
    r = run_cli("install")
    assert r.returncode == 1, (r.stdout, r.stderr)
    assert r.stderr.startswith(f"Error: {settings} ") and "nothing was changed" in r.stderr, r.stderr
    assert len(r.stderr.splitlines()) == 1 and "Traceback" not in r.stderr
    assert ("owned by uid 65534" if whose == "another user's" else "read-only (mode 0444)") in r.stderr
    after = settings.stat()
    assert (after.st_ino, after.st_uid, stat.S_IMODE(after.st_mode)) == (before.st_ino, before.st_uid, 0o444)
    assert settings.read_text() == SETTINGS and claude_json.read_text() == CLAUDE_JSON
    assert not backups(settings) and not backups(claude_json)


def run_with_read_only_home(home: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """HOME read-only while ~/.claude stays writable, so settings.json can be written and ~/.claude.json cannot:
    chmod for a normal user; as root a read-only bind mount of HOME with ~/.claude mounted writable inside it."""
    claude = home / ".claude"
    claude.mkdir(exist_ok=True)
    if os.geteuid() != 0:
        home.chmod(0o500)
        try:
            return run_cli(*args)
        finally:
            home.chmod(0o700)
    h, c = shlex.quote(str(home)), shlex.quote(str(claude))
    cmd = " ".join(shlex.quote(a) for a in [sys.executable, "-m", "tempera.cli", *args])
    script = (
        f"mount --bind {h} {h} && mount -o remount,bind,ro {h} && "
        f"mount --bind {c} {c} && mount -o remount,bind,rw {c} && exec {cmd}"
    )
    return subprocess.run(["unshare", "-m", "sh", "-c", script], capture_output=True, text=True, timeout=120)


@pytest.mark.parametrize("existing", [True, False], ids=["settings existed", "fresh settings"])
def test_install_is_all_or_nothing(home: Path, existing: bool) -> None:
    settings = home / ".claude" / "settings.json"
    if existing:
        write(settings, SETTINGS, 0o640)
    r = run_with_read_only_home(home, "install")
    assert r.returncode == 1, (r.stdout, r.stderr)
    assert r.stderr.startswith(f"Error: cannot write {home / '.claude.json'}: "), r.stderr
    assert f"{settings} was put back as it was" in r.stderr and "Traceback" not in r.stderr
    if existing:
        assert settings.read_text() == SETTINGS and stat.S_IMODE(settings.stat().st_mode) == 0o640
        assert list(settings.parent.iterdir()) == [settings]  # neither a backup nor a temp file is left
    else:
        assert list(settings.parent.iterdir()) == []
    assert not (home / ".claude.json").exists()


def test_without_uids_as_on_windows_a_writable_file_is_not_refused(
    settings: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Windows' Python has no os.geteuid (files report uid 0 and ACLs decide): the ownership check must not crash
    there, and the mode check still holds."""
    from tempera.installer.changes import check_writable

    monkeypatch.delattr(os, "geteuid")
    check_writable(settings)  # no AttributeError
    settings.chmod(0o444)
    with pytest.raises(TemperaError, match="read-only"):
        check_writable(settings)
