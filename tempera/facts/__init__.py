"""The bi-temporal fact graph: datoms with transaction and valid time, queried with minigraf-dialect Datalog.

edn.py reader/printer -> parser.py (AST in query_ast.py) -> normalize.py (or -> union of conjunctions) ->
compiler.py (conjunction -> SQL) with relations.py (rules -> CTEs, recursion, specialisation) ->
planner.py (find/aggregates/order) -> store.py (FactStore: writes, queries, rules, history).
schema.py holds the migrations, entity_types.py and audit.py the entity schema, ingest_git.py code structure
from git history (pycode.py for Python, codefacts.py for the languages core/code parses).
"""

from tempera.facts.errors import DatalogError, DatalogSyntaxError
from tempera.facts.store import FactStore, QueryResult, RuleInfo, RuleResult, TxResult
from tempera.facts.values import Keyword

__all__ = [
    "DatalogError",
    "DatalogSyntaxError",
    "FactStore",
    "Keyword",
    "QueryResult",
    "RuleInfo",
    "RuleResult",
    "TxResult",
]
