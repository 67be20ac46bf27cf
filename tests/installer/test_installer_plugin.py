"""The plugin form at the repo root registers the same hooks and server as `tempera install`, through the launcher."""

from __future__ import annotations

import json
import sys

import pytest

from tempera import __version__
from tempera.installer import pluginfiles
from tempera.installer.hookconfig import HOOK_EVENTS
from tests.conftest import REPO


@pytest.mark.parametrize("name", list(pluginfiles.FILES))
def test_files_are_generated(name: str) -> None:
    assert (REPO / name).read_text(encoding="utf-8") == pluginfiles.render(name), (
        f"{name} is stale: python -m tempera.installer.pluginfiles"
    )


def test_every_event_and_the_server_go_through_the_launcher() -> None:
    manifest = json.loads(pluginfiles.render(".claude-plugin/plugin.json"))
    hooks = manifest["hooks"]
    assert list(hooks) == list(HOOK_EVENTS)
    for event, verb in HOOK_EVENTS.items():
        [entry] = hooks[event][0]["hooks"]
        assert entry["command"] == "python3" and entry["args"] == [*pluginfiles.PROGRAM[1:], verb]  # exec form
    assert manifest["name"] == "tempera" and manifest["version"] == __version__
    assert manifest["mcpServers"]["tempera"]["args"][-1] == "mcp"
    assert (REPO / pluginfiles.LAUNCHER.replace("${CLAUDE_PLUGIN_ROOT}/", "")).is_file()
    [entry] = json.loads(pluginfiles.render(".claude-plugin/marketplace.json"))["plugins"]
    assert entry["source"] == "./" and entry["name"] == manifest["name"]


def test_no_root_hooks_folder_beside_the_hooks_package() -> None:
    """The plugin's hooks are in its manifest: nothing at the root reads as a second `hooks` package."""
    assert not (REPO / "hooks").exists() and (REPO / "tempera" / "hooks" / "__init__.py").is_file()


def test_the_launcher_needs_only_the_standard_library() -> None:
    import ast

    tree = ast.parse((REPO / "tempera" / "installer" / "plugin_launcher.py").read_text(encoding="utf-8"))
    imported = {a.name.split(".")[0] for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names}
    imported |= {n.module.split(".")[0] for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) and n.module}
    assert imported <= set(sys.stdlib_module_names), imported - set(sys.stdlib_module_names)  # Windows' too
