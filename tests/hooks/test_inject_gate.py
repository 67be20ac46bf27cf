"""The UserPromptSubmit gate (inject/warm.py `choose`, with the weights and bar evals/fit_gate.py fitted): a hit is
injected only when its estimated P(relevant) clears the bar, so room left in the budget is not filled with weak
matches, and a prompt about nothing stored injects nothing while a related one still does. Real store, real
embedding model; the second test goes through the installed hook command and the warm daemon."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from hookrun import context_of, run_hook
from shop import BUTTON, FLAKY, PAGES, VAULT, ids_of, shop_repo

from tempera.core.config import InjectConfig, load_config, to_toml
from tempera.core.memory import Memory
from tempera.inject.payload import HookPayload
from tempera.inject.warm import answer

# Prompts about nothing in this project that share two words with an episode (the fixed floor injected those).
UNRELATED = [
    "What brand of paint colour suits a small bedroom?",
    "What pages of the history book cover the vault of the cathedral?",
]


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    return shop_repo(tmp_path)


def test_a_weak_match_is_left_out_though_the_budget_has_room(repo: Path) -> None:
    prompt = "the checkout test in src/cart/checkout.py is flaky again, fix it"
    with Memory() as mem:
        text = answer(mem, HookPayload(event="UserPromptSubmit", session_id="s1", cwd=str(repo), prompt=prompt))
    ids = ids_of([FLAKY, PAGES])
    assert ids[FLAKY] in text
    # the pagination episode holds two of the prompt's words and a cosine the old floor let through
    assert ids[PAGES] not in text
    assert len(text) + 400 < InjectConfig().budget_chars


def test_an_unrelated_prompt_injects_nothing_and_a_related_one_does(
    repo: Path, start_daemon: Callable[[], int], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TEMPERA_INJECT__DAEMON_TIMEOUT_SECONDS", "30")  # the warm answer, not the keyword fallback
    start_daemon()

    def prompt(session: str, text: str) -> str:
        payload = {"session_id": session, "cwd": str(repo), "prompt": text, "hook_event_name": "UserPromptSubmit"}
        return context_of(run_hook("user-prompt-submit", payload))

    for i, text in enumerate(UNRELATED):
        assert prompt(f"unrelated-{i}", text) == "", text
    ids = ids_of([BUTTON, VAULT])
    assert ids[BUTTON] in prompt("related-1", "the checkout button colour looks wrong on the product page")
    assert ids[VAULT] in prompt("related-2", "rotate the staging database password again")


def test_an_older_config_still_loads_and_refitted_weights_are_read(data_dir: Path) -> None:
    path = data_dir / "config.toml"
    data_dir.mkdir(parents=True, exist_ok=True)
    path.write_text("[inject]\nmin_similarity = 0.35\ngate_bar = 0.3\n")  # the retired floor, as config init wrote it
    assert load_config(path, environ={}).inject.gate_bar == 0.3
    refit = "-4.0, 6.0, 0.0, 0.0, 0.5, 1.0, 1.0"
    cfg = load_config(path, environ={"TEMPERA_INJECT__GATE_WEIGHTS": refit})
    assert cfg.inject.gate_weights == [-4.0, 6.0, 0.0, 0.0, 0.5, 1.0, 1.0]
    path.write_text(to_toml(cfg))  # what `tempera init` writes reads back the same
    assert load_config(path, environ={}).inject == cfg.inject
