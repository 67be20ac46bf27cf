"""Git ingestion of Go, TypeScript, Rust and Java (tree-sitter, core/code) into the same facts and valid times as
Python: a repository is built here, a function is renamed across two commits, and :valid-at questions tell the old
name's time closed and the new one's opened; imports resolve to the repository's own modules or to packages, and
a file whose language has no grammar is skipped and counted."""

from __future__ import annotations

import json
from pathlib import Path

import git
from test_facts_turns import FEB_1, capture
from transcript_writer import SessionWriter  # on the path test_facts_turns adds

from evals import code_structure
from tempera.core.memory import Memory
from tempera.facts import FactStore, Keyword
from tempera.facts.audit import audit
from tempera.facts.ingest_git import ingest
from tests.conftest import FIXTURES
from tests.facts.test_facts_ingest_git import _commit
from tests.support.cli import tempera

K = Keyword
NAMES = "[:find ?n {opts} :where [?f :name ?n] [?f :file ?p] [(= ?p {path})]]"
CALLS = "[:find ?a ?b {opts} :where [?a :calls ?b]]"
DEPS = "[:find ?d :where [{module} :depends-on ?d]]"

GO_MOD = "module example.com/shop\n\ngo 1.22\n"
CART_V1 = """package cart

import (
\t"fmt"

\t"example.com/shop/money"
)

type Cart struct{ items []int }

func (c *Cart) Total() money.Cents {
\treturn money.Sum(c.items)
}

func describe(c *Cart) string {
\treturn fmt.Sprint(c.Total(), oldName())
}
"""
HELPERS_V1 = 'package cart\n\nfunc oldName() string {\n\treturn "cart"\n}\n'
HELPERS_V2 = 'package cart\n\nfunc newName() string {\n\treturn "cart"\n}\n'
MONEY = "package money\n\ntype Cents int\n\nfunc Sum(xs []int) Cents {\n\treturn Cents(len(xs))\n}\n"


def _names(store: FactStore, path: str, day: str) -> set[str]:
    return {n for (n,) in store.query(NAMES.format(opts=f':valid-at "{day}"', path=f'"{path}"')).rows}


def _calls(store: FactStore, day: str) -> set[tuple[Keyword, Keyword]]:
    return set(store.query(CALLS.format(opts=f':valid-at "{day}"')).rows)


def test_go_rename_closes_the_old_name_and_opens_the_new(store: FactStore, tmp_path) -> None:
    repo = git.Repo.init(tmp_path / "go")
    files = {"go.mod": GO_MOD, "cart/cart.go": CART_V1, "cart/helpers.go": HELPERS_V1, "money/money.go": MONEY}
    _commit(repo, "start", "2024-01-01", files)
    cart_v2 = CART_V1.replace("oldName()", "newName()")
    _commit(repo, "rename oldName", "2024-02-01", {"cart/cart.go": cart_v2, "cart/helpers.go": HELPERS_V2})
    report = ingest(store, repo.working_tree_dir)
    assert report.commits == 2 and report.unparsed_files == 0
    assert _names(store, "cart/helpers.go", "2024-01-15") == {"oldName"}
    assert _names(store, "cart/helpers.go", "2024-02-15") == {"newName"}
    rows = store.query('[:find ?n :any-valid-time :where [?f :name ?n] [?f :file "cart/helpers.go"]]').rows
    assert {n for (n,) in rows} == {"oldName", "newName"}  # the old name's time is closed, not erased
    f = "function/cart."
    # across the package's files; c.Total() names no receiver type by itself: no edge (no type inference)
    assert _calls(store, "2024-01-15") == {(K(f":{f}describe"), K(f":{f}oldName"))}
    assert (K(f":{f}describe"), K(f":{f}newName")) in _calls(store, "2024-02-15")
    assert {d for (d,) in store.query(DEPS.format(module=":module/cart")).rows} == {
        K(":module/money"),  # resolved through go.mod's module path
        K(":package/fmt"),
    }
    contains = store.query("[:find ?m :where [?m :contains :function/cart.Cart.Total]]").rows
    assert contains == [(K(":type/cart.Cart"),)]
    assert audit(store).violations == []


TS_UTIL_V1 = "export function formatPrice(n: number): string {\n  return n.toFixed(2);\n}\n"
TS_UTIL_V2 = "export function formatAmount(n: number): string {\n  return n.toFixed(2);\n}\n"
TS_VIEW = """import React from 'react';
import { render } from 'react-dom/client';
import { formatPrice } from './util';
import './styles.css';

export interface PriceProps { value: number }

export class PriceView {
  show(p: PriceProps): string { return this.label(p) + formatPrice(p.value); }
  label(p: PriceProps): string { return 'price'; }
}
"""


def test_typescript_rename_and_module_dependencies(store: FactStore, tmp_path) -> None:
    repo = git.Repo.init(tmp_path / "ts")
    _commit(repo, "start", "2024-01-01", {"src/util.ts": TS_UTIL_V1, "src/view.tsx": TS_VIEW, "src/styles.css": ""})
    view_v2 = TS_VIEW.replace("formatPrice", "formatAmount")
    _commit(repo, "rename", "2024-02-01", {"src/util.ts": TS_UTIL_V2, "src/view.tsx": view_v2})
    ingest(store, repo.working_tree_dir)
    assert _names(store, "src/util.ts", "2024-01-15") == {"formatPrice"}
    assert _names(store, "src/util.ts", "2024-02-15") == {"formatAmount"}
    assert _names(store, "src/view.tsx", "2024-02-15") == {"PriceProps", "PriceView", "show", "label"}
    assert {d for (d,) in store.query(DEPS.format(module=":module/src/view")).rows} == {
        K(":module/src/util"),
        K(":package/react"),
        K(":package/react-dom"),  # the stylesheet resolves to no code module: no edge
    }
    assert _calls(store, "2024-02-15") == {
        (K(":function/src/view.PriceView.show"), K(":function/src/view.PriceView.label"))
    }
    assert store.query("[:find ?l :where [:module/src/view :language ?l]]").rows == [("typescript",)]


def test_a_module_whose_extension_the_language_table_lacks_is_ingested(store: FactStore, tmp_path) -> None:
    """`.mts` (and an upper-case `.TS`) are parsed as TypeScript but not in core/languages' table, which named the
    module's :language and raised KeyError, failing the whole ingestion."""
    repo = git.Repo.init(tmp_path / "mts")
    _commit(repo, "start", "2024-01-01", {"vite.config.mts": TS_UTIL_V1, "src/Legacy.TS": TS_UTIL_V2})
    assert ingest(store, repo.working_tree_dir).commits == 1
    assert _names(store, "vite.config.mts", "2024-01-15") == {"formatPrice"}
    for module in (":module/vite.config", ":module/src/Legacy"):
        assert store.query(f"[:find ?l :where [{module} :language ?l]]").rows == [("typescript",)]


RUST_LIB = "mod store;\npub use crate::store::Store;\nuse serde::Serialize;\n"
RUST_STORE = "use super::Serialize;\npub struct Store;\nimpl Store {\n    pub fn new() -> Self { Store::build() }\n    fn build() -> Self { Store }\n}\n"  # noqa: E501
JAVA = "package com.shop;\n\nimport java.util.List;\nimport com.shop.model.Item;\n\npublic class Cart {\n  int size(List<Item> xs) { return count(xs); }\n  int count(List<Item> xs) { return xs.size(); }\n}\n"  # noqa: E501
JAVA_ITEM = "package com.shop.model;\n\npublic record Item(int cents) {}\n"


def test_rust_and_java_modules_and_unparsed_languages_counted(store: FactStore, tmp_path) -> None:
    repo = git.Repo.init(tmp_path / "mixed")
    files = {
        "src/lib.rs": RUST_LIB,
        "src/store.rs": RUST_STORE,
        "app/src/main/java/com/shop/Cart.java": JAVA,
        "app/src/main/java/com/shop/model/Item.java": JAVA_ITEM,
        "native/fast.c": "int fast(void) { return 1; }\n",
        "scripts/tool.rb": "def tool; end\n",
    }
    _commit(repo, "start", "2024-01-01", files)
    report = ingest(store, repo.working_tree_dir)
    assert report.unparsed_files == 2  # the C and Ruby files: no grammar, no error
    assert {d for (d,) in store.query(DEPS.format(module=":module/src/lib")).rows} == {
        K(":module/src/store"),
        K(":package/serde"),
    }
    assert store.query("[:find ?b :where [:function/src/store.Store.new :calls ?b]]").rows == [
        (K(":function/src/store.Store.build"),)
    ]
    assert {d for (d,) in store.query(DEPS.format(module=":module/com.shop.Cart")).rows} == {
        K(":module/com.shop.model.Item"),  # package + class, found by its folder
        K(":package/java.util"),
    }
    assert store.query("[:find ?b :where [:function/com.shop.Cart.Cart.size :calls ?b]]").rows == [
        (K(":function/com.shop.Cart.Cart.count"),)
    ]


def test_differential_graph_agrees_with_a_direct_count(store: FactStore, tmp_path) -> None:
    """Real Go and TypeScript files added, edited, moved and deleted over four commits: what the graph holds as
    valid after the walk is what parsing the last commit's files directly counts (evals/code_structure.py)."""
    code = FIXTURES / "code"
    vendored = {"checkpoint/id": "entire-cli/id.go", "strategy": "entire-cli/registry.go", "web": "cipher-box/*.ts*"}
    start = {f"{to}/{f.name}": f.read_text() for to, origin in vendored.items() for f in code.glob(origin)}
    main_go = 'package main\n\nimport "example.com/shop/checkpoint/id"\n\nfunc main() { id.Generate() }\n'
    start |= {"go.mod": GO_MOD, "cmd/main.go": main_go, "web/view.js": (code / "express/view.js").read_text()}
    id_go, registry = start["checkpoint/id/id.go"], start["strategy/registry.go"]
    repo = git.Repo.init(tmp_path / "slice")
    _commit(repo, "start", "2024-01-01", start)
    without_validate = id_go.replace("func Validate(s string) error {", "func check(s string) error {")
    _commit(repo, "edit", "2024-02-01", {"checkpoint/id/id.go": without_validate})
    _commit(repo, "move", "2024-03-01", {"strategy/registry/registry.go": registry}, remove=("strategy/registry.go",))
    _commit(repo, "drop", "2024-04-01", {}, remove=("web/view.js",))
    ingest(store, repo.working_tree_dir)
    graph, direct = code_structure.graph_counts(store), code_structure.direct_counts(Path(repo.working_tree_dir))
    assert graph == direct
    assert graph["go"] == {"functions": 14, "calls": 4, "depends-on": 9}  # Validate renamed: its calls gone
    assert graph["typescript"] == {"functions": 3, "calls": 1, "depends-on": 2} and "javascript" not in graph


CALLERS = '[:find ?caller {opts} :where [?caller :calls ?f] [?f :name "helper"]]'


def test_what_calls_a_go_function_now_and_before_a_date(tmp_path) -> None:
    """`tempera facts`: the callers of a Go function now, and what they were before a change moved the call."""
    repo = git.Repo.init(tmp_path / "callers")
    v1 = "package srv\n\nfunc Run() { helper() }\n\nfunc helper() {}\n"
    _commit(repo, "start", "2024-01-01", {"go.mod": GO_MOD, "srv/srv.go": v1, "tool.rb": "puts 1\n"})
    v2 = "package srv\n\nfunc Run() {}\n\nfunc Start() { helper() }\n\nfunc helper() {}\n"
    _commit(repo, "start calls helper", "2024-02-01", {"srv/srv.go": v2})
    db = str(tmp_path / "cli.db")
    out = tempera("facts", "--db", db, "ingest-git", str(repo.working_tree_dir), "--wait").stdout
    assert "1 source file version(s) skipped: no grammar for their language" in out
    now = tempera("facts", "--db", db, "query", CALLERS.format(opts=""), "--json").stdout
    before = tempera("facts", "--db", db, "query", CALLERS.format(opts=':valid-at "2024-01-15"'), "--json").stdout
    assert json.loads(now)["rows"] == [[":function/srv.Start"]]
    assert json.loads(before)["rows"] == [[":function/srv.Run"]]


def test_a_rust_module_file_added_later_resolves_the_unchanged_use(store: FactStore, tmp_path) -> None:
    """Rust `use` paths resolve against the crate's module files: when src/store.rs appears, src/lib.rs's
    unchanged `use crate::store::Store` gains its edge from that commit on."""
    repo = git.Repo.init(tmp_path / "crate")
    _commit(repo, "start", "2024-01-01", {"src/lib.rs": RUST_LIB})
    _commit(repo, "add store", "2024-02-01", {"src/store.rs": RUST_STORE})
    ingest(store, repo.working_tree_dir)
    query = '[:find ?d :valid-at "{day}" :where [:module/src/lib :depends-on ?d]]'
    assert store.query(query.format(day="2024-01-15")).rows == [(K(":package/serde"),)]
    later = {d for (d,) in store.query(query.format(day="2024-02-15")).rows}
    assert later == {K(":module/src/store"), K(":package/serde")}


def test_decisions_of_sessions_that_changed_go_files_depending_on_a_package(memory: Memory, tmp_path) -> None:
    """A decision stated in a session that edited a file of a Go package, and that package's import of an outside
    package from git ingestion: which decisions were made where code depends on it, in one query."""
    repo = git.Repo.init(tmp_path / "go")
    srv = 'package srv\n\nimport "crypto/md5"\n\nfunc Hash(b []byte) [16]byte { return md5.Sum(b) }\n'
    _commit(repo, "start", "2026-01-01", {"go.mod": GO_MOD, "srv/srv.go": srv, "web/page.go": "package web\n"})
    store = FactStore(memory.db)
    ingest(store, repo.working_tree_dir)
    writer = SessionWriter(tmp_path / "s.jsonl")
    writer.clock = FEB_1
    writer.prompt("Never use MD5 for password hashes.")
    writer.tool("Edit", {"file_path": f"{writer.cwd}/srv/srv.go", "old_string": "a", "new_string": "b"}, "ok")
    writer.say("Noted.")
    capture(memory, tmp_path / "s.jsonl")
    rows = store.query("""[:find ?why ?path
                           :where [?m :depends-on :package/crypto/md5] [?m :defined-in ?f] [?f :path ?path]
                                  [?said :episode/file-modified ?path] [?d :stated-in ?said] [?d :description ?why]]""")
    assert rows.rows == [("Never use MD5 for password hashes", "srv/srv.go")]
