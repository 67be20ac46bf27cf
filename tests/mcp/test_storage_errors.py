"""A data dir on a full disk, through a real MCP client: a tool whose write fails answers with the CLI's one-line
reason (not the driver's bare message), the write is rolled back, reads still work and the server lives on."""

from __future__ import annotations

import os
import shlex
from pathlib import Path

import pytest
from stdio_session import SERVER, connect

from tests.support.cli import tempera


def _server_on_full_disk(data_dir: Path, free_kb: int = 40) -> list[str]:
    """The server with the data dir on a 4 MB tmpfs in a private mount namespace, filled up to `free_kb` free (as
    tests/core/test_cli_errors.py does for the CLI). Needs root (mount)."""
    d = shlex.quote(str(data_dir))
    server = " ".join(shlex.quote(a) for a in SERVER)
    script = (
        f"cp -a {d} {d}.copy && mount -t tmpfs -o size=4m,mode=0700 tmpfs {d} && cp -a {d}.copy/. {d}/ && "
        f"(dd if=/dev/zero of={d}/fill bs=4k 2>/dev/null; truncate -s -{free_kb}K {d}/fill; exec {server})"
    )
    return ["unshare", "-m", "sh", "-c", script]


@pytest.mark.skipif(os.geteuid() != 0, reason="mounting a small tmpfs needs root")
@pytest.mark.anyio
async def test_a_write_on_a_full_disk_is_a_clean_tool_error(data_dir: Path, project_dir: Path) -> None:
    env = {**os.environ, "TEMPERA_DATA_DIR": str(data_dir)}
    done = tempera("capture", "--project", str(project_dir), "-s", "Invoice totals round half-even now", env=env)
    assert done.returncode == 0, done.stderr
    async with connect(data_dir, project_dir, command=_server_on_full_disk(data_dir)) as client:
        first = await client.call("tempera_retrieve", {"all": True})
        assert not first.is_error, first.text
        big = " ".join(f"Shipping fee rule {n} applies per parcel and per destination zone" for n in range(3000))
        wrote = await client.call("tempera_capture", {"summary": big[:19000]})
        assert wrote.is_error, wrote.text
        assert "the disk is full" in wrote.text and "rolled back" in wrote.text, wrote.text
        after = await client.call("tempera_retrieve", {"all": True})
        assert not after.is_error and after.data is not None, after.text
        assert [e["summary"] for e in after.data["episodes"]] == ["Invoice totals round half-even now"]
