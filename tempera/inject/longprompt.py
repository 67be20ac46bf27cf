"""What a long prompt (a plan pasted by plan mode, a log, a long brief) is searched by: its lead and the code it
names, not all of it.

Every word piece of a prompt's vector costs model time: a 5,000-character plan was four 254-piece runs (~90 ms each
on a busy 2-core machine), 6x a short prompt's whole answer. What retrieval can use of a plan is said by its title,
its opening line and the files and identifiers it works on; its steps repeat them. The hook (`inject/warm.py`) and
every caller of `inject/workcontext.py` `related` search by `search_text`, and the hook's brief looks for the files
it names there (scanning a 5,000-character plan for file names cost 2 ms of the turn).
"""

from __future__ import annotations

import re
from collections import Counter
from functools import lru_cache

from tempera.core import textsearch

LONG_CHARS = 600  # a prompt up to this long is searched as it is (~130 word pieces, one short model run)
LEAD_CHARS = 240  # of a long prompt's prose: its title and opening line, or its start and its end
NAMES = 10  # at most this many of the files and identifiers it names, the most often named first
_HEADING = re.compile(r"#{1,6}\s+(.+)")
_FENCE = re.compile(r"\s*(```|~~~)")
_MARKUP = re.compile(r"[*`>#|]+")


def search_text(prompt: str) -> str:
    """The text a prompt is searched by: the prompt itself when it is short; for a long one its lead (`_lead`) and
    the names it mentions most (`textsearch.name_spans` of its prose), files first, LONG_CHARS at most, so that
    searching the text it gives gives it back."""
    return _texts(prompt)[0]


def vector_text(prompt: str) -> str:
    """The text a prompt's vector is made of: the prompt itself when it is short; for a long one its title when it
    has one, else its lead. A plan's title costs one model run of a few word pieces; the whole plan's four runs
    ranked the episodes of its files a little better (on the real sessions' plans, one of seven was first with them
    and third without), its lead or its search text no better than the title."""
    return _texts(prompt)[1]


@lru_cache(maxsize=16)
def _texts(prompt: str) -> tuple[str, str]:
    """(search text, vector text) of a prompt, made once per prompt: the hook asks for both more than once."""
    if len(prompt) <= LONG_CHARS:
        return prompt, prompt
    lead, titled = _lead(prompt)
    if not lead:  # no prose at all (a pasted file, a log in a fence): its start
        return (start := _clip(prompt, LONG_CHARS)), start
    out = "\n".join(lead)
    counts = Counter(textsearch.name_spans("\n".join(_prose(prompt))))
    names = [n for n in sorted(counts, key=lambda n: ("." not in n, -counts[n])) if n not in out]  # stable sort
    for name in names[:NAMES]:
        if len(out) + 1 + len(name) <= LONG_CHARS:
            out += "\n" + name
    return out, lead[0] if titled else "\n".join(lead)


def _lead(prompt: str) -> tuple[list[str], bool]:
    """Of its prose (`_prose`), a markdown prompt's title (its first heading) and the first line of prose after it (a
    plan's summary or goal); a prompt without headings, its start and its end (a pasted text's ask is before it or
    after it). LEAD_CHARS in all, cut at spaces, markup dropped; and whether it had a title."""
    lines = _prose(prompt)
    title = next((i for i, line in enumerate(lines) if _HEADING.fullmatch(line)), None)
    half = LEAD_CHARS // 2
    if title is not None:
        body = next((line for line in lines[title + 1 :] if not _HEADING.fullmatch(line)), "")
        parts = [_clip(lines[title], half), _clip(body, half)]
    else:
        prose = " ".join(lines)
        parts = [prose] if len(prose) <= LEAD_CHARS else [_clip(prose, half), _clip(prose, half, start=False)]
    return [p for p in (_MARKUP.sub(" ", p).strip() for p in parts) if p], title is not None


def _prose(prompt: str) -> list[str]:
    """The prompt's non-empty lines outside fenced code blocks, stripped: what the plan says, not the code it shows
    (whose calls, `logging.Debug`, `slog.Int`, outnumber the files it names)."""
    lines, fenced = [], False
    for line in prompt.splitlines():
        if _FENCE.match(line):
            fenced = not fenced
        elif not fenced and line.strip():
            lines.append(line.strip())
    return lines


def _clip(text: str, n: int, *, start: bool = True) -> str:
    """The text's first `n` characters cut at their last space (with `start=False`: its last `n`, after their first
    space)."""
    if len(text) <= n:
        return text
    if start:
        return text[:n].rsplit(" ", 1)[0]
    return text[-n:].split(" ", 1)[-1]
