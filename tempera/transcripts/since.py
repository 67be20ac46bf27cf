"""Where a capture takes a transcript up again (`Since`), so that a Stop after one more turn of a long session
reads that turn, not the whole file.

A capture reads from the prompt of the turn before the session's last one: the last turn holds the last captured
unit, which a later Stop may find grown, and the turn before it is the `previous` the correction detectors compare
the new turns with. What a full read would know from the records above that prompt is carried here: the session's
id and working directories, the prompts queued and not yet handed over, the task items followed across turns, the
subagent files owned by turns above it (not read again), and how many turns and units lie above it. The bytes at
`offset` must still be the record `uuid`, else the file was rewritten and the capture reads it whole.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from typing import Any


@dataclass
class Since:
    offset: int  # byte where the re-read starts: the line of a turn's prompt record
    line: int  # that line's number (1-based), so records read from here are numbered as in a full read
    uuid: str  # the record expected at `offset`
    session_id: str | None = None  # the transcript's, as a full read found it
    cwd: str | None = None  # the transcript's working directory, as a full read found it
    cwds: list[str] = field(default_factory=list)  # every working directory recorded above `offset`
    queued: list[str] = field(default_factory=list)  # prompts queued and not handed over when the turn began
    tasks: dict[str, Any] = field(default_factory=dict)  # task items followed across turns (`units._Tasks`)
    settled: list[str] = field(default_factory=list)  # subagent files whose runs belong to turns above `offset`
    turns: int = 0  # turns above `offset`
    units: int = 0  # their work units

    def dumps(self) -> str:
        return json.dumps(asdict(self), sort_keys=True)

    @classmethod
    def loads(cls, text: str | None) -> "Since | None":
        """The stored place, or None (none stored, or not readable: the capture then reads the whole file)."""
        if not text:
            return None
        try:
            return cls(**json.loads(text))
        except (ValueError, TypeError):
            return None
