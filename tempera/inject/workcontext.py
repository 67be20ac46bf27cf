"""What the session's checkout says about the work that its prompt does not: the words of the git branch
("gtrrz-victor/adds-entire-reset-command" -> "adds entire reset command"), and how they join a prompt's search.

A prompt that names little of its subject ("let's respond to the PR comments - review together", "can you review
the changes in this branch?") is about the branch's work: its hits and the branch words' hits are fused (RRF,
equal weights). A prompt that says more is searched as it is: branch words appended to every prompt weigh as much
as the prompt and drown a precise one (`docs/experiments/branch-context.md`). The hook (`inject/warm.py`) and the
real-session eval's retrieval rows both search through `related`, so both see the same context.
"""

from __future__ import annotations

import os
import re
from datetime import datetime
from typing import TYPE_CHECKING

from tempera.core import textsearch, timeq
from tempera.core.config import RetrievalConfig
from tempera.core.episodes import EpisodeStore
from tempera.core.gitrepo import current_branch
from tempera.core.retrieve import Hit, rank_terms, retrieve, rrf
from tempera.inject import longprompt

if TYPE_CHECKING:
    import numpy as np

THIN_TERMS = 5  # at most this many search terms is thin: chosen on the dev split among 3, 5 and 8 (see the module doc)
FUSED_DEPTH = 2  # each list of a fused search runs this many times `limit` deep (dev split: 2 over 1 and 3)
_SEPARATORS = re.compile(r"[-_./+]+")
_TICKET = re.compile(r"[a-z]{2,6}")  # "ent" of "ent-232", "jira" of "JIRA-12"


def branch_words(branch: str | None) -> str:
    """The words of a branch name that describe its work: the owner or kind prefix ("alex/", "feat/"), ticket ids
    ("ent-232"), dates and numbers, and generated suffixes ("xqmU7") left out; '' when nothing is left."""
    if not branch:
        return ""
    parts = branch.split("/")
    tokens = _SEPARATORS.split("-".join(parts[1:] if len(parts) > 1 else parts))
    words = []
    for i, tok in enumerate(tokens):
        after = tokens[i + 1] if i + 1 < len(tokens) else ""
        if not tok or any(c.isdigit() for c in tok) or _TICKET.fullmatch(tok.lower()) and after.isdigit():
            continue
        words.append(tok.lower())
    return " ".join(words)


def checkout_context(cwd: str | None) -> str:
    """The extra query text of a session working in `cwd`: its branch's words ('' on the default branch, a detached
    HEAD or outside a repository). A few small file reads; no git process."""
    return branch_words(current_branch(cwd or os.getcwd()))


def thin(prompt: str, now: datetime) -> bool:
    """Whether the prompt says too little of its subject to be searched alone. A question about time ("what did we
    do yesterday") is answered by episode dates (core/timeq.py), not by the branch."""
    return len(textsearch.query_terms(prompt)) <= THIN_TERMS and timeq.parse(prompt, now) is None


def related(
    store: EpisodeStore,
    prompt: str,
    context: str,
    *,
    project_id: str,
    cfg: RetrievalConfig,
    limit: int,
    mode: str,
    cross_project: bool = False,
    query_vector: "np.ndarray | None" = None,
) -> list[Hit]:
    """The prompt's hits (`core.retrieve`), fused with its context's when the prompt is thin. A long prompt is
    searched by its lead and names and its vector is its title's (`inject/longprompt.py`; `query_vector`, when
    given, is `longprompt.vector_text`'s). A hit only the context found keeps no prompt scores (similarity, BM25,
    list ranks): what the gate reads of it is its match to the prompt, never to the branch."""
    embed_text = longprompt.vector_text(prompt)
    prompt = longprompt.search_text(prompt)
    fused = bool(context.strip()) and thin(prompt, datetime.now().astimezone())

    def search(query: str, vector: "np.ndarray | None" = None, vector_of: str | None = None) -> list[Hit]:
        return retrieve(
            store,
            query,
            project_id=project_id,
            cfg=cfg,
            limit=limit * FUSED_DEPTH if fused else limit,
            mode=mode,
            cross_project=cross_project,
            query_vector=vector,
            embed_text=vector_of,
        )

    hits = search(prompt, query_vector, embed_text)
    if not fused:
        return hits
    found = search(context)
    own = {h.episode.id: h for h in hits}
    by_id = {h.episode.id: h for h in found} | own
    lists = [
        (1.0, rank_terms({h.episode.id: rank for rank, h in enumerate(ranked, 1)}, cfg.rrf_k))
        for ranked in (hits, found)
    ]
    pool = list(dict.fromkeys([*own, *(h.episode.id for h in found)]))  # the prompt's own order breaks ties
    order = sorted(pool, key=lambda e: -rrf(e, lists, cfg.rrf_k))[:limit]
    terms = textsearch.query_terms(prompt)
    return [own[e] if e in own else _context_only(by_id[e], terms) for e in order]


def _context_only(h: Hit, prompt_terms: list[str]) -> Hit:
    """A hit the context found and the prompt did not, stripped of its scores against the context."""
    out = Hit(h.episode, score=h.score, relevance=h.relevance, salience=h.salience, vector=h.vector)
    out.freshness, out.recency = h.freshness, h.recency
    out.matched_terms = textsearch.matched(prompt_terms, h.episode.search_text()) if prompt_terms else 0
    return out
