"""The wrapper around every block of context Tempera injects, so capture can strip it (memory never feeds on
itself), and the escaping that keeps stored text from opening or closing it. Standard library only: the hooks
import it.

Stored text is data from earlier sessions: a web page or an error message may carry `</tempera-memory>` followed by
orders, hoping to end the block early and speak outside it. `wrap` rewrites every tag-like mention of the marker
inside the block, however it is spelled: case, spaces or line breaks inside the brackets, zero-width characters,
fullwidth or other bracket look-alikes, brackets as HTML entities, Cyrillic or Greek letters that look like Latin
ones. The only real tags are then the first and last lines, so `strip_injected` ends a block at its own close tag; a
block written before this escaping (which may hold a forged close tag) runs to the last close tag before the next
opening one, so the text an attacker put after a forged tag is never taken for the user's words.
"""

from __future__ import annotations

import re
import unicodedata

OPEN = "<tempera-memory>"
CLOSE = "</tempera-memory>"
NEUTRAL = "(marker)"  # what a forged tag becomes; never longer than the shortest tag it replaces

# Letters that read as Latin ones (Cyrillic and Greek, both cases): once NFKC has folded fullwidth and compatibility
# forms and invisible characters are dropped, text spelled with them reads as it looks. The directive rules
# (core/directives.py) read text this way too.
_LETTERS = str.maketrans(
    {
        **dict(zip("аеорухсмгѕіјԁԛԝһкпνтαεορτμιυκχ", "aeopyxcmrsijdqwhknvtaeoptmiukx")),
        **dict(zip("АВЕКМНОРСТХУЅІЈΑΒΕΖΗΙΚΜΝΟΡΤΥΧ", "ABEKMHOPCTXYSIJABEZHIKMNOPTYX")),
        "γ": "y",
        "ı": "i",
    }
)
# Invisible characters: zero-width spaces and joiners, soft hyphens, direction marks and overrides.
_INVISIBLE = str.maketrans(
    dict.fromkeys(
        "\u200b\u200c\u200d\u200e\u200f\u2060\u2061\u2062\u2063\u2064\ufeff\u00ad\u034f\u180e"
        "\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069",
        "",
    )
)
# Characters that read as a bracket, dash or slash of the marker.
_LOOKALIKE = str.maketrans(
    {
        **dict.fromkeys("‹〈⟨❮˂ᐸ〈﹤＜«《", "<"),
        **dict.fromkeys("›〉⟩❯˃ᐳ〉﹥＞»》", ">"),
        **dict.fromkeys("‐‑‒–—―−﹣－_⁃·", "-"),
        **dict.fromkeys("∕⁄／⧸", "/"),
    }
)
# The marker's name next to a bracket on either side: `</tempera-memory`, `tempera-memory>`, `<tempera memory >`;
# a bracket may be written as an HTML entity (`&lt;`, `&#60;`, `&#x3c;`), which a model reads as the bracket.
_LT = r"(?:<|&lt;|&#0*60;|&#x0*3c;)"
_GT = r"(?:>|&gt;|&#0*62;|&#x0*3e;)"
_NAME = r"\s*tempera\s*-?\s*memory\s*/?\s*"
_TAG = re.compile(rf"{_LT}\s*/?{_NAME}{_GT}?|/?{_NAME}{_GT}")
_SUSPECT = re.compile(
    r"(?i)&(?:lt|gt|#)|[<>\u2039\u203a\u2329\u232a\u27e8\u27e9\u276e\u276f\u02c2\u02c3"
    r"\u1438\u1433\u3008\u3009\ufe64\ufe65\uff1c\uff1e\u00ab\u00bb\u300a\u300b]"
)


def visible(text: str) -> str:
    """The text as it shows: invisible characters dropped."""
    return text.translate(_INVISIBLE)


def plain(text: str) -> str:
    """The text as it reads: NFKC, invisible characters dropped, letters that look Latin folded to Latin (C-speed;
    lengths may change)."""
    return unicodedata.normalize("NFKC", visible(text)).translate(_LETTERS)


def _fold(text: str) -> str:
    """The text as a tag of the marker reads: `plain`, lower case, look-alike brackets and dashes folded."""
    return plain(text).lower().translate(_LOOKALIKE)


def _folded(text: str) -> tuple[str, list[int]]:
    """`_fold` character by character and, for each folded character, the index of the character of `text` it
    came from: slow, so only for a text that holds a tag."""
    out: list[str] = []
    origin: list[int] = []
    for i, ch in enumerate(text):
        folded = _fold(ch)
        out.append(folded)
        origin.extend([i] * len(folded))
    return "".join(out), origin


def neutralize(text: str) -> str:
    """The text with every tag-like spelling of the marker replaced by NEUTRAL."""
    if not _SUSPECT.search(text) or not _TAG.search(_fold(text)):  # every tag needs a bracket: the common case
        return text
    folded, origin = _folded(text)
    spans = [(origin[m.start()], origin[m.end() - 1] + 1) for m in _TAG.finditer(folded)]
    if not spans:  # only NFKC of the whole text reads as a tag (a composed sequence): no bracket is left
        return _SUSPECT.sub(" ", text)
    for start, end in reversed(spans):
        text = text[:start] + NEUTRAL + text[end:]
    return text


def wrap(text: str) -> str:
    return f"{OPEN}\n{neutralize(text.strip())}\n{CLOSE}"


def strip_injected(text: str) -> str:
    """Remove every block Tempera injected. A block ends at the last close tag before the next opening tag (an
    unclosed one runs to the end of the text)."""
    if OPEN not in text:
        return text
    out: list[str] = []
    pos = 0
    while (start := text.find(OPEN, pos)) != -1:
        out.append(text[pos:start])
        following = text.find(OPEN, start + len(OPEN))
        segment_end = len(text) if following == -1 else following
        close = text.rfind(CLOSE, start, segment_end)
        pos = segment_end if close == -1 else close + len(CLOSE)
    out.append(text[pos:])
    return "".join(out)
