"""Source file -> its definitions, imports and calls by name, with tree-sitter and the official grammar wheels.

Only this package imports tree_sitter, and only once a file is parsed: the per-prompt hook path never pays for it.
Languages, parsers and queries are made on first use and kept for the process. Calls are by name (best effort, no
type inference): the caller is the definition the call is written in, the callee the bare name called. Functions
written inside a function are not definitions of their own; their calls count as the outer function's.
"""

from __future__ import annotations

import functools
import importlib
from dataclasses import dataclass
from pathlib import PurePosixPath
from typing import Any

from tempera.core.code.grammars import EXTENSIONS, GRAMMARS, Grammar

LANGUAGES_PARSED = frozenset(GRAMMARS)
FUNCTIONS = ("function", "method")


@dataclass(frozen=True)
class Definition:
    name: str  # bare identifier: "Run"
    qualified: str  # owner-qualified inside the file: "Server.Run"
    kind: str  # "function" | "method" | "class" | "interface" | "type"
    start_line: int  # 1-based, inclusive
    end_line: int


@dataclass
class FileCode:
    language: str  # "python" | "typescript" | "tsx" | "javascript" | "go" | "rust" | "java"
    definitions: list[Definition]
    imports: list[str]  # as written: "github.com/x/y/pkg", "./util", "react", "java.util.List", "crate::a::b"
    calls: list[tuple[str, str]]  # (caller qualified, callee bare name)


def language_of(path: str) -> str | None:
    """The parsed language a file's extension names, whether or not its grammar is installed."""
    return EXTENSIONS.get(PurePosixPath(path).suffix.lower())


@functools.cache
def _tools(language: str) -> tuple[Any, Any] | None:
    """(parser, query) for a language, or None when tree-sitter or its grammar wheel is missing or too old."""
    grammar: Grammar = GRAMMARS[language]
    try:
        import tree_sitter

        pointer = getattr(importlib.import_module(grammar.module), grammar.function)()
        lang = tree_sitter.Language(pointer)
        return tree_sitter.Parser(lang), tree_sitter.Query(lang, grammar.query)
    except (ImportError, AttributeError, TypeError, ValueError):  # ValueError: QueryError, a grammar too old
        return None


def parse(path: str, source: bytes) -> FileCode | None:
    """A file's structure, or None when no grammar reads it (unknown extension, or its wheel missing).

    Source that does not parse cleanly still gives what tree-sitter recovered around the errors.
    """
    language = language_of(path)
    tools = _tools(language) if language else None
    if language is None or tools is None:
        return None
    parser, query = tools
    from tree_sitter import QueryCursor

    tree = parser.parse(source)
    return _read(language, GRAMMARS[language], QueryCursor(query).matches(tree.root_node))


@dataclass
class _Block:
    """A definition or an owning scope as found in the tree, before qualification."""

    node: Any
    name: str
    kind: str  # a definition kind, or "scope"
    owner: str | None  # Go: the receiver type


def _text(node: Any) -> str:
    return bytes(node.text or b"").decode("utf-8", errors="replace")


def _read(language: str, grammar: Grammar, matches: list[tuple[int, dict[str, list[Any]]]]) -> FileCode:
    blocks: dict[int, _Block] = {}
    imports: list[str] = []
    call_nodes: list[Any] = []
    for _, captures in matches:
        kind = next((key[4:] for key in captures if key.startswith("def.")), None)
        owner = _text(captures["owner"][0]) if "owner" in captures else None
        if kind is not None:
            node = captures[f"def.{kind}"][0]
            blocks[node.id] = _Block(node, _text(captures["name"][0]), kind, owner)
        elif "scope" in captures and owner is not None:
            node = captures["scope"][0]
            blocks[node.id] = _Block(node, owner, "scope", None)
        imports += [_import(language, _text(n)) for n in captures.get("import", [])]
        call_nodes += captures.get("call", [])
    definitions: dict[int, Definition] = {}
    for block in sorted(blocks.values(), key=lambda b: b.node.start_byte):
        definition = _qualify(block, _owners(block.node, blocks), grammar)
        if definition is not None:
            definitions[block.node.id] = definition
    calls: dict[tuple[str, str], None] = {}
    for node in call_nodes:
        caller = _caller(node, definitions)
        if caller is not None:
            calls[(caller, _text(node))] = None
    return FileCode(language, list(definitions.values()), list(dict.fromkeys(i for i in imports if i)), list(calls))


def _owners(node: Any, blocks: dict[int, _Block]) -> list[_Block]:
    """The blocks around a node, innermost first."""
    found = []
    parent = node.parent
    while parent is not None:
        if parent.id in blocks:
            found.append(blocks[parent.id])
        parent = parent.parent
    return found


def _qualify(block: _Block, owners: list[_Block], grammar: Grammar) -> Definition | None:
    """The definition a block stands for; None for scopes and for what is written inside a function."""
    if block.kind == "scope" or any(o.kind in FUNCTIONS for o in owners):
        return None
    names = [o.name for o in reversed(owners)] + ([block.owner] if block.owner else []) + [block.name]
    kind = block.kind
    if kind == "function" and any(o.kind != "scope" or o.node.type not in grammar.namespaces for o in owners):
        kind = "method"
    start, end = block.node.start_point, block.node.end_point
    return Definition(block.name, ".".join(names), kind, start[0] + 1, end[0] + 1)


def _caller(node: Any, definitions: dict[int, Definition]) -> str | None:
    """The function or method a call is written in (functions inside functions are not definitions)."""
    parent = node.parent
    while parent is not None:
        found = definitions.get(parent.id)
        if found is not None and found.kind in FUNCTIONS:
            return found.qualified
        parent = parent.parent
    return None


def _import(language: str, text: str) -> str:
    """An import's text as written, without the quotes or keywords around it."""
    if language == "go":
        return text.strip('"`')
    if language == "java":
        words = text.removeprefix("import").strip().rstrip(";").strip()
        return words.removeprefix("static").strip().replace(" ", "")
    return text
