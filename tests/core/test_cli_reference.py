"""The README's command reference is what the commands' own help says: rendered from the click tree and compared
with the README's section, so a command added, moved, renamed or re-documented without
`python -m tempera.cli.reference` fails here."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from tempera.cli.reference import BEGIN, END, render

README = Path(__file__).resolve().parents[2] / "README.md"


def test_readme_command_reference_is_current() -> None:
    text = README.read_text(encoding="utf-8")
    section = text[text.index(BEGIN) : text.index(END) + len(END)]
    assert section == render(), "README.md's command reference is stale: run `python -m tempera.cli.reference`"


def test_reference_lists_every_command_and_rewrites_only_its_section(tmp_path: Path) -> None:
    readme = tmp_path / "README.md"
    readme.write_text(f"# Title\n\nbefore\n\n{BEGIN}\n| `tempera gone` | stale |\n{END}\n\nafter\n", encoding="utf-8")
    done = subprocess.run(
        [sys.executable, "-m", "tempera.cli.reference", str(readme)], capture_output=True, text=True, check=True
    )
    assert "updated" in done.stdout
    text = readme.read_text(encoding="utf-8")
    assert text.startswith("# Title\n\nbefore\n\n") and text.endswith(f"{END}\n\nafter\n")
    assert "tempera gone" not in text
    for row in ("`tempera learn explain EPISODE_ID`", "`tempera lessons templates get`", "`tempera memory backup"):
        assert row in text, row
