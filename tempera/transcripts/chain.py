"""Which records of a transcript are the conversation as it stands: the branch that leads to the last record.

Claude Code links records by `parentUuid`. A rewind (editing an earlier prompt) starts a new branch whose user
prompt has the same parent as the prompt it replaces; the old branch stays in the file. Forks also appear for
ordinary reasons (parallel tool calls, progress and hook records hang off the same assistant record), so only a
sibling branch that starts with a user prompt is treated as rewound. A compaction boundary has no parent but names
its predecessor in `logicalParentUuid`, which keeps the chain whole across it. Records outside every chain (old
hand-written files where each record is a root) are kept as they are.
"""

from __future__ import annotations

from collections import defaultdict
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from tempera.transcripts.reader import Record

CHAIN_TYPES = frozenset({"user", "assistant", "system", "attachment", "progress"})


def _parent(record: "Record") -> str | None:
    return record.parent_uuid or record.logical_parent_uuid


def _is_prompt(record: "Record") -> bool:
    """A user record a person wrote (not a tool result): the only kind of record a rewind replaces."""
    return record.type == "user" and not record.tool_results and not record.is_meta and not record.is_compact_summary


def _ancestors(leaf: "Record", by_uuid: dict[str, "Record"]) -> set[str]:
    seen: set[str] = set()
    node: Record | None = leaf
    while node is not None and node.uuid and node.uuid not in seen:
        seen.add(node.uuid)
        parent = _parent(node)
        node = by_uuid.get(parent) if parent else None
    return seen


def active_records(records: list["Record"]) -> tuple[list["Record"], int]:
    """The records not on a rewound branch, in file order, and how many were dropped."""
    by_uuid: dict[str, Record] = {}
    children: dict[str, list[Record]] = defaultdict(list)
    for r in records:
        if r.uuid:
            by_uuid.setdefault(r.uuid, r)
            parent = _parent(r)
            if parent:
                children[parent].append(r)
    leaf = next((r for r in reversed(records) if r.uuid and r.type in CHAIN_TYPES), None)
    if leaf is None:
        return list(records), 0
    active = _ancestors(leaf, by_uuid)
    dropped: set[int] = set()
    for uuid in active:
        for child in children.get(uuid, ()):
            if child.uuid not in active and _is_prompt(child):
                _mark_subtree(child, children, dropped)
    return [r for r in records if id(r) not in dropped], len(dropped)


def _mark_subtree(root: "Record", children: dict[str, list["Record"]], dropped: set[int]) -> None:
    stack = [root]
    while stack:
        node = stack.pop()
        if id(node) in dropped:
            continue
        dropped.add(id(node))
        if node.uuid:
            stack.extend(children.get(node.uuid, ()))


def branches_above(kept: list["Record"]) -> bool:
    """For records read from a turn's prompt on (`since.py`): whether a prompt that hangs off some record is not
    on the branch to the last record, which happens when the branch point lies above the start (a rewind to an
    earlier prompt): only a full read tells which branch is the conversation."""
    by_uuid: dict[str, Record] = {}
    for r in kept:
        if r.uuid:
            by_uuid.setdefault(r.uuid, r)
    leaf = next((r for r in reversed(kept) if r.uuid and r.type in CHAIN_TYPES), None)
    active = _ancestors(leaf, by_uuid) if leaf is not None else set()
    return any(_is_prompt(r) and _parent(r) and r.uuid not in active for r in kept)
