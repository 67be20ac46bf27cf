"""Identifier-aware text for FTS5. Standard library only: the hooks' keyword path uses it.

FTS5's unicode61 tokenizer (with `_` as a token character) keeps snake_case whole; we add the parts of
identifiers (snake_case, CamelCase, digits) and a joined form of dotted names and paths, to documents and
queries alike, so `NODE_ENV`, `getUserById`, `os.path.join`, `src/auth/login.py` and `TS2345` are all findable
whole or by their parts.
"""

from __future__ import annotations

from collections.abc import Iterable
from functools import lru_cache
import re

_WORD = re.compile(r"\w+")
# starts only at a word boundary and never backtracks into a word, so a 20k-char "word" stays linear
_DOTTED = re.compile(r"(?<!\w)\w++(?:[./\\:-]\w++)+")
_CAMEL = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|\d+")

STOPWORDS = frozenset(
    """
a about above after again all also am an and any are as at be been before being below between both but by can
could did do does doing done down during each few for from further had has have having he her here hers him his
how i if in into is it its itself just me more most my no nor not now of off on once only or other our ours out
over own please same she should so some such than that the their them then there these they this those through
to too under until up very was we were what when where which while who whom why will with would you your yours
let lets make sure get got use using used thing things like want need via one two
""".split()
)


def _parts(word: str) -> list[str]:
    out: list[str] = []
    pieces = [p for p in word.split("_") if p] if "_" in word else [word]
    if len(pieces) > 1:
        out.extend(pieces)
    for piece in pieces:
        camel = _CAMEL.findall(piece)
        if len(camel) > 1:
            out.extend(camel)
    return out


def expand(text: str) -> str:
    """The text plus identifier parts and joined dotted/path forms, for indexing."""
    extra: list[str] = []
    for m in _DOTTED.finditer(text):
        chunk = m.group(0)
        extra.append(re.sub(r"\W+", "_", chunk))
        tail = re.split(r"[/\\]", chunk)[-1]
        if tail != chunk and "." in tail:
            extra.append(re.sub(r"\W+", "_", tail))
    for word in _WORD.findall(text):
        extra.extend(_parts(word))
    return text + ("\n" + " ".join(extra) if extra else "")


QUERY_CHARS = 4000  # the start of a huge prompt says what it is about; the rest only costs time


def query_terms(text: str, limit: int = 40, *, max_chars: int = QUERY_CHARS) -> list[str]:
    """Distinct lowercase search terms of a query (its first `max_chars`), stopwords dropped."""
    return list(_terms(text[:max_chars])[:limit])


@lru_cache(maxsize=4096)
def _terms(text: str) -> tuple[str, ...]:
    """Every search term of a text, in order. Cached: one prompt is tokenised for the gate, the thin-prompt test,
    the search, each of its words' coverage and the time step (36 times for a plan prompt, 1 ms of its time), and the
    warm daemon meets the same logged prompts and episode summaries prompt after prompt."""
    seen: dict[str, None] = {}
    for tok in _WORD.findall(expand(text)):
        t = tok.lower().strip("_")
        if len(t) < 2 or t in STOPWORDS or t.isdigit() and len(t) < 3:
            continue
        seen.setdefault(t, None)
    return tuple(seen)


NAME_CHARS = 20000  # names (file paths, identifiers) are looked for further into a long prompt than its terms
_FILE_TAIL = re.compile(r"\w{2,}\.[A-Za-z]\w{0,4}")
_IDENTIFIER = re.compile(r"[A-Za-z]\w*(?:_[A-Za-z0-9]|[a-z0-9][A-Z])\w*")


def name_spans(text: str, *, max_chars: int = NAME_CHARS) -> list[str]:
    """The code names a prompt mentions as it writes them, each mention (files first, then identifiers): a file's
    name without its folders or line (`cmd/entire/cli/root.go:12` -> `root.go`), and identifiers with an inner `_`
    or capital (`loadSettingsFromFile`, `reserve_inventory`) other than the start of a named file's name."""
    files = []
    for m in _DOTTED.finditer(text[:max_chars]):
        tail = re.split(r"[/\\]", m.group(0))[-1].split(":")[0]  # common.go:1279:10 -> common.go
        if _FILE_TAIL.fullmatch(tail):
            files.append(tail)
    joined = [re.sub(r"\W+", "_", f).lower() for f in files]
    return files + [
        w
        for w in _IDENTIFIER.findall(text[:max_chars])  # explain_test of explain_test.go is that file
        if not any(j.startswith(w.lower().strip("_") + "_") for j in joined)
    ]


def name_terms(text: str, limit: int = 20, *, max_chars: int = NAME_CHARS) -> list[str]:
    """The code names a prompt mentions (`name_spans`), as the index holds them (see `expand`): each file's name
    joined (`committed.go` -> `committed_go`, whatever folder it is named with), identifiers lowercased. Plain words
    and people's names are none: an episode that shares a file or identifier with the prompt worked on the same
    code, which shared words do not show."""
    seen: dict[str, None] = {}
    for span in name_spans(text, max_chars=max_chars):
        seen.setdefault(re.sub(r"\W+", "_", span).lower() if "." in span else span.lower().strip("_"), None)
    return list(seen)[:limit]


# Words that acknowledge or steer a conversation without naming anything to look up ("continue", "sounds good",
# "go ahead", "thanks", "let's implement this", "sorry, resume"): a prompt made only of these and stopwords has no
# content to retrieve for, and capture folds it into the request it answers (`transcripts/turns.py` `continued`).
ACKNOWLEDGEMENTS = frozenset(
    """
ok okay kk yes yeah yep yup yea sure fine good great cool nice perfect awesome excellent right correct agreed
alright lgtm thanks thank thx ty cheers continue proceed go ahead carry keep going next sounds looks seems
exactly indeed absolutely definitely hmm hm um uh ah oh wow hi hello hey sorry resume implement try works
""".split()
)


def content_terms(text: str) -> list[str]:
    """The query terms that name something: empty for "continue", "yes", "sounds good", "do it", or a lone "?"."""
    return [t for t in query_terms(text) if t not in ACKNOWLEDGEMENTS]


def term_set(text: str) -> set[str]:
    """Every search term of a whole document, to count which query terms it contains."""
    return {t.lower() for t in _WORD.findall(expand(text))}


def jaccard(a: Iterable[str], b: Iterable[str]) -> float:
    """The overlap of two term sets over their union (0 when both are empty)."""
    sa, sb = set(a), set(b)
    return len(sa & sb) / len(sa | sb) if sa | sb else 0.0


def stem(term: str) -> str:
    """A light suffix stripper for counting matched terms the way the stemmed index (Porter) matches them:
    "painted", "painting" and "paints" -> "paint"; "fixes" -> "fix"; "libraries" -> "library"."""
    w = term.lower()
    if len(w) <= 4 or not w.isalpha():
        return w
    if w.endswith("ies"):
        w = w[:-3] + "y"
    elif w.endswith("es") and w[-3] in "sxz" or w.endswith(("ches", "shes")):
        w = w[:-2]
    elif w.endswith("s") and not w.endswith(("ss", "us", "is")):
        w = w[:-1]
    for suffix in ("ing", "ed", "ly"):
        if w.endswith(suffix) and len(w) - len(suffix) >= 3:
            w = w[: -len(suffix)]
            if w[-1] == w[-2] and w[-1] not in "lsz":  # running -> run
                w = w[:-1]
            break
    return w[:-1] if w.endswith("e") and len(w) > 4 else w


def query_words(text: str, limit: int = 40) -> list[list[str]]:
    """The query's search terms grouped by the word the prompt wrote (split at whitespace): a path or identifier is
    one word however many parts `expand` indexes it by, and a text holds it when it holds all of them (a text
    saying "orders" does not hold `src/orders/totals_calc.py`)."""
    out: dict[tuple[str, ...], None] = {}
    for chunk in text[:QUERY_CHARS].split():
        if group := tuple(query_terms(chunk)):
            out.setdefault(group, None)
    return [list(g) for g in out][:limit]


def matched(terms: list[str], text: str) -> int:
    """How many of the query terms a document contains, up to their stems."""
    body = _stems(text)
    return sum(1 for t in terms if stem(t) in body)


@lru_cache(maxsize=2048)
def _stems(text: str) -> frozenset[str]:
    """The stems of a document's terms. The warm daemon counts the matched terms of the same episodes prompt after
    prompt, and an episode that holds a plan is thousands of words to split and stem each time (3 ms of a plan
    prompt's answer on the real sessions' store)."""
    return frozenset(stem(t) for t in term_set(text))


def fts_query(
    terms: list[str], project_id: str | None = None, *, transferable: bool = False, every: bool = False
) -> str | None:
    """An FTS5 MATCH expression that ORs the terms (ANDs them with `every`; each quoted, so nothing is parsed as
    syntax); with a project, only its episodes, and with `transferable` the transferable ones of others too (see
    `scope_tokens`)."""
    if not terms:
        return None
    match = (" AND " if every else " OR ").join(f'"{t}"' for t in terms)
    if project_id is None:
        return match
    scope = f'"{PROJECT_TOKEN}{_quote(project_id)}"' + (f' OR "{TRANSFERABLE_TOKEN}"' if transferable else "")
    return f"({match}) AND ({scope})"


def fts_phrase(text: str, project_id: str, *, ordered: bool = True) -> str | None:
    """An FTS5 MATCH expression for the project's episodes that hold the words of `text` (a file path, a command,
    a phrase) in this order, as one phrase, or with `ordered=False` all of them anywhere; None when it has no
    words. The words are what the tokenizer makes of it (`cmd/entire/cli/root.go` -> "cmd entire cli root go"),
    quoted like `fts_query`'s."""
    words = _WORD.findall(text.lower())
    return fts_query([" ".join(words)] if ordered else words, project_id, every=True) if words else None


# Indexed with every episode (core.066), so FTS5 intersects postings with the project's instead of scoring every
# project's matches and filtering after (2.4 -> 1.2 ms per query over two projects of 5,000 episodes). Query
# terms are stripped of leading underscores, so no prompt can name these.
PROJECT_TOKEN = "__project_"
TRANSFERABLE_TOKEN = "__transferable"


def scope_tokens(project_id: str, transferable: bool) -> str:
    """The tokens that put an episode's FTS row in its project (and among the transferable ones)."""
    return f"\n{PROJECT_TOKEN}{project_id}" + (f" {TRANSFERABLE_TOKEN}" if transferable else "")


def _quote(text: str) -> str:
    return text.replace('"', '""')
