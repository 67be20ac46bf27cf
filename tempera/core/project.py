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
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from pathlib import Path
from typing import Any, NamedTuple, TypeGuard

from tempera.core import paths

GIT_TIMEOUT = 3.0  # seconds; rev-list walks the whole history, which a very large repository may not finish in
_KNOWN: dict[tuple[str, int], dict[str, Any]] = {}  # (common git dir, its inode) -> cache entry, this process
_DIRS: dict[str, tuple[int, int, tuple[str, str] | None]] = {}  # root -> its .git's inode, mtime and git dirs


class ProjectRef(NamedTuple):
    id: str
    name: str
    path: str | None


def relative_to(path: str, root: str | None) -> str:
    """A file as the project knows it: relative to its root when it lies inside."""
    if root and path.startswith(root.rstrip("/") + "/"):
        return path[len(root.rstrip("/")) + 1 :]
    return path


class Identity(NamedTuple):
    """A checkout's project and what its id hashes: `kind` commit | remote | path | directory, and that `key`."""

    ref: ProjectRef
    kind: str
    key: str


def find_root(path: str | os.PathLike[str]) -> Path:
    """The git root containing path (a `.git` dir or file), else path itself, resolved."""
    return Path(_root(path)[0])


def _root(path: str | os.PathLike[str]) -> tuple[str, os.stat_result | None]:
    """`find_root` as a string, with the stat of its `.git` (None without one): strings, not Paths, on this path."""
    p = os.path.realpath(os.path.expanduser(str(path)))
    if os.path.isfile(p):
        p = os.path.dirname(p)
    candidate = p
    while True:
        try:
            return candidate, os.stat(os.path.join(candidate, ".git"))
        except OSError:
            parent = os.path.dirname(candidate)
            if parent == candidate:
                return p, None
            candidate = parent


def main_checkout(path: str | os.PathLike[str]) -> Path:
    """The main work tree of the repository containing path (a worktree's leads to it); else `find_root`."""
    root, dotgit = _root(path)
    dirs = None if dotgit is None else _git_dirs(root, dotgit)
    return Path(dirs[1] if dirs else root)


DEFAULT_BRANCHES = ("main", "master", "trunk", "develop")  # when origin/HEAD does not say which it is


def current_branch(path: str | os.PathLike[str]) -> str | None:
    """The branch checked out in the work tree containing path (a worktree's own HEAD), read from the HEAD file,
    no git run; None when there is no repository, HEAD is detached, or it is the repository's default branch
    (origin/HEAD's, else one of DEFAULT_BRANCHES): those say nothing about the work at hand."""
    root, dotgit = _root(path)
    dirs = None if dotgit is None else _git_dirs(root, dotgit)
    if dirs is None:
        return None
    dotgit_path = os.path.join(root, ".git")
    gitdir = dotgit_path if os.path.isdir(dotgit_path) else _gitdir_of_file(root) or dotgit_path
    branch = _symref(os.path.join(gitdir, "HEAD"), "refs/heads/")
    default = _symref(os.path.join(dirs[0], "refs", "remotes", "origin", "HEAD"), "refs/remotes/origin/")
    if branch is None or branch == default or default is None and branch in DEFAULT_BRANCHES:
        return None
    return branch


def _symref(path: str, prefix: str) -> str | None:
    """The name a symbolic ref file (`ref: refs/heads/x`) points at under prefix; None for anything else."""
    try:
        with open(path, encoding="utf-8", errors="replace") as fh:
            text = fh.read(4096).strip()
    except OSError:
        return None
    target = text.removeprefix("ref:").strip() if text.startswith("ref:") else ""
    if not target.startswith(prefix):
        return None
    return target[len(prefix) :] or None


def project_for_path(path: str | os.PathLike[str]) -> ProjectRef:
    return identify(path).ref


def identify(path: str | os.PathLike[str]) -> Identity:
    """The project of the checkout containing path, and how it is identified (see the module doc)."""
    root, dotgit = _root(path)
    dirs = None if dotgit is None else _git_dirs(root, dotgit)
    if dotgit is None or dirs is None:
        return Identity(directory_project(root), "directory", root)
    common, main = dirs
    kind, key = _repo_key(common, main, dotgit.st_ino if common == os.path.join(root, ".git") else None)
    digest = _digest(key if kind == "path" else f"{kind}:{key}")
    return Identity(ProjectRef(digest, os.path.basename(main).removesuffix(".git") or main, root), kind, key)


def directory_project(root: str) -> ProjectRef:
    """The project of a directory outside any repository (or one not on this machine): its path is the key."""
    return ProjectRef(_digest(root), os.path.basename(root.rstrip("/")) or root, root)


def project_for_name(name: str) -> ProjectRef:
    """A project known only by name (captures from another machine or a script), never a path."""
    clean = name.strip()
    digest = hashlib.sha256(("name:" + clean.lower()).encode("utf-8")).hexdigest()[:16]
    return ProjectRef(id=digest, name=clean, path=None)


def _digest(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:16]


def _git_dirs(root: str, dotgit: os.stat_result) -> tuple[str, str] | None:
    """`_find_git_dirs`, remembered in this process while the `.git` it reads is unchanged."""
    known = _DIRS.get(root)
    if known is None or known[:2] != (dotgit.st_ino, dotgit.st_mtime_ns):
        known = _DIRS[root] = (dotgit.st_ino, dotgit.st_mtime_ns, _find_git_dirs(root))
    return known[2]


def _find_git_dirs(root: str) -> tuple[str, str] | None:
    """(common git dir, main checkout) of a work tree root, resolved; None when its `.git` is neither a directory
    nor a readable `gitdir:` file. A worktree's `.git` file names `<common>/worktrees/<name>`, which holds a
    `commondir` file; a `.git` file without one (a submodule, `--separate-git-dir`) is a repository of its own."""
    dotgit = os.path.join(root, ".git")
    if os.path.isdir(dotgit):
        return os.path.realpath(dotgit), root
    gitdir = _gitdir_of_file(root)
    if gitdir is None:
        return None
    try:
        with open(os.path.join(gitdir, "commondir"), encoding="utf-8", errors="surrogateescape") as fh:
            common = os.path.realpath(os.path.join(gitdir, fh.read(4096).strip()))
    except OSError:
        return gitdir, root
    return common, (os.path.dirname(common) if os.path.basename(common) == ".git" else common)


def _gitdir_of_file(root: str) -> str | None:
    """The git dir a `.git` file names (`gitdir: <path>`), resolved; None when it is no such file."""
    try:
        with open(os.path.join(root, ".git"), encoding="utf-8", errors="surrogateescape") as fh:
            text = fh.read(4096).strip()
    except OSError:
        return None
    if not text.startswith("gitdir:"):
        return None
    return os.path.realpath(os.path.join(root, text[len("gitdir:") :].strip()))


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
    """Work the key out (the only place git runs); `stamp` says when an answer that is no root commit goes stale."""
    root, retry = (None, True) if os.path.exists(os.path.join(common, "shallow")) else _root_commit(common)
    if root:
        return {"kind": "commit", "key": root, "stamp": None}
    remote = origin_url(common)
    kind, key = ("remote", normalise_remote(remote)) if remote else ("path", main)
    return {"kind": kind, "key": key, "stamp": _stamp(common) if retry else None}


def _root_commit(common: str) -> tuple[str | None, bool]:
    """The smallest root commit of the main checkout's HEAD, and whether to ask again later when there is none
    (no commits yet, git missing or refusing: yes; a timeout: no, the history is only too long)."""
    import subprocess  # not at the top: only a repository seen for the first time needs it

    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}  # a caller's GIT_DIR, GIT_OBJECT_...
    try:
        done = subprocess.run(
            ["git", "--git-dir", common, "rev-list", "--max-parents=0", "HEAD"],
            env=env,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=GIT_TIMEOUT,
        )
    except subprocess.TimeoutExpired:
        return None, False
    except OSError:
        return None, True
    roots = done.stdout.split() if done.returncode == 0 else []
    return (min(roots) if roots else None), True


def _stamp(common: str) -> list[int]:
    """What changes when an answer that is no root commit may change: branches, config, shallowness."""
    out = []
    for name in ("refs/heads", "config", "shallow"):
        try:
            out.append(os.stat(os.path.join(common, name)).st_mtime_ns)
        except OSError:
            out.append(-1)
    return out


def _fresh(entry: dict[str, Any], common: str) -> bool:
    return entry.get("stamp") is None or entry["stamp"] == _stamp(common)


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


_REMOTE = re.compile(r'\s*\[\s*remote\s+"origin"\s*\]\s*(?:[#;].*)?$', re.I)
_SECTION = re.compile(r"\s*\[")
_URL = re.compile(r"\s*url\s*=\s*(.*?)\s*$", re.I)


def origin_url(common: str) -> str | None:
    """The `url` of `[remote "origin"]` in the repository's config (read, not asked of git)."""
    try:
        with open(os.path.join(common, "config"), encoding="utf-8", errors="replace") as fh:
            lines = fh.read().splitlines()
    except OSError:
        return None
    inside = False
    for line in lines:
        if _SECTION.match(line):
            inside = bool(_REMOTE.match(line))
        elif inside and (m := _URL.match(line)):
            return m.group(1).strip('"') or None
    return None


_URL_SCHEME = re.compile(r"(?P<scheme>[a-z][a-z0-9+.-]*)://(?:[^@/]*@)?(?P<host>[^/]*?)(?::\d*)?(?P<path>/.*)?", re.I)
_SCP_LIKE = re.compile(r"(?:[^@/]+@)?(?P<host>[^/:]+):(?P<path>.*)")


def normalise_remote(url: str) -> str:
    """`host/owner/repo`, lower case, of a remote URL, so `git@host:o/r.git`, `ssh://git@host:22/o/r.git` and
    `https://user:token@host/o/r/` agree (and no credential is kept); a local path stays a path."""
    url = url.strip()
    m = _URL_SCHEME.fullmatch(url)
    if m and m["scheme"].lower() != "file":
        host, rest = m["host"], m["path"] or ""
    elif not m and "/" not in url.split(":", 1)[0] and (m := _SCP_LIKE.fullmatch(url)):
        host, rest = m["host"], m["path"]
    else:
        host, rest = "", os.path.normpath(url[len("file://") :] if m else url)
    rest = rest.strip("/").removesuffix(".git").rstrip("/")
    return f"{host}/{rest}".lower()
