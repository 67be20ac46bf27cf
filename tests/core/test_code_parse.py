"""tree-sitter structure of small real files of each parsed language (tests/data/code/, origins in its README):
the definitions with their owners and kinds, the imports as written, and calls by name from the function they are
written in."""

from __future__ import annotations

import pytest

from tempera.core.code import LANGUAGES_PARSED, Definition, FileCode, parse
from tests.conftest import FIXTURES

CODE = FIXTURES / "code"


def _parse(name: str) -> FileCode:
    code = parse(name, (CODE / name).read_bytes())
    assert code is not None
    return code


def _defs(code: FileCode) -> set[tuple[str, str]]:
    return {(d.qualified, d.kind) for d in code.definitions}


def test_go_functions_methods_by_receiver_types_imports_and_calls() -> None:
    code = _parse("entire-cli/id.go")
    assert code.language == "go"
    methods = {"String", "IsEmpty", "Path", "MarshalJSON", "UnmarshalJSON"}
    assert _defs(code) == {("CheckpointID", "type")} | {
        (f, "function") for f in ("NewCheckpointID", "MustCheckpointID", "Generate", "Validate")
    } | {(f"CheckpointID.{m}", "method") for m in methods}
    assert code.imports == ["crypto/rand", "encoding/hex", "encoding/json", "fmt", "regexp"]
    assert {("MustCheckpointID", "NewCheckpointID"), ("CheckpointID.UnmarshalJSON", "Validate")} <= set(code.calls)
    assert Definition("UnmarshalJSON", "CheckpointID.UnmarshalJSON", "method", 98, 113) in code.definitions


def test_go_function_types_and_calls_through_a_variable() -> None:
    code = _parse("entire-cli/registry.go")
    assert _defs(code) == {("Factory", "type")} | {(f, "function") for f in ("Register", "Get", "List", "Default")}
    assert {("Default", "Get"), ("Get", "List"), ("Get", "factory"), ("List", "Strings")} <= set(code.calls)


def test_typescript_functions_imports_and_calls() -> None:
    code = _parse("cipher-box/delete.service.ts")
    assert code.language == "typescript"
    assert _defs(code) == {("deleteFile", "function"), ("deleteFiles", "function")}
    assert code.imports == ["../lib/api/ipfs", "../stores/quota.store"]
    assert {("deleteFile", "unpinFromIpfs"), ("deleteFiles", "deleteFile")} <= set(code.calls)


def test_tsx_component_its_props_interface_and_a_handler_inside_it() -> None:
    code = _parse("cipher-box/AuthButton.tsx")
    assert code.language == "tsx"
    assert _defs(code) == {("AuthButtonProps", "interface"), ("AuthButton", "function")}  # handleClick is inside
    assert code.imports == ["../../hooks/useAuth"]
    assert {("AuthButton", "useAuth"), ("AuthButton", "login")} <= set(code.calls)  # login() from the handler


def test_javascript_prototype_methods_and_requires() -> None:
    code = _parse("express/view.js")
    assert code.language == "javascript"
    assert _defs(code) == {("View", "function"), ("tryStat", "function")} | {
        (f"View.{m}", "method") for m in ("lookup", "render", "resolve")
    }
    assert code.imports == ["debug", "node:path", "node:fs"]
    assert {("View.resolve", "tryStat"), ("View.render", "engine")} <= set(code.calls)


def test_rust_impl_methods_types_and_uses() -> None:
    code = _parse("anyhow/chain.rs")
    assert code.language == "rust"
    methods = {"new", "next", "size_hint", "next_back", "len", "default"}
    assert _defs(code) == {("Chain", "type"), ("ChainState", "type"), ("Chain.Item", "type")} | {
        (f"Chain.{m}", "method") for m in methods
    }
    assert code.imports == ["self::ChainState::*", "crate::StdError", "alloc::vec::{self, Vec}", "crate::Chain"]
    assert ("Chain.size_hint", "len") in code.calls


def test_rust_free_functions_and_scoped_calls() -> None:
    code = _parse("cipher-box/utils.rs")
    assert ("UtilError", "type") in _defs(code) and ("hex_to_bytes", "function") in _defs(code)
    assert "super::aes::{AES_IV_SIZE, AES_KEY_SIZE}" in code.imports
    assert {("hex_to_bytes", "decode"), ("bytes_to_hex", "encode")} <= set(code.calls)


def test_java_class_constructors_overloads_and_static_imports() -> None:
    code = _parse("javapoet/ArrayTypeName.java")
    assert code.language == "java"
    names = {"ArrayTypeName", "annotated", "withoutAnnotations", "emit", "emitLeafType", "emitBrackets", "of", "get"}
    assert _defs(code) == {("ArrayTypeName", "class")} | {(f"ArrayTypeName.{m}", "method") for m in names}
    assert len([d for d in code.definitions if d.qualified == "ArrayTypeName.get"]) == 4  # overloads, by line
    assert code.imports[0] == "java.io.IOException"
    assert code.imports[-1] == "com.squareup.javapoet.Util.checkNotNull"  # `import static`
    assert {("ArrayTypeName.of", "get"), ("ArrayTypeName.emit", "emitBrackets")} <= set(code.calls)


def test_python_functions_imports_and_calls() -> None:
    code = _parse("requests/hooks.py")
    assert code.language == "python"
    assert _defs(code) == {("default_hooks", "function"), ("dispatch_hook", "function")}
    assert code.imports == ["collections.abc", "typing", ".", ".models"]
    assert ("dispatch_hook", "hook") in code.calls


def test_no_grammar_and_broken_source() -> None:
    assert parse("main.c", b"int main(void) { return 0; }") is None
    assert parse("Makefile", b"all:\n") is None
    broken = parse("x.go", b"package x\nfunc ( { }}}} func Ok() { a() }\n\x00\xff")
    assert broken is not None and ("Ok", "a") in broken.calls
    assert LANGUAGES_PARSED == {"python", "typescript", "tsx", "javascript", "go", "rust", "java"}


@pytest.mark.parametrize("source", [b"", b"\xff\xfe\x00", b"}" * 10_000])
def test_any_bytes_parse_without_raising(source: bytes) -> None:
    for name in ("a.py", "a.ts", "a.tsx", "a.js", "a.go", "a.rs", "A.java"):
        assert parse(name, source) is not None
