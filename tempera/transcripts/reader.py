"""Reading Claude Code session transcripts (JSONL) as they exist in the wild, versions 1.0 to 2.1.

Never raises on file content: a line that is broken, no object, nested too deep or too large is skipped and
counted by reason; lone surrogates (a string cut inside an emoji) become U+FFFD; unknown record types are counted
and ignored; a file still being written is read up to its last whole line. The records kept are the active
branch (see `chain.py`); subagent transcripts are read alongside and returned separately, to be folded into the
turn that started them.

Memory: the file is read a line at a time (a line past the size cap is skipped without being held), and a record
keeps only what later steps read: its blocks, each text clipped to its head and tail, and a few fields of the
line (`Record.raw`), not the parsed line, which costs several times its size.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import datetime, timezone
from functools import lru_cache
from pathlib import Path
from typing import Any, BinaryIO

from tempera.core.surrogates import repair_data
from tempera.transcripts.chain import active_records, branches_above
from tempera.transcripts.since import Since

# Types Claude Code writes that we read or deliberately ignore; anything else counts as unknown.
KNOWN_TYPES = frozenset(
    {
        "user",
        "assistant",
        "system",
        "summary",
        "progress",
        "file-history-snapshot",
        "queue-operation",
        "attachment",
        "last-prompt",
        "mode",
        "custom-title",
        "tag",
        # bookkeeping records of Claude Code 2.1.3xx: no conversation in them
        "atis-latch",
        "api-request-shape",
        "api-request-blob",
        "api-request",
        "tools-used",
        "cost-state",
    }
)

MAX_RECORD_BYTES = 8 * 1024 * 1024  # a line larger than this is no conversation worth its memory: skipped
MAX_DEPTH = 100  # nesting past this is no Claude Code record, and would exhaust the recursion of later steps
MAX_TEXT_CHARS = 64 * 1024  # text kept of one block or tool input (a tool's output, a file written): head and tail
CLIPPED = "\n[…]\n"
# the fields of a line that later steps read (queued prompts, queue operations, the structured tool result)
KEPT_FIELDS = ("attachment", "operation", "content", "toolUseResult")
KEPT_RESULT_FIELDS = ("answers", "agentId", "task")  # of `toolUseResult`, whose file contents are mostly not needed
# ... but for an edit's file as it was before, which says which definitions the edit touched (core/symbols.py):
# kept whole or not at all, since a clipped file's lines are no longer its lines
ORIGINAL_FILE = "originalFile"
# Skip reasons, as the import report shows them.
BROKEN, TOO_DEEP, TOO_LARGE = "broken line", "too deep", "too large"
_ESCAPED_SURROGATE = re.compile(rb"\\u[dD][89a-fA-F]")  # the only way a surrogate gets into a decoded line


@dataclass(frozen=True)
class Block:
    """One content block of a message, normalised: `kind` is text | thinking | tool_use | tool_result | other."""

    kind: str
    text: str = ""
    tool_id: str | None = None  # tool_use: its id; tool_result: the tool_use_id it answers
    name: str | None = None  # tool_use: the tool name
    input: dict[str, Any] = field(default_factory=dict)  # tool_use input
    is_error: bool = False  # tool_result flag


@dataclass
class Record:
    """One JSONL line that is a JSON object, with the fields turn segmentation needs pulled out of `raw`."""

    line: int  # 1-based line number in its file (files only grow, so this orders records)
    type: str
    raw: dict[str, Any]  # the line's `KEPT_FIELDS` (not the whole line, which may be megabytes)
    uuid: str | None = None
    parent_uuid: str | None = None
    logical_parent_uuid: str | None = None
    session_id: str | None = None
    timestamp: datetime | None = None
    cwd: str | None = None
    git_branch: str | None = None  # the branch checked out where the session ran, as Claude Code recorded it
    subtype: str | None = None
    is_sidechain: bool = False
    is_meta: bool = False
    is_compact_summary: bool = False
    message_id: str | None = None
    blocks: list[Block] = field(default_factory=list)
    offset: int = 0  # byte where its line starts (where a later capture may start reading, see `since.py`)

    @property
    def text(self) -> str:
        """The text blocks joined (what a person wrote, for user records)."""
        return "\n".join(b.text for b in self.blocks if b.kind == "text" and b.text)

    @property
    def message_key(self) -> str:
        """What groups an assistant message's records (Claude Code writes one record per content block)."""
        return self.message_id or self.uuid or f"line-{self.line}"

    @property
    def tool_uses(self) -> list[Block]:
        return [b for b in self.blocks if b.kind == "tool_use"]

    @property
    def tool_results(self) -> list[Block]:
        return [b for b in self.blocks if b.kind == "tool_result"]

    @property
    def tool_use_result(self) -> Any:
        """Claude Code's structured `toolUseResult` (stdout/stderr, file info, agentId ...), when present."""
        return self.raw.get("toolUseResult")


@dataclass
class Subagent:
    """A subagent's transcript (`<session>/subagents/agent-<id>.jsonl`, or an `agent-<id>.jsonl` sibling)."""

    path: Path
    agent_id: str
    records: list[Record]
    tool_use_id: str | None = None  # the parent's Agent/Task call, from the `.meta.json` beside the file
    agent_type: str | None = None
    description: str | None = None


@dataclass
class Transcript:
    path: Path
    session_id: str | None
    cwd: str | None
    records: list[Record]  # the active branch of the main conversation, in file order
    sidechain: list[Record]  # inline subagent records (isSidechain) of older versions
    subagents: list[Subagent]
    lines_read: int = 0  # whole lines consumed
    skipped: Counter[str] = field(default_factory=Counter)  # lines skipped, by reason (BROKEN, TOO_DEEP, TOO_LARGE)
    bytes_read: int = 0  # bytes of the main file read (from `since` on, when set)
    abandoned: int = 0  # records on branches left by a rewind
    type_counts: Counter[str] = field(default_factory=Counter)
    unknown_types: Counter[str] = field(default_factory=Counter)
    since: Since | None = None  # read from here on (what the records above it carried is there), or read whole

    @property
    def lines_skipped(self) -> int:
        return sum(self.skipped.values())


def parse_timestamp(value: Any) -> datetime | None:
    """An aware datetime (a time without a zone is taken as UTC, as Claude Code writes UTC), so every record's
    time compares with every other's; None for anything unreadable."""
    if not isinstance(value, str) or not value:
        return None
    try:
        parsed = datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return None
    return parsed if parsed.tzinfo is not None else parsed.replace(tzinfo=timezone.utc)


def _as_text(content: Any) -> str:
    """Text of a tool_result's content: a string, or a list of text (and image) blocks."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = []
        for item in content:
            if isinstance(item, str):
                parts.append(item)
            elif isinstance(item, dict) and isinstance(item.get("text"), str):
                parts.append(item["text"])
        return "\n".join(parts)
    return ""


def clip(text: str) -> str:
    """At most about `MAX_TEXT_CHARS`: a long output's head and tail say what happened (the error, the summary)."""
    if len(text) <= MAX_TEXT_CHARS:
        return text
    half = MAX_TEXT_CHARS // 2
    return text[:half] + CLIPPED + text[-half:]


def _clipped_input(value: Any) -> dict[str, Any]:
    if not isinstance(value, dict):
        return {}
    return {k: clip(v) if isinstance(v, str) else v for k, v in value.items()}


def parse_block(item: Any) -> Block:
    if isinstance(item, str):
        return Block("text", clip(item))
    if not isinstance(item, dict):
        return Block("other")
    kind = item.get("type")
    if kind == "text":
        return Block("text", clip(str(item.get("text") or "")))
    if kind == "thinking":
        return Block("thinking", clip(str(item.get("thinking") or "")))
    if kind == "tool_use":
        return Block(
            "tool_use",
            tool_id=str(item.get("id") or ""),
            name=str(item.get("name") or "?"),
            input=_clipped_input(item.get("input")),
        )
    if kind == "tool_result":
        return Block(
            "tool_result",
            clip(_as_text(item.get("content"))),
            tool_id=str(item.get("tool_use_id") or ""),
            is_error=item.get("is_error") is True,
        )
    return Block("other")


def _kept(obj: dict[str, Any]) -> dict[str, Any]:
    """The `KEPT_FIELDS` of a line, long strings clipped and the tool result cut to `KEPT_RESULT_FIELDS` (and an
    `ORIGINAL_FILE` of at most `MAX_TEXT_CHARS`)."""
    kept: dict[str, Any] = {}
    for key in KEPT_FIELDS:
        value = obj.get(key)
        if value is None:
            continue
        if key == "toolUseResult" and isinstance(value, dict):
            original = value.get(ORIGINAL_FILE)
            value = {k: value[k] for k in KEPT_RESULT_FIELDS if k in value}
            if isinstance(original, str) and len(original) <= MAX_TEXT_CHARS:
                value[ORIGINAL_FILE] = original
        kept[key] = clip(value) if isinstance(value, str) else value
    return kept


def _str_or_none(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None


def parse_record(obj: dict[str, Any], line: int) -> Record:
    message = obj.get("message") if isinstance(obj.get("message"), dict) else {}
    content = message.get("content")
    if isinstance(content, str):
        blocks = [Block("text", content)]
    elif isinstance(content, list):
        blocks = [parse_block(item) for item in content]
    else:
        blocks = []
    return Record(
        line=line,
        type=obj["type"] if isinstance(obj.get("type"), str) else "(missing)",
        raw=_kept(obj),
        uuid=_str_or_none(obj.get("uuid")),
        parent_uuid=_str_or_none(obj.get("parentUuid")),
        logical_parent_uuid=_str_or_none(obj.get("logicalParentUuid")),
        session_id=_str_or_none(obj.get("sessionId")),
        timestamp=parse_timestamp(obj.get("timestamp")),
        cwd=_str_or_none(obj.get("cwd")),
        git_branch=_str_or_none(obj.get("gitBranch")),
        subtype=_str_or_none(obj.get("subtype")),
        is_sidechain=obj.get("isSidechain") is True,
        is_meta=obj.get("isMeta") is True,
        is_compact_summary=obj.get("isCompactSummary") is True,
        message_id=_str_or_none(message.get("id")),
        blocks=blocks,
    )


@dataclass
class _Lines:
    records: list[Record]
    lines_read: int
    skipped: Counter[str]
    bytes_read: int = 0


def _nesting(obj: Any) -> int:
    """How deep containers nest in a decoded value (iterative: the value may be deeper than the recursion limit)."""
    deepest, stack = 0, [(obj, 1)]
    while stack:
        value, depth = stack.pop()
        if isinstance(value, (dict, list)):
            deepest = max(deepest, depth)
            stack.extend((v, depth + 1) for v in (value.values() if isinstance(value, dict) else value))
    return deepest


def parse_line(raw: bytes) -> dict[str, Any] | str:
    """The JSON object on one line, lone surrogates repaired; or why the line is skipped."""
    if len(raw) > MAX_RECORD_BYTES:
        return TOO_LARGE
    try:
        obj = json.loads(raw.decode("utf-8", errors="replace"))
    except RecursionError:
        return TOO_DEEP
    except ValueError:
        return BROKEN
    if not isinstance(obj, dict):
        return BROKEN
    if raw.count(b"{") + raw.count(b"[") > MAX_DEPTH and _nesting(obj) > MAX_DEPTH:
        return TOO_DEEP
    return repair_data(obj) if _ESCAPED_SURROGATE.search(raw) else obj


def _lines(fh: BinaryIO) -> Iterator[bytes | None]:
    """The file's lines, newline included, read one at a time; None for a line past `MAX_RECORD_BYTES`, which is
    skipped a block at a time instead of being held."""
    while True:
        raw = fh.readline(MAX_RECORD_BYTES + 1)
        if not raw:
            return
        if len(raw) <= MAX_RECORD_BYTES or raw.endswith(b"\n"):
            yield raw
            continue
        while raw and not raw.endswith(b"\n"):
            raw = fh.readline(1 << 20)
        yield None


def read_records(path: Path, start: int = 0, lines_above: int = 0) -> _Lines:
    """Every JSON-object line of the file from byte `start` (a line's start, below `lines_above` lines); a last
    line without its newline is read only if it is whole JSON. `bytes_read` counts from `start`."""
    records: list[Record] = []
    skipped: Counter[str] = Counter()
    n = lines_above
    try:
        with path.open("rb") as fh:
            fh.seek(start)
            at = start
            for raw in _lines(fh):
                if raw is None:
                    n += 1
                    skipped[TOO_LARGE] += 1
                    at = fh.tell()
                    continue
                if not raw.endswith(b"\n") and not _whole(raw):
                    break  # still being written: the next read gets it whole
                n += 1
                if raw.strip():
                    obj = parse_line(raw.rstrip(b"\n"))
                    if isinstance(obj, str):
                        skipped[obj] += 1
                    else:
                        records.append(parse_record(obj, n))
                        records[-1].offset = at
                at = fh.tell()
            size = at
    except OSError:
        return _Lines([], 0, Counter())
    return _Lines(records, n, skipped, size - start)


def read_tail(path: Path | str, max_bytes: int) -> list[Record]:
    """The JSON-object records of the file's last `max_bytes` (the first line, cut, left out; a last line still being
    written skipped), numbered from the tail's start: for a hook that must answer in milliseconds while the whole
    transcript runs to megabytes. No chain: a rewind this near the end is rare and would cost a full read."""
    try:
        with Path(path).open("rb") as fh:
            size = fh.seek(0, 2)
            start = max(0, size - max_bytes)
            fh.seek(start)
            data = fh.read(size - start)
    except OSError:
        return []
    lines = data.split(b"\n")[1 if start else 0 :]
    parsed = ((n, parse_line(raw)) for n, raw in enumerate(lines, 1) if raw.strip())
    return [parse_record(obj, n) for n, obj in parsed if not isinstance(obj, str)]


def _whole(tail: bytes) -> bool:
    try:
        json.loads(tail)
    except (ValueError, RecursionError):
        return False
    return True


def _session_id(path: Path, records: list[Record]) -> str | None:
    """Claude Code names the file after the session; else the id most records carry."""
    ids = Counter(r.session_id for r in records if r.session_id)
    if path.stem in ids:
        return path.stem
    return ids.most_common(1)[0][0] if ids else None


def _read_meta(agent_file: Path) -> dict[str, Any]:
    meta = agent_file.with_name(agent_file.name[: -len(".jsonl")] + ".meta.json")
    try:
        data = json.loads(meta.read_text(encoding="utf-8"))
    except (OSError, ValueError, RecursionError):
        return {}
    return data if isinstance(data, dict) else {}


@lru_cache(maxsize=4096)
def _first_session_id(path: Path) -> str | None:
    """The session id on a file's first line (cached: an import asks once per sibling session)."""
    try:
        with path.open("rb") as fh:
            first = fh.readline()
        obj = json.loads(first)
    except (OSError, ValueError, RecursionError):
        return None
    return obj.get("sessionId") if isinstance(obj, dict) else None


def subagent_files(path: Path, session_id: str | None) -> list[Path]:
    """Subagent transcripts of a session: `<stem>/subagents/agent-*.jsonl` (2.1) or same-session
    `agent-*.jsonl` siblings (2.0)."""
    nested = sorted((path.parent / path.stem / "subagents").glob("agent-*.jsonl"))
    if path.name.startswith("agent-") or session_id is None:
        return nested
    siblings = [p for p in sorted(path.parent.glob("agent-*.jsonl")) if _first_session_id(p) == session_id]
    return nested + siblings


def read_subagent(path: Path) -> Subagent:
    lines = read_records(path)
    meta = _read_meta(path)
    agent_id = path.stem[len("agent-") :]
    return Subagent(
        path=path,
        agent_id=agent_id,
        records=lines.records,
        tool_use_id=_str_or_none(meta.get("toolUseId")),
        agent_type=_str_or_none(meta.get("agentType")),
        description=_str_or_none(meta.get("description")),
    )


def _still_there(path: Path, since: Since) -> bool:
    """Whether the record `since` starts at is still where it was: the file did not shrink below it, nor was it
    rewritten so that another line stands there."""
    try:
        with path.open("rb") as fh:
            if fh.seek(0, 2) <= since.offset:
                return False
            fh.seek(since.offset)
            obj = parse_line(fh.readline(MAX_RECORD_BYTES + 1).rstrip(b"\n"))
    except OSError:
        return False
    return isinstance(obj, dict) and obj.get("uuid") == since.uuid


def read_transcript(path: Path | str, since: Since | None = None) -> Transcript:
    """Read one session transcript and its subagent transcripts; never raises on content. With `since` (where an
    earlier capture left it, see `since.py`), only from there on, unless the file was rewritten above it or a
    rewind reaches above it: then whole (`Transcript.since` says which was done)."""
    path = Path(path)
    if since is not None and not _still_there(path, since):
        since = None
    lines = read_records(path, since.offset, since.line - 1) if since else read_records(path)
    main = [r for r in lines.records if not r.is_sidechain]
    sidechain = [r for r in lines.records if r.is_sidechain]
    kept, abandoned = active_records(main)
    if since is not None and branches_above(kept):
        return read_transcript(path)
    cwd = next((r.cwd for r in kept if r.cwd), None) or next((r.cwd for r in lines.records if r.cwd), None)
    session_id = since.session_id if since else _session_id(path, lines.records)
    settled = set(since.settled) if since else set()
    types = Counter(r.type for r in lines.records)
    return Transcript(
        path=path,
        session_id=session_id,
        cwd=(since.cwd or cwd) if since else cwd,
        records=kept,
        sidechain=sidechain,
        subagents=[read_subagent(p) for p in subagent_files(path, session_id) if str(p) not in settled],
        lines_read=lines.lines_read,
        skipped=lines.skipped,
        bytes_read=lines.bytes_read,
        abandoned=abandoned,
        type_counts=types,
        unknown_types=Counter({t: n for t, n in types.items() if t not in KNOWN_TYPES}),
        since=since,
    )
