"""Where the files are, finding our executables, status for doctor, and how a change reaches the disk."""

from __future__ import annotations

import json
import stat
from pathlib import Path

import pytest

from tempera.core.errors import InvalidInput, TemperaError
from tempera.installer import apply_all, installed_status, plan_install, plan_uninstall
from tempera.installer.changes import apply, plan_edit
from tempera.installer.locations import find_executable, targets
from tempera.installer.mcpconfig import with_server


def test_targets(home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    user = targets("user")
    assert (user.settings, user.mcp) == (home / ".claude" / "settings.json", home / ".claude.json")
    project = targets("project", tmp_path)
    assert (project.settings, project.mcp) == (tmp_path / ".claude" / "settings.json", tmp_path / ".mcp.json")
    (tmp_path / ".git").mkdir()
    (tmp_path / "src").mkdir()
    monkeypatch.chdir(tmp_path / "src")
    assert targets("project").mcp == tmp_path.resolve() / ".mcp.json"  # default: the git root of the cwd
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(tmp_path / "cfg"))
    assert targets("user").settings == tmp_path / "cfg" / "settings.json"
    assert targets("user").mcp == tmp_path / "cfg" / ".claude.json"
    with pytest.raises(InvalidInput, match="--project-dir applies only to --scope project"):
        targets("user", tmp_path)


def test_find_executable(tmp_path: Path) -> None:
    bin_dir, path_dir = tmp_path / "bin", tmp_path / "path"
    bin_dir.mkdir()
    path_dir.mkdir()
    with pytest.raises(TemperaError, match=f"cannot find the `tempera-hook` executable in {bin_dir} or on PATH"):
        find_executable("tempera-hook", bin_dir, str(path_dir))
    on_path = path_dir / "tempera-hook"
    on_path.write_text("#!/bin/sh\n")
    with pytest.raises(TemperaError):
        find_executable("tempera-hook", bin_dir, str(path_dir))  # not executable
    on_path.chmod(0o755)
    assert find_executable("tempera-hook", bin_dir, str(path_dir)) == on_path
    beside = bin_dir / "tempera-hook"
    beside.write_text("#!/bin/sh\n")
    beside.chmod(0o755)
    assert find_executable("tempera-hook", bin_dir, str(path_dir)) == beside  # this environment's own first


def test_status_before_and_after_install(home: Path) -> None:
    status = installed_status("user")
    assert status["ok"] is False and status["errors"] == []
    assert not any(row["present"] for row in [*status["hooks"].values(), status["mcp"]])
    apply_all(plan_install("user"))
    status = installed_status("user")
    assert status["ok"] is True and status["settings_file"] == str(home / ".claude" / "settings.json")
    for row in [*status["hooks"].values(), status["mcp"]]:
        assert row["present"] and row["executable_ok"] and Path(row["executable"]).is_absolute()
    assert status["hooks"]["UserPromptSubmit"]["command"].endswith("relay.py user-prompt-submit")
    apply_all(plan_uninstall("user"))
    assert not installed_status("user")["hooks"]["Stop"]["present"]


def test_status_reports_missing_executables_and_broken_files(
    home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    settings = home / ".claude" / "settings.json"
    settings.parent.mkdir()
    settings.write_text(
        json.dumps(
            {"hooks": {"Stop": [{"hooks": [{"type": "command", "command": f"{tmp_path}/gone/tempera-hook stop"}]}]}}
        )
    )
    (home / ".claude.json").write_text('{"mcpServers": {"tempera": {"command": "tempera-mcp"}}}')
    monkeypatch.setenv("PATH", str(tmp_path))  # the plugin form's bare name is looked up on PATH
    status = installed_status("user")
    assert status["hooks"]["Stop"] == {
        "present": True,
        "command": f"{tmp_path}/gone/tempera-hook stop",
        "executable": f"{tmp_path}/gone/tempera-hook",
        "executable_ok": False,
    }
    assert status["mcp"]["present"] and status["mcp"]["executable"] is None and not status["ok"]
    settings.write_text("{broken")
    status = installed_status("user")
    assert len(status["errors"]) == 1 and str(settings) in status["errors"][0] and not status["ok"]


def test_apply_refuses_a_file_changed_since_planning(tmp_path: Path) -> None:
    path = tmp_path / "cfg" / ".claude.json"
    path.parent.mkdir()
    path.write_text('{"numStartups": 1}')
    change = plan_edit(path, "mcpServers", lambda servers: with_server(servers, "/x/tempera-mcp"))
    path.write_text('{"numStartups": 2}')  # Claude Code wrote it in between
    with pytest.raises(TemperaError, match="changed while Tempera was editing it"):
        apply(change)
    assert path.read_text() == '{"numStartups": 2}' and list(path.parent.iterdir()) == [path]


def test_apply_writes_through_a_symlink(tmp_path: Path) -> None:
    real = tmp_path / "dotfiles" / "settings.json"
    real.parent.mkdir()
    real.write_text("{}\n")
    real.chmod(0o604)
    link = tmp_path / "settings.json"
    link.symlink_to(real)
    written = apply(plan_edit(link, "mcpServers", lambda servers: with_server(servers, "/x/tempera-mcp")))
    assert link.is_symlink() and "tempera" in json.loads(real.read_text())["mcpServers"]
    assert stat.S_IMODE(real.stat().st_mode) == 0o604
    assert written.backup is not None and written.backup.parent == real.parent
    assert written.backup.read_text() == "{}\n"
