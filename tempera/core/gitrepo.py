"""Git access, the one module that reads a repository: its layout from files, the `git` binary, and GitPython.

- Reads of the layout run no process and import only the standard library: the hooks identify the project
  (`core/project.py`) and read the branch (`inject/workcontext.py`) on every prompt, where a git process (or
  GitPython's ~50 ms import) would be paid each turn. They know where a work tree's `.git` is, what a worktree's
  `gitdir:` file and `commondir` say, HEAD and origin/HEAD, and the origin URL in the config.
- The `git` binary runs, with the caller's GIT_* variables scrubbed and a timeout, for a repository's root commit
  (`root_commit`; `core/project.py` asks it once per repository) and for the work tree's files and which of them
  changed (`work_tree_files`, for the symbol index the daemon refreshes in the background).
- GitPython is imported inside the functions that use it: what verification reads of the default branch
  (`RepoView`) and the first-parent history fact ingestion walks (`History`). Their callers read the commits
  (`git.Commit`) these hand out, never open a repository themselves.

No other module of `tempera/` imports GitPython or runs git (tests/core/test_git_home.py checks).
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # not imported at run time: the hook path loads this module and needs none of them
    import subprocess
    from datetime import datetime

    import git

GIT_TIMEOUT = 3.0  # seconds; rev-list walks the whole history, which a very large repository may not finish in
_DIRS: dict[str, tuple[int, int, tuple[str, str] | None]] = {}  # root -> its .git's inode, mtime and git dirs

# -- the layout, read from files (no process) ---------------------------------------------------------------------


def work_tree(path: str | os.PathLike[str]) -> tuple[str, os.stat_result | None]:
    """The git root containing path (a `.git` dir or file), else path itself, resolved, with the stat of its `.git`
    (None without one): strings, not Paths, on the hook path."""
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


def git_dirs(root: str, dotgit: os.stat_result) -> tuple[str, str] | None:
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


def is_common_dir_of(common: str, root: str) -> bool:
    """Whether `common` is the work tree's own `.git` directory (so its stat is at hand), not one it points at."""
    return common == os.path.join(root, ".git")


def is_shallow(common: str) -> bool:
    """A shallow clone: its oldest commit is only where its history was cut."""
    return os.path.exists(os.path.join(common, "shallow"))


def layout_stamp(common: str) -> list[int]:
    """The mtimes of what changes when a repository gets its first commit, an origin or a deeper history:
    branches, config, shallowness (-1 for one that is missing)."""
    out = []
    for name in ("refs/heads", "config", "shallow"):
        try:
            out.append(os.stat(os.path.join(common, name)).st_mtime_ns)
        except OSError:
            out.append(-1)
    return out


DEFAULT_BRANCHES = ("main", "master", "trunk", "develop")  # when origin/HEAD does not say which it is


def current_branch(path: str | os.PathLike[str]) -> str | None:
    """The branch checked out in the work tree containing path (a worktree's own HEAD), read from the HEAD file,
    no git run; None when there is no repository, HEAD is detached, or it is the repository's default branch
    (origin/HEAD's, else one of DEFAULT_BRANCHES): those say nothing about the work at hand."""
    root, dotgit = work_tree(path)
    dirs = None if dotgit is None else git_dirs(root, dotgit)
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


# patterns, not compiled ones: `re` compiles them at first use (~0.3 ms), only for a repository seen the first time
_REMOTE = r'(?i)\s*\[\s*remote\s+"origin"\s*\]\s*(?:[#;].*)?$'
_SECTION = r"\s*\["
_URL = r"(?i)\s*url\s*=\s*(.*?)\s*$"


def origin_url(common: str) -> str | None:
    """The `url` of `[remote "origin"]` in the repository's config (read, not asked of git)."""
    try:
        with open(os.path.join(common, "config"), encoding="utf-8", errors="replace") as fh:
            lines = fh.read().splitlines()
    except OSError:
        return None
    inside = False
    for line in lines:
        if re.match(_SECTION, line):
            inside = bool(re.match(_REMOTE, line))
        elif inside and (m := re.match(_URL, line)):
            return m.group(1).strip('"') or None
    return None


# -- the git binary -----------------------------------------------------------------------------------------------


def _git_env() -> dict[str, str]:
    """The environment git runs in: this process's, less a caller's GIT_DIR, GIT_OBJECT_DIRECTORY ..."""
    return {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}


def _run_git(*args: str) -> subprocess.CompletedProcess[bytes]:
    """One git command, with the caller's GIT_* variables scrubbed, no stdin and the timeout; raises
    subprocess.TimeoutExpired, or OSError when git is missing."""
    import subprocess  # not at the top: only a repository seen for the first time, or the daemon, runs git

    return subprocess.run(
        ["git", *args], env=_git_env(), stdin=subprocess.DEVNULL, capture_output=True, timeout=GIT_TIMEOUT
    )


def root_commit(common: str) -> tuple[str | None, bool]:
    """The smallest root commit of the main checkout's HEAD, and whether to ask again later when there is none
    (no commits yet, git missing or refusing: yes; a timeout: no, the history is only too long)."""
    import subprocess

    try:
        done = _run_git("--git-dir", common, "rev-list", "--max-parents=0", "HEAD")
    except subprocess.TimeoutExpired:
        return None, False
    except OSError:
        return None, True
    roots = done.stdout.decode("ascii", errors="replace").split() if done.returncode == 0 else []
    return (min(roots) if roots else None), True


def _git_lines(root: str, *args: str) -> list[str] | None:
    """The NUL-separated output of one git command in the work tree `root` (`_run_git`); None when git is
    missing, refuses or times out."""
    import subprocess

    try:
        done = _run_git("-C", root, *args)
    except (subprocess.TimeoutExpired, OSError):
        return None
    if done.returncode:
        return None
    return [p for p in done.stdout.decode("utf-8", errors="surrogateescape").split("\0") if p]


def work_tree_files(root: str) -> tuple[list[str], list[str]] | None:
    """The work tree's files as git lists them (tracked, and untracked ones not ignored; a tracked file deleted from
    the tree is still listed, the caller's stat of each drops it) and, of them, those that differ from HEAD
    (`git status`: modified, added, renamed to, untracked), relative to `root`; None when git cannot tell. For the
    symbol index (`core/symbols.py`), built in the background: two processes, never on the hook path."""
    files = _git_lines(root, "ls-files", "-z", "--cached", "--others", "--exclude-standard")
    status = _git_lines(root, "status", "--porcelain=v1", "-z", "--untracked-files=all")
    if files is None or status is None:
        return None
    changed, skip = [], False
    for entry in status:  # "XY path", and after a rename or copy its source path as the next entry
        if skip:
            skip = False
            continue
        code, path = entry[:2], entry[3:]
        skip = "R" in code or "C" in code
        if "D" not in code:
            changed.append(path)
    return list(dict.fromkeys(files)), changed


# -- GitPython: verification ---------------------------------------------------------------------------------------

REVERT = r"This reverts commit ([0-9a-f]{7,40})"  # compiled when first used, not on the hook path
DEFAULT_NAMES = ("main", "master", "trunk")  # verification's guess of the default branch (no `develop`)
MATCH_LEAD_HOURS = 2  # a commit may be authored a little before the turn is captured


class RepoView:
    """What verification needs from a repository: the default branch, whether a commit is reachable from it,
    which commit on it carries an episode's files, and whether a commit was reverted. Opened once per pass."""

    def __init__(self, path: str):
        import git

        self.repo = git.Repo(path)
        self.branches = self._default_branches()
        self._reverts: dict[str, git.Commit] | None = None

    def _default_branches(self) -> list[str]:
        """The local default branch and, when there is one, its remote-tracking twin (origin/HEAD's target)."""
        import git

        out: list[str] = []
        try:
            remote_head = self.repo.git.symbolic_ref("refs/remotes/origin/HEAD").removeprefix("refs/remotes/")
            out.append(remote_head)
        except git.GitCommandError:
            remote_head = ""
        local = remote_head.split("/", 1)[-1] if remote_head else ""
        names = [local] if local in self.repo.heads else [n for n in DEFAULT_NAMES if n in self.repo.heads][:1]
        if not names and self.repo.head.is_valid() and not self.repo.head.is_detached:
            names = [self.repo.head.ref.name]
        return names + out

    @property
    def usable(self) -> bool:
        return bool(self.branches)

    def commit(self, sha: str) -> git.Commit | None:
        import git

        try:
            return self.repo.commit(sha)
        except (ValueError, git.BadName, git.GitCommandError):
            return None

    def reachable(self, commit: git.Commit) -> str | None:
        """The default branch `commit` is reachable from, if any."""
        for branch in self.branches:
            if self.repo.is_ancestor(commit, self.repo.commit(branch)):
                return branch
        return None

    def match_by_files(
        self, files: list[str], at: datetime, window_hours: float
    ) -> tuple[git.Commit, list[str]] | None:
        """The default-branch commit, authored in [at - 2h, at + window], sharing the most of `files` (at least
        half of them), nearest in time on ties."""
        import math
        from datetime import timedelta, timezone

        if not files or not self.branches:
            return None
        wanted, need = set(files), max(1, math.ceil(len(files) / 2))
        start, end = at - timedelta(hours=MATCH_LEAD_HOURS), at + timedelta(hours=window_hours)
        best: tuple[int, float, git.Commit, list[str]] | None = None
        since = start.astimezone(timezone.utc).strftime("%Y-%m-%d %H:%M:%S +0000")
        for commit in self.repo.iter_commits(self.branches[0], since=since):
            if not start <= commit.authored_datetime <= end:
                continue
            shared = sorted(wanted & set(commit.stats.files))
            gap = abs((commit.authored_datetime - at).total_seconds())
            if len(shared) >= need and (best is None or (len(shared), -gap) > (best[0], -best[1])):
                best = (len(shared), gap, commit, shared)
        return (best[2], best[3]) if best else None

    def revert_of(self, commit: git.Commit) -> git.Commit | None:
        """The default-branch commit that reverts `commit` (git revert's "This reverts commit <sha>" line)."""
        if self._reverts is None:
            self._reverts = {}
            for c in self.repo.iter_commits(self.branches[0], grep="This reverts commit", regexp_ignore_case=True):
                for sha in re.findall(REVERT, str(c.message), re.I):
                    self._reverts[sha.lower()] = c
        for sha, reverting in self._reverts.items():
            if commit.hexsha.startswith(sha):
                return reverting
        return None


def open_repo(path: str | None) -> RepoView | None:
    """A view of the git repository at `path`, or None when there is none (or it has no default branch)."""
    if not path or not (Path(path) / ".git").exists():
        return None
    import git

    try:
        view = RepoView(path)
    except (git.InvalidGitRepositoryError, git.NoSuchPathError, git.GitCommandError, ValueError):
        return None
    return view if view.usable else None


# -- GitPython: history for fact ingestion -------------------------------------------------------------------------


def inside_repository(path: str | os.PathLike[str]) -> bool:
    """Whether path lies in a repository GitPython opens (it searches the parent directories, like git)."""
    import git

    try:
        git.Repo(path, search_parent_directories=True)
    except git.exc.InvalidGitRepositoryError:
        return False
    return True


def git_error() -> type[Exception]:
    """GitPython's base error, for a caller that reports git's failures itself; imported only when asked (an
    `except` clause evaluates it only once an exception reaches it)."""
    import git

    return git.exc.GitError


class History:
    """The repository containing path, opened for a walk of its history."""

    def __init__(self, path: str | os.PathLike[str]):
        import git

        self.repo = git.Repo(path, search_parent_directories=True)
        self.root = str(Path(self.repo.working_tree_dir or path).resolve())  # the work tree, resolved

    def first_parent(self, revisions: str) -> list[git.Commit]:
        """The commits of `revisions` (`rev` or `since..rev`) along first parents, oldest first."""
        return list(self.repo.iter_commits(revisions, first_parent=True, reverse=True))


def blobs(commit: git.Commit) -> dict[str, git.Blob]:
    """Every file in a commit's tree by path (a blob: .hexsha, .data_stream), read in one walk of the tree, since
    looking each path up again re-reads every tree on its way."""
    return {str(b.path): b for b in commit.tree.traverse() if b.type == "blob"}  # type: ignore[union-attr,misc]


def changes(parent: git.Commit | None, commit: git.Commit) -> list[tuple[str | None, str | None, str | None]]:
    """(change type A/D/M/R/T..., old path, new path) of each file that differs from parent to commit; every file
    is added ("A") in a commit without a parent."""
    if parent is None:
        return [("A", None, p) for p in blobs(commit)]
    return [(d.change_type, d.a_path, d.b_path) for d in parent.diff(commit)]
