"""Claude Code transcripts -> turns -> episodes: the reader, turn segmentation, LLM-free drafts (with optional
LLM refinement), per-session cursors and the bulk importer.

    capture_transcript(mem, path, project=None, session_id=None, use_llm=None) -> CaptureResult
    read_transcript(path) -> Transcript
    segment_turns(transcript) -> list[Turn]
"""

from tempera.transcripts.capture import CaptureResult, capture_transcript
from tempera.transcripts.reader import Transcript, read_transcript
from tempera.transcripts.turns import ToolCall, Turn, segment_turns

__all__ = ["CaptureResult", "ToolCall", "Transcript", "Turn", "capture_transcript", "read_transcript", "segment_turns"]
