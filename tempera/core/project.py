"""Project identity from a path. Standard library only: the hooks compute it on every turn.

One repository is one project wherever it is checked out: the main checkout, its `git worktree`s, a second clone
and a teammate's clone at another path share an id, while an unrelated repository with the same folder name does
not. The id hashes the first of these that is known (`Identity.kind`):
- `commit`: the repository's root commit (the smallest if its history has several), which every copy of the
  history shares; taken from the main checkout's HEAD, so all worktrees agree. Not for a shallow clone, whose
  oldest commit is only where its history was cut.
- `remote`: the `origin` URL, normalised so that its ssh, scp-like and https spellings agree.
- `path`: the main checkout's path (a repository without commits, or where git is missing or fails).
- `directory`: no repository at all: the directory itself.
`path` and `directory` hash the path exactly as ids were made before repositories were recognised, so a
repository that never had a commit keeps its id. The display name is the main checkout's folder name, while
`ProjectRef.path` is this checkout's work tree root, which files are made relative to.

Cost: finding the repository is a few stat calls. git runs at most once per repository: its answer is kept in
this process and in `repo-ids.json` in the data dir, keyed by the common git dir's real path and inode (a
repository deleted and made again at the same path is asked again). An answer that is not a root commit is
asked again only when the repository's branches or config change (its first commit, an origin added, a shallow
clone deepened); a git that timed out is not asked again.

Files are made relative to a checkout (`relative_to`, `within`) by their spelling as well, since a transcript may
come from another platform: a Windows path (`C:\\...`, `\\\\server\\share`) is absolute on Linux too and compared
without case, and macOS's spellings of one folder (`/private/tmp` and `/tmp`, case under `/Users`) agree.
"""

from __future__ import annotations

import hashlib
import json
import ntpath
import os
import posixpath
import re
from pathlib import Path
from typing import Any, NamedTuple, TypeGuard

from tempera.core import gitrepo, paths

_KNOWN: dict[tuple[str, int], dict[str, Any]] = {}  # (common git dir, its inode) -> cache entry, this process


class ProjectRef(NamedTuple):
    id: str
    name: str
    path: str | None


def relative_to(path: str, root: str | None) -> str:
    """A file as the project knows it: relative to its root with `/` when it lies inside, else the path itself (a
    Windows one with `/`). Either may be another platform's (`windows_shaped`): a transcript from Windows is read
    on Linux too, and macOS spells one directory several ways (`spellings`)."""
    rel = _inside(path, root) if root else None
    if rel is not None:
        return rel
    return "/".join(spellings(path)[0]) if windows_shaped(path) else path


def within(path: str, root: str) -> bool:
    """Whether `path` is `root` or lies inside it, compared as `relative_to` does."""
    return spellings(path)[1] == spellings(root)[1] or _inside(path, root) is not None


def _inside(path: str, root: str) -> str | None:
    parts, key = spellings(path)
    _, root_key = spellings(root)
    if len(root_key) > 1 and not root_key[-1]:  # the root is `/` or a drive's root
        root_key = root_key[:-1]
    if len(key) > len(root_key) and key[: len(root_key)] == root_key:
        return "/".join(parts[len(root_key) :])
    return None


def windows_shaped(path: str) -> bool:
    """A Windows path (a drive letter or a UNC share), recognised on any platform."""
    return path[1:3] in (":\\", ":/") and path[0].isalpha() or path.startswith("\\\\")


def is_absolute(path: str) -> bool:
    """Absolute on this platform or on Windows (a file outside the project, as a transcript recorded it)."""
    return os.path.isabs(path) or windows_shaped(path)


def folder_name(path: str) -> str:
    """The last folder of a path of either platform (the path itself for a root)."""
    return next((p for p in reversed(spellings(path)[0]) if p), path)


def spellings(path: str) -> tuple[list[str], list[str]]:
    """The path's parts as written and as compared. Windows compares without case (NTFS's default). On macOS
    `/tmp`, `/var` and `/etc` are links into `/private` (the cwd is recorded resolved, an agent's paths often
    not), and the default file system ignores case, so folders under `/Users` and `/Volumes` compare without it:
    two checkouts there whose paths differ only in case cannot both exist on such a disk, and on a case-sensitive
    one the worst is a file of the one attributed to the other, never an absolute path stored."""
    if windows_shaped(path):
        parts = ntpath.normpath(path).replace("\\", "/").split("/")
        return parts, [p.casefold() for p in parts]
    path = posixpath.normpath(path) if path else path
    if path.startswith("/private/") and (path[len("/private") :] + "/").startswith(_LINKED):
        path = path[len("/private") :]
    parts = path.split("/")
    return parts, [p.casefold() for p in parts] if caseless(path) else parts


def caseless(path: str) -> bool:
    """Whether the file system a path names ignores case by default (Windows; macOS's `/Users` and `/Volumes`)."""
    return windows_shaped(path) or path.casefold().startswith(_CASELESS)


def in_project_terms(text: str, root: str) -> str:
    """`text` with the absolute paths it quotes made relative to `root` when they lie inside (in any spelling
    `relative_to` accepts), and Windows paths outside it written with `/` (so no `\\t` in them reads as a tab)."""
    return re.sub(_QUOTED_PATH, lambda m: relative_to(m[0], root), text)


# a path in prose starts a word: a drive letter or a separator, to the next space, quote or bracket
_QUOTED_PATH = r"(?<![\w.\\/])(?:[A-Za-z]:)?[\\/][^\s`'\"<>|()\[\]{},;]*"
_LINKED = ("/tmp/", "/var/", "/etc/")
_CASELESS = ("/users/", "/volumes/")


class Identity(NamedTuple):
    """A checkout's project and what its id hashes: `kind` commit | remote | path | directory, and that `key`."""

    ref: ProjectRef
    kind: str
    key: str


def find_root(path: str | os.PathLike[str]) -> Path:
    """The git root containing path (a `.git` dir or file), else path itself, resolved."""
    return Path(gitrepo.work_tree(path)[0])


def main_checkout(path: str | os.PathLike[str]) -> Path:
    """The main work tree of the repository containing path (a worktree's leads to it); else `find_root`."""
    root, dotgit = gitrepo.work_tree(path)
    dirs = None if dotgit is None else gitrepo.git_dirs(root, dotgit)
    return Path(dirs[1] if dirs else root)


def project_for_path(path: str | os.PathLike[str]) -> ProjectRef:
    return identify(path).ref


def identify(path: str | os.PathLike[str]) -> Identity:
    """The project of the checkout containing path, and how it is identified (see the module doc)."""
    root, dotgit = gitrepo.work_tree(path)
    dirs = None if dotgit is None else gitrepo.git_dirs(root, dotgit)
    if dotgit is None or dirs is None:
        return Identity(directory_project(root), "directory", root)
    common, main = dirs
    kind, key = _repo_key(common, main, dotgit.st_ino if gitrepo.is_common_dir_of(common, root) else None)
    digest = _digest(key if kind == "path" else f"{kind}:{key}")
    return Identity(ProjectRef(digest, os.path.basename(main).removesuffix(".git") or main, root), kind, key)


def directory_project(root: str) -> ProjectRef:
    """The project of a directory outside any repository (or one not on this machine): its path is the key."""
    return ProjectRef(_digest(root), folder_name(root), root)


def project_for_name(name: str) -> ProjectRef:
    """A project known only by name (captures from another machine or a script), never a path."""
    clean = name.strip()
    digest = hashlib.sha256(("name:" + clean.lower()).encode("utf-8")).hexdigest()[:16]
    return ProjectRef(id=digest, name=clean, path=None)


def _digest(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:16]


def _repo_key(common: str, main: str, inode: int | None) -> tuple[str, str]:
    """The cached (kind, key) of a repository; `inode` is its common dir's when the caller has it at hand."""
    if inode is None:
        try:
            inode = os.stat(common).st_ino
        except OSError:
            return "path", main
    slot = (common, inode)
    entry = _KNOWN.get(slot)
    if entry is None or not _fresh(entry, common):
        cached = _read_cache().get(common)
        if _valid(cached, inode) and _fresh(cached, common):
            entry = cached
        else:
            entry = _ask(common, main)
            _write_cache(common, {**entry, "inode": inode})
        _KNOWN[slot] = entry
    return entry["kind"], entry["key"]


def _ask(common: str, main: str) -> dict[str, Any]:
    """Work the key out (the only place git runs, through `gitrepo.root_commit`); `stamp` says when an answer
    that is no root commit goes stale."""
    root, retry = (None, True) if gitrepo.is_shallow(common) else gitrepo.root_commit(common)
    if root:
        return {"kind": "commit", "key": root, "stamp": None}
    remote = gitrepo.origin_url(common)
    kind, key = ("remote", normalise_remote(remote)) if remote else ("path", main)
    return {"kind": kind, "key": key, "stamp": gitrepo.layout_stamp(common) if retry else None}


def _fresh(entry: dict[str, Any], common: str) -> bool:
    return entry.get("stamp") is None or entry["stamp"] == gitrepo.layout_stamp(common)


def _valid(entry: Any, inode: int) -> TypeGuard[dict[str, Any]]:
    """Whether a cache file entry is one `_ask` wrote, for this very directory (the file may be hand-edited)."""
    return (
        isinstance(entry, dict)
        and entry.get("inode") == inode
        and isinstance(entry.get("key"), str)
        and entry.get("kind") in ("commit", "remote", "path")
        and (entry.get("stamp") is None or isinstance(entry["stamp"], list))
    )


def _read_cache() -> dict[str, Any]:
    try:
        with open(paths.data_dir() / paths.REPO_IDS_NAME, encoding="utf-8") as fh:
            doc = json.load(fh)
    except (OSError, ValueError):
        return {}
    return doc if isinstance(doc, dict) else {}


def _write_cache(common: str, entry: dict[str, Any]) -> None:
    """Add one repository's answer; nothing is written before the data dir exists (`tempera init`, first hook)."""
    from tempera.core.atomic import write_atomic

    directory = paths.data_dir()
    if not directory.is_dir():
        return
    doc = _read_cache()
    doc[common] = entry
    try:
        write_atomic(directory / paths.REPO_IDS_NAME, json.dumps(doc, indent=1, sort_keys=True).encode("utf-8"), 0o600)
    except OSError:  # a read-only data dir: this process still remembers the answer
        pass


# patterns, not compiled ones: `re` compiles them at first use (~0.6 ms), only for a repository seen the first time
_URL_SCHEME = r"(?i)(?P<scheme>[a-z][a-z0-9+.-]*)://(?:[^@/]*@)?(?P<host>[^/]*?)(?::\d*)?(?P<path>/.*)?"
_SCP_LIKE = r"(?:[^@/]+@)?(?P<host>[^/:]+):(?P<path>.*)"


def normalise_remote(url: str) -> str:
    """`host/owner/repo`, lower case, of a remote URL, so `git@host:o/r.git`, `ssh://git@host:22/o/r.git` and
    `https://user:token@host/o/r/` agree (and no credential is kept); a local path stays a path."""
    url = url.strip()
    m = re.fullmatch(_URL_SCHEME, url)
    if m and m["scheme"].lower() != "file":
        host, rest = m["host"], m["path"] or ""
    elif not m and "/" not in url.split(":", 1)[0] and (m := re.fullmatch(_SCP_LIKE, url)):
        host, rest = m["host"], m["path"]
    else:
        host, rest = "", os.path.normpath(url[len("file://") :] if m else url)
    rest = rest.strip("/").removesuffix(".git").rstrip("/")
    return f"{host}/{rest}".lower()
