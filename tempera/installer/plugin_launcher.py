"""The Claude Code plugin's hooks and MCP server, started by the `python3` on PATH with nothing installed.

The hooks and the MCP server in plugin.json run `python3 -I -S <this file> <plugin root> <plugin data> <verb>` (exec
form, so no shell and no quoting of the paths). Standard library only, and run as a script, never imported: the
package is not importable here. The first call finds no environment and starts one in the background (a venv in
${CLAUDE_PLUGIN_DATA} with the package installed from the plugin's own source and the `offline` and `llm` extras:
a plugin's user has no pip at hand to add the SDK when turning the LLM steps on) and the hook answers at once with
nothing; once the file `ready` names the venv, every hook becomes the venv's Python running the same relay
(`-I -S .../tempera/hooks/relay.py <verb>`) that `tempera install` registers, and the MCP server the venv's
`tempera-mcp`. A new plugin version (another root or version) builds a new venv in the background while the old
one keeps serving, so an update never leaves a session without memory. Both run with the plugin root in
TEMPERA_PLUGIN_ROOT, which the daemon they start inherits: once the root or the venv is removed (the plugin was
uninstalled), that daemon exits.
"""

from __future__ import annotations

import os
import sys

# Only os and sys on the path every hook takes once the venv is ready (json, shutil, subprocess and hashlib cost
# tens of milliseconds to import on a busy machine); the rest is imported where the setup needs it.
MIN_PYTHON = (3, 11)
READY = "ready"  # `key=value` lines (source, python, relay, mcp) naming the venv in use; no json on the hot path
READY_KEYS = ("source", "python", "relay", "mcp")
VERSION_KEY = '"version": "'  # as pluginfiles writes plugin.json
LOCK = "setup.lock"  # held by the one setup that runs
LOG = "setup.log"
FAILED = "setup.failed"  # when the last setup failed: retried after RETRY_AFTER_S, not on every hook
RETRY_AFTER_S = 600
HOOK_VERBS = ("session-start", "user-prompt-submit", "stop", "pre-compact", "session-end")
WINDOWS = sys.platform == "win32"
# Interpreters to build the venv with when the `python3` that runs this file is too old (macOS's own is 3.9): the
# newest first, Windows' launcher `py` (it picks the newest installed), then the usual install places on macOS.
CANDIDATES = (
    ((["py", "-3"], ["python"]) if WINDOWS else ())
    + tuple([f"python3.{minor}"] for minor in range(20, MIN_PYTHON[1] - 1, -1))
    + (
        ["/opt/homebrew/bin/python3"],
        ["/usr/local/bin/python3"],
        ["python3"],
    )
)
PLUGIN_ROOT_ENV = "TEMPERA_PLUGIN_ROOT"  # daemon/server.py: its daemon exits once this root is removed
SKIPPED_SOURCES = (".git", ".venv*", "build", "dist", "*.egg-info", "__pycache__", "tests", "evals", "docs")


def source_id(root: str) -> str:
    """What the venv was built from: the plugin root and its manifest's version (an update changes either)."""
    try:
        with open(os.path.join(root, ".claude-plugin", "plugin.json"), encoding="utf-8") as fh:
            text = fh.read(1 << 16)
    except OSError:
        text = ""
    start = text.find(VERSION_KEY) + len(VERSION_KEY)
    version = text[start : text.find('"', start)] if start >= len(VERSION_KEY) else "?"
    return f"{os.path.realpath(root)}@{version}"


def read_ready(data: str) -> dict[str, str] | None:
    try:
        with open(os.path.join(data, READY), encoding="utf-8") as fh:
            doc = dict(line.rstrip("\n").partition("=")[::2] for line in fh)
    except (OSError, ValueError):
        return None
    if not all(doc.get(k) for k in READY_KEYS):
        return None
    return doc if os.path.isfile(doc["python"]) and os.path.isfile(doc["relay"]) else None


def log(data: str, message: str) -> None:
    import time

    os.makedirs(data, mode=0o700, exist_ok=True)
    with open(os.path.join(data, LOG), "a", encoding="utf-8") as fh:
        fh.write(f"{time.strftime('%Y-%m-%dT%H:%M:%S')} {message.rstrip()}\n")


def try_lock(fd: int) -> bool:
    """core/processes.py `try_lock`, which this file cannot import: flock, or on Windows one byte far past the end."""
    if WINDOWS:
        import msvcrt

        os.lseek(fd, 0x7FFFFFF0, os.SEEK_SET)
        try:
            msvcrt.locking(fd, msvcrt.LK_NBLCK, 1)
            return True
        except OSError:
            return False
    import fcntl

    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        return True
    except OSError:
        return False


def venv_program(venv: str, name: str) -> str:
    """A program of the venv: bin/<name>, or Scripts\\<name>.exe on Windows."""
    return os.path.join(venv, "Scripts", name + ".exe") if WINDOWS else os.path.join(venv, "bin", name)


def find_python() -> "list[str] | None":
    """The command of an interpreter new enough for the venv: this one, else the first of CANDIDATES that is."""
    if sys.version_info >= MIN_PYTHON:
        return [sys.executable]
    import subprocess

    check = f"import sys; sys.exit(sys.version_info < {MIN_PYTHON!r})"
    for command in CANDIDATES:
        try:
            if subprocess.run([*command, "-c", check], capture_output=True, timeout=20).returncode == 0:
                return list(command)
        except (OSError, subprocess.TimeoutExpired):
            continue
    return None


def run_program(path: str, args: "list[str]", env: "dict[str, str]") -> None:
    """Become `path` (stdin and stdout are Claude Code's). Windows has no exec that keeps the process: there the
    program runs as a child with the same standard streams and this process exits with its code."""
    if not WINDOWS:
        os.execve(path, [path, *args], env)
    import subprocess

    sys.exit(subprocess.run([path, *args], env=env).returncode)


def setup_due(data: str) -> bool:
    """No setup running now, and none failed in the last RETRY_AFTER_S."""
    import time

    try:
        if time.time() - os.stat(os.path.join(data, FAILED)).st_mtime < RETRY_AFTER_S:
            return False
    except OSError:
        pass
    try:
        fd = os.open(os.path.join(data, LOCK), os.O_RDONLY)
    except OSError:
        return True
    try:
        return try_lock(fd)
    finally:
        os.close(fd)


def start_setup(root: str, data: str) -> None:
    """Run `setup` detached, so that the hook returns now and Claude Code never waits for pip."""
    import subprocess

    os.makedirs(data, mode=0o700, exist_ok=True)
    if not setup_due(data):
        return
    # detached as core/processes.py `start_detached` does (a new session; on Windows no console, own group)
    detach = {"creationflags": 0x00000008 | 0x00000200} if WINDOWS else {"start_new_session": True}
    with open(os.path.join(data, LOG), "ab") as out:
        subprocess.Popen(
            [sys.executable, "-I", "-S", os.path.abspath(__file__), root, data, "setup"],
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=out,
            close_fds=True,
            **detach,
        )


def setup(root: str, data: str) -> None:
    """Build a venv for this plugin source, install the package into it, then point `ready` at it."""
    import hashlib
    import shutil
    import subprocess
    import time

    os.makedirs(data, mode=0o700, exist_ok=True)
    lock = os.open(os.path.join(data, LOCK), os.O_RDONLY | os.O_CREAT, 0o600)
    if not try_lock(lock):
        return  # another setup is running
    source = source_id(root)
    current = read_ready(data)
    if current is not None and current["source"] == source:
        return
    base = find_python()
    if base is None:
        need = ".".join(map(str, MIN_PYTHON))
        log(data, f"setup failed: python3 is {sys.version.split()[0]}; Tempera needs {need} or newer and found none")
        with open(os.path.join(data, FAILED), "w", encoding="utf-8") as fh:
            fh.write(f"no Python {need}+\n")
        return
    venv = os.path.join(data, "venv-" + hashlib.sha256(source.encode()).hexdigest()[:12])
    staged = os.path.join(data, "source")
    started = time.monotonic()
    log(data, f"setting up {source} in {venv}")
    try:
        shutil.rmtree(venv, ignore_errors=True)
        shutil.rmtree(staged, ignore_errors=True)
        # pip builds in its source tree: not in the plugin's
        shutil.copytree(root, staged, ignore=shutil.ignore_patterns(*SKIPPED_SOURCES))
        subprocess.run([*base, "-m", "venv", venv], check=True, stdin=subprocess.DEVNULL)
        python = venv_program(venv, "python")
        subprocess.run(
            [python, "-m", "pip", "install", "--quiet", "--disable-pip-version-check", f"{staged}[offline,llm]"],
            check=True,
            stdin=subprocess.DEVNULL,
        )
        hooks_dir = subprocess.run(
            [python, "-c", "import os, tempera.hooks as h; print(os.path.dirname(h.__file__))"],
            check=True,
            capture_output=True,
            text=True,
        ).stdout.strip()
    except (OSError, subprocess.CalledProcessError) as exc:
        log(data, f"setup failed: {exc}")
        with open(os.path.join(data, FAILED), "w", encoding="utf-8") as fh:
            fh.write(f"{exc}\n")
        return
    finally:
        shutil.rmtree(staged, ignore_errors=True)
    ready = {
        "source": source,
        "python": python,
        "relay": os.path.join(hooks_dir, "relay.py"),
        "mcp": venv_program(venv, "tempera-mcp"),
    }
    tmp = os.path.join(data, READY + ".tmp")
    with open(tmp, "w", encoding="utf-8") as fh:
        fh.write("".join(f"{k}={ready[k]}\n" for k in READY_KEYS))
    os.replace(tmp, os.path.join(data, READY))
    if os.path.exists(os.path.join(data, FAILED)):
        os.unlink(os.path.join(data, FAILED))
    if current is not None:  # the venv before the one before stays until the next update: a daemon may run from it
        for name in os.listdir(data):
            old = os.path.join(data, name)
            if name.startswith("venv-") and old not in (venv, os.path.dirname(os.path.dirname(current["python"]))):
                shutil.rmtree(old, ignore_errors=True)
    log(data, f"ready in {time.monotonic() - started:.0f}s: {ready['relay']}")


def _env(root: str) -> dict[str, str]:
    """The environment the venv's processes run in: the plugin root named, for the daemon they start."""
    return {**os.environ, PLUGIN_ROOT_ENV: os.path.realpath(root)}


def hook(root: str, data: str, verb: str) -> None:
    """The relay of the venv in use (stdin untouched, so it reads Claude Code's payload), or nothing yet."""
    ready = read_ready(data)
    if ready is None or ready["source"] != source_id(root):
        start_setup(root, data)
    if ready is not None:
        run_program(ready["python"], ["-I", "-S", ready["relay"], verb], _env(root))


def mcp(root: str, data: str) -> None:
    ready = read_ready(data)
    if ready is None or ready["source"] != source_id(root):
        start_setup(root, data)
    if ready is None or not os.path.isfile(ready["mcp"]):
        sys.stderr.write(
            "tempera: the plugin's environment is being set up; the MCP server is there from the next "
            f"session (progress in {os.path.join(data, LOG)})\n"
        )
        sys.exit(1)
    run_program(ready["mcp"], [], _env(root))


def main(argv: list[str]) -> None:
    root, data, verb = argv[1], argv[2], argv[3]
    if verb == "setup":
        setup(root, data)
    elif verb == "mcp":
        mcp(root, data)
    elif verb in HOOK_VERBS:
        hook(root, data, verb)


if __name__ == "__main__":
    try:
        main(sys.argv)
    except SystemExit:
        raise
    except BaseException:  # a hook fails open: no output, exit 0, the reason in setup.log
        try:
            import traceback

            log(sys.argv[2], "launcher failed:\n" + traceback.format_exc())
        except BaseException:
            pass
    sys.exit(0)
