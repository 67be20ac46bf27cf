"""Corrections and should-have-asked questions found in a transcript's turns, without an LLM and without a tool call.

A correction is the user telling the agent it got something wrong: a prompt that opens like "no, ...", "that's
wrong", "actually we ...", "don't ...", "I meant ...", "revert that", or says "that is not correct", "use X
instead of Y"; a rejected tool call whose typed reason says the same; or a `git checkout/restore` of the agent's
files run in `!` shell mode. It is anchored to the files of the turn it corrects and dated by the transcript. A
should-have-asked is a question a correction shows was never asked: the agent went ahead, and the user then said
what they meant, where the change goes or what it may touch. A question the agent asked is none. The detectors are
pure functions over `Turn` lists; `process_captured_turns` stores what they find (the capture pipeline calls it
after each capture). Their precision on real sessions is measured by `evals/brief_precision.py`.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from datetime import datetime
from typing import TYPE_CHECKING, Any

from tempera.core.models import Episode
from tempera.core.clipping import squeezed
from tempera.core.redact import redact
from tempera.core.selfimprove import calibration
from tempera.core.selfimprove.aftercapture import update_after_capture
from tempera.core.selfimprove.anchors import relative_path
from tempera.core.selfimprove.askbacks import AskBack
from tempera.core.selfimprove.asks import ASKS, ShouldHaveAskedInput, llm_missed_question, log_should_have_asked
from tempera.core.selfimprove.drafting import Drafter, drafter_for
from tempera.core.selfimprove.logs import LogKind, exists
from tempera.core.selfimprove.mistakes import MISTAKES, CorrectionInput, llm_category, log_correction
from tempera.transcripts.capture import CaptureResult, root_of
from tempera.transcripts.draft import project_files
from tempera.transcripts.turns import ToolCall, Turn

if TYPE_CHECKING:
    from tempera.core.memory import Memory

REJECTED_WITH_REASON = "To tell you how to proceed, the user said:"
CLARIFY_REJECTION = "The user wants to clarify these questions"

# Fitted on the entire-cli sessions and checked on cipher-box (evals/brief_precision.py, labels in
# evals/fixtures/brief_labels.jsonl): only words that say the agent's work was wrong. Questions ("could we use X?"),
# new requests, permissions ("don't worry about linting, just continue") and the user describing their own setup
# ("our session starts with <uuid>") are no correction, so "we use", "don't worry" and a bare "instead of" are out.
_OPENERS = re.compile(
    r"^(?:(?:no|nope|nah)\b(?![\s,]+(?:problem|worries|thanks|rush|need to (?:apologi|worry)))"
    r"|(?:that'?s|this is|it'?s|thats)\s+(?:wrong|incorrect|not (?:right|correct|it|what)|the wrong)"
    r"|wrong\b|incorrect\b"
    r"|actually,?\s+(?:we|our|it|that|this|you|the\s+\w+\s+(?:is|are|should|uses?)|no\b|not\b|i\s)"
    r"|(?:don'?t|do not|never)\b(?!\s+(?:worry|forget|bother|mind|hesitate)\b)"
    r"|stop\s+\w+ing\b"
    r"|(?:please\s+)?(?:revert|undo|roll\s?back|put (?:it|that|them) back)\b"
    r"|(?:why did you|you (?:broke|deleted|removed|forgot|missed|shouldn'?t|should not))\b)",
    re.I,
)
_ANYWHERE = re.compile(
    r"(?<!\bam )(?<!\bwas )\bi (?:said|meant|asked (?:for|you to)|told you)\b"
    r"|\bnot what i (?:asked|wanted|meant|said)"
    r"|\bonly (?:change|touch|edit|modify)\b|\bwrong (?:file|place|directory|folder|module|function|branch)"
    r"|\b(?:is|are|'re|'s)\s+not\s+(?:correct|right)\b"
    r"|\b(?:use|using|called|named)\b[^.?!\n]{1,60}\binstead of\b"
    r"|\bma(?:de|ke) (?:it|that|this) up\b|\bdon'?t be lazy\b"
    r"|(?:in|for) this (?:project|repo|codebase),? we\b"
    r"|\bthat (?:broke|breaks)\b",
    re.I,
)
_QUOTED = re.compile(r"^\s*>.*$", re.M)  # lines the user quoted (the agent's words), not the user's own
_GENERATED = ("Implement the following plan",)  # prompts Claude Code writes when a plan is accepted
_SCAN = 300  # corrections are said up front: the words past this are the request's details

# Ordered: the first category whose pattern matches the user's words wins.
CATEGORIES: list[tuple[str, re.Pattern[str]]] = [
    (name, re.compile(p, re.I))
    for name, p in [
        ("reverted_edit", r"\b(?:revert|undo|roll\s?back|put (?:it|that|them) back|git (?:checkout|restore))\b"),
        (
            "wrong_location",
            r"\bwrong (?:file|place|directory|folder|module|function)|\bbelongs? in\b|"
            r"\bshould (?:be|go|live) in\b|\bmove (?:it|this|that) to\b|\bin the wrong\b",
        ),
        (
            "wrong_convention",
            r"\bwe (?:always |usually |never |don'?t )?(?:use|prefer|do|write|name|keep)\b|"
            r"\bin this (?:project|repo|codebase)\b|\bour (?:convention|style|standard|codebase)\b|"
            r"\bconvention\b|\bhouse style\b",
        ),
        (
            "scope_creep",
            r"\b(?:don'?t|do not|never) (?:change|touch|modify|refactor|rename|delete|remove|reformat|add)\b|"
            r"\bonly (?:change|touch|edit|fix|modify)\b|\b(?:didn'?t|did not|never) ask\b|\bno need to\b|"
            r"\bleave .{1,40} alone\b|\bunrelated\b|\bout of scope\b|\btoo much\b",
        ),
        (
            "wrong_command",
            r"\b(?:run (?:it|them|the tests) with|wrong command|the command is|use (?:npm|pnpm|yarn|bun|"
            r"poetry|uv|pip|cargo|make|pytest|tox|just)\b)",
        ),
        (
            "misunderstood_intent",
            r"\bi (?:said|meant|asked (?:for|you to)|told you|wanted)\b|\bnot what i\b|"
            r"\bmisunderst",
        ),
        (
            "broke_behavior",
            r"\b(?:you )?broke\b|\bbreaks\b|\bbroken now\b|\bregress|\bnow fails?\b|"
            r"\b(?:doesn'?t|does not) work any ?more\b|\bstopped working\b",
        ),
        (
            "skipped_verification",
            r"\b(?:didn'?t|did not|never|forgot to) (?:run|test|check|verify)\b|"
            r"\bwithout (?:testing|running)\b|\buntested\b|\brun the tests\b",
        ),
        ("security", r"\b(?:secret|password|api key|credential|token|injection|xss|csrf|sanitiz|unsafe|vulnerab)"),
        (
            "api_misuse",
            r"\bdeprecated\b|\b(?:doesn'?t|does not) exist\b|\bno such (?:method|function|attribute)\b|"
            r"\bwrong (?:api|method|argument|signature|type)\b",
        ),
    ]
]
DEFAULT_CATEGORY = "wrong_assumption"
# Kinds of correction that show a question the agent never asked, with the question it should have asked: only what
# the user alone knows (what they meant, where it goes, what it may touch). A convention or a command is in the
# repository to be read (on entire-cli, "the first part is not correct, for manual-commits we use git hooks" was a
# fact the agent should have looked up, not asked).
MISSED_QUESTIONS = {
    "wrong_location": "Where should this change go (which file or module)?",
    "scope_creep": "Which parts may this change touch, and what must stay as it is?",
    "misunderstood_intent": "What exactly is meant by this request, and what result counts as done?",
}
_BASH_INPUT = re.compile(r"<bash-input>(.*?)</bash-input>", re.S)
_GIT_REVERT = re.compile(r"\bgit\s+(?:checkout|restore|reset\s+--hard|stash|revert)\b")


@dataclass(frozen=True)
class CorrectionSeen:
    key: str  # stable id (record uuid or tool call id): the same correction always has the same key
    kind: str  # prompt | rejection | revert
    turn: Turn  # the turn whose work was corrected
    category: str
    words: str  # the user's words
    description: str  # what the agent had done
    files: list[str] = field(default_factory=list)
    at: datetime | None = None  # when the user said it, from the transcript: an import keeps the session's date


@dataclass(frozen=True)
class QuestionSeen:
    key: str
    kind: str  # missed
    turn: Turn  # the turn the question belongs to
    trigger: str
    question: str
    answer: str
    files: list[str] = field(default_factory=list)
    at: datetime | None = None


def categorize(words: str) -> str:
    return next((name for name, pattern in CATEGORIES if pattern.search(words)), DEFAULT_CATEGORY)


def is_correction(text: str) -> bool:
    """Whether the user's words say the agent got something wrong (see `_OPENERS`, `_ANYWHERE`)."""
    text = _QUOTED.sub("", text).strip()
    if text.startswith(_GENERATED):
        return False
    return bool(_OPENERS.match(text) or _ANYWHERE.search(text[:_SCAN]))


def _short(text: str, n: int) -> str:
    """Transcript text as stored and sent to an LLM: secrets redacted, whitespace collapsed, clipped to n."""
    return squeezed(redact(text), n)


def _turn_files(turn: Turn) -> list[str]:
    return list(turn.files_modified or turn.files_read)


def _did(turn: Turn) -> str:
    files = [relative_path(f, turn.cwd) for f in turn.files_modified[:4]]
    return f'Working on "{_short(turn.prompt, 120)}"' + (f"; changed {', '.join(files)}" if files else "")


def _prompt_corrections(turns: list[Turn]) -> list[CorrectionSeen]:
    found = []
    for prev, turn in zip(turns, turns[1:]):
        if turn.kind != "prompt" or not prev.has_agent_work or not is_correction(turn.prompt):
            continue
        found.append(
            CorrectionSeen(
                turn.prompt_uuid or f"prompt:{turn.session_id}:{turn.prompt_line}",
                "prompt",
                prev,
                categorize(turn.prompt),
                _short(turn.prompt, 1000),
                _did(prev),
                _turn_files(prev),
                turn.started_at,
            )
        )
    return found


def _rejection_reason(call: ToolCall) -> str | None:
    text = call.result or ""
    if not call.rejected or REJECTED_WITH_REASON not in text:
        return None
    reason = text.split(REJECTED_WITH_REASON, 1)[1].strip()
    # a rejection stops a call; its words are a correction only when they say what was wrong (most ask a question
    # or change the plan: "let's cut a branch first", "our session starts with <uuid>")
    return reason if reason and not reason.startswith(CLARIFY_REJECTION) and is_correction(reason) else None


def _rejections(turn: Turn) -> list[CorrectionSeen]:
    found = []
    for call in turn.rejections:
        reason = _rejection_reason(call)
        if reason is None:
            continue
        target = call.input.get("file_path") or call.input.get("notebook_path")
        target = target if isinstance(target, str) and target else None
        command = call.input.get("command")
        files = [target] if target else _turn_files(turn)
        what = command if isinstance(command, str) else relative_path(target, turn.cwd) if target else ""
        did = f"{_did(turn)}; rejected {call.name} {_short(what, 160)}"
        found.append(
            CorrectionSeen(
                f"rejection:{call.id}",
                "rejection",
                turn,
                categorize(reason),
                _short(reason, 1000),
                did,
                files,
                call.timestamp or turn.ended_at or turn.started_at,
            )
        )
    return found


def _reverts(turn: Turn) -> list[CorrectionSeen]:
    """`!git checkout -- path` (or restore / reset --hard) typed by the user over files the agent changed."""
    found = []
    changed = turn.files_modified
    for record in turn.records[1:]:
        if record.type != "user" or record.tool_results:
            continue
        for command in _BASH_INPUT.findall(record.text):
            if not _GIT_REVERT.search(command) or not changed:
                continue
            named = [
                f
                for f in changed
                if any(tok and (f == tok or f.endswith("/" + tok.lstrip("./"))) for tok in command.split()[2:])
            ]
            files = named or ([] if re.search(r"\s(?:--\s+)?[\w./-]+\.\w+", command) else list(changed))
            if files:
                found.append(
                    CorrectionSeen(
                        f"revert:{record.uuid or record.line}",
                        "revert",
                        turn,
                        "reverted_edit",
                        f"The user reverted the agent's change: {_short(command, 300)}",
                        _did(turn),
                        files,
                        record.timestamp,
                    )
                )
    return found


def _with(previous: Turn | None, turns: list[Turn]) -> list[Turn]:
    return [previous, *turns] if previous is not None and (not turns or previous.index < turns[0].index) else turns


def detect_corrections(turns: list[Turn], previous: Turn | None = None) -> list[CorrectionSeen]:
    """Every correction in these turns, in transcript order of the corrected turn. `previous` is the turn before
    the first one (captured earlier): a first prompt may correct it, and shell reverts typed after its Stop land
    in its records."""
    turns = _with(previous, turns)
    found = _prompt_corrections(turns)
    for turn in turns:
        found += _rejections(turn) + _reverts(turn)
    return sorted(found, key=lambda c: c.turn.index)


def missed_question(correction: CorrectionSeen) -> QuestionSeen | None:
    """The question a correction shows was never asked (for the kinds in MISSED_QUESTIONS)."""
    question = MISSED_QUESTIONS.get(correction.category)
    if question is None:
        return None
    return QuestionSeen(
        f"missed:{correction.key}",
        "missed",
        correction.turn,
        _short(correction.turn.prompt, 200),
        question,
        correction.words,
        correction.files,
        correction.at,
    )


def detect_questions(
    turns: list[Turn], corrections: list[CorrectionSeen] | None = None, previous: Turn | None = None
) -> list[QuestionSeen]:
    """The questions corrections show were never asked. A question the agent did ask, and the user answered, is
    none: it was asked (`previous` as for `detect_corrections`)."""
    if corrections is None:
        corrections = detect_corrections(turns, previous)
    return [q for q in map(missed_question, corrections) if q is not None]


# -- storing what was found (the entry point the capture pipeline calls) -----------------------------------------


@dataclass
class Processed:
    """What one call added: new rows only, so a re-run on the same turns reports zeros."""

    corrections: int = 0
    questions: int = 0
    ask_backs: list[AskBack] = field(default_factory=list)

    def as_dict(self) -> dict[str, object]:
        return {
            "corrections": self.corrections,
            "questions": self.questions,
            "ask_backs": [a.as_dict() for a in self.ask_backs],
        }


def _anchors(turn: Turn) -> list[str]:
    """Records that place a turn's episode, latest first: a long turn is several work units, and what a
    correction answers is the last of them (the first holds the prompt)."""
    last = next((r.uuid for r in reversed(turn.records) if r.uuid and r.type in ("user", "assistant")), None)
    return [u for u in dict.fromkeys((last, turn.prompt_uuid)) if u]


def _stored_episode(mem: "Memory", turn: Turn) -> Episode | None:
    """The episode an earlier capture made of this turn (one of its records is among the episode's sources)."""
    if not turn.session_id:
        return None
    for anchor in _anchors(turn):
        row = mem.db.one(
            "SELECT id FROM episodes WHERE session_id = ? AND instr(data, ?) > 0 ORDER BY created_at DESC LIMIT 1",
            (turn.session_id, f'"{anchor}"'),
        )
        if row:
            return mem.store.get(row[0])
    return None


def _episode_finder(mem: "Memory", episodes: list[Episode]) -> Callable[[Turn], Episode | None]:
    by_uuid = {u: ep for ep in episodes for u in ep.source.record_uuids}

    def find(turn: Turn) -> Episode | None:
        return next((by_uuid[u] for u in _anchors(turn) if u in by_uuid), None) or _stored_episode(mem, turn)

    return find


def _record(
    mem: "Memory",
    kind: LogKind,
    seen: Any,
    ep: Episode | None,
    store: Callable[["Memory", Any, Episode, str, Drafter | None], bool],
    llm: Drafter | None,
) -> bool:
    """Store one finding once: its dedupe key is the session plus the record or tool call it came from."""
    if ep is None:
        return False
    key = f"{ep.session_id or ep.id}:{seen.key}"
    return not exists(mem.db, kind, key) and store(mem, seen, ep, key, llm)


def _store_correction(mem: "Memory", c: CorrectionSeen, ep: Episode, key: str, llm: Drafter | None) -> bool:
    category = c.category
    if category == DEFAULT_CATEGORY and llm is not None:
        choices = [name for name, _ in CATEGORIES] + [DEFAULT_CATEGORY]
        category = llm_category(llm, mem.config.llm.model, c.words, c.description, choices) or category
    item = CorrectionInput(
        category=category,
        description=c.description,
        correction=c.words,
        files=c.files,
        episode=ep.id,
        session_id=ep.session_id,
    )
    with mem.db.transaction():
        added = log_correction(mem.store, item, source=f"transcript:{c.kind}", dedupe_key=key, at=c.at) is not None
        if added:
            calibration.mark_corrected(mem.db, ep.id)
    return added


def _store_question(mem: "Memory", q: QuestionSeen, ep: Episode, key: str, llm: Drafter | None) -> bool:
    question = q.question
    if q.kind == "missed" and llm is not None:
        question = llm_missed_question(llm, mem.config.llm.model, q.trigger, q.answer) or question
    item = ShouldHaveAskedInput(
        trigger=q.trigger, question=question, answer=q.answer, files=q.files, episode=ep.id, session_id=ep.session_id
    )
    added = log_should_have_asked(mem.store, item, source=f"transcript:{q.kind}", dedupe_key=key, at=q.at)
    return added is not None


def _in_checkout(files: list[str], turn: Turn, roots: list[str], project_root: str | None) -> list[str]:
    """A finding's files as its episode names them: relative to the session's checkout (a transcript from
    another machine keeps that machine's paths), plan and scratch files left out."""
    return project_files(files, root_of(turn, roots, project_root)) if roots else files


def process_captured_turns(
    mem: "Memory",
    turns: list[Turn],
    episodes: list[Episode],
    *,
    previous: Turn | None = None,
    llm: Drafter | None = None,
    roots: list[str] | None = None,
) -> Processed:
    """Run the detectors over freshly captured turns, store corrections and should-have-asked rows (anchored to
    the corrected turn's episode and files), then update calibration and ask-backs for the episodes.

    `episodes` are the ones capture added or updated for `turns`; `previous` is the turn before the first one
    when it was captured earlier (see `process_capture`). Idempotent per episode: every row carries a dedupe key
    made of the session and the record or tool call it came from, so re-running adds nothing (and pays for no
    LLM call about a row already stored).
    """
    llm = llm or drafter_for(mem.config)
    done = Processed()
    if mem.config.selfimprove.detect_corrections:
        episode_of = _episode_finder(mem, episodes)
        corrections = detect_corrections(turns, previous)
        questions = detect_questions(turns, corrections, previous)
        for c in corrections:
            ep = episode_of(c.turn)
            c = replace(c, files=_in_checkout(c.files, c.turn, roots or [], ep.project_path if ep else None))
            done.corrections += _record(mem, MISTAKES, c, ep, _store_correction, llm)
        for q in questions:
            ep = episode_of(q.turn)
            q = replace(q, files=_in_checkout(q.files, q.turn, roots or [], ep.project_path if ep else None))
            done.questions += _record(mem, ASKS, q, ep, _store_question, llm)
    done.ask_backs = update_after_capture(mem, episodes, llm=llm)
    return done


def process_capture(mem: "Memory", result: CaptureResult) -> Processed:
    """`process_captured_turns` for the episodes the capture leaves to learn from (`CaptureResult.learning`): the
    transcript's turns that made them and the one before them."""
    episodes = result.learning
    if result.dry_run or not episodes:
        return Processed()
    turns = result.session_turns()
    sources = {u for ep in episodes for u in ep.source.record_uuids}
    batch = [t for t in turns if not sources.isdisjoint(t.record_uuids)]
    previous = turns[batch[0].index - 1] if batch and batch[0].index > 0 else None
    return process_captured_turns(mem, batch, episodes, previous=previous, roots=result.roots)
