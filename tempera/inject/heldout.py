"""The held-out split both refits of the user's own feedback share (`tempera learn refit-gate`, inject/gatefit.py;
`tempera learn refit-fusion`, inject/fusionfit.py): fit on the earlier sessions, check on the latest, so a refit is
judged on later work than it saw, never on a session it was fitted on."""

from __future__ import annotations

from typing import Protocol, TypeVar

HELD_OUT_SHARE = 0.3  # the latest sessions, about this share of the rows, check the fit


class Sessioned(Protocol):
    """A row of a session's feedback: a judged injection, a labelled prompt."""

    @property
    def session_id(self) -> str: ...

    @property
    def created_at(self) -> str: ...


Row = TypeVar("Row", bound=Sessioned)


def split_by_session(rows: list[Row]) -> tuple[list[Row], list[Row]]:
    """(fit, held out): sessions in the order of their first row; the latest ones, about HELD_OUT_SHARE of the
    rows, are held out. Both parts oldest first."""
    sessions: dict[str, list[Row]] = {}
    for r in sorted(rows, key=lambda r: r.created_at):  # a dict keeps the sessions in order of their first row
        sessions.setdefault(r.session_id, []).append(r)
    fit: list[Row] = []
    held: list[Row] = []
    for group in reversed(list(sessions.values())):
        (held if len(held) < HELD_OUT_SHARE * len(rows) else fit).extend(group)
    return sorted(fit, key=lambda r: r.created_at), sorted(held, key=lambda r: r.created_at)
