"""The hook process edge: the stdlib relay to the warm daemon, the keyword-only fallback, payload parsing and
the rendering of what is injected (ARCHITECTURE.md walks a prompt through them)."""
