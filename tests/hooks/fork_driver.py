"""Runs a hook once per payload in a forked child, so hundreds of real process exits cost milliseconds each:
`tempera.hooks.entry.main()` (the console entry), or with `relay` as third argument the installed command's
script, relay.py. Input: a file of length-prefixed payloads; output: one JSON line per case with the child's exit
status and stdout."""

from __future__ import annotations

import json
import os
import struct
import sys

import runpy
from pathlib import Path

import tempera.hooks
from tempera.hooks import entry

RELAY = str(Path(tempera.hooks.__file__).with_name("relay.py"))


def run_case(event: str, data: bytes, relay: bool = False) -> dict[str, object]:
    sys.stdout.flush()  # else the child inherits the unwritten result lines and its flush sends them to its pipe
    in_r, in_w = os.pipe()
    out_r, out_w = os.pipe()
    pid = os.fork()
    if pid == 0:  # child: the real entry point with this payload on fd 0 and fd 1 captured
        os.close(in_w)
        os.close(out_r)
        os.dup2(in_r, 0)
        os.dup2(out_w, 1)
        sys.argv = [RELAY if relay else "tempera-hook", event]
        code = 70
        try:
            runpy.run_path(RELAY, run_name="__main__") if relay else entry.main()
        except SystemExit as exc:
            code = exc.code if isinstance(exc.code, int) else 1
        os._exit(code)
    os.close(in_r)
    os.close(out_w)
    try:
        os.write(in_w, data) if len(data) < 65536 else _write_all(in_w, data)
    except BrokenPipeError:
        pass
    os.close(in_w)
    chunks = []
    while chunk := os.read(out_r, 65536):
        chunks.append(chunk)
    os.close(out_r)
    _, status = os.waitpid(pid, 0)
    return {"exit": os.waitstatus_to_exitcode(status), "stdout": b"".join(chunks).decode("utf-8", "replace")}


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        n = os.write(fd, view[:65536])
        view = view[n:]


def main() -> None:
    event, path, relay = sys.argv[1], sys.argv[2], sys.argv[3:] == ["relay"]
    with open(path, "rb") as fh:
        blob = fh.read()
    pos = 0
    while pos < len(blob):
        (n,) = struct.unpack_from(">I", blob, pos)
        pos += 4
        result = run_case(event, blob[pos : pos + n], relay)
        pos += n
        sys.stdout.write(json.dumps(result) + "\n")
    sys.stdout.flush()


if __name__ == "__main__":
    main()
