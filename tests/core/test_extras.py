"""An optional extra that is not installed: the command that needs it names the extra to install, in one line."""

from __future__ import annotations

import subprocess
import sys
import tomllib

import pytest
from tests.conftest import REPO
from tests.core.test_cli_errors import assert_clean_error

from tempera.core.config import LLMConfig
from tempera.core.extras import EXTRAS
from tempera.core.llm import LLM, Budget, LLMUnavailable


def without(module: str, *args: str) -> subprocess.CompletedProcess[str]:
    """`tempera ARGS` in a process where `module` cannot be imported, as when its extra was never installed
    (a None in sys.modules is Python's own marker for a module that must not import)."""
    block = f"import sys; sys.modules[{module!r}] = None; sys.argv[1:] = {list(args)!r}"
    code = f"{block}; from tempera.cli import main; main()"
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)


@pytest.mark.parametrize("module", EXTRAS["ui"])
def test_ui_without_its_extra_says_which_extra_to_install(module: str) -> None:
    r = without(module, "ui", "--no-open")
    assert_clean_error(r, "`tempera ui` cannot start", f"({module} missing)", "pip install 'tempera-memory[ui]'")


def test_llm_call_without_the_sdk_falls_back_with_the_install_hint(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "anthropic", None)
    llm = LLM(LLMConfig(enabled=True, model="m", prices="m=1/1"), key="sk-test")
    with pytest.raises(LLMUnavailable, match=r"pip install 'tempera-memory\[llm\]'"):
        llm.complete("hi", budget=Budget(1.0))


def test_every_extra_named_in_code_is_declared_and_pulled_by_dev() -> None:
    extras = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["optional-dependencies"]
    assert set(EXTRAS) <= set(extras)
    dev = next(d for d in extras["dev"] if d.startswith("tempera-memory["))
    assert set(EXTRAS) | {"offline"} == set(dev.removeprefix("tempera-memory[").removesuffix("]").split(","))
