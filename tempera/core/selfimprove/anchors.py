"""File anchors: every path the log stores is relative to the project root.

Matching by the full relative path (never the basename) keeps `src/a/models.py` and `tests/models.py` apart,
and a checkout moved elsewhere still matches its old rows. Standard library only.
"""

from __future__ import annotations

import ntpath
import os
import posixpath
import re
from collections.abc import Iterable

from tempera.core.languages import LANGUAGES
from tempera.core.project import is_absolute, relative_to, windows_shaped, within


def relative_path(path: str, root: str | None, cwd: str | None = None) -> str:
    """`path` relative to the project root, in POSIX form.

    A relative path is taken relative to `cwd` when that lies inside the root (a shell in a subfolder), else as
    already relative to the root. A path outside the root stays absolute: it cannot collide with a project file.
    A checkout not on this machine is compared by spelling (`project.relative_to`): a Windows one always.
    """
    raw = os.path.expanduser(path.strip())
    if any(windows_shaped(p or "") for p in (raw, root, cwd)):
        return _by_spelling(raw, root, cwd)
    if not os.path.isabs(raw):
        if cwd is None or (root and _inside(os.path.realpath(cwd), os.path.realpath(root)) is None):
            return posixpath.normpath(raw.replace(os.sep, "/")).lstrip("/")
        raw = os.path.join(cwd, raw)
    full = os.path.realpath(raw)
    rel = _inside(full, os.path.realpath(root)) if root else None
    if rel is None and root and not is_absolute(spelled := relative_to(raw, root)):
        rel = spelled
    return rel if rel is not None else full.replace(os.sep, "/")


def _by_spelling(raw: str, root: str | None, cwd: str | None) -> str:
    """`relative_path` where a path is Windows-shaped: by its spelling alone, no such directory being here."""
    if not is_absolute(raw):
        if cwd is None or (root and not within(cwd, root)):
            return posixpath.normpath(raw.replace("\\", "/")).lstrip("/")
        raw = ntpath.join(cwd, raw)
    return relative_to(raw, root)


def _inside(full: str, base: str) -> str | None:
    """`full` relative to `base` in POSIX form, or None when it lies outside."""
    if full == base or full.startswith(base.rstrip(os.sep) + os.sep):
        return os.path.relpath(full, base).replace(os.sep, "/")
    return None


def anchor_files(files: Iterable[str], root: str | None, cwd: str | None = None) -> list[str]:
    """Distinct anchors in first-seen order; blanks dropped."""
    out: dict[str, None] = {}
    for f in files:
        if f and f.strip():
            out.setdefault(relative_path(f, root, cwd), None)
    return list(out)


def language_of(path: str) -> str | None:
    return LANGUAGES.get(posixpath.splitext(path.lower())[1])


def languages_of(files: Iterable[str]) -> list[str]:
    return sorted({lang for f in files if (lang := language_of(f))})


_TOKEN = re.compile(r"[^\s`'\"()\[\]{}<>,;]+")
_MODULE = re.compile(r"[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)+")
_FILE_EXTENSIONS = frozenset(LANGUAGES) | {
    ".md",
    ".toml",
    ".json",
    ".yaml",
    ".yml",
    ".cfg",
    ".ini",
    ".txt",
    ".html",
    ".css",
    ".scss",
    ".lock",
    ".xml",
    ".proto",
    ".graphql",
    ".tf",
    ".env",
}


def _candidates(token: str, project_root: str | None) -> list[str]:
    """Root-relative paths a token may mean: itself when it looks like a path, the files of a dotted module."""
    ext = posixpath.splitext(token)[1].lower()
    if "/" in token or ext in _FILE_EXTENSIONS:
        return [relative_path(token, project_root)]
    if _MODULE.fullmatch(token):
        base = token.replace(".", "/")
        return [f"{base}.py", f"{base}/__init__.py", f"src/{base}.py", f"src/{base}/__init__.py"]
    return []


def files_named_in(prompt: str, project_root: str | None, known: Iterable[str] = (), *, limit: int = 10) -> list[str]:
    """Project files a prompt names (paths, file names, dotted module names), root-relative, first named first.

    A mention counts when the file exists under the project root, or when it is a file the log already knows or
    the trailing part of one (`login.py` -> `src/auth/login.py`). Standard library only and no directory walk,
    so a hook can afford it on every prompt.
    """
    by_name: dict[str, list[str]] = {}  # a known file ending in a candidate has the candidate's last part
    for k in known:
        by_name.setdefault(posixpath.basename(k), []).append(k)
    found: dict[str, None] = {}
    for token in dict.fromkeys(raw.rstrip(".:!?") for raw in _TOKEN.findall(prompt)):  # a plan repeats its names
        for cand in _candidates(token, project_root):
            if project_root and not cand.startswith("/") and os.path.isfile(os.path.join(project_root, cand)):
                found.setdefault(cand, None)
                break
            hits = [k for k in by_name.get(posixpath.basename(cand), ()) if k == cand or k.endswith("/" + cand)]
            if hits:
                found.update(dict.fromkeys(hits))
                break
        if len(found) >= limit:
            break
    return list(found)[:limit]
