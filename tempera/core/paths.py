"""Where Tempera keeps its files. Standard library only: the hook hot path imports this."""

from __future__ import annotations

import os
from pathlib import Path

# Every file and folder Tempera keeps in the data dir, named here only (hooks/relay.py repeats three, pinned by
# tests/hooks/test_entry_fuzz.py), so one list says what a data dir holds; tests/core/test_data_dir_names.py pins
# the names themselves, which existing data dirs depend on.
DB_NAME = "tempera.db"
CONFIG_NAME = "config.toml"
SOCKET_NAME = "daemon.sock"  # the daemon's unix socket (hooks/wire.py repeats these two)
TCP_NAME = "daemon.tcp"  # a TCP daemon's port and token, owner-only (`daemon.transport = "tcp"`)
DAEMON_LOG_NAME = "daemon.log"
DAEMON_LOCK_NAME = "daemon.lock"  # flock of the one daemon per data dir; holds its pid
DAEMON_SPAWN_NAME = "daemon.spawn"  # the hooks' guard against starting a herd of daemons
HOOK_LOG_NAME = "hooks.log"  # hook failures and fallbacks (the hooks never print them)
FACTS_INGEST_LOG_NAME = "facts-ingest.log"  # output of the detached `tempera facts ingest`
MODELS_DIR = "models"  # the default embedding model cache
PAUSE_NAME = "paused.json"  # the paused projects (core/pause.py)
REPO_IDS_NAME = "repo-ids.json"  # each checkout's repository identity, cached (core/project.py)
BACKUPS_DIR = "backups"  # `tempera memory backup` (core/backup.py)
SPOOL_DIR = "spool"  # captures a hook could not queue in the database (core/spool.py)
DREAM_LOCK_NAME = "dream.lock"  # flock of the one dream cycle per data dir (dream/cycle.py)
REFLECTIONS_DIR = "reflections"  # the dream's pages, a folder per project (dream/pages.py)
PATTERNS_DIR = "patterns"
FACTS_INGEST_STATUS_NAME = "facts-ingest.json"  # progress of `tempera facts ingest` (facts/ingest_git.py)
MCP_REPLIES_NAME = "mcp-replies.json"  # the MCP server's warm-start replies (mcp_server/warmstart.py)
EVAL_BASELINES_DIR = "eval-baselines"  # `tempera eval` baselines (cli/evaluate.py)


def data_dir() -> Path:
    """The data dir: TEMPERA_DATA_DIR, else ~/.tempera."""
    override = os.environ.get("TEMPERA_DATA_DIR")
    return Path(override).expanduser() if override else Path.home() / ".tempera"


def ensure_data_dir(path: Path | None = None) -> Path:
    """Create the data dir owner-only (0700); memory holds code and prompts."""
    path = path or data_dir()
    path.mkdir(parents=True, exist_ok=True, mode=0o700)
    try:
        os.chmod(path, 0o700)
    except OSError:  # read-only file system or not ours: the writability check reports it
        pass
    return path


def db_path() -> Path:
    return data_dir() / DB_NAME


def config_path() -> Path:
    return data_dir() / CONFIG_NAME


def endpoint_files() -> list[Path]:
    """The files by which a daemon says how to reach it: its unix socket, or a TCP daemon's port and token."""
    d = data_dir()
    return [d / SOCKET_NAME, d / TCP_NAME]


def secure_file(path: Path) -> None:
    """Make a file we created owner-only (0600)."""
    try:
        os.chmod(path, 0o600)
    except OSError:
        pass
