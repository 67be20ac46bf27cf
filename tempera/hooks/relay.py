"""The hook command the installer writes: `python -I -S .../tempera/hooks/relay.py <event>`.

Claude Code starts a new process for every hook, so the process start is most of a warm turn's cost. Started
without `site` (-S) and importing only modules built into the interpreter (and `hooks/wire.py`, by its path), this
file hands the raw stdin to the daemon and prints the daemon's answer byte for byte: a few milliseconds over a bare
interpreter start, where importing the package (site, .pth files, json, pathlib, tomllib) costs several times that.
The daemon answers (`inject/warm.py` `hook_reply`), kill switch and pause included.

When the daemon does not answer, this process loads `site` after all and runs `tempera-hook`'s own path on the
stdin it already read (`hooks/entry.py` `answer_cold`): the daemon started and asked again for a bounded time, else
nothing injected, a line in hooks.log saying why, and a capture spooled. Run directly, or run by `tempera-hook`
(`run`); its only import of the package happens on that cold path.
"""

import sys

if sys.platform == "win32":
    import nt as _os  # the built-in module `os` wraps there, as posix is here
else:
    import posix as _os

TYPE_CHECKING = False  # the checker's view only: importing typing would cost this process what it exists to save
if TYPE_CHECKING:
    from typing import Any
if TYPE_CHECKING or __name__ != "__main__":  # imported (tempera-hook): as part of the package
    from tempera.hooks import wire
else:
    # run as the hook command: the wire format's one home (hooks/wire.py) loaded by its path; importing it as
    # tempera.hooks.wire would import the package's __init__ files, which this process exists to avoid
    sys.path.insert(0, __file__[: max(__file__.rfind("/"), __file__.rfind("\\"))])
    try:
        import wire
    finally:
        del sys.path[0]

# Copies of the package's values, which this file cannot import; test_relay_copies_of_package_values_agree
# (tests/hooks/test_entry_fuzz.py) fails when one drifts from its original, named on the right.
TRUE = (b"1", b"true", b"yes", b"on")  # core/settings.py TRUE
KILL_SWITCH_ENVS = (b"TEMPERA_DISABLE", b"TEMPERA_GENERAL__DISABLED")  # settings.KILL_SWITCH_ENV, general.disabled
TIMEOUT_SECTION, TIMEOUT_KEY = "inject", b"daemon_timeout_seconds"  # settings.DAEMON_TIMEOUT, its bounds below
TIMEOUT_ENV = b"TEMPERA_INJECT__DAEMON_TIMEOUT_SECONDS"
DEFAULT_TIMEOUT, MIN_TIMEOUT, MAX_TIMEOUT = 2.0, 0.05, 30.0
MAX_STDIN_BYTES = 4 * 1024 * 1024  # inject/payload.py: anything larger is not from Claude Code
CONFIG_NAME, HOOK_LOG_NAME = b"config.toml", b"hooks.log"  # core/paths.py


def environ() -> "dict[bytes, bytes]":
    """The environment as bytes, as posix.environ holds it (Windows' is str: encoded here)."""
    if sys.platform == "win32":
        return {k.encode("utf-8", "surrogatepass"): v.encode("utf-8", "surrogatepass") for k, v in _os.environ.items()}
    return _os.environ


def data_dir(env: "dict[bytes, bytes]") -> bytes:
    """As paths.data_dir(): TEMPERA_DATA_DIR (with ~ expanded), else ~/.tempera; the home is Path.home()'s
    (USERPROFILE on Windows, where Git Bash's HOME is not the Windows one)."""
    home = env.get(b"USERPROFILE" if sys.platform == "win32" else b"HOME", b"")
    override = env.get(b"TEMPERA_DATA_DIR")
    if override:
        return home + override[1:] if override[:2] in (b"~/", b"~\\") or override == b"~" else override
    return home + b"/.tempera"


def disabled(env: dict[bytes, bytes]) -> bool:
    """The environment kill switches; the config file's `general.disabled` is the daemon's to read."""
    return any(env.get(k, b"").lower() in TRUE for k in KILL_SWITCH_ENVS)


def timeout(env: dict[bytes, bytes], directory: bytes) -> float:
    """inject.daemon_timeout_seconds from the environment, else config.toml (parsed only when it sets it)."""
    raw: Any = env.get(TIMEOUT_ENV)  # bytes, or any TOML value; float() sorts them
    if raw is None:
        try:
            with open(directory + b"/" + CONFIG_NAME, "rb") as fh:
                text = fh.read(1 << 20)
        except OSError:
            return DEFAULT_TIMEOUT
        if TIMEOUT_KEY not in text:
            return DEFAULT_TIMEOUT
        import tomllib  # rare: only a config that sets the timeout pays for it

        try:
            section = tomllib.loads(text.decode("utf-8")).get(TIMEOUT_SECTION)
            raw = section.get(TIMEOUT_KEY.decode()) if isinstance(section, dict) else None
        except (ValueError, UnicodeDecodeError):
            return DEFAULT_TIMEOUT
    try:
        return min(MAX_TIMEOUT, max(MIN_TIMEOUT, float(raw)))
    except (TypeError, ValueError):
        return DEFAULT_TIMEOUT


def read_stdin() -> bytes:
    stdin = sys.stdin
    if stdin is None or stdin.isatty():
        return b""
    return stdin.buffer.read(MAX_STDIN_BYTES + 1)


def ask_daemon(directory: str, event: str, raw: bytes, wait: float) -> "tuple[bytes | None, str]":
    """The bytes the hook must print, or None and why the daemon gave none ('' when no daemon listens: the cold
    path starts it)."""
    try:
        s, token, proof = wire.connect(directory, wait)
    except OSError:
        return None, ""
    try:
        body = raw if len(raw) <= MAX_STDIN_BYTES else b""
        reply = wire.exchange(s, wire.hook_header(event, len(body), token), body, proof, wire.MAX_REPLY_BYTES)
    except TimeoutError:
        return None, "the daemon did not answer within " + str(wait) + " s"
    except OSError as exc:
        return None, "the daemon failed mid-request (" + str(exc) + ")"
    finally:
        s.close()
    return wire.hook_reply(reply)


def cold(event: str, raw: bytes, why: str) -> bytes:
    """`tempera-hook`'s path when no daemon answered (`why`), with the packages `site` makes importable."""
    if sys.flags.no_site:
        import site

        site.main()
    # the package this file belongs to, whatever else is installed
    root = __file__.replace("\\", "/").rpartition("/tempera/hooks/")[0]
    if root and root not in sys.path:
        sys.path.insert(0, root)
    from tempera.hooks.entry import answer_cold

    return answer_cold(event, raw, why)


def log_failure(env: dict[bytes, bytes]) -> None:
    """Append the traceback to hooks.log; never raises."""
    try:
        import traceback

        fd = _os.open(data_dir(env) + b"/" + HOOK_LOG_NAME, _os.O_WRONLY | _os.O_APPEND | _os.O_CREAT, 0o600)
        try:
            _os.write(fd, ("relay failed:\n" + traceback.format_exc()).encode("utf-8", "replace"))
        finally:
            _os.close(fd)
    except BaseException:
        pass


def write_all(data: bytes) -> None:
    while data:
        data = data[_os.write(1, data) :]


def main(argv: list[str]) -> None:
    env = environ()
    if disabled(env):
        return
    event = argv[1] if len(argv) > 1 else ""
    raw = read_stdin()
    directory = data_dir(env)
    out, why = ask_daemon(directory.decode("utf-8", "surrogateescape"), event, raw, timeout(env, directory))
    write_all(cold(event, raw, why) if out is None else out)


def run(argv: list[str]) -> None:
    """One hook call, failing open: whatever happens, exit 0 with stdout empty or the daemon's answer."""
    try:
        main(argv)
    except BaseException:  # fail open, always: even SystemExit and KeyboardInterrupt
        log_failure(environ())
    sys.exit(0)


if __name__ == "__main__":
    run(sys.argv)
