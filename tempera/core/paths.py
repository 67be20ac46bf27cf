"""Where Tempera keeps its files. Standard library only: the hook hot path imports this."""

from __future__ import annotations

import os
from pathlib import Path

# The data dir's shared file names, spelled here only (hooks/relay.py repeats three, pinned by
# tests/hooks/test_entry_fuzz.py). A file only one module reads or writes keeps its name beside that code.
DB_NAME = "tempera.db"
CONFIG_NAME = "config.toml"
SOCKET_NAME = "daemon.sock"
DAEMON_LOG_NAME = "daemon.log"
DAEMON_LOCK_NAME = "daemon.lock"  # flock of the one daemon per data dir; holds its pid
DAEMON_SPAWN_NAME = "daemon.spawn"  # the hooks' guard against starting a herd of daemons
HOOK_LOG_NAME = "hooks.log"  # hook failures and fallbacks (the hooks never print them)
FACTS_INGEST_LOG_NAME = "facts-ingest.log"  # output of the detached `tempera facts ingest`
MODELS_DIR = "models"  # the default embedding model cache


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


def socket_path() -> Path:
    return data_dir() / SOCKET_NAME


def secure_file(path: Path) -> None:
    """Make a file we created owner-only (0600)."""
    try:
        os.chmod(path, 0o600)
    except OSError:
        pass
