"""The memory engine. Knows nothing of Claude Code; the outer rings import it, never the reverse."""
