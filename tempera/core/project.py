"""Project identity from a path. Standard library only: the hooks compute it on every turn.

The id hashes the full, resolved git root (or the directory itself when there is no repository), so two
checkouts with the same folder name never share memories; the display name is only the folder name.
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path
from typing import NamedTuple


class ProjectRef(NamedTuple):
    id: str
    name: str
    path: str | None


def find_root(path: str | os.PathLike[str]) -> Path:
    """The git root containing path (a `.git` dir or file), else path itself, resolved."""
    p = Path(os.path.realpath(os.path.expanduser(str(path))))
    if p.is_file():
        p = p.parent
    for candidate in (p, *p.parents):
        if (candidate / ".git").exists():
            return candidate
    return p


def project_for_path(path: str | os.PathLike[str]) -> ProjectRef:
    root = find_root(path)
    digest = hashlib.sha256(str(root).encode("utf-8", "surrogatepass")).hexdigest()[:16]
    return ProjectRef(id=digest, name=root.name or str(root), path=str(root))


def project_for_name(name: str) -> ProjectRef:
    """A project known only by name (captures from another machine or a script), never a path."""
    clean = name.strip()
    digest = hashlib.sha256(("name:" + clean.lower()).encode("utf-8")).hexdigest()[:16]
    return ProjectRef(id=digest, name=clean, path=None)
