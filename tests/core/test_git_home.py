"""Git has one home, `tempera/core/gitrepo.py`: no other module imports GitPython or runs the git binary, and
GitPython loads only when a repository is opened (the hook path reads git's files and never pays for it)."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

from tests.conftest import REPO

HOME = Path("tempera/core/gitrepo.py")


# what starts a process: subprocess's, os's and asyncio's functions
STARTERS = {"run", "Popen", "call", "check_call", "check_output", "getoutput", "getstatusoutput", "system", "popen"}
STARTER_PREFIXES = ("exec", "spawn", "create_subprocess_")


def git_uses(tree: ast.AST) -> list[tuple[int, str]]:
    """(line, what) of each GitPython import, and of each call that starts a process with git in its command
    line (the string "git", a path ending in /git, or a shell line "git ...")."""
    found: list[tuple[int, str]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [(node.lineno, f"import {a.name}") for a in node.names if a.name.split(".")[0] == "git"]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and (node.module or "").split(".")[0] == "git":
            found.append((node.lineno, f"import from {node.module}"))
        elif isinstance(node, ast.Call) and _starts_process(node.func) and node.args and _names_git(node.args[0]):
            found.append((node.lineno, "runs git"))
    return found


def _starts_process(func: ast.expr) -> bool:
    name = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""
    return name in STARTERS or name.startswith(STARTER_PREFIXES)


def _names_git(command: ast.expr) -> bool:
    words = [
        n.value.split(" ", 1)[0] for n in ast.walk(command) if isinstance(n, ast.Constant) and isinstance(n.value, str)
    ]
    return any(w == "git" or w.endswith("/git") for w in words)


def uses_in_package() -> dict[Path, list[tuple[int, str]]]:
    out = {}
    for path in sorted((REPO / "tempera").rglob("*.py")):
        uses = git_uses(ast.parse(path.read_text(encoding="utf-8"), str(path)))
        if uses:
            out[path.relative_to(REPO)] = uses
    return out


def test_only_gitrepo_imports_gitpython_or_runs_git() -> None:
    uses = uses_in_package()
    elsewhere = {str(path): found for path, found in uses.items() if path != HOME}
    assert elsewhere == {}, "git is reached outside core/gitrepo.py; ask it there instead"
    kinds = {what.split(" ")[0] for _, what in uses[HOME]}
    assert kinds == {"import", "runs"}  # the scan sees both kinds of use where they are allowed


def test_the_scan_finds_each_way_of_reaching_git() -> None:
    source = (
        "import git\nimport git.exc as e\nfrom git import Repo\nimport subprocess\n"
        "subprocess.run(['git', 'log'])\nPopen(('/usr/bin/git', 'status'))\n"
        "os.system('git status --short')\nsubprocess.run([*cmd, 'git'], text=True)\n"
        "print('git is a word', ['gitpython'])\nWORDS = {'git': ('git', 'commit')}\n"
        "subprocess.run([sys.executable, '-m', 'tempera.facts.ingest_git'])\n"
    )
    assert [line for line, _ in git_uses(ast.parse(source))] == [1, 2, 3, 5, 6, 7, 8]


def test_gitpython_is_loaded_only_when_a_repository_is_opened() -> None:
    """The modules that reach git import without GitPython; the hook path's identification also without
    subprocess (git runs only for a repository seen the first time)."""
    code = (
        "import sys\n"
        "import tempera.core.project, tempera.inject.workcontext\n"
        "print('subprocess' in sys.modules, 'git' in sys.modules)\n"
        "import tempera.core.learning.verification, tempera.facts.ingest_git, tempera.dream\n"
        "print('git' in sys.modules)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, cwd=REPO)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["False", "False", "False"]
