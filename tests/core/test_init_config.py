"""`tempera init` writes a config.toml that shows every default without pinning it: a release that refits a default
(the inject gate's weights are fitted by evals/fit_gate.py) must reach a user who never changed that key."""

from __future__ import annotations

import tomllib
from pathlib import Path

from tempera.core.config import Config, load_config
from tests.support.cli import tempera


def test_init_documents_every_default_as_a_comment_and_an_uncommented_line_applies(data_dir: Path) -> None:
    tempera("init", check=True)
    path = data_dir / "config.toml"
    text = path.read_text(encoding="utf-8")
    assert tomllib.loads(text) == {section: {} for section, _ in Config()}  # sections only: nothing pinned
    assert "# gate_weights = [" in text and "# budget_chars = 2000" in text
    assert load_config(path, environ={}) == Config()

    path.write_text(text.replace("# budget_chars = 2000", "budget_chars = 1200"), encoding="utf-8")
    assert load_config(path).inject.budget_chars == 1200
