"""What each SessionStart `source` means for what the agent's context still holds, and so what the hook answers.

The session's log (`injectlog`, `session_context`) says what the agent was shown, so nothing is shown twice; it is
true only while the context holds what was shown:
- `startup`: a new session, an empty log: the startup answer: pending ask-backs, and past work on what the git
  branch's name says (`inject/workcontext.py` `checkout_context`: "gtrrz-victor/adds-entire-reset-command" ->
  "adds entire reset command"), through the prompt's relevance gate; on the default branch none. Before the first
  prompt nothing else says what the session is about: the project's "most useful recent work", shown here before,
  was judged useful for none of 220 lines on the later sessions of two real projects (evals/injection_quality.py,
  docs/experiments/injection-quality.md).
- `compact`: the compaction took everything injected earlier out of the context. What was shown before it is
  eligible again (`injectlog.context_emptied`), and the answer is a prompt's, through the same relevance gate,
  with the work in progress as the prompt (`transcripts/inprogress.py`: the summary is not yet in the transcript
  when the hook runs). Nothing relevant, nothing injected. A hook that finds no daemon starts one and asks it
  (`hooks/entry.py` `answer_cold`); if none answers within `inject.daemon_start_seconds`, nothing is answered and the
  log is not emptied either, so what the compaction took out is not shown again in that session (a loss of repeats,
  never a wrong line). PostCompact, which carries
  `compact_summary`, cannot add context (an observer with no decision control), so it is not a hook of ours.
- `clear`: `/clear` empties the context and leaves no summary: what was shown is gone, and the answer is the
  startup one (Claude Code gives the cleared session a new id, which starts an empty log anyway).
- `resume`: Claude Code reloads the conversation from the transcript, from its last compaction on, and with it
  what the hooks injected there; the log, emptied at each compaction, says the same. The answer is the startup one
  minus what the log says the context holds.
- `fork`: a new session id over the parent's context, which holds the parent's startup answer and everything
  injected since: nothing is answered (a later prompt may show again what the parent was shown: a repeat, never
  a loss).
"""

from __future__ import annotations

from tempera.inject.payload import HookPayload

EMPTIED = frozenset({"compact", "clear"})  # sources after which the context no longer holds what was injected


def answered(hp: HookPayload) -> bool:
    """Whether the call gets an answer at all: not a fork's SessionStart."""
    return not (hp.event == "SessionStart" and hp.source == "fork")


def with_work(hp: HookPayload, branch_words: str) -> HookPayload:
    """A SessionStart call with what the session works on as its prompt: after a compaction the work in progress,
    otherwise `branch_words`, its checkout's branch's (`workcontext.checkout_context`; '' on the default branch); a
    prompt's call unchanged. The daemon's only: the hook
    process answering without it would pay ~190 ms to import the transcript reader and has no relevance gate, so
    there SessionStart shows the ask-backs alone, and a compaction only empties the log and the next prompt may show
    again what the compaction took out."""
    if hp.event != "SessionStart":
        return hp
    if hp.source == "compact":
        from tempera.transcripts.inprogress import transcript_work

        return hp._replace(prompt=transcript_work(hp.transcript_path))
    return hp._replace(prompt=branch_words)
