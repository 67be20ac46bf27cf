"""Where Tempera keeps its files. Standard library only: the hook hot path imports this."""

from __future__ import annotations

import os
from pathlib import Path

DB_NAME = "tempera.db"
LOG_NAME = "tempera.log"
SOCKET_NAME = "daemon.sock"
DAEMON_LOG_NAME = "daemon.log"
CONFIG_NAME = "config.toml"


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


def log_path() -> Path:
    return data_dir() / LOG_NAME


def socket_path() -> Path:
    return data_dir() / SOCKET_NAME


def secure_file(path: Path) -> None:
    """Make a file we created owner-only (0600)."""
    try:
        os.chmod(path, 0o600)
    except OSError:
        pass
