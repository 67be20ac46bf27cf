"""Self-improvement: the mistakes and should-have-asked logs, ask-backs, reasoning templates and calibration.

Fed from transcripts with no tool call (`tempera.transcripts.detect.process_captured_turns` runs after each
capture), or by hand through the CLI and MCP tools; read back by the brief (`tempera.core.brief`). Importing this
package is cheap: the core migrations import its schema.
"""
