"""Per-turn facts: decisions, preferences, constraints and dependencies stated in a turn, kept in the fact graph.

The regexes of Temporal Reasoning (github.com/adityamukho/temporal_reasoning) kept only the word after "use" and
lost what was said about it: "never use MySQL" became a preference *for* MySQL. Here every statement keeps its
whole phrase as `:description` and its direction as `:polarity` (:for / :against), in the attributes
`entity_types.py` defines, plus a `:stated-in` edge to the episode (see `episode_datoms.py`) and the `:project` it
was stated in.

Stances belong to a project: one project's "never use MySQL" says nothing about another's "use MySQL". The entity
is named `:<kind>/<subject slug>.<project key>`, e.g. `:constraint/mysql.3f2a9c1b`: the kind stays the namespace
(what `entity_types.py` and the audit read), the slug says what it is about, and the key after the last '.' (a
slug never holds one) says whose it is, so two projects do not share an entity. The key is the first 8 characters
of the project id, the short id Tempera shows for a project elsewhere (two ids sharing it are a 1 in 4 billion
chance per pair); an id that is not lower-case hex (a hand-made one) is hashed first, since a keyword may hold
only some characters. Project names cannot serve: the same name at two paths is two projects. `:project` holds the
whole project id as a string, so a query joins stances to that project's episodes:
`[?s :project ?pid] [?ep :episode/project-id ?pid]`. A stance entity without `:project` is a global stance: one
written by hand, or one from before stances were per project that was stated in several projects (see the
migration in `schema.py`).

Storing follows valid time. A statement is valid from its turn's start. A newer statement closes what it
contradicts in the same project (`FactStore.change`): another value of a single-valued attribute on the same
entity, or a stance of the opposite polarity on the same subject ("use MySQL after all" ends "never use MySQL").
Re-running a turn adds nothing: a fact already recorded at that time is skipped, and a turn older than what the
graph already holds about the subject in that project (a late backfill) is stored as ending where the newer
statement begins, so it never closes anything newer and nothing flip-flops.
"""

from __future__ import annotations

import re
import uuid
from dataclasses import dataclass
from datetime import datetime, timezone
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Protocol

from tempera.core.forget import link_fact_tx
from tempera.core.redact import redact
from tempera.facts.entity_types import PROJECT, STANCES, STATED_IN, slug, stance_entity
from tempera.facts.store import FactStore
from tempera.facts.values import Keyword, Value, decode, to_ms

if TYPE_CHECKING:
    from tempera.core.memory import Memory
    from tempera.core.models import Episode


class TurnText(Protocol):
    """What this module reads of a turn: what was said and when. `transcripts/turns.py` `Turn` is one; the fact
    graph takes no transcript code, so the per-prompt `promptfacts.py` beside it loads none either."""

    @property
    def kind(self) -> str: ...  # prompt | command | continuation
    @property
    def prompt(self) -> str: ...
    @property
    def final_text(self) -> str: ...
    @property
    def prompt_uuid(self) -> str | None: ...
    @property
    def started_at(self) -> datetime | None: ...
    @property
    def ended_at(self) -> datetime | None: ...


FOR, AGAINST = Keyword(":for"), Keyword(":against")
SINGLE = (":description", ":polarity", ":subject", ":rationale")  # one current value per entity
MAX_PHRASE, MAX_REASON = 300, 1500

_CODE = re.compile(r"```.*?(?:```|\Z)", re.S)
_SENTENCE = re.compile(r"(?<=[.!?;])\s+|\n+")
_WORD = re.compile(r"[\w][\w.+#/@'-]*")
_BOUNDARY = re.compile(r"[,;:(]|\s[-—]\s")
_CLAUSE_END = re.compile(
    r",\s+(?=(?:it|this|that|we|i|you|they|but|and|so|which|though|although|otherwise|then|"
    r"please)\b)|\s(?:but|and then|—|-)\s",
    re.I,
)
_WHY = re.compile(r"\b(?:because|due to|given that|since (?:it|we|they|the))\b\s*(.+)$", re.I)
_COURTESY = re.compile(
    r"(?:(?:please|also|and|but|so|then|just|ok|okay|remember|note|fyi|hey|now|again)\b[\s,:]*)+", re.I
)
_HEDGE = re.compile(r"\b(?:if|whether|unless|maybe|perhaps|might|could|not|don't|doesn't|never|no)\b", re.I)
_QUESTION_START = re.compile(r"^(?:should|shall|do|does|can|could|would|will|what|which|how|why|is|are)\b", re.I)
_PLAN = re.compile(r"\s*(?:please\s+)?implement the following plan\b", re.I)
# What a stored stance may not be (see `well_formed`), fitted on the entire-cli sessions (evals/stance_precision.py)
_CONDITION = re.compile(r"\b(?:if|when|unless|whether|once)\b", re.I)
_PRONOUNS = frozenset({"this", "that", "these", "those", "it", "they", "which"})
UNSURE = ("i think", "i guess", "i believe", "probably", "likely", "maybe", "perhaps", "might", "could", "not sure")
_UNSURE = re.compile(rf"\b(?:{'|'.join(UNSURE)}|keep in mind|obviously|thoughts on)\b", re.I)
_DANGLING = frozenset({"a", "an", "the", "to", "of", "for", "and", "or", "with", "in", "on", "by", "as", "is"})
_TOOL_ERROR = re.compile(
    r"\((?:variable|value|constant) of (?:\w+ )?type\b|\bvalue in (?:argument|assignment|return)\b|"
    r"(?:^|\s)(?:undefined|error|warning|TS\d{4}|E\d{4})(?:\[\w+\])?:|\bexpected .+ (?:got|found)\b",
    re.I,
)
_PAIRS = ("()", "[]", "{}")
_TASK_AT_HAND = re.compile(r"\b(?:on this|this one|your|you need|we made|for now|first(?!-))\b", re.I)

LEADS = frozenset({"we", "you", "please", "and", "but", "so", "then", "also", "just", "should", "must"})
MODALS = frozenset({"should", "must"})  # "the function should use GetGitDir()": a rule with its subject
CHOICE_VERBS = frozenset(
    {
        "use",
        "using",
        "adopt",
        "add",
        "adding",
        "install",
        "introduce",
        "import",
        "pick",
        "choose",
        "depend",
        "rely",
        "go with",
        "switch to",
        "move to",
        "migrate to",
        "stick with",
        "stay with",
        "going with",
        "switching to",
        "moving to",
        "migrating to",
        "sticking with",
        "keep using",
    }
)
NOT_A_RULE = frozenset(
    {
        "be",
        "been",
        "have",
        "know",
        "think",
        "worry",
        "mind",
        "care",
        "understand",
        "see",
        "get",
        "want",
        "need",
        "like",
        "seem",
        "remember",
        "feel",
        "believe",
        "expect",
        "hesitate",
        "bother",
        "forget",
        "matter",
        "work",
        "exist",
        "happen",
        "help",
        "look",
        "really",
        "actually",
        "quite",
        "even",
        "just",
        "do",
        "go",
        "say",
        "tell",
        "ask",
        "agree",
        "mean",
        "find",
        "sure",
        "recall",
        "able",
        "wait",
    }
)
OBJECT_STOPS = frozenset(
    {
        "for",
        "in",
        "to",
        "with",
        "because",
        "since",
        "as",
        "instead",
        "over",
        "rather",
        "than",
        "when",
        "if",
        "unless",
        "and",
        "or",
        "but",
        "so",
        "after",
        "from",
        "on",
        "at",
        "by",
        "anymore",
        "again",
        "everywhere",
        "here",
        "there",
        "now",
        "please",
        "then",
        "ever",
        "whenever",
        "while",
        "until",
        "before",
        "any",
        "either",
        "anywhere",
        "across",
        "throughout",
        "without",
        "into",
        "is",
        "are",
        "was",
        "will",
        "would",
        "should",
        "only",
        "also",
        "too",
    }
)
DETERMINERS = frozenset({"the", "a", "an", "our", "any", "some", "this", "that", "these", "those", "your", "my"})
NOT_A_NAME = frozenset(
    {
        "whether",
        "how",
        "what",
        "which",
        "who",
        "it",
        "them",
        "that",
        "this",
        "your",
        "his",
        "her",
        "their",
        "its",
        "my",
        "me",
        "us",
        "you",
        "something",
        "anything",
        "going",
        "everything",
    }
)
_CHOICE = r"use|using|go with|switch to|adopt|stick with|move to|migrate to|keep using|keep|stay with|pick|choose"


@dataclass(frozen=True)
class _Trigger:
    kind: str
    polarity: Keyword
    pattern: re.Pattern[str]
    agent: bool  # may the agent's own text (or a plan pasted as a prompt) state it (else only the user)
    lead: bool  # must start its clause, or follow one of LEADS ("please never ...", "we always ...")


def _trigger(kind: str, polarity: Keyword, regex: str, *, agent: bool = False, lead: bool = False) -> _Trigger:
    return _Trigger(kind, polarity, re.compile(regex, re.I), agent, lead)


# Order matters: the first trigger to claim a span of a sentence wins it.
TRIGGERS = (
    _trigger(
        "dependency",
        AGAINST,
        r"\b(?:no longer|doesn't|does not|don't|do not|shouldn't|should not|must not)\s+"
        r"(?P<verb>depend|rely)\s+on\s+",
        agent=True,
    ),
    _trigger(
        "dependency",
        AGAINST,
        r"\b(?:drop|dropped|remove|removed)\s+the\s+(?P<obj>[\w.+#-]+)\s+dependency\b",
        agent=True,
    ),
    _trigger(
        "decision",
        AGAINST,
        r"\b(?:we(?:'ll| will)? not|we won't|let's not|lets not|we're not going to|"
        r"we are not going to|(?:we )?(?:have )?decided not to|no longer|stop)\s+"
        rf"(?P<verb>{_CHOICE}|add|adding|introduce)\b\s*",
        agent=True,
    ),
    _trigger("decision", AGAINST, r"\b(?:we )?(?:have )?decided against\s+(?:(?P<verb>using|adding)\s+)?", agent=True),
    _trigger("preference", AGAINST, r"\bprefer(?:s|red)? not to\s+(?P<verb>[a-z]+)\s+"),
    _trigger("preference", FOR, r"\bprefer(?:s|red)?\s+(?:to\s+(?P<verb>[a-z]+)\s+|using\s+)?"),
    _trigger("preference", AGAINST, r"\bavoid(?:ing)?\s+", lead=True),
    _trigger(
        "constraint",
        AGAINST,
        r"\b(?:never|do not|don't|dont|must not|mustn't|should not|shouldn't|may not)\s+(?:ever\s+)?"
        r"(?P<verb>[a-z]+)\b\s*",
        lead=True,
    ),
    _trigger(
        "constraint",
        FOR,
        r"\b(?:always|must always|should always|from now on,?|going forward,?)\s+"
        r"(?P<verb>[a-z]+)\b\s*",
        lead=True,
    ),
    _trigger(
        "decision",
        FOR,
        r"\b(?:we(?:'ll| will| shall|'re going to| are going to|'ve decided to| have decided to|"
        r" decided to| agreed to)|let's|lets|let us|(?:i )?(?:have )?decided to|"
        rf"the decision is to)\s+(?P<verb>{_CHOICE}|going with|switching to|moving to|"
        r"migrating to|sticking with)\b\s*",
        agent=True,
    ),
    _trigger("decision", FOR, r"\b(?:decided (?:on|for)|went with|we chose|we picked)\s+", agent=True),
    _trigger("dependency", FOR, r"\b(?:depends|depend|depending|relies|rely)\s+on\s+", agent=True),
    _trigger("decision", FOR, rf"\b(?P<verb>{_CHOICE})\b\s*", lead=True),  # imperative "use MySQL after all"
)


@dataclass(frozen=True)
class FactCandidate:
    """One statement of a turn: what kind of stance, about what, in which direction, in the speaker's words."""

    kind: str  # decision | preference | constraint | dependency
    subject: str  # what it is about, as written: "MySQL", "run ruff"
    polarity: Keyword  # FOR or AGAINST
    description: str  # the whole phrase: "never use MySQL for the billing service"
    rationale: str | None = None

    @property
    def slug(self) -> str:
        return slug(self.subject)

    @property
    def name(self) -> str:
        """The stance without its project, `:constraint/mysql`: one per kind and subject in a turn."""
        return f":{self.kind}/{self.slug}"

    def entity(self, project_id: str) -> Keyword:
        """The stance's entity in a project, `:constraint/mysql.3f2a9c1b`."""
        return stance_entity(self.kind, self.slug, project_id)

    def attributes(self) -> dict[str, Value]:
        out: dict[str, Value] = {":description": self.description, ":polarity": self.polarity, ":subject": self.subject}
        if self.rationale:
            out[":rationale"] = self.rationale
        return out


# -- extraction ------------------------------------------------------------------------------------------------


def extract_turn_facts(turn: TurnText) -> list[FactCandidate]:
    """The stances a turn states, the user's prompt first, then the agent's final text (secrets redacted first).
    One subject keeps one direction per turn: the first statement wins over a later opposite one. A continued
    session's first "prompt" is a compaction summary in the agent's words, not the user's: only its reply counts.
    A pasted plan ("Implement the following plan: ...") is the agent's words too: its imperative steps ("Keep X",
    "Use the Add() method") are this task's steps, not standing decisions."""
    prompt = "" if turn.kind == "continuation" else turn.prompt
    plan = bool(_PLAN.match(prompt))
    found = _extract(redact(prompt), agent=plan) + _extract(redact(turn.final_text), agent=True)
    direction: dict[str, Keyword] = {}
    kept: dict[str, FactCandidate] = {}
    for c in found:
        if direction.setdefault(c.slug, c.polarity) == c.polarity and c.name not in kept:
            kept[c.name] = c
    return list(kept.values())


def _extract(text: str, *, agent: bool) -> list[FactCandidate]:
    out: list[FactCandidate] = []
    for sentence in _SENTENCE.split(_CODE.sub(" ", text).replace("’", "'").replace("`", "")):
        sentence = sentence.strip().lstrip("-*#>0123456789. ").strip()
        if sentence and not sentence.endswith("?") and not _QUESTION_START.match(sentence):
            out += _from_sentence(sentence, agent=agent)
    return out


def _from_sentence(sentence: str, *, agent: bool) -> list[FactCandidate]:
    out: list[FactCandidate] = []
    claimed: list[tuple[int, int]] = []
    for trigger in TRIGGERS:
        for m in trigger.pattern.finditer(sentence):
            if any(s <= m.start() < e for s, e in claimed):
                continue
            found = _candidates(sentence, m, trigger, agent=agent)
            if found:
                claimed.append((m.start(), max(m.end(), m.start() + 1)))
                out += found
    return out


def _candidates(sentence: str, m: re.Match[str], trigger: _Trigger, *, agent: bool) -> list[FactCandidate]:
    start = _clause_start(sentence, m.start())
    prefix = sentence[start : m.start()].strip().lower()
    last = prefix.split()[-1] if prefix else ""
    if trigger.lead and any(w not in LEADS for w in prefix.split()) and last not in MODALS:
        return []  # "X returns early and never runs it": a description of X, not a rule
    if (agent and not trigger.agent) or _CONDITION.search(sentence, 0, start):
        return []  # "we avoid reading ...": the agent describing code; "if X, always Y": Y alone would be wrong
    if trigger.polarity == FOR and _HEDGE.search(prefix):
        return []
    verb = (m.groupdict().get("verb") or "").lower()
    if verb in NOT_A_RULE or (trigger.lead and not prefix and verb.endswith("ing")):
        return []  # "Using a common format that ...": a gerund, not an imperative
    obj, after = (m.group("obj"), m.end()) if m.groupdict().get("obj") else _object(sentence, m.end())
    if trigger.kind == "decision" and verb and trigger.lead and sentence[after:].lstrip().startswith("to "):
        return []  # "use grep to find it": a means, not a choice
    choice = not verb or verb in CHOICE_VERBS
    subject = obj if choice else f"{verb} {obj}".strip()
    if (choice and not obj) or not slug(subject) or (obj.split() or [""])[0].lower() in NOT_A_NAME:
        return []
    phrase = _phrase(sentence, start, after)
    if not well_formed(phrase) or (trigger.kind == "dependency" and not prefix and trigger.polarity == FOR):
        return []  # "relies on end-of-line as delimiter": what relies on it is not said
    why = _WHY.search(phrase)
    rationale = why.group(1).strip(" .") if why else None
    out = [FactCandidate(trigger.kind, subject, trigger.polarity, phrase, rationale)]
    alternative = re.match(r"\s*(?:over|to|rather than|instead of|than)\s+(?:using\s+)?", sentence[after:], re.I)
    if trigger.kind != "dependency" and trigger.polarity == FOR and alternative and choice:
        other, _ = _object(sentence, after + alternative.end())
        if other and slug(other) != slug(subject) and not other.split()[0].lower().endswith("ing"):
            out.append(FactCandidate(trigger.kind, other, AGAINST, phrase, rationale))  # "X over Y": against Y
    return out


def well_formed(phrase: str) -> bool:
    """Whether a stance's phrase is a whole, sure statement worth keeping: brackets balanced and no markup left
    ("keep existing)", "Use SilentError**: When ..."), not cut off ("... by checkpoint view t", "things like:"),
    not a hedge ("I think we should ...", "probably"), not a compiler's or tool's error ("cannot use x (variable of
    type string) as ..."), not about the task at hand ("use the reviewer superpower on this")."""
    words = phrase.rstrip(".!?").split()
    if not words or any(phrase.count(a) != phrase.count(b) for a, b in _PAIRS) or "**" in phrase:
        return False
    last = words[-1]
    if words[0].lower() in _PRONOUNS:
        return False  # "This doesn't depend on line numbers": what it is about is not said
    cut = phrase.endswith((":", "(", "-", ",")) or (len(last) == 1 and last.isalpha()) or last.lower() in _DANGLING
    return not (cut or _UNSURE.search(phrase) or _TOOL_ERROR.search(phrase) or _TASK_AT_HAND.search(phrase))


def _clause_start(sentence: str, at: int) -> int:
    """Where the clause holding position `at` begins, after a comma or the like and any "please", "also" ..."""
    bounds = [b.end() for b in _BOUNDARY.finditer(sentence, 0, at)]
    start = bounds[-1] if bounds else 0
    while start < at and sentence[start].isspace():
        start += 1
    courtesy = _COURTESY.match(sentence, start, at)
    return courtesy.end() if courtesy else start


def _object(sentence: str, at: int) -> tuple[str, int]:
    """The noun phrase after a verb, up to four words, stopping at a preposition or conjunction."""
    words: list[str] = []
    end = at
    for w in _WORD.finditer(sentence, at):
        if sentence[end : w.start()].strip() or len(words) == 4:
            break  # punctuation in between, or long enough
        token = w.group().rstrip(".'-")
        if token.lower() in OBJECT_STOPS:
            break
        if words or token.lower() not in DETERMINERS:
            words.append(token)
        end = w.start() + len(token)
    return " ".join(words), end


def _phrase(sentence: str, start: int, after: int) -> str:
    stop = _CLAUSE_END.search(sentence, after)
    phrase = sentence[start : stop.start() if stop else len(sentence)].strip().rstrip(".!;, ")
    return phrase[:MAX_PHRASE].rstrip()


# -- storing -----------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class _Datom:
    e: str
    a: str
    value: Value
    valid_from: int
    valid_to: int | None

    def holds_at(self, ms: int) -> bool:
        return self.valid_from <= ms and (self.valid_to is None or self.valid_to > ms)


@dataclass
class _Writes:
    """What one turn writes: open-ended facts (closing what they contradict) and facts of a late backfill."""

    add: list[tuple[Keyword, Keyword, Value]]
    close: list[tuple[Keyword, Keyword, Value]]
    bounded: list[tuple[list[tuple[Keyword, Keyword, Value]], int]]  # (facts, valid-to)


def store_turn_facts(mem: "Memory", turn: TurnText, episode: "Episode") -> list[int]:
    """Store the turn's stances valid from the turn's start, with the redacted turn text as the reason; returns the
    fact transactions made (each linked to the episode, so forgetting it undoes them). Idempotent."""
    candidates = extract_turn_facts(turn)
    if not candidates:
        return []
    moment = turn.started_at or turn.ended_at or episode.created_at
    moment = moment if moment.tzinfo else moment.replace(tzinfo=timezone.utc)
    reason = _reason(turn)
    store = FactStore(mem.db)
    with mem.db.transaction():
        writes = _plan(store, candidates, to_ms(moment), _episode_ref(episode), episode.project_id)
        results = (
            [store.change(add=writes.add, close=writes.close, at=moment, reason=reason)]
            if writes.add or writes.close
            else []
        )
        results += [
            store.transact(
                facts, reason=reason, valid_from=moment, valid_to=datetime.fromtimestamp(until / 1000, timezone.utc)
            )
            for facts, until in writes.bounded
        ]
        txs = [r.tx for r in results if r.tx is not None]
        for tx in txs:
            link_fact_tx(mem.db, episode.id, tx)
    return txs


def process_capture_facts(mem: "Memory", turns: Iterable[TurnText], episodes: Sequence["Episode"]) -> int:
    """`store_turn_facts` for every turn whose episode a capture leaves to learn from (`CaptureResult.learning`,
    matched to the turns by the prompt record's uuid); returns the number of fact transactions made."""
    if not episodes:
        return 0
    episode_of = {u: ep for ep in episodes for u in ep.source.record_uuids}
    made = 0
    for turn in turns:
        episode = episode_of.get(turn.prompt_uuid or "")
        if episode is not None:
            made += len(store_turn_facts(mem, turn, episode))
    return made


def _reason(turn: TurnText) -> str:
    """The turn's text, redacted before it is clipped (a clipped secret no longer matches its pattern)."""
    text = " ".join(redact(f"User: {turn.prompt}\nAssistant: {turn.final_text}").split())
    return text if len(text) <= MAX_REASON else text[: MAX_REASON - 1] + "…"


def _episode_ref(episode: "Episode") -> uuid.UUID | None:
    try:
        return uuid.UUID(episode.id)
    except ValueError:
        return None


def _group(store: FactStore, subject_slug: str, project_id: str) -> list[_Datom]:
    """Every not-retracted datom about one subject in one project, across the four stance types."""
    entities = [str.__str__(stance_entity(kind, subject_slug, project_id)) for kind in STANCES]
    rows = store.db.query(
        "SELECT e, a, vt, v, valid_from, valid_to FROM fact_datoms WHERE e IN (?, ?, ?, ?) AND retracted_tx IS NULL",
        entities,
    )
    return [_Datom(e, a, decode(vt, v), vf, vto) for e, a, vt, v, vf, vto in rows]


def _plan(
    store: FactStore, candidates: list[FactCandidate], at: int, episode: uuid.UUID | None, project_id: str
) -> _Writes:
    writes = _Writes([], [], [])
    for c in candidates:
        rows = _group(store, c.slug, project_id)
        entity, values = str.__str__(c.entity(project_id)), c.attributes()
        wanted = (
            [(entity, a, v) for a, v in values.items()]
            + [(entity, PROJECT, project_id)]
            + ([(entity, STATED_IN, episode)] if episode else [])
        )
        new = [
            _fact(*f)
            for f in wanted
            if not any((r.e, r.a) == f[:2] and r.value == f[2] and r.holds_at(at) for r in rows)
        ]
        if not new:
            continue
        later = [r.valid_from for r in rows if r.valid_from > at]
        if later:  # the graph already knows something newer about this subject: this statement ended there
            writes.bounded.append((new, min(later)))
            continue
        writes.add += new
        opposed = {
            r.e for r in rows if r.e != entity and r.a == ":polarity" and r.value != c.polarity and r.holds_at(at)
        }
        writes.close += [
            _fact(r.e, r.a, r.value)
            for r in rows
            if r.holds_at(at) and (r.e in opposed or (r.e == entity and r.a in SINGLE and r.value != values.get(r.a)))
        ]
    return writes


def _fact(e: str, a: str, value: Value) -> tuple[Keyword, Keyword, Value]:
    return Keyword(e), Keyword(a), value
