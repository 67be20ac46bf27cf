"""The optional extras (pyproject's `[project.optional-dependencies]`): the modules each one brings, and the one-line
install hint a command gives when the extra it needs is not installed."""

from __future__ import annotations

from importlib.util import find_spec

# the import names (not the distribution names) that each extra installs and the code imports
EXTRAS: dict[str, tuple[str, ...]] = {
    "ui": ("starlette", "uvicorn", "jinja2", "python_multipart"),
    "llm": ("anthropic",),
    "team": ("psycopg", "psycopg_pool", "pgvector"),
}


def missing_extra(extra: str) -> str | None:
    """How to install `extra` when one of its modules cannot be imported, else None. It looks the modules up
    without importing them, so the check costs nothing when the extra is there."""
    absent = [name for name in EXTRAS[extra] if find_spec(name) is None]
    if not absent:
        return None
    return f"the `{extra}` extra is not installed ({', '.join(absent)} missing): pip install 'tempera-memory[{extra}]'"
