"""Implicit feedback: was an injected memory used in the turn that followed, and did the turn go well?

No tool call is needed: the captured turn (an Episode built from the transcript) is compared with each episode
the hooks injected into the session. Overlap is only counted where it is evidence of *use*: anything that also
appears in the user's own prompt is discounted, because the prompt is what retrieved the memory in the first
place. Verdicts become `implicit` evidence rows (weights from `[bellman]`, after DESIGN): used + success ->
helpful; injected and ignored -> a small unhelpful signal, a larger one once the episode was ignored in every
session it was shown in, session after session (`is_chronic`); used and then corrected by the user -> unhelpful.

Verdicts can change later, always in place (the earlier verdict is kept inside the row's evidence): a correction
is often only seen in the user's *next* prompt, after the turn was judged (`apply_correction` turns that turn's
helpful verdicts), and a memory ignored in one turn may be used in a later turn of the same session.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from tempera.core.config import BellmanConfig
from tempera.core.db import Database
from tempera.core.learning.chaining import share_link_credit
from tempera.core.learning.retire import live_id
from tempera.core.models import Episode, iso_utc
from tempera.core.selfimprove.anchors import anchor_files
from tempera.core.textsearch import STOPWORDS, fts_phrase
from tempera.core.utility import recompute, record_feedback

if TYPE_CHECKING:
    from tempera.core.memory import Memory

USE_THRESHOLD = 0.75  # one strong signal (id cited, a file it changed changed again) or two moderate ones
# A file the memory changed, changed again by a successful turn, is use on its own: on the entire-cli replay's dev
# split, the injected episodes whose files the session changed again were relevant to a later session about twice
# as often as the others, and at 0.5 most were judged ignored (docs/experiments/file-changed-again-is-use.md,
# "Diagnosis").
CITED, ERROR, FILE_MODIFIED, FILE_READ, PHRASE = 1.0, 0.6, 0.75, 0.25, 0.4
LONG_COMMAND, SHORT_COMMAND = 0.75, 0.4  # `pytest --lf -x` says more than `npm test`
MAX_PER_KIND = 2
ROUTINE_SHARE, ROUTINE_MIN = 0.05, 5  # see Routine
_SESSION = "COALESCE(e.session_id, e.id)"  # what Routine counts
CORRECTED_RULE, IGNORED_RULE = "used, then corrected by the user", "injected, ignored"
TEMPLATE_WORDS = frozenset({"changed", "tests", "passed", "failed", "unresolved"})  # transcripts.draft.summarize
TRIVIAL_COMMANDS = frozenset({"ls", "pwd", "cd", "cat", "git status", "git diff", "git log", "clear", "echo"})

_PLUMBING = re.compile(r"\s*(?:\d?>&\d|\|\s*(?:head|tail|grep|less|more|tee|wc|sort|uniq)\b[^|]*)")
_CHAIN = re.compile(r"&&|\|\||;")  # `mise run test && mise run lint` is two runs
# Not prose, though the capture writes them into its texts: a path (its parts, e.g. a home directory, are no
# phrase: files are weighed by their own signals) and the lines transcripts.draft.summarize makes from tests and
# errors (weighed as commands and errors).
_PATH = re.compile(r"\S*/\S*")
_TEMPLATE_LINE = re.compile(r"^(?:Tests (?:passed|failed)|Unresolved): .*$", re.MULTILINE)
_IDENT = re.compile(r"[A-Za-z_][\w]*(?:[./:-]\w+)*")
_WORD = re.compile(r"[a-z][a-z0-9_]+")


@dataclass(frozen=True)
class UseVerdict:
    used: bool
    score: float
    reasons: list[str] = field(default_factory=list)


def _distinctive_tokens(text: str) -> set[str]:
    """Identifier-like tokens (snake_case, dotted, paths, CamelCase, with digits) that rarely appear by chance."""
    out = set()
    for tok in _IDENT.findall(text):
        if len(tok) >= 4 and (re.search(r"[_./:\d-]", tok) or re.search(r"[a-z][A-Z]", tok)):
            out.add(tok.lower())
    return out


def _trigrams(text: str) -> set[str]:
    """Word trigrams within a line, stopwords and the capture summary template's own words left out."""
    out: set[str] = set()
    for line in text.lower().splitlines():
        words = [w for w in _WORD.findall(line) if w not in STOPWORDS and w not in TEMPLATE_WORDS and len(w) > 2]
        out.update(" ".join(words[i : i + 3]) for i in range(len(words) - 2))
    return out


def _prose(ep: Episode, texts: Iterable[str]) -> str:
    """`texts` without the episode's own commands and files, any path, and the summary's test and error lines:
    those are weighed by their own signals."""
    out = _TEMPLATE_LINE.sub(" ", "\n".join(t for t in texts if t))
    ctx = ep.context
    for literal in sorted({*ctx.commands, *ctx.files_modified, *ctx.files_read}, key=len, reverse=True):
        if literal.strip():
            out = out.replace(literal, " ")
    return _PATH.sub(" ", out)


def _commands(cmds: Iterable[str]) -> set[str]:
    """The commands that say something: each run of a chain, without its output plumbing (`2>&1 | tail -30` is
    the same run), and none that only looks around (`ls -la src`, `cd web`, `git status --short`)."""
    out = set()
    for c in cmds:
        for part in _CHAIN.split(_PLUMBING.sub("", c)):
            norm = " ".join(part.split())
            trivial = any(norm == t or norm.startswith(t + " ") for t in TRIVIAL_COMMANDS)
            if not trivial and len(norm.split()) >= 2:
                out.add(norm)
    return out


def _said(turn: Episode) -> list[str]:
    """What the agent said in the turn (never the user's prompt, nor its errors: they have their own signal)."""
    intent = turn.intent
    return [
        turn.summary,
        intent.extracted if intent.extracted != intent.raw_prompt else "",
        *turn.alternatives_considered,
    ]


class Routine:
    """What the project does all the time, so that doing it again is no sign of having used a memory: a file,
    command or phrase found in more than ROUTINE_SHARE of the project's episodes (and at least ROUTINE_MIN).
    On the entire-cli sessions, "mise run test", "mise run lint 2>&1" and "cmd entire cli" (201, 109 and 345 of 467
    episodes) made every injected episode "used" by every session that ran the tests: 60 % of the helpful
    verdicts rested on such words alone. Also what more than ROUTINE_SHARE of the sessions do (an episode without
    one is its own): a session is cut into several episodes, so "mise run test:ci" and "go build ./..." (13 and 17 of
    364 episodes, 6 and 9 of 62 sessions on the replay's dev split) passed as distinctive. An error the project hits
    all the time ("[lint] ERROR task failed") is routine too. Counted with FTS5 over the episodes stored so far,
    once per item.
    A file changed again is never routine: the checks run whatever the task, a file is changed because the task is
    about it. On the replay's dev split, 48 of the 55 injected episodes judged ignored although the session changed
    their (routine) file again were relevant to a later session."""

    def __init__(self, db: Database, project_id: str):
        self.db, self.project_id = db, project_id
        totals = db.one(
            f"SELECT COUNT(*), COUNT(DISTINCT {_SESSION}) FROM episodes e WHERE project_id = ?", (project_id,)
        )
        self.limits = [max(ROUTINE_MIN, ROUTINE_SHARE * n) for n in totals]
        self.seen: dict[str, bool] = {}

    def __call__(self, item: str, *, phrase: bool = True) -> bool:
        """`phrase`: the words in this order (a file, a command); else all of them anywhere (a word trigram)."""
        key = f"{phrase}:{item}"
        if key not in self.seen:
            match = fts_phrase(item, self.project_id, ordered=phrase)
            counts = (
                self.db.one(
                    f"SELECT COUNT(*), COUNT(DISTINCT {_SESSION}) FROM episodes_fts f JOIN episodes e "
                    "ON e.rowid = f.rowid WHERE episodes_fts MATCH ?",
                    (match,),
                )
                if match
                else (0, 0)
            )
            self.seen[key] = any(n > limit for n, limit in zip(counts, self.limits))
        return self.seen[key]


def score_injection_use(injected: Episode, turn: Episode, routine: Routine | None = None) -> UseVerdict:
    """Did `turn` use `injected`? Sums weighted signals; `used` once the score reaches USE_THRESHOLD. With
    `routine`, files, commands and phrases the project has all the time count for nothing."""
    reasons: list[str] = []
    score = 0.0
    said = _said(turn)
    prompt = turn.intent.raw_prompt.lower()

    def add(weight: float, items: Iterable[str], label: str, ordered: bool | None = True) -> None:
        """`ordered`: how `routine` looks an item up (None: never routine: an id, a file changed again)."""
        nonlocal score
        if routine is not None and ordered is not None:
            items = [i for i in items if not routine(i, phrase=ordered or " " not in i)]
        for item in sorted(items)[:MAX_PER_KIND]:
            score += weight
            reasons.append(f"{label}: {item}")

    if injected.id[:8].lower() in " ".join([*said, *turn.context.commands]).lower():
        add(CITED, [injected.id[:8]], "cited its id", ordered=None)
    mine = set(anchor_files(injected.context.files_modified, injected.project_path))
    modified = set(anchor_files(turn.context.files_modified, turn.project_path))
    read = set(anchor_files(turn.context.files_read, turn.project_path))
    add(FILE_MODIFIED, mine & modified, "modified the same file", ordered=None)  # see Routine
    add(FILE_READ, (mine & read) - modified, "read a file it names")
    theirs = {e.fingerprint: e.message for e in injected.context.errors if e.fingerprint}
    add(ERROR, {theirs[e.fingerprint] for e in turn.context.errors if e.fingerprint in theirs}, "same error")
    shared = {
        c for c in _commands(injected.context.commands) & _commands(turn.context.commands) if c.lower() not in prompt
    }
    add(LONG_COMMAND, {c for c in shared if len(c.split()) >= 3}, "ran the same command")
    add(SHORT_COMMAND, {c for c in shared if len(c.split()) < 3}, "ran the same short command")
    memory_text = _prose(injected, [injected.summary, injected.intent.claim or ""])
    action = _prose(turn, said)
    file_names = {f.rsplit("/", 1)[-1].lower() for f in mine | modified | read}
    tokens = (_distinctive_tokens(memory_text) & _distinctive_tokens(action)) - _distinctive_tokens(prompt)
    phrases = (_trigrams(memory_text) & _trigrams(action)) - _trigrams(prompt)
    add(PHRASE, (tokens - file_names) | phrases, "repeated a distinctive phrase", ordered=False)  # trigrams: any order
    return UseVerdict(used=score >= USE_THRESHOLD, score=round(score, 3), reasons=reasons)


@dataclass(frozen=True)
class ImplicitResult:
    episode_id: str
    verdict: UseVerdict
    signal: str | None
    weight: float
    rule: str


def judge(
    verdict: UseVerdict, status: str, corrected: bool, cfg: BellmanConfig, chronic: bool = False
) -> tuple[str | None, float, str]:
    """(signal, weight, rule) of one injection's verdict, as `[bellman]` weighs it (None: no evidence either way)."""
    if not verdict.used:
        return "unhelpful", cfg.implicit_chronic_weight if chronic else cfg.implicit_ignored_weight, IGNORED_RULE
    if corrected:
        return "unhelpful", cfg.implicit_corrected_weight, CORRECTED_RULE
    if status == "success":
        return "helpful", cfg.implicit_helpful_weight, "used, and the turn succeeded"
    return None, 0.0, f"used, but the turn's outcome is {status}: no evidence either way"


def _rewrite(
    db: Database,
    cfg: BellmanConfig,
    row_id: int,
    episode_id: str,
    signal: str,
    weight: float,
    update: dict[str, Any],
    *,
    at: str,
) -> None:
    """Turn an earlier verdict into a new one in place, dated `at` (the turn that gave it; the earlier one is kept
    under evidence.was), then refresh the utility, the last-useful time (the latest direct helpful row) and the
    link shares."""
    old_signal, old_weight, raw, created_at = db.one(
        "SELECT signal, weight, evidence, created_at FROM feedback_events WHERE id = ?", (row_id,)
    )
    evidence = json.loads(raw or "{}")
    was = {"signal": old_signal, "weight": old_weight, "rule": evidence.get("rule"), "at": created_at}
    evidence = {**evidence, **update, "was": was}
    db.execute(
        "UPDATE feedback_events SET signal = ?, weight = ?, evidence = ?, created_at = ? WHERE id = ?",
        (signal, weight, json.dumps(evidence), at, row_id),
    )
    recompute(db, episode_id)
    db.execute(
        "UPDATE episodes SET last_useful_at = (SELECT MAX(created_at) FROM feedback_events WHERE "
        "episode_id = ? AND signal = 'helpful' AND source IN ('explicit', 'implicit')) WHERE id = ?",
        (episode_id, episode_id),
    )
    share_link_credit(db, cfg, episode_id)


def is_chronic(db: Database, cfg: BellmanConfig, episode_id: str, session_id: str, before: int) -> bool:
    """Was `episode_id` ignored in every other session it was injected into before injection `before`, at least
    `implicit_chronic_sessions` - 1 of them? One ignore says little, a memory is often just not needed now: on the
    entire-cli replay, episodes injected into one or two sessions and never used were relevant to a later session
    about as often as those never injected, those injected into three or more and never used far less often
    (docs/experiments/learning-replay-oracle.md, section 4). Shown session after session and never used, an
    episode is not what the prompts that retrieve it need, and it keeps taking a place from the episodes that are."""
    shown, used = db.one(
        "SELECT COUNT(DISTINCT session_id), COALESCE(MAX(used), 0) FROM injections "
        "WHERE episode_id = ? AND session_id != ? AND id < ? AND evaluated_at IS NOT NULL",
        (episode_id, session_id, before),
    )
    return not used and shown >= cfg.implicit_chronic_sessions - 1


def _ignored_row(db: Database, episode_id: str, session_id: str) -> int | None:
    row = db.one(
        "SELECT id FROM feedback_events WHERE episode_id = ? AND source = 'implicit' AND "
        "json_extract(evidence, '$.session') = ? AND json_extract(evidence, '$.rule') = ? "
        "ORDER BY id DESC LIMIT 1",
        (episode_id, session_id, IGNORED_RULE),
    )
    return row[0] if row else None


def apply_implicit_feedback(
    mem: "Memory", session_id: str, turn_episode: Episode, corrected: bool = False
) -> list[ImplicitResult]:
    """Judge the session's injections against the captured turn and write the evidence.

    New injections get a verdict. A memory judged ignored earlier in the session is looked at again: a later
    turn may use it (typically after the user corrected the first attempt); then its ignored row is rewritten
    into the new verdict, and while it stays unused no second penalty is added. Injections are marked evaluated
    (`used` 1.0 or 0.0) and new credit is passed on along session links.
    """
    db, cfg = mem.db, mem.config.bellman
    rows = db.query(
        "SELECT id, episode_id, evaluated_at FROM injections WHERE session_id = ? AND episode_id != ? "
        "AND (evaluated_at IS NULL OR used = 0) ORDER BY id",
        (session_id, turn_episode.id),
    )
    by_episode: dict[str, list[int]] = {}
    judged_before: set[str] = set()
    for inj_id, episode_id, evaluated_at in rows:
        by_episode.setdefault(episode_id, []).append(inj_id)
        if evaluated_at is not None:
            judged_before.add(episode_id)
    now = iso_utc()  # when the injections were judged
    at = iso_utc(turn_episode.created_at)  # when the turn that gives the verdict happened
    results: list[ImplicitResult] = []
    routine = Routine(db, turn_episode.project_id)
    with db.transaction():
        for episode_id, inj_ids in by_episode.items():
            verdict = score_injection_use(mem.store.get(episode_id), turn_episode, routine)  # what it was shown
            target = live_id(db, episode_id)  # who holds its history now (consolidation may have merged it)
            fresh = episode_id not in judged_before  # a memory still unused keeps its first ignored row
            chronic = fresh and not verdict.used and is_chronic(db, cfg, episode_id, session_id, min(inj_ids))
            signal, weight, rule = judge(verdict, turn_episode.outcome.status, corrected, cfg, chronic)
            evidence: dict[str, Any] = {
                "turn": turn_episode.id,
                "session": session_id,
                "rule": rule,
                "score": verdict.score,
                "reasons": verdict.reasons,
                "injections": inj_ids,
            }
            if chronic:
                evidence["chronic"] = True
            earlier = None if fresh else _ignored_row(db, target, session_id)
            if earlier is not None and verdict.used and signal is not None:
                _rewrite(db, cfg, earlier, target, signal, weight, evidence, at=at)
            elif earlier is None and signal is not None and weight > 0:
                record_feedback(db, target, signal, weight=weight, source="implicit", evidence=evidence, at=at)
                share_link_credit(db, cfg, target)
            else:
                signal, weight = None, 0.0  # still unused: the earlier ignored row stands
            db.execute(
                f"UPDATE injections SET evaluated_at = ?, used = ? WHERE id IN ({','.join('?' * len(inj_ids))})",
                (now, 1.0 if verdict.used else 0.0, *inj_ids),
            )
            results.append(ImplicitResult(target, verdict, signal, weight, rule))
    return results


def apply_correction(mem: "Memory", turn_episode: Episode, *, at: str | None = None) -> list[str]:
    """The user corrected the agent's work in an already judged turn: each memory judged used and helpful in it
    becomes unhelpful (`implicit_corrected_weight`), dated `at`, when the user said so (default now). Returns the
    episode ids changed; a second call changes none."""
    db, cfg = mem.db, mem.config.bellman
    rows = db.query(
        "SELECT id, episode_id FROM feedback_events WHERE source = 'implicit' AND signal = 'helpful' "
        "AND json_extract(evidence, '$.turn') = ?",
        (turn_episode.id,),
    )
    with db.transaction():
        for row_id, episode_id in rows:
            _rewrite(
                db,
                cfg,
                row_id,
                episode_id,
                "unhelpful",
                cfg.implicit_corrected_weight,
                {"rule": CORRECTED_RULE},
                at=at or iso_utc(),
            )
    return [r[1] for r in rows]
