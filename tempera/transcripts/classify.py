"""Task type and domain tags of a turn by keyword heuristics (no LLM): good enough to filter and group memories,
and cheap enough to run on every captured turn."""

from __future__ import annotations

import re
from collections import Counter
from pathlib import PurePosixPath

from tempera.core.languages import LANGUAGES

# Keyword stems per task type; the prompt's words are matched as prefixes ("fix" matches "fixed", "fixing").
TASK_WORDS: dict[str, tuple[str, ...]] = {
    "bugfix": (
        "fix",
        "bug",
        "broken",
        "crash",
        "regression",
        "wrong",
        "incorrect",
        "fails",
        "failing",
        "failure",
        "doesn't work",
        "does not work",
        "not working",
        "doesnt",
        "issue",
        "error",
        "exception",
    ),
    "debug": (
        "debug",
        "diagnos",
        "investigat",
        "why does",
        "why is",
        "figure out why",
        "trace",
        "root cause",
        "doesn't seem",
        "doesnt seem",
        "logs",
    ),
    "test": ("test", "tests", "coverage", "unit test", "spec", "e2e", "flaky"),
    "docs": ("document", "docs", "readme", "docstring", "comment", "changelog", "claude.md", "tutorial"),
    "refactor": (
        "refactor",
        "clean up",
        "cleanup",
        "rename",
        "restructur",
        "simplif",
        "reorganiz",
        "extract",
        "dedup",
        "split",
        "tidy",
    ),
    "setup": (
        "install",
        "setup",
        "set up",
        "configur",
        "config",
        "deploy",
        "docker",
        "dependenc",
        "upgrade",
        "ci ",
        "pipeline",
        "environment",
        "start ",
        "migrat",
        "init",
    ),
    "feature": ("add", "implement", "create", "build", "support", "introduce", "new ", "allow", "enable", "make "),
    "research": (
        "explain",
        "how does",
        "how do",
        "what is",
        "what are",
        "what's",
        "why",
        "compare",
        "look up",
        "search",
        "research",
        "find out",
        "understand",
        "help me understand",
        "websearch",
        "?",
    ),
}
# When scores tie, the more specific intent wins.
PRIORITY = ("bugfix", "debug", "test", "docs", "refactor", "setup", "feature", "research")

COMMAND_LANGUAGES = {
    "pytest": "python",
    "pip": "python",
    "uv": "python",
    "python": "python",
    "npm": "javascript",
    "pnpm": "javascript",
    "yarn": "javascript",
    "node": "javascript",
    "cargo": "rust",
    "go": "go",
    "mix": "elixir",
    "bundle": "ruby",
    "gradle": "java",
    "mvn": "java",
    "dotnet": "csharp",
}
DOMAIN_WORDS: dict[str, tuple[str, ...]] = {
    "auth": ("auth", "login", "logout", "oauth", "session", "password", "jwt", "sign-in", "signin", "permission"),
    "database": (
        "database",
        "sql",
        "postgres",
        "mysql",
        "sqlite",
        "migration",
        "schema",
        "query",
        "orm",
        "redis",
        "mongo",
    ),
    "api": ("api", "endpoint", "rest", "graphql", "http", "request", "route", "webhook"),
    "frontend": ("ui", "css", "component", "react", "frontend", "layout", "page", "button", "render", "xterm"),
    "testing": ("test", "pytest", "jest", "coverage", "fixture", "mock"),
    "ci": ("ci", "github actions", "workflow", "pipeline"),
    "docker": ("docker", "container", "compose", "kubernetes", "k8s", "helm"),
    "git": ("git", "commit", "branch", "merge", "rebase"),
    "performance": ("performance", "slow", "latency", "memory leak", "optimiz", "speed", "cache"),
    "security": ("security", "vulnerab", "secret", "xss", "csrf", "injection", "cve"),
    "build": ("build", "compile", "bundle", "webpack", "vite", "makefile"),
    "dependencies": ("dependenc", "package", "version", "upgrade", "requirements", "lockfile"),
    "docs": ("readme", "docs", "documentation", "claude.md"),
}
MAX_DOMAINS = 6
_DOC_EXT = {".md", ".rst", ".txt", ".adoc"}


def _stem_patterns(stems: tuple[str, ...]) -> list[re.Pattern[str]]:
    """Word stems match at a word start ("fix" in "fixed"); phrases and punctuation match anywhere."""
    return [re.compile(rf"\b{re.escape(s)}" if s.isalnum() else re.escape(s)) for s in stems]


_TASK_PATTERNS = {t: _stem_patterns(stems) for t, stems in TASK_WORDS.items()}
# A tag needs one of its stems, not a count of them: one search per tag (a tenth of drafting's time before)
_DOMAIN_PATTERNS = {t: re.compile("|".join(p.pattern for p in _stem_patterns(s))) for t, s in DOMAIN_WORDS.items()}


def _hits(text: str, patterns: list[re.Pattern[str]]) -> int:
    return sum(1 for p in patterns if p.search(text))


def _is_test_file(path: str) -> bool:
    name = PurePosixPath(path).name.lower()
    return name.startswith("test_") or "_test." in name or ".test." in name or ".spec." in name or "/tests/" in path


def task_type(prompt: str, files_modified: list[str], answered: bool) -> str:
    """The best-scoring task type of the prompt, corrected by what the agent actually changed."""
    text = f" {prompt.lower()} "
    scores = Counter({t: _hits(text, patterns) for t, patterns in _TASK_PATTERNS.items()})
    best = max(PRIORITY, key=lambda t: (scores[t], -PRIORITY.index(t)))
    if files_modified:
        if all(PurePosixPath(f).suffix.lower() in _DOC_EXT for f in files_modified):
            return "docs"
        if all(_is_test_file(f) for f in files_modified) and best not in ("bugfix", "refactor"):
            return "test"
        if best == "research":
            return "feature" if scores["feature"] else "bugfix" if scores["bugfix"] else "other"
    if scores[best] == 0:
        return "research" if answered and not files_modified else "other"
    return best


def domains(prompt: str, files: list[str], commands: list[str]) -> list[str]:
    """Language tags from file extensions and commands, then topic tags from the prompt and paths."""
    found: dict[str, None] = {}
    for f in files:
        lang = LANGUAGES.get(PurePosixPath(f).suffix.lower())
        if lang:
            found.setdefault(lang, None)
    for cmd in commands:
        head = PurePosixPath(cmd.strip().split(" ", 1)[0]).name if cmd.strip() else ""
        lang = COMMAND_LANGUAGES.get(re.sub(r"\d.*$", "", head))
        if lang:
            found.setdefault(lang, None)
    text = f" {prompt.lower()} {' '.join(files).lower()} "
    for tag, pattern in _DOMAIN_PATTERNS.items():
        if pattern.search(text):
            found.setdefault(tag, None)
    return list(found)[:MAX_DOMAINS]
