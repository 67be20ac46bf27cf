"""The data dir's names are a promise to every data dir that exists: renamed in core/paths.py, a name would orphan
what users have (their memory, a pause, backups, the lock a running daemon of another version holds). So they are
spelled here a second time, the one copy outside paths.py (and relay.py's, pinned by test_entry_fuzz.py); every
other module, test and eval names them through paths. A new name must be added here too."""

from __future__ import annotations

from tempera.core import paths

NAMES = {
    "DB_NAME": "tempera.db",
    "CONFIG_NAME": "config.toml",
    "SOCKET_NAME": "daemon.sock",
    "TCP_NAME": "daemon.tcp",
    "DAEMON_LOG_NAME": "daemon.log",
    "DAEMON_LOCK_NAME": "daemon.lock",
    "DAEMON_SPAWN_NAME": "daemon.spawn",
    "HOOK_LOG_NAME": "hooks.log",
    "FACTS_INGEST_LOG_NAME": "facts-ingest.log",
    "MODELS_DIR": "models",
    "PAUSE_NAME": "paused.json",
    "REPO_IDS_NAME": "repo-ids.json",
    "BACKUPS_DIR": "backups",
    "SPOOL_DIR": "spool",
    "DREAM_LOCK_NAME": "dream.lock",
    "REFLECTIONS_DIR": "reflections",
    "PATTERNS_DIR": "patterns",
    "FACTS_INGEST_STATUS_NAME": "facts-ingest.json",
    "MCP_REPLIES_NAME": "mcp-replies.json",
    "EVAL_BASELINES_DIR": "eval-baselines",
}


def test_the_data_dir_names_stay_what_existing_data_dirs_hold() -> None:
    defined = {name: getattr(paths, name) for name in dir(paths) if name.endswith(("_NAME", "_DIR"))}
    assert defined == NAMES
    assert len(set(defined.values())) == len(defined)  # no two files share a name
