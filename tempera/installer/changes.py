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
        return "".join(
            difflib.unified_diff(
                _lines(self.before),
                _lines(self.after),
                fromfile=str(self.path) if self.before is not None else "/dev/null",
                tofile=str(self.path),
            )
        )


@dataclass(frozen=True)
class Written:
    path: Path
    backup: Path | None  # None: there was no file before
    change: FileChange | None = None  # what was written, so `undo` can put the file back; None: nothing was
    mode: int | None = None  # the original file's permission bits
    created_dirs: tuple[Path, ...] = ()  # folders that did not exist before, deepest first


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


def check_writable(path: Path) -> None:
    """Refuse a file we do not own or that is read-only (no owner write bit). Root could replace either, so this
    looks at ownership and mode, not at access(): a 0444 file or someone else's file is a choice we respect."""
    target = Path(os.path.realpath(path))
    try:
        st = target.stat()
    except FileNotFoundError:
        return
    except OSError as exc:
        raise TemperaError(f"cannot read {path}: {exc.strerror}; nothing was changed") from exc
    if hasattr(os, "geteuid") and st.st_uid != os.geteuid():  # Windows has no uids (st_uid is 0): its ACLs decide
        raise TemperaError(
            f"{path} is owned by uid {st.st_uid}, not by you (uid {os.geteuid()}); run the command "
            "as its owner; nothing was changed"
        )
    if not st.st_mode & stat.S_IWUSR:
        raise TemperaError(
            f"{path} is read-only (mode {stat.S_IMODE(st.st_mode):04o}); make it writable "
            "(chmod u+w) if Tempera may edit it; nothing was changed"
        )


def apply(change: FileChange) -> Written:
    """Back up the current file, then replace it atomically. Refuses when the file changed since it was planned
    (Claude Code rewrites ~/.claude.json often), so nothing it wrote in between is lost."""
    if not change.changed or change.after is None:
        return Written(change.path, None)
    target = Path(os.path.realpath(change.path))  # a settings file linked from a dotfiles repo stays a link
    if read_text(target) != change.before:
        raise TemperaError(f"{change.path} changed while Tempera was editing it; run the command again")
    backup = mode = None
    created = tuple(d for d in target.parents if not d.exists())
    try:
        if change.before is not None:
            mode = stat.S_IMODE(target.stat().st_mode)
            backup = write_backup(target, change.before.encode("utf-8"), mode)
        write_atomic(target, change.after.encode("utf-8"), mode)
    except OSError as exc:
        raise TemperaError(f"cannot write {change.path}: {exc.strerror or exc}") from exc
    return Written(change.path, backup, change, mode, created)


def undo(written: Written) -> None:
    """Put a file back as it was before `apply`: the old content and mode, or no file (and no folder we made)."""
    if written.change is None:
        return
    target = Path(os.path.realpath(written.path))
    try:
        if written.change.before is None:
            target.unlink(missing_ok=True)
            for directory in written.created_dirs:
                directory.rmdir()
        else:
            write_atomic(target, written.change.before.encode("utf-8"), written.mode)
            if written.backup is not None:
                written.backup.unlink(missing_ok=True)
    except OSError as exc:
        kept = f"; its old content is in {written.backup}" if written.backup else ""
        raise TemperaError(f"could not put {written.path} back: {exc.strerror or exc}{kept}") from exc


def _lines(text: str | None) -> list[str]:
    lines = (text or "").splitlines(keepends=True)
    return [line if line.endswith("\n") else line + "\n" for line in lines]
