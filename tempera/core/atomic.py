"""Crash-safe file replacement and backups: Claude Code's files (the installer), Tempera's own small state files.
Standard library only: the hooks write through it.

A reader (Claude Code starting, a hook) must see the old file or the new one, never half of one. So we write a temp
file in the same directory (O_EXCL, so two writers cannot share it), fsync it, give it the original's mode and
`os.replace` it over the target.
"""

from __future__ import annotations

import os
import secrets
import time
from pathlib import Path

NEW_FILE_MODE = 0o644  # before the umask; the `tempera` CLI runs with umask 077, so new files end up 0600


def write_atomic(path: Path, data: bytes, mode: int | None) -> None:
    """Replace path with data; `mode` is the original file's permission bits, None for a new file."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.tempera-{os.getpid()}-{secrets.token_hex(4)}")
    _write_new(tmp, data, mode)
    try:
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    _fsync_dir(path.parent)


def write_backup(path: Path, data: bytes, mode: int) -> Path:
    """Keep the previous content as `<name>.tempera-backup-YYYYmmddTHHMMSS` (a suffix if that name is taken)."""
    stamp = time.strftime("%Y%m%dT%H%M%S")
    for n in range(1, 1000):
        backup = path.with_name(f"{path.name}.tempera-backup-{stamp}" + (f"-{n}" if n > 1 else ""))
        try:
            _write_new(backup, data, mode)
        except FileExistsError:
            continue
        return backup
    raise FileExistsError(f"too many backups of {path} named {stamp}")


def _write_new(path: Path, data: bytes, mode: int | None) -> None:
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, NEW_FILE_MODE if mode is None else mode)
    try:
        if mode is not None:  # os.open applied the umask; the copy keeps exactly the original's mode
            os.fchmod(fd, mode) if hasattr(os, "fchmod") else os.chmod(path, mode)  # no fchmod on Windows < 3.13
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view) :]
        os.fsync(fd)
    except BaseException:
        os.close(fd)
        path.unlink(missing_ok=True)
        raise
    os.close(fd)


def _fsync_dir(directory: Path) -> None:
    """Make the rename itself durable; some file systems cannot open a directory for this, which is harmless."""
    try:
        fd = os.open(directory, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)
