"""The hook process edge: the relay to the daemon (relay.py, built-in modules only), the framing both ends of the
socket use (wire.py), the `tempera-hook` entry and what a hook does when no daemon answers (entry.py: start one,
wait a bounded time, else nothing injected and a capture spooled), and the daemon client (client.py). What a hook
call decides and injects lives in `tempera.inject`, in the daemon; ARCHITECTURE.md walks a prompt through both."""
