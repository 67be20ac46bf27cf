"""Facts for a prompt (UserPromptSubmit): what the graph holds about the things a prompt names, as plain lines.

Runs on every prompt in the warm daemon, so it is a few indexed SQL queries and no Datalog compilation:
- stances (decisions, preferences, constraints, dependencies) whose subject the prompt names: by an identifier,
  path or file name it writes (`REMEDIATION_BATCH_SIZE`, `GetGitDir`, `os.path`, `auth.py`), by a name the stance
  writes as one (`MySQL`, `Postgres`), or by two of the subject's words standing together; never by a stop word
  or a word of fewer than three letters ("what's" is no mention of `go-git's`). The first two are
  `FactLine.named`; a stance found by words alone is weaker evidence, and the caller may hold it back when it has
  been shown too often. Candidates come from an in-memory index of slug words kept per database and rebuilt after
  each fact transaction; given a project, only that project's stances and the global ones (no :project, see
  turnfacts.py);
- other entities the prompt names: a keyword such as `:module/auth` or `:service/payment` built from the
  prompt's words, or a `:name` / `:path` value written in it, with all their facts (named, too).
A prompt that asks about a moment ("before 2026-03-01", "as of 2026-01-15", "on March 3 2026") gets the facts
valid then instead of now; if it names nothing but a kind of stance ("what did we decide before ..."), the
stances of that kind valid then. Each line states a fact with its valid time; none is phrased as an instruction.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Collection, Sequence
from dataclasses import dataclass
from datetime import date, datetime, time, timedelta, timezone
from itertools import combinations, pairwise
from typing import TYPE_CHECKING, Any

from tempera.core.textsearch import name_terms
from tempera.facts.entity_types import PROJECT, STANCES, slug, stance_subject
from tempera.facts.schema import has_fact_graph
from tempera.facts.values import Value, decode, ms_to_iso, to_ms

if TYPE_CHECKING:
    from tempera.core.db import Database
    from tempera.core.memory import Memory

MAX_WORDS = 40  # a pasted log must not turn into thousands of lookups
MAX_CANDIDATES = 200  # stances fetched per prompt, the ones sharing the most words with it first
NAMESPACES = (
    "module",
    "file",
    "function",
    "class",
    "package",
    "service",
    "project",
    "component",
    "library",
    "tool",
    "commit",
)
KIND_WORDS = {
    "decision": "decision",
    "decisions": "decision",
    "decide": "decision",
    "decided": "decision",
    "preference": "preference",
    "preferences": "preference",
    "prefer": "preference",
    "preferred": "preference",
    "constraint": "constraint",
    "constraints": "constraint",
    "rule": "constraint",
    "rules": "constraint",
    "dependency": "dependency",
    "dependencies": "dependency",
    "depend": "dependency",
    "depended": "dependency",
}
STOP_WORDS = frozenset(
    """a about above after again against all also am an and any are as at be because been before
being below between both but by can could did do does doing don done down during each else even ever every few for
from further get got had has have having he her here hers him his how i if in into is it its itself just let like
make may me might more most much must my no nor not now of off ok okay on once only or other our ours out over own
please same she should so some still such than thank thanks that the their theirs them then there these they this
those through to too under until up us use used uses using very want was way we well were what when where which
while who whom why will with would yes yet you your yours back new one two add fix run see look need sure today
tomorrow yesterday currently current last next first""".split()
)
_TOKEN = re.compile(r"[A-Za-z0-9][\w.+#/@-]*[\w+#]|[A-Za-z0-9]")
_DOTTED_NAME = re.compile(r"[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)+")  # pkg.Func, os.path
_ACRONYM = re.compile(r"[A-Z][A-Z0-9]{2,}")  # JWT, SQS, S3A
MIN_WORD = 3  # a shorter token names nothing ("s" of "what's", "os", "go")
NEAR = 3  # two words of a stance's subject name it when they stand at most this far apart in the prompt
_MONTHS = ("jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec")
_DATE = re.compile(
    r"\b(?P<signal>before|prior to|until|till|up to|as of|on|at|by|after|since|in)\s+(?:the\s+)?"
    r"(?:(?P<iso>\d{4}-\d{2}-\d{2})(?:[T ](?P<clock>\d{2}:\d{2}(?::\d{2})?))?"
    r"|(?P<mon>jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)[a-z]*\.?\s+(?P<md>\d{1,2})(?:st|nd|rd|th)?,?\s+"
    r"(?P<my>\d{4})"
    r"|(?P<dm>\d{1,2})(?:st|nd|rd|th)?\s+(?:of\s+)?(?P<dmon>jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)[a-z]*"
    r"\.?,?\s+(?P<dy>\d{4}))\b",
    re.I,
)


@dataclass(frozen=True)
class Moment:
    """The time a prompt asks about, and how to name it in the lines ("before 2026-03-01")."""

    ms: int
    label: str


@dataclass(frozen=True)
class FactLine:
    """One fact for the prompt and how the prompt named it: `named` by an identifier, path or name; else only by
    two words of its subject."""

    text: str
    named: bool


@dataclass(frozen=True)
class _Row:
    e: str
    a: str
    value: Value
    valid_from: int
    valid_to: int | None

    @property
    def kind(self) -> str:
        return self.e[1:].split("/", 1)[0]


def prompt_facts(
    mem: "Memory", prompt: str, *, project_id: str | None = None, now: datetime | None = None, limit: int = 8
) -> list[FactLine]:
    """Facts about what the prompt names, valid now (or at the moment it asks about), one plain line each; with
    `project_id`, stances of other projects are left out."""
    if limit <= 0 or not has_fact_graph(mem.db):
        return []
    moment = prompt_moment(prompt)
    at = moment.ms if moment else to_ms(now or datetime.now(timezone.utc))
    words = prompt_words(prompt)
    stances = _stances(mem, words, at, limit, project_id, prompt=prompt) if words else []
    lines = [FactLine(_stance_line(r, moment), named) for r, named in stances]
    if len(lines) < limit:
        lines += [FactLine(t, True) for t in _entity_lines(mem, prompt, words, at, moment, limit - len(lines))]
    kinds = sorted({KIND_WORDS[w] for w in re.findall(r"[a-z]+", prompt.lower()) if w in KIND_WORDS})
    if not lines and moment and kinds:
        lines = [FactLine(_stance_line(r, moment), True) for r, _ in _stances(mem, None, at, limit, project_id, kinds)]
    return lines[:limit]


def prompt_words(prompt: str) -> list[str]:
    """The prompt's distinct words as slug parts, stop words, bare numbers and words under three letters left out,
    in order."""
    words = [slug(t) for t in _TOKEN.findall(prompt)]
    parts = [p for w in words for p in w.split("-") if len(p) >= MIN_WORD and p not in STOP_WORDS and not p.isdigit()]
    return list(dict.fromkeys(parts))[:MAX_WORDS]


def named_slugs(prompt: str) -> set[str]:
    """The identifiers, paths, file names, dotted names and acronyms the prompt writes, as slugs
    (`REMEDIATION_BATCH_SIZE` -> `remediation-batch-size`, `src/auth.py` -> `auth-py`)."""
    tokens = _TOKEN.findall(prompt)
    names = name_terms(prompt) + [t for t in tokens if _DOTTED_NAME.fullmatch(t) or _ACRONYM.fullmatch(t)]
    return {s for s in map(slug, names) if len(s) >= MIN_WORD}


def written_names(text: str) -> set[str]:
    """The words a stance writes as names, as slugs: a capital inside a word (MySQL) or past the first word
    (Postgres, Linear), or letters with digits (ed25519). A part of an identifier is no name
    (`REMEDIATION_BATCH_SIZE` is named whole, see `named_slugs`)."""
    tokens = _TOKEN.findall(text)
    return {
        slug(t)
        for i, t in enumerate(tokens)
        if any(c.isupper() for c in t[1:])
        or (i > 0 and t[0].isupper())
        or (any(c.isdigit() for c in t) and any(c.isalpha() for c in t))
    }


def prompt_moment(prompt: str) -> Moment | None:
    """The moment a prompt asks about: "before D" is the instant before D starts, "after D" the start of the next
    day, "as of / on / by D" the end of D (a time of day, when given, is taken as it is). UTC."""
    m = _DATE.search(prompt)
    if m is None:
        return None
    try:
        day, clock = _day(m), m.group("clock")
    except ValueError:
        return None  # "on 2026-02-30"
    signal = m.group("signal").lower()
    start = datetime.combine(day, time.fromisoformat(clock) if clock else time.min, tzinfo=timezone.utc)
    named = f"{day.isoformat()} {clock}" if clock else day.isoformat()
    if signal in ("before", "prior to"):
        return Moment(to_ms(start) - 1, f"before {named}")
    if signal == "after":
        return Moment(to_ms(start if clock else start + timedelta(days=1)), f"after {named}")
    return Moment(to_ms(start) if clock else to_ms(start + timedelta(days=1)) - 1, f"as of {named}")


def _day(m: re.Match[str]) -> date:
    if m.group("iso"):
        return date.fromisoformat(m.group("iso"))
    if m.group("md"):
        return date(int(m.group("my")), _MONTHS.index(m.group("mon").lower()) + 1, int(m.group("md")))
    return date(int(m.group("dy")), _MONTHS.index(m.group("dmon").lower()) + 1, int(m.group("dm")))


# -- queries ---------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class _SlugIndex:
    words: dict[str, set[str]]  # slug word -> the stance entities whose subject holds it
    projects: dict[str, str]  # stance entity -> its project id (global stances have none)

    def shown(self, entity: str, project_id: str | None) -> bool:
        return project_id is None or self.projects.get(entity, project_id) == project_id

    def subject(self, entity: str) -> str:
        return stance_subject(entity, keyed=entity in self.projects)


_SLUG_INDEX: dict[str, tuple[tuple[int, ...], _SlugIndex]] = {}  # per database file, see _slug_index
_VALID = "retracted_tx IS NULL AND valid_from <= :at AND (valid_to IS NULL OR valid_to > :at)"
_KIND = "substr(e, 2, instr(e, '/') - 2)"
_STANCE_KINDS = f"{_KIND} IN ({', '.join(repr(k) for k in STANCES)})"
_OTHER_PROJECT = f"SELECT e FROM fact_datoms WHERE a = '{PROJECT}' AND (vt != 4 OR v != :project)"


def _stances(
    mem: "Memory",
    words: Sequence[str] | None,
    at: int,
    limit: int,
    project_id: str | None,
    kinds: Sequence[str] = STANCES,
    prompt: str = "",
) -> list[tuple[_Row, bool]]:
    """Stance descriptions valid at `at`, of the project (and global ones) if one is given, each with whether it was
    named (`_named`): those whose subject the prompt names (`_mention`; named first, then most words shared, then
    the latest), or with `words` None the latest of the given kinds."""
    params: dict[str, Any] = {"at": at, "limit": limit, "project": project_id}
    index = _slug_index(mem.db)
    if words is None:
        params["kinds"] = json.dumps(list(kinds))
        mine = f"AND e NOT IN ({_OTHER_PROJECT}) " if project_id is not None else ""
        where = f"{_KIND} IN (SELECT value FROM json_each(:kinds)) {mine}ORDER BY valid_from DESC LIMIT :limit"
    else:
        score = Counter(e for w in words for e in index.words.get(w, ()) if index.shown(e, project_id))
        if not score:
            return []
        params["entities"] = json.dumps([e for e, _ in score.most_common(MAX_CANDIDATES)])
        where = "e IN (SELECT value FROM json_each(:entities))"
    rows = [
        _Row(e, ":description", v, vf, vto)
        for e, v, vf, vto in mem.db.query(
            f"SELECT e, v, valid_from, valid_to FROM fact_datoms WHERE a = ':description' AND {_VALID} AND {where}",
            params,
        )
    ]
    if words is None:
        return [(r, True) for r in rows]
    names, places = named_slugs(prompt), _places(prompt)
    found = [(r, m) for r in rows if (m := _mention(r, index.subject(r.e), names, places)) is not None]
    return sorted(found, key=lambda f: (not f[1], -score[f[0].e], -f[0].valid_from))[:limit]


def _places(prompt: str) -> dict[str, list[int]]:
    """Where each slug word stands in the prompt (the index of the word among all its slug words)."""
    parts = [p for t in _TOKEN.findall(prompt) for p in slug(t).split("-")]
    places: dict[str, list[int]] = {}
    for i, p in enumerate(parts):
        if len(p) >= MIN_WORD and p not in STOP_WORDS and not p.isdigit():
            places.setdefault(p, []).append(i)
    return places


def _mention(row: _Row, subject: str, names: Collection[str], places: dict[str, list[int]]) -> bool | None:
    """How the prompt names a stance: True by an identifier it writes (a run of the subject's slug) or by a word the
    stance writes as a name, False by two of the subject's words standing together in the prompt (at most
    NEAR words apart: "true ... false" across a pasted log is no mention of `true/false`), None not at all."""
    if any(f"-{n}-" in f"-{subject}-" for n in names):
        return True
    shared = [w for w in dict.fromkeys(subject.split("-")) if w in places]
    if set(shared) & written_names(str(row.value)):
        return True
    together = any(abs(i - j) <= NEAR for a, b in combinations(shared, 2) for i in places[a] for j in places[b])
    return False if together else None


def _slug_index(db: "Database") -> _SlugIndex:
    """Slug word -> the stance entities whose subject holds it, and each entity's project, rebuilt when the last
    fact transaction changes (the pair (tx, at) also tells a transaction that `forget` undid from a new one that
    reused its number) or the last datom does (a migration writes datoms without a transaction). Lets each prompt
    look up only the stances it may name instead of testing every description. The project key at the end of a
    per-project entity's name is no subject word."""
    last = tuple(
        db.one("SELECT tx, at, (SELECT max(id) FROM fact_datoms) FROM fact_tx ORDER BY tx DESC LIMIT 1") or (0, 0, 0)
    )
    cached = _SLUG_INDEX.get(str(db.path))
    if cached is None or cached[0] != last:
        projects = dict(
            db.query(f"SELECT DISTINCT e, v FROM fact_datoms WHERE a = '{PROJECT}' AND vt = 4 AND {_STANCE_KINDS}")
        )
        words: dict[str, set[str]] = {}
        for (e,) in db.query(f"SELECT DISTINCT e FROM fact_datoms WHERE a = ':description' AND {_STANCE_KINDS}"):
            for word in stance_subject(e, keyed=e in projects).split("-"):
                words.setdefault(word, set()).add(e)
        cached = _SLUG_INDEX[str(db.path)] = (last, _SlugIndex(words, projects))
    return cached[1]


def _entity_lines(
    mem: "Memory", prompt: str, words: list[str], at: int, moment: Moment | None, limit: int
) -> list[str]:
    """One line per non-stance entity the prompt names by keyword, :name or :path (no stop word, nothing shorter
    than three letters: "The" or "s" names no function)."""
    tokens = (t.rstrip(".") for t in _TOKEN.findall(prompt))
    raw = list(dict.fromkeys(t for t in tokens if len(t) >= MIN_WORD and t.lower() not in STOP_WORDS))[:MAX_WORDS]
    names = words + [f"{a}-{b}" for a, b in pairwise(words)] + [t for t in raw if "." in t or "_" in t]
    keys = [f":{ns}/{n}" for ns in NAMESPACES for n in names]
    values = list(dict.fromkeys(v for t in raw for v in (t, t.lower(), t.capitalize(), t.upper())))
    if not keys and not values:
        return []
    rows = mem.db.query(
        f"SELECT e, a, vt, v, valid_from, valid_to FROM fact_datoms WHERE {_VALID} AND e IN ("
        "SELECT value FROM json_each(:keys) UNION SELECT e FROM fact_datoms WHERE a IN (':name', ':path') "
        "AND vt = 4 AND v IN (SELECT value FROM json_each(:values))) "
        f"AND NOT ({_STANCE_KINDS}) ORDER BY e, a, v LIMIT 200",
        {"at": at, "keys": json.dumps(keys), "values": json.dumps(values)},
    )
    entities: dict[str, list[_Row]] = {}
    for e, a, vt, v, vf, vto in rows:
        entities.setdefault(e, []).append(_Row(e, a, decode(vt, v), vf, vto))
    return [_entity_line(facts, moment) for facts in list(entities.values())[:limit]]


# -- lines -----------------------------------------------------------------------------------------------------


def _day_of(ms: int | None) -> str:
    return (ms_to_iso(ms) or "")[:10]


def _span(valid_from: int, valid_to: int | None) -> str:
    return f"since {_day_of(valid_from)}" if valid_to is None else f"{_day_of(valid_from)} to {_day_of(valid_to)}"


def _stance_line(row: _Row, moment: Moment | None) -> str:
    text = str(row.value).rstrip(" .")
    line = f"{row.kind.capitalize()} ({_span(row.valid_from, row.valid_to)}): {text}."
    return f"{moment.label.capitalize()}: {line}" if moment else line


def _entity_line(facts: list[_Row], moment: Moment | None) -> str:
    by_attribute: dict[str, list[str]] = {}
    for r in facts:
        by_attribute.setdefault(r.a.lstrip(":"), []).append(str(r.value))
    parts = [f"{a} {', '.join(vs[:5])}{' …' if len(vs) > 5 else ''}" for a, vs in by_attribute.items()]
    first = min(facts, key=lambda r: r.valid_from)
    line = f"{facts[0].e} ({_span(first.valid_from, None)}): {'; '.join(parts)}."
    return f"{moment.label.capitalize()}: {line}" if moment else line
