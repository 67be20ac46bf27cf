"""Outcome links: evidence for episodes that were never shown.

Implicit feedback only judges what was injected, and on the entire-cli replay the relevant episodes at ranks 2-10
were almost never injected (docs/experiments/learning-replay-oracle.md). A captured session says more than its
verdicts: the files its turns changed. Every earlier episode of the project that changed one of those files is
linked to the prompt that led there, so a later prompt like it finds that episode (core/retrieve.py
`_query_evidence`), whether or not it was ever shown. A link is about prompts like that one, not about the episode
everywhere: global utility is untouched.

A file that many earlier episodes changed (a hub, e.g. `config.go`) says little about which of them the prompt
needed: each shared file weighs 1 / (earlier episodes that changed it), and one changed by more than
HUB_EPISODES is skipped. Standard library only (it runs in the capture's learning step, not on a prompt)."""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Collection
from dataclasses import dataclass, field

from tempera.core import episode_files, textsearch
from tempera.core.db import Database

HUB_EPISODES = 20  # a file changed by more earlier episodes than this links none of them (each would weigh < 0.05)
MAX_LINKS_PER_SESSION = 200  # the heaviest links of one session; a huge session cannot write thousands of rows


@dataclass
class _Prompt:
    """One prompt of the session and the files the turns it led to changed."""

    src_id: str  # the session's episode that holds the prompt (forgetting it forgets the link)
    at: str  # when it was asked (that episode's time): its links carry the session's date, also when imported
    terms: list[str]
    files: set[str] = field(default_factory=set)


def _session_prompts(
    db: Database, session_id: str, episodes: Collection[str] | None
) -> tuple[str | None, list[_Prompt]]:
    """(the session's first episode's time, each prompt with the files its own turns changed), in order; only the
    prompts some episode of `episodes` holds (every prompt when None), each with its files over ALL the session's
    episodes with that prompt (a prompt whose work spans several captures, or a prompt repeated). Each turn's own
    prompt, not the session's first for all its files: on the real-session dev split the first prompt alone lifted
    no first-prompt query at any setting, each turn's own did (docs/experiments/outcome-links.md, "Choosing on dev")."""
    rows = db.query(
        "SELECT id, created_at, json_extract(data, '$.intent.raw_prompt') FROM episodes WHERE session_id = ? "
        "ORDER BY created_at, rowid",
        (session_id,),
    )
    touched = None if episodes is None else {prompt for eid, _, prompt in rows if eid in episodes}
    files_of = episode_files.of_episodes(db, [eid for eid, _, _ in rows])
    prompts: dict[str, _Prompt] = {}
    for eid, at, prompt in rows:
        if touched is not None and prompt not in touched:
            continue
        terms = textsearch.query_terms(prompt or "")
        if not terms:
            continue
        p = prompts.setdefault(prompt, _Prompt(eid, at, terms))
        p.files.update(files_of.get(eid, ()))
    return (rows[0][1] if rows else None), list(prompts.values())


def link_session(db: Database, session_id: str, project_id: str, episodes: Collection[str] | None = None) -> int:
    """Write afresh the outcome links of the session's prompts that `episodes` hold (the episodes a capture just
    stored; every prompt when None), replacing just those prompts' rows, then keep the session's heaviest
    MAX_LINKS_PER_SESSION; how many rows the session has. The Stop hook captures after every turn, and relinking
    the whole session each time redid every earlier turn's lookups (O(turns^2) over a session,
    docs/experiments/incremental-links.md), although their rows cannot change: a link depends only on its prompt's
    files and on episodes of other sessions created before the session's first.

    The result equals a full relink's as long as those earlier episodes did not change between the captures (an
    older session imported meanwhile relinks this one whole: `relink_later`) and a prompt's files only
    grow (a capture adds episodes and regrows the last turn, so they do): then a row the cap dropped has at least
    the cap's number of rows ranked above it still. Ties at the cap go by (src_id, episode_id), so which of equal
    rows stay does not depend on the order the captures came in."""
    first, prompts = _session_prompts(db, session_id, episodes)
    weights: dict[tuple[str, int], float] = defaultdict(float)
    if first is not None:
        counted: dict[str, set[str]] = {}
        for i, p in enumerate(prompts):
            for path in sorted(p.files):
                if path not in counted:
                    counted[path] = episode_files.changed_before(db, project_id, path, first, session_id)
                earlier = counted[path]
                if 0 < len(earlier) <= HUB_EPISODES:
                    for eid in earlier:
                        weights[(eid, i)] += 1.0 / len(earlier)
    with db.transaction() as conn:
        conn.execute(
            "DELETE FROM outcome_links WHERE session_id = ? AND (? OR src_id IN (SELECT value FROM json_each(?)))",
            (session_id, episodes is None, json.dumps([p.src_id for p in prompts])),
        )
        conn.executemany(
            "INSERT INTO outcome_links(episode_id, src_id, session_id, terms, weight, created_at) "
            "VALUES (?, ?, ?, ?, ?, ?)",
            [
                (eid, prompts[i].src_id, session_id, " ".join(prompts[i].terms), round(w, 4), prompts[i].at)
                for (eid, i), w in weights.items()
            ],
        )
        conn.execute(
            "DELETE FROM outcome_links WHERE session_id = ? AND rowid NOT IN (SELECT rowid FROM outcome_links "
            "WHERE session_id = ? ORDER BY weight DESC, src_id, episode_id LIMIT ?)",
            (session_id, session_id, MAX_LINKS_PER_SESSION),
        )
        (kept,) = conn.execute("SELECT COUNT(*) FROM outcome_links WHERE session_id = ?", (session_id,)).fetchone()
    return int(kept)


def relink_later(db: Database, project_id: str, session_id: str, episodes: Collection[str]) -> list[str]:
    """Relink whole each other session of the project that began after the earliest of `episodes` (just stored for
    `session_id`): their links count the episodes created before them, and a transcript older than what is stored
    (imported by a later `tempera import`; one import stores its files oldest first) adds some. Which sessions;
    none for a live session's capture, whose episodes are the newest. With the file index a session's relink is a
    few index lookups (the 86 sessions of the 70 % entire-cli import in 0.1 s: episode-files-index.md)."""
    (since,) = db.one(
        "SELECT MIN(created_at) FROM episodes WHERE id IN (SELECT value FROM json_each(?))",
        (json.dumps(list(episodes)),),
    )
    if since is None:
        return []
    later = [
        sid
        for (sid,) in db.query(
            "SELECT session_id FROM episodes WHERE project_id = ? AND session_id IN (SELECT DISTINCT session_id FROM "
            "episodes WHERE project_id = ? AND created_at > ? AND session_id != ?) GROUP BY session_id "
            "HAVING MIN(created_at) > ? ORDER BY MIN(created_at)",
            (project_id, project_id, since, session_id, since),
        )
    ]
    for sid in later:
        link_session(db, sid, project_id)
    return later
