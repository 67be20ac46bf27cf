"""One planned edit of one JSON file: computed and validated before anything is written, shown as a diff, applied
with a backup and an atomic replace."""

from __future__ import annotations

import difflib
import os
import stat
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tempera.core.errors import InvalidInput, TemperaError
from tempera.core.atomic import write_atomic, write_backup
from tempera.installer.jsontext import ABSENT, EMPTY, load_object, patch

# the member's current value (ABSENT when there is none) -> its new value (ABSENT: remove the member)
Transform = Callable[[Any], Any]


@dataclass(frozen=True)
class FileChange:
    path: Path
    before: str | None  # None: the file does not exist
    after: str | None  # equal to `before` when there is nothing to do

    @property
    def changed(self) -> bool:
        return self.after != self.before

    def diff(self) -> str:
        """A unified diff of the change ('' when there is none)."""
        return "".join(difflib.unified_diff(
            _lines(self.before), _lines(self.after),
            fromfile=str(self.path) if self.before is not None else "/dev/null", tofile=str(self.path)))


@dataclass(frozen=True)
class Written:
    path: Path
    backup: Path | None  # None: there was no file before


def read_text(path: Path) -> str | None:
    """The file's text, None when it does not exist."""
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise TemperaError(f"cannot read {path}: {exc.strerror}") from exc
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise InvalidInput(f"{path} is not UTF-8 text; nothing was changed") from exc


def read_member(path: Path, key: str) -> Any:
    """The value of one top-level key of a JSON object file (None when the file or the key is absent)."""
    text = read_text(path)
    return None if text is None else load_object(text, str(path)).get(key)


def plan_edit(path: Path, key: str, transform: Transform) -> FileChange:
    """The change that `transform` makes to one top-level member; every other byte of the file stays."""
    before = read_text(path)
    base = EMPTY if before is None else before
    old = load_object(base, str(path)).get(key, ABSENT)
    try:
        new = transform(old)
    except InvalidInput as exc:
        raise InvalidInput(f"{path}: {exc}; nothing was changed") from exc
    if new == old:
        return FileChange(path, before, before)
    return FileChange(path, before, patch(base, (key,), old, new))


def apply(change: FileChange) -> Written:
    """Back up the current file, then replace it atomically. Refuses when the file changed since it was planned
    (Claude Code rewrites ~/.claude.json often), so nothing it wrote in between is lost."""
    if not change.changed or change.after is None:
        return Written(change.path, None)
    target = Path(os.path.realpath(change.path))  # a settings file linked from a dotfiles repo stays a link
    if read_text(target) != change.before:
        raise TemperaError(f"{change.path} changed while Tempera was editing it; run the command again")
    backup = mode = None
    try:
        if change.before is not None:
            mode = stat.S_IMODE(target.stat().st_mode)
            backup = write_backup(target, change.before.encode("utf-8"), mode)
        write_atomic(target, change.after.encode("utf-8"), mode)
    except OSError as exc:
        raise TemperaError(f"cannot write {change.path}: {exc.strerror or exc}") from exc
    return Written(change.path, backup)


def _lines(text: str | None) -> list[str]:
    lines = (text or "").splitlines(keepends=True)
    return [line if line.endswith("\n") else line + "\n" for line in lines]
