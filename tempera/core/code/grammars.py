"""Per language: which files it covers, the grammar wheel that parses them, and the tree-sitter query that names
what `parse` reads from a tree.

The captures of each query say what a node is: `@def.<kind>` a definition (with its `@name`, and for Go methods the
receiver type as `@owner`), `@scope` a block that owns definitions without being one (a Rust `impl` or `mod`, its
`@owner` the name it gives them), `@import` an import as written, `@call` the name a call calls. A query pattern
that a grammar version does not know makes the language unparsed rather than wrong (see parse.py).
"""

from __future__ import annotations

from dataclasses import dataclass

from tempera.core.languages import LANGUAGES


@dataclass(frozen=True)
class Grammar:
    module: str  # the wheel's import name
    function: str  # its function returning the language pointer
    query: str
    namespaces: frozenset[str] = frozenset()  # scope node types whose functions stay functions (a Rust `mod`)


PYTHON = Grammar(
    "tree_sitter_python",
    "language",
    """
    (class_definition name: (identifier) @name) @def.class
    (function_definition name: (identifier) @name) @def.function
    (import_statement name: [(dotted_name) @import (aliased_import name: (dotted_name) @import)])
    (import_from_statement module_name: (_) @import)
    (call function: [(identifier) @call (attribute attribute: (identifier) @call)])
    """,
)

_SCRIPT_COMMON = """
    (function_declaration name: (identifier) @name) @def.function
    (generator_function_declaration name: (identifier) @name) @def.function
    (class_declaration name: (_) @name) @def.class
    (method_definition name: (_) @name) @def.method
    (variable_declarator name: (identifier) @name value: [(arrow_function) (function_expression)]) @def.function
    (assignment_expression
        left: (member_expression
            object: (member_expression object: (identifier) @owner property: (property_identifier) @_prototype)
            property: (property_identifier) @name)
        right: [(arrow_function) (function_expression)]
        (#eq? @_prototype "prototype")) @def.method
    (import_statement source: (string (string_fragment) @import))
    (export_statement source: (string (string_fragment) @import))
    (call_expression function: (identifier) @_require arguments: (arguments . (string (string_fragment) @import))
        (#eq? @_require "require"))
    (call_expression function: [(identifier) @call (member_expression property: (_) @call)])
    (new_expression constructor: [(identifier) @call (member_expression property: (_) @call)])
"""

_TYPESCRIPT = (
    _SCRIPT_COMMON
    + """
    (abstract_class_declaration name: (_) @name) @def.class
    (interface_declaration name: (_) @name) @def.interface
    (type_alias_declaration name: (_) @name) @def.type
    (enum_declaration name: (_) @name) @def.type
    (public_field_definition name: (_) @name value: [(arrow_function) (function_expression)]) @def.method
    """
)

TYPESCRIPT = Grammar("tree_sitter_typescript", "language_typescript", _TYPESCRIPT)
TSX = Grammar("tree_sitter_typescript", "language_tsx", _TYPESCRIPT)
JAVASCRIPT = Grammar(
    "tree_sitter_javascript",
    "language",
    _SCRIPT_COMMON
    + """
    (field_definition property: (_) @name value: [(arrow_function) (function_expression)]) @def.method
    """,
)

GO = Grammar(
    "tree_sitter_go",
    "language",
    """
    (function_declaration name: (identifier) @name) @def.function
    (method_declaration
        receiver: (parameter_list (parameter_declaration type: [
            (type_identifier) @owner
            (pointer_type (type_identifier) @owner)
            (generic_type type: (type_identifier) @owner)
            (pointer_type (generic_type type: (type_identifier) @owner))]))
        name: (field_identifier) @name) @def.method
    (type_spec name: (type_identifier) @name type: (interface_type)) @def.interface
    (type_spec name: (type_identifier) @name type: [
        (struct_type) (type_identifier) (qualified_type) (generic_type) (pointer_type) (slice_type) (array_type)
        (map_type) (channel_type) (function_type)]) @def.type
    (type_alias name: (type_identifier) @name) @def.type
    (import_spec path: (_) @import)
    (call_expression function: [(identifier) @call (selector_expression field: (field_identifier) @call)])
    """,
)

RUST = Grammar(
    "tree_sitter_rust",
    "language",
    """
    (function_item name: (identifier) @name) @def.function
    (function_signature_item name: (identifier) @name) @def.function
    [(struct_item name: (type_identifier) @name) (enum_item name: (type_identifier) @name)
     (union_item name: (type_identifier) @name) (type_item name: (type_identifier) @name)
     (trait_item name: (type_identifier) @name)] @def.type
    (impl_item type: [
        (type_identifier) @owner
        (generic_type type: (type_identifier) @owner)
        (scoped_type_identifier name: (type_identifier) @owner)]) @scope
    (mod_item name: (identifier) @owner body: (declaration_list)) @scope
    (use_declaration argument: (_) @import)
    (extern_crate_declaration name: (identifier) @import)
    (call_expression function: [
        (identifier) @call
        (field_expression field: (field_identifier) @call)
        (scoped_identifier name: (identifier) @call)
        (generic_function function: [
            (identifier) @call
            (field_expression field: (field_identifier) @call)
            (scoped_identifier name: (identifier) @call)])])
    """,
    namespaces=frozenset({"mod_item"}),
)

JAVA = Grammar(
    "tree_sitter_java",
    "language",
    """
    [(class_declaration name: (identifier) @name) (record_declaration name: (identifier) @name)] @def.class
    [(interface_declaration name: (identifier) @name)
     (annotation_type_declaration name: (identifier) @name)] @def.interface
    (enum_declaration name: (identifier) @name) @def.type
    [(method_declaration name: (identifier) @name) (constructor_declaration name: (identifier) @name)] @def.method
    (import_declaration) @import
    (method_invocation name: (identifier) @call)
    (object_creation_expression type: [
        (type_identifier) @call
        (generic_type (type_identifier) @call)
        (scoped_type_identifier (type_identifier) @call .)])
    """,
)

GRAMMARS: dict[str, Grammar] = {
    "python": PYTHON,
    "typescript": TYPESCRIPT,
    "tsx": TSX,
    "javascript": JAVASCRIPT,
    "go": GO,
    "rust": RUST,
    "java": JAVA,
}

# A file's grammar is its language's (core/languages.py, the one extension table), except TSX (TypeScript with
# JSX has a grammar of its own) and notebooks (JSON around the code: not parsed).
EXTENSIONS: dict[str, str] = {
    ext: "tsx" if ext == ".tsx" else lang for ext, lang in LANGUAGES.items() if lang in GRAMMARS and ext != ".ipynb"
}
