"""What every capture changes besides the logs: the calibration rows of its episodes and the project's ask-back.

Only the latest episode of a session can leave a question for the next session: an earlier failed turn was
followed by another turn, in which the user already said more. For the same reason a pending ask-back of a session
that has since continued is retired (`consumed_by = 'superseded'`), and so is one whose turn grew into a success.
Idempotent: running it again on the same episodes changes nothing.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from tempera.core.models import Episode, iso_utc
from tempera.core.selfimprove import calibration
from tempera.core.selfimprove.askbacks import ENDINGS, AskBack, ask_backs_of, draft_ask_back
from tempera.core.selfimprove.drafting import Drafter

if TYPE_CHECKING:
    from tempera.core.memory import Memory


def _latest_per_session(episodes: list[Episode]) -> list[Episode]:
    latest: dict[str, Episode] = {}
    for ep in episodes:
        key = ep.session_id or f"episode:{ep.id}"
        if key not in latest or ep.created_at >= latest[key].created_at:
            latest[key] = ep
    return list(latest.values())


def _retire_stale(mem: "Memory", latest: Episode) -> None:
    keep = latest.id if latest.outcome.status in ENDINGS else ""
    when = iso_utc(latest.created_at)  # when the session went on (an imported session keeps its own date)
    where = "(session_id = ? OR episode_id = ?)" if latest.session_id else "episode_id = ?"
    params = (latest.session_id, latest.id) if latest.session_id else (latest.id,)
    mem.db.execute(
        f"UPDATE ask_backs SET status = 'consumed', consumed_at = ?, consumed_by = 'superseded' "
        f"WHERE status = 'pending' AND episode_id != ? AND {where}",
        (when, keep, *params),
    )


def update_after_capture(mem: "Memory", episodes: list[Episode], *, llm: Drafter | None = None) -> list[AskBack]:
    """Sync calibration for the episodes, retire stale ask-backs, draft one for each session's latest episode
    when it ended failure/partial with a vague intent. Returns the ask-backs drafted by this call."""
    with mem.db.transaction():
        for ep in episodes:
            calibration.sync(mem.db, episode_id=ep.id)
    drafted = []
    for ep in _latest_per_session(episodes):
        with mem.db.transaction():
            _retire_stale(mem, ep)
        had_one = bool(ask_backs_of(mem.db, ep.id))
        ask = draft_ask_back(mem, ep, llm=llm)
        if ask is not None and not had_one:
            drafted.append(ask)
    return drafted
