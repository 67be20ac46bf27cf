"""core/processes.py: the daemon's lock, detached starts and stops, as real processes see them."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

from tempera.core import processes

HOLD = (
    "import os, sys, time; sys.path.insert(0, {root!r}); from tempera.core import processes; "
    "fd = os.open({path!r}, os.O_RDWR | os.O_CREAT); print(processes.try_lock(fd), flush=True); time.sleep(60)"
)


def _holder(path: Path) -> subprocess.Popen[str]:
    root = str(Path(processes.__file__).parents[2])
    p = subprocess.Popen(
        [sys.executable, "-c", HOLD.format(root=root, path=str(path))], stdout=subprocess.PIPE, text=True
    )
    assert p.stdout is not None and p.stdout.readline().strip() == "True"
    return p


def test_the_lock_is_exclusive_and_dies_with_its_holder(tmp_path: Path) -> None:
    path = tmp_path / "daemon.lock"
    holder = _holder(path)
    fd = os.open(path, os.O_RDWR | os.O_CREAT)
    try:
        assert not processes.try_lock(fd)
        holder.kill()  # as a crash: no cleanup runs
        holder.wait()
        assert processes.try_lock(fd)
    finally:
        os.close(fd)


def test_a_detached_child_outlives_its_parent_and_is_stopped_by_pid(tmp_path: Path) -> None:
    pid_file = tmp_path / "child.pid"
    root = str(Path(processes.__file__).parents[2])
    parent = (
        f"import sys, subprocess; sys.path.insert(0, {root!r}); from tempera.core import processes; "
        "p = processes.start_detached([sys.executable, '-c', 'import time; time.sleep(60)'], "
        "stdin=subprocess.DEVNULL); "
        f"open({str(pid_file)!r}, 'w').write(str(p.pid))"
    )
    subprocess.run([sys.executable, "-c", parent], check=True, timeout=30)
    child = int(pid_file.read_text())
    try:
        assert processes.alive(child)  # its parent is gone, it is not
        assert os.getsid(child) == child  # its own session: the terminal's Ctrl-C and hangup do not reach it
        assert processes.terminate(child)
        deadline = time.monotonic() + 10
        while processes.alive(child) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert not processes.alive(child)
        assert not processes.terminate(child)  # gone: nothing to stop, no error
    finally:
        if processes.alive(child):
            os.kill(child, 9)


def test_alive_says_no_for_pids_that_cannot_be_ours() -> None:
    assert processes.alive(os.getpid())
    assert not processes.alive(0) and not processes.alive(-1)
