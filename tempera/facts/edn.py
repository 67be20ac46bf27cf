"""A small EDN reader and printer for minigraf's Datalog dialect.

The reader keeps the position of every form so that later errors (unbound variable, bad arity) can point at
the exact place in the text. Only what the dialect uses is read: lists, vectors, maps, strings, numbers,
keywords, symbols, true/false/nil and the tagged literals #uuid and #inst.
"""

from __future__ import annotations

import re
import uuid
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from tempera.facts.errors import DatalogSyntaxError, Pos
from tempera.facts.values import Keyword, format_instant

DELIMITERS = set(' \t\r\n,()[]{}";')
OPENERS = {"(": ")", "[": "]", "{": "}"}
CLOSERS = {")", "]", "}"}
KINDS = {"(": "list", "[": "vector", "{": "map"}
NAME_CHARS = re.compile(r"[A-Za-z0-9*+!\-_?<>=.$%&/']+")
INT_RE = re.compile(r"[+-]?\d+")
FLOAT_RE = re.compile(r"[+-]?(\d+\.\d*|\.\d+|\d+)([eE][+-]?\d+)?")
ESCAPES = {"n": "\n", "t": "\t", "r": "\r", '"': '"', "\\": "\\", "b": "\b", "f": "\f", "/": "/"}
TAGS = ("uuid", "inst")


class Symbol(str):
    """A bare name: a variable (?x), wildcard (_), bind slot ($city), function or rule name."""

    __slots__ = ()


@dataclass(frozen=True)
class Tagged:
    """A tagged literal as written; the parser checks that the text is a valid UUID or instant."""

    tag: str
    text: str


@dataclass(frozen=True, eq=False)
class Form:
    pos: Pos


@dataclass(frozen=True, eq=False)
class Atom(Form):
    value: Any


@dataclass(frozen=True, eq=False)
class Seq(Form):
    kind: str  # "list" | "vector" | "map"
    items: tuple[Form, ...]


class _Reader:
    def __init__(self, text: str) -> None:
        self.text = text
        self.i = 0
        self.line = 1
        self.col = 1

    def pos(self) -> Pos:
        return Pos(self.line, self.col)

    def advance(self, n: int = 1) -> None:
        for ch in self.text[self.i : self.i + n]:
            if ch == "\n":
                self.line += 1
                self.col = 1
            else:
                self.col += 1
        self.i += n

    def skip_space(self) -> None:
        while self.i < len(self.text):
            ch = self.text[self.i]
            if ch in " \t\r\n,":
                self.advance()
            elif ch == ";":
                while self.i < len(self.text) and self.text[self.i] != "\n":
                    self.advance()
            else:
                return

    def at_end(self) -> bool:
        self.skip_space()
        return self.i >= len(self.text)

    def read(self) -> Form:
        self.skip_space()
        if self.i >= len(self.text):
            raise DatalogSyntaxError("unexpected end of input", self.pos())
        ch = self.text[self.i]
        start = self.pos()
        if ch in OPENERS:
            return self.read_seq(ch, start)
        if ch in CLOSERS:
            raise DatalogSyntaxError(f"unexpected '{ch}'", start)
        if ch == '"':
            return Atom(start, self.read_string())
        if ch == "#":
            return self.read_tagged(start)
        return Atom(start, self.read_token(start))

    def read_seq(self, opener: str, start: Pos) -> Seq:
        closer = OPENERS[opener]
        self.advance()
        items: list[Form] = []
        while True:
            self.skip_space()
            if self.i >= len(self.text):
                raise DatalogSyntaxError(f"unclosed '{opener}' (expected '{closer}' before the end)", start)
            ch = self.text[self.i]
            if ch == closer:
                self.advance()
                break
            if ch in CLOSERS:
                raise DatalogSyntaxError(f"'{ch}' does not close the '{opener}' opened at {start}", self.pos())
            items.append(self.read())
        if opener == "{" and len(items) % 2:
            raise DatalogSyntaxError("a map needs an even number of forms (key value pairs)", start)
        return Seq(start, KINDS[opener], tuple(items))

    def read_string(self) -> str:
        start = self.pos()
        self.advance()
        out: list[str] = []
        while self.i < len(self.text):
            ch = self.text[self.i]
            if ch == '"':
                self.advance()
                return "".join(out)
            if ch == "\\":
                esc = self.text[self.i + 1 : self.i + 2]
                if esc == "u" and re.fullmatch(r"[0-9a-fA-F]{4}", self.text[self.i + 2 : self.i + 6]):
                    out.append(chr(int(self.text[self.i + 2 : self.i + 6], 16)))
                    self.advance(6)
                    continue
                if esc not in ESCAPES:
                    raise DatalogSyntaxError(f"unknown string escape '\\{esc}'", self.pos())
                out.append(ESCAPES[esc])
                self.advance(2)
                continue
            out.append(ch)
            self.advance()
        raise DatalogSyntaxError("unterminated string", start)

    def read_tagged(self, start: Pos) -> Atom:
        self.advance()
        tag_start = self.i
        while self.i < len(self.text) and self.text[self.i] not in DELIMITERS:
            self.advance()
        tag = self.text[tag_start : self.i]
        if tag not in TAGS:
            raise DatalogSyntaxError(f"unknown tagged literal #{tag} (only #uuid and #inst are supported)", start)
        self.skip_space()
        if self.i >= len(self.text) or self.text[self.i] != '"':
            raise DatalogSyntaxError(f"#{tag} must be followed by a string", start)
        return Atom(start, Tagged(tag, self.read_string()))

    def read_token(self, start: Pos) -> Any:
        begin = self.i
        while self.i < len(self.text) and self.text[self.i] not in DELIMITERS:
            self.advance()
        token = self.text[begin : self.i]
        if INT_RE.fullmatch(token):
            return int(token)
        if FLOAT_RE.fullmatch(token):
            return float(token)
        if token in ("true", "false"):
            return token == "true"
        if token == "nil":
            return None
        if token.startswith(":"):
            name = token[1:]
            bad = _first_bad_char(name)
            if not name or bad is not None or name.startswith("/") or name.endswith("/"):
                detail = f"invalid character '{bad}'" if bad else "malformed name"
                raise DatalogSyntaxError(f"{detail} in keyword {token}", start)
            return Keyword(token)
        bad = _first_bad_char(token)
        if bad is not None:
            raise DatalogSyntaxError(f"unexpected character '{bad}'", start)
        return Symbol(token)


def _first_bad_char(name: str) -> str | None:
    for ch in name:
        if not NAME_CHARS.fullmatch(ch):
            return ch
    return None


def read_one(text: str) -> Form:
    """Exactly one form; anything after it is an error."""
    reader = _Reader(text)
    if reader.at_end():
        raise DatalogSyntaxError("empty input", reader.pos())
    form = reader.read()
    if not reader.at_end():
        raise DatalogSyntaxError("unexpected text after the command", reader.pos())
    return form


def to_edn(value: Any) -> str:
    """A Python value as EDN text (keywords as :name, strings quoted)."""
    if value is None:
        return "nil"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (Keyword, Symbol)):
        return str.__str__(value)
    if isinstance(value, str):
        escaped = value.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n").replace("\t", "\\t")
        return f'"{escaped}"'
    if isinstance(value, uuid.UUID):
        return f'#uuid "{value}"'
    if isinstance(value, datetime):
        return f'#inst "{format_instant(value)}"'
    if isinstance(value, Tagged):
        return f'#{value.tag} "{value.text}"'
    return repr(value)


def form_to_edn(form: Form) -> str:
    """A form back as canonical EDN text (single spaces), used for rule storage and column names."""
    if isinstance(form, Atom):
        return to_edn(form.value)
    assert isinstance(form, Seq)
    left, right = {"list": "()", "vector": "[]", "map": "{}"}[form.kind]
    return left + " ".join(form_to_edn(item) for item in form.items) + right
