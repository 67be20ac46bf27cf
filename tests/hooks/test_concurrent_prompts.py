"""Prompts are answered beside each other and beside a capture (issue #40): several UserPromptSubmit hooks at once,
while the worker captures a long real transcript, each get the context the same prompt gets alone, and the daemon
saw them answered at once (its status's `answering_peak`), not one after another; the capture runs at a lower
priority than the answers. Real daemon, real relay.py."""

from __future__ import annotations

import json
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from hookrun import context_of, run_hook

from tests.conftest import TRANSCRIPTS
from tests.support.cli import tempera
from tests.support.datadir import rows, wait_for
from tests.support.longsession import write_long_session
from tempera.core import paths
from tempera.core.capture_input import CaptureInput
from tempera.core.memory import Memory

BIG = TRANSCRIPTS / "claude-code-viewer" / "fe5e1c67-53e7-4862-81ae-d0e013e3270b.jsonl"
# one past episode per prompt, each on work of its own, so each prompt's context is its episode
WORK = {
    "the checkout total rounding bug in the cart is back": "Fixed the checkout total rounding bug in the cart: "
    "amounts were floats, so sums of line items drifted by a cent; they are Decimal cents now.",
    "the nightly invoice export to S3 times out again": "The nightly invoice export to S3 timed out on large "
    "months; it streams the CSV in 8 MB multipart chunks now instead of building it in memory.",
    "login sessions expire too early for users in Sydney": "Login sessions expired early for users east of UTC: "
    "the expiry compared a naive local time with UTC; both are aware UTC datetimes now.",
    "the search box autocomplete is slow on product names": "Search box autocomplete was slow on product names: "
    "a LIKE '%term%' scan per keystroke; a trigram index on products.name made it 4 ms.",
    "password reset emails go out twice": "Password reset emails went out twice: the form posted on Enter and on "
    "click; the handler is idempotent per token now and the button is disabled while sending.",
    "image thumbnails come out rotated from phone uploads": "Thumbnails of phone uploads came out rotated: the "
    "EXIF orientation tag was ignored; the resizer applies exif_transpose before scaling.",
}


def ask(prompt: str, session: str, repo: Path) -> str:
    return context_of(run_hook("user-prompt-submit", {"session_id": session, "cwd": str(repo), "prompt": prompt}))


def status() -> dict[str, Any]:
    r = tempera("daemon", "status", "--json")
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout)


def test_prompts_are_answered_at_once_beside_a_capture(data_dir: Path, tmp_path: Path, start_daemon: Any) -> None:
    repo, other = tmp_path / "shop", tmp_path / "viewer"
    for d in (repo, other):
        (d / ".git").mkdir(parents=True)
    with Memory() as mem:
        for summary in WORK.values():
            mem.capture(CaptureInput(summary=summary, project=str(repo)))
    start_daemon()
    alone = {p: ask(p, f"alone-{i}", repo) for i, p in enumerate(WORK)}
    assert all(alone.values()), alone  # an empty answer would prove nothing

    # a capture of another project's long session keeps the worker busy for seconds
    long = write_long_session(BIG, tmp_path / "t" / "long.jsonl", 15, session_id="long", cwd=other)
    stop = {"session_id": "long", "transcript_path": str(long), "cwd": str(other), "hook_event_name": "Stop"}
    assert run_hook("stop", {**stop, "stop_hook_active": False}).returncode == 0
    wait_for(lambda: rows(data_dir, "SELECT 1 FROM jobs WHERE status = 'leased'"), timeout=60, interval=0.02)

    with ThreadPoolExecutor(len(WORK)) as pool:
        for attempt in range(3):  # the hooks' processes start at once; the daemon must see two answers overlap
            at_once = dict(
                zip(WORK, pool.map(lambda ip: ask(ip[1], f"at-once-{attempt}-{ip[0]}", repo), enumerate(WORK)))
            )
            capturing = rows(data_dir, "SELECT status FROM jobs WHERE kind = 'capture'") == [("leased",)]
            assert at_once == alone
            if status()["answering_peak"] >= 2:
                break
    assert status()["answering_peak"] >= 2
    assert capturing  # the capture went on until the last of these answers was given
    assert not (data_dir / paths.HOOK_LOG_NAME).exists()  # no answer fell back or failed


def nice_values(pid: int) -> dict[int, int]:
    """Each thread's nice value (the 19th field of /proc/PID/task/TID/stat; the name before it is in parentheses)."""
    out = {}
    for stat in Path(f"/proc/{pid}/task").glob("*/stat"):
        fields = stat.read_text().rsplit(")", 1)[1].split()
        out[int(stat.parent.name)] = int(fields[16])
    return out


def test_captures_run_below_the_answers_priority(data_dir: Path, start_daemon: Any) -> None:
    """The jobs thread (and the model batch threads it starts) leaves the cores to hook answers: its nice value is
    the daemon's plus 10, every other thread's the daemon's."""
    pid = start_daemon()
    nice = nice_values(pid)
    base = nice[pid]  # the daemon's own, as it was started
    assert sorted(set(nice.values())) == [base, min(19, base + 10)], nice
