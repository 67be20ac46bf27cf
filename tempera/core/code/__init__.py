"""Code structure of the major languages (tree-sitter): what a file defines, imports and calls."""

from tempera.core.code.parse import LANGUAGES_PARSED, Definition, FileCode, parse

__all__ = ["LANGUAGES_PARSED", "Definition", "FileCode", "parse"]
