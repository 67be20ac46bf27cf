"""Helpers for the self-improvement tests: the transcripts in ./data (Claude Code 2.1 JSONL, recorded with the cwd
/home/dev/webshop) and the capture-then-process step the daemon runs after each Stop."""

from __future__ import annotations

from pathlib import Path

from tempera.core.memory import Memory
from tempera.core.project import project_for_path
from tempera.transcripts.capture import capture_transcript
from tempera.transcripts.detect import Processed, process_capture

DATA = Path(__file__).parent / "data"
WEBSHOP = project_for_path("/home/dev/webshop")  # the cwd the transcripts in ./data were recorded in


def replay(mem: Memory, path: Path) -> Processed:
    """What the daemon does after a Stop: capture the transcript's new turns, then process them. Capture's own
    LLM extraction stays off, so the only LLM calls a test sees are self-improvement's."""
    return process_capture(mem, capture_transcript(mem, path, use_llm=False))
