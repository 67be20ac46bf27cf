"""Member-level JSON patching: the file's own style for new text, untouched bytes elsewhere, exact inverses."""

from __future__ import annotations

import json

import pytest

from tempera.core.errors import InvalidInput
from tempera.installer.jsontext import ABSENT, EMPTY, load_object, patch

STYLES = {
    "2-space, newline": '{\n  "a": 1.50,\n  "b": {\n    "x": [1, 2]\n  }\n}\n',
    "4-space": '{\n    "a": 1.50,\n    "b": {\n        "x": [1,2]\n    }\n}',
    "tabs": '{\n\t"a": 1.50,\n\t"b": {\n\t\t"x": [1, 2]\n\t}\n}\n',
    "crlf": '{\r\n  "a": 1.50,\r\n  "b": {\r\n    "x": [1, 2]\r\n  }\r\n}\r\n',
    "compact": '{"a":1.50,"b":{"x":[1,2]}}',
    "one line": '{"a": 1.50, "b": {"x": [1, 2]}}\n',
    "escapes": '{\n  "a": "caf\\u00e9 \\/",\n  "b": {}\n}\n',
}


def apply(text: str, key: str, value: object) -> str:
    doc = json.loads(text)
    return patch(text, (key,), doc.get(key, ABSENT), value)


@pytest.mark.parametrize("text", STYLES.values(), ids=list(STYLES))
def test_add_then_remove_is_byte_identical(text: str) -> None:
    added = apply(text, "tempera", {"hooks": [{"command": "x y"}], "n": 1})
    assert json.loads(added) == {**json.loads(text), "tempera": {"hooks": [{"command": "x y"}], "n": 1}}
    last_value_end = text.rstrip()[:-1].rstrip()
    assert added.startswith(last_value_end)  # every byte up to the last member's value is untouched
    assert apply(added, "tempera", ABSENT) == text


@pytest.mark.parametrize("text", STYLES.values(), ids=list(STYLES))
def test_nested_add_then_remove_is_byte_identical(text: str) -> None:
    doc = json.loads(text)
    new_b = {**doc["b"], "tempera": {"type": "stdio"}}
    added = patch(text, ("b",), doc["b"], new_b)
    assert json.loads(added) == {**doc, "b": new_b}
    assert patch(added, ("b",), new_b, doc["b"]) == text


def test_new_members_follow_the_files_style() -> None:
    assert apply(STYLES["4-space"], "c", {"d": 1}).endswith(',\n    "c": {\n        "d": 1\n    }\n}')
    assert apply(STYLES["tabs"], "c", [1]).endswith(',\n\t"c": [\n\t\t1\n\t]\n}\n')
    assert apply(STYLES["compact"], "c", {"d": 1}) == '{"a":1.50,"b":{"x":[1,2]},"c":{"d":1}}'
    assert "\r\n" in apply(STYLES["crlf"], "c", {"d": 1}).split('"c"')[1]
    assert apply(EMPTY, "c", {"d": "é"}) == json.dumps({"c": {"d": "é"}}, indent=2, ensure_ascii=False) + "\n"


def test_only_changed_members_are_rewritten() -> None:
    text = '{\n  "keep": [1,   2],\n  "s": {\n    "other": {"inline": true},\n    "ours": 1\n  }\n}'
    out = patch(text, ("s",), {"other": {"inline": True}, "ours": 1}, {"other": {"inline": True}, "ours": 2})
    assert out == text.replace('"ours": 1', '"ours": 2')


def test_remove_first_middle_and_only_member() -> None:
    text = '{\n  "a": 1,\n  "b": 2,\n  "c": 3\n}\n'
    assert apply(text, "a", ABSENT) == '{\n  "b": 2,\n  "c": 3\n}\n'
    assert apply(text, "b", ABSENT) == '{\n  "a": 1,\n  "c": 3\n}\n'
    assert apply('{\n  "a": 1\n}\n', "a", ABSENT) == "{}\n"
    assert apply(text, "zzz", ABSENT) == text


def test_duplicate_key_edits_the_one_parsers_read() -> None:
    out = apply('{"a": 1, "a": 2}', "a", 3)
    assert out == '{"a": 1, "a": 3}' and json.loads(out) == {"a": 3}


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ('{"a": }', "is not valid JSON (Expecting value at line 1 column 7)"),
        ("[]", "must hold a JSON object, not an array"),
        ("null", "must hold a JSON object, not null"),
        ("", "is not valid JSON"),
    ],
)
def test_load_object_refuses(text: str, message: str) -> None:
    with pytest.raises(InvalidInput, match="nothing was changed") as err:
        load_object(text, "/x/settings.json")
    assert str(err.value).startswith("/x/settings.json ") and message in str(err.value)
