"""Windows- and macOS-shaped transcripts written from real ones: the same session as Claude Code would record it
on another platform, for the tests that capture both and compare.

Every path under the session's checkout (its `cwd`, the file paths of tool inputs, paths quoted in tool results
and messages) is moved to the new root: on Windows with a drive letter and backslashes, the lines ending in CRLF;
the file lands in the folder Claude Code names for its `cwd` under `~/.claude/projects` (every character but a
letter or digit becomes `-`: `C:\\Users\\dev\\proj` -> `C--Users-dev-proj`, as users report of Windows installs,
anthropics/claude-code#71756). Nothing else of a line changes."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from tempera.transcripts.automemory import sanitised

_PATH_CHARS = r"[^\s\"'`<>|,;:()\[\]{}]*"


def rewrite(
    source: Path,
    projects: Path,
    old_root: str,
    new_root: str,
    *,
    windows: bool = False,
    files_root: str | None = None,
) -> Path:
    """Write `source` with `old_root` moved to `new_root` (in the cwd) and to `files_root` (in every other path:
    macOS records the cwd as `/private/tmp/...` where the agent writes `/tmp/...`); returns the new file, in
    `projects/<Claude Code's folder for new_root>/` with the source's name."""
    pattern = re.compile(re.escape(old_root) + r"(?P<rest>(?:/" + _PATH_CHARS + r")?)")

    def move(text: str, root: str) -> str:
        def sub(m: re.Match[str]) -> str:
            rest = m["rest"]
            return root + (rest.replace("/", "\\") if windows else rest)

        return pattern.sub(sub, text)

    def walk(value: Any, key: str = "") -> Any:
        if isinstance(value, str):
            return move(value, new_root if key == "cwd" else files_root or new_root)
        if isinstance(value, list):
            return [walk(v) for v in value]
        if isinstance(value, dict):
            return {k: walk(v, k) for k, v in value.items()}
        return value

    out = projects / sanitised(new_root) / source.name
    for path in [source, *sorted(source.with_suffix("").rglob("*"))]:  # with its subagents' files
        target = out.parent / path.relative_to(source.parent)
        if path.is_dir():
            continue
        target.parent.mkdir(parents=True, exist_ok=True)
        lines = []
        for line in path.read_text(encoding="utf-8").splitlines():
            try:
                record = json.loads(line)
            except ValueError:
                lines.append(line)
                continue
            lines.append(json.dumps(walk(record), ensure_ascii=False, separators=(",", ":")))
        with target.open("w", encoding="utf-8", newline="") as fh:
            fh.write("".join(line + ("\r\n" if windows else "\n") for line in lines))
    return out
