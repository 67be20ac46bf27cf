"""Processes Tempera starts, locks and stops, the same way on Linux, macOS and Windows. Standard library only.

- `try_lock(fd)`: a non-blocking exclusive lock of an open file, released when the file is closed or its process
  dies (so a killed daemon never leaves a lock nobody can take). POSIX: `flock`. Windows: `msvcrt.locking` of one
  byte far past the end of the file, so the pid written at its start stays readable by `tempera daemon stop`
  (Windows refuses reads of a locked range).
- `start_detached(args)`: `subprocess.Popen` with what lets a child outlive the hook or command that started it and
  never receive the terminal's Ctrl-C: a new session on POSIX; on Windows a new process group, no console
  (`DETACHED_PROCESS`), and out of the caller's job object where the job allows it (Claude Code may close its hook's
  job when the hook returns).
- `alive(pid)` and `terminate(pid)`: on Windows `os.kill(pid, 0)` is not a probe (signal 0 is CTRL_C_EVENT, and any
  other value terminates the process), so a pid is asked through the Win32 API there.
"""

from __future__ import annotations

import os
import signal
import sys
from typing import Any

WINDOWS_LOCK_OFFSET = 0x7FFFFFF0  # the byte a Windows lock holds: past any pid the file carries

# Win32 constants (subprocess names the creation flags only on Windows)
DETACHED_PROCESS = 0x00000008
CREATE_NEW_PROCESS_GROUP = 0x00000200
CREATE_BREAKAWAY_FROM_JOB = 0x01000000
PROCESS_QUERY_LIMITED_INFORMATION = 0x1000
STILL_ACTIVE = 259


def try_lock(fd: int) -> bool:
    """Take the exclusive lock of the open file `fd` if nobody holds it; False when another process does."""
    if sys.platform == "win32":
        import msvcrt

        os.lseek(fd, WINDOWS_LOCK_OFFSET, os.SEEK_SET)
        try:
            msvcrt.locking(fd, msvcrt.LK_NBLCK, 1)
        except OSError:
            return False
        finally:
            os.lseek(fd, 0, os.SEEK_SET)
        return True
    import fcntl

    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:  # BlockingIOError: held elsewhere
        return False
    return True


def _detached(breakaway: bool = True) -> dict[str, Any]:
    """Popen keyword arguments for a child that outlives its parent (see the module docstring). On Windows, pass
    `breakaway=False` on a retry when starting with it raised PermissionError (a job that forbids breaking away)."""
    if sys.platform == "win32":
        flags = DETACHED_PROCESS | CREATE_NEW_PROCESS_GROUP | (CREATE_BREAKAWAY_FROM_JOB if breakaway else 0)
        return {"creationflags": flags, "close_fds": True}
    return {"start_new_session": True, "close_fds": True}


def start_detached(args: list[str], **kwargs: Any) -> Any:
    """`subprocess.Popen(args, ...)` detached: on Windows retried without breaking away from a job that forbids it."""
    import subprocess

    if sys.platform == "win32":
        try:
            return subprocess.Popen(args, **_detached(), **kwargs)
        except PermissionError:
            return subprocess.Popen(args, **_detached(breakaway=False), **kwargs)
    return subprocess.Popen(args, **_detached(), **kwargs)


def alive(pid: int) -> bool:
    """Whether a process with this pid runs (one of another user counts: it exists)."""
    if pid <= 0:
        return False
    if sys.platform == "win32":
        import ctypes

        kernel32 = ctypes.WinDLL("kernel32", use_last_error=True)
        handle = kernel32.OpenProcess(PROCESS_QUERY_LIMITED_INFORMATION, False, pid)
        if not handle:
            return ctypes.get_last_error() == 5  # ERROR_ACCESS_DENIED: it exists, it is not ours
        try:
            code = ctypes.c_ulong()
            return bool(kernel32.GetExitCodeProcess(handle, ctypes.byref(code))) and code.value == STILL_ACTIVE
        finally:
            kernel32.CloseHandle(handle)
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def terminate(pid: int) -> bool:
    """Ask the process to end (SIGTERM; on Windows TerminateProcess, which `os.kill` calls); False if it was gone."""
    if not alive(pid):
        return False
    try:
        os.kill(pid, signal.SIGTERM)
    except (ProcessLookupError, PermissionError):
        return False
    except OSError:  # Windows: the process ended in between
        return False
    return True
