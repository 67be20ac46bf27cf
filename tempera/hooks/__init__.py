"""The hook process edge: the stdlib relay to the warm daemon (relay.py), the `tempera-hook` entry that reads
stdin and falls back to answering in-process (entry.py), and the daemon client (client.py). What a hook call
decides and injects lives in `tempera.inject`; ARCHITECTURE.md walks a prompt through both."""
