"""A small shop project with four stored episodes, for the tests of what the hooks inject: one about a flaky
checkout test, three about other parts of the shop that share words with it."""

from __future__ import annotations

from pathlib import Path

from tempera.core.capture_input import CaptureInput
from tempera.core.memory import Memory
from tempera.core.models import Episode

FLAKY = (
    "Fixed the flaky checkout test in src/cart/checkout.py: the fixture reused a stale basket; each test now builds "
    "its own basket and the suite passes ten runs in a row."
)
BUTTON = "Changed the colour of the checkout button on the product page to match the new brand palette."
VAULT = "Rotated the staging database password and updated the deploy secrets in the vault."
PAGES = "Added pagination to the order history API endpoint; pages of 50 orders with a cursor."
EPISODES = [
    (FLAKY, ["src/cart/checkout.py"]),
    (BUTTON, ["web/styles/buttons.css"]),
    (VAULT, ["deploy/secrets.yaml"]),
    (PAGES, ["src/orders/api.py"]),
]


def shop_repo(tmp_path: Path) -> Path:
    """The shop's checkout (a git repository) under `tmp_path`, its episodes stored."""
    root = tmp_path / "shop"
    (root / ".git").mkdir(parents=True)
    with Memory() as mem:
        for summary, files in EPISODES:
            mem.capture(CaptureInput(summary=summary, files_modified=files, project=str(root)))
    return root


def ids_of(summaries: list[str]) -> dict[str, str]:
    """How each episode's line names it in the injected text (its short id)."""
    with Memory() as mem:
        eps: list[Episode] = list(mem.store.iter_episodes(None))
    return {s: next(f"id {e.id[:8]}" for e in eps if e.summary == s) for s in summaries}
