"""Claude Code transcripts -> turns -> episodes: the reader, turn segmentation, LLM-free drafts (with optional
LLM refinement), per-session cursors, the steps after capture and the bulk importer.

    capture_and_learn(mem, path, project=None, session_id=None, use_llm=None) -> CaptureResult
    capture_transcript(mem, path, ...) -> CaptureResult  # stores only: the steps after capture wait (see below)
    read_transcript(path) -> Transcript
    segment_turns(transcript) -> list[Turn]

`capture_and_learn` (`pipeline.py`) is what every capture path runs. `capture_transcript` is its first part: it
stores the episodes and leaves them marked for the steps after capture, which the transcript's next
`capture_and_learn` runs.
"""

from tempera.transcripts.capture import CaptureResult, capture_transcript
from tempera.transcripts.pipeline import capture_and_learn
from tempera.transcripts.reader import Transcript, read_transcript
from tempera.transcripts.turns import ToolCall, Turn, segment_turns

__all__ = [
    "CaptureResult",
    "ToolCall",
    "Transcript",
    "Turn",
    "capture_and_learn",
    "capture_transcript",
    "read_transcript",
    "segment_turns",
]
