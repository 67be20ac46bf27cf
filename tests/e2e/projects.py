"""The small projects the scenarios work in, and the scripted work sessions that are reused between scenarios.

Why real files and real commands: the tools really run (the tests fail, the edit lands, the tests pass), so the
transcript holds real tool results and Tempera's capture sees what a user's session would show it.
"""

from __future__ import annotations

from pathlib import Path

from messages_stub import Reply
from replies import bash, edit, say

CALC = {
    "calc.py": "def add(a, b):\n    return a - b\n",
    "test_calc.py": (
        "import unittest\n\nfrom calc import add\n\n\nclass AddTest(unittest.TestCase):\n"
        "    def test_add(self):\n        self.assertEqual(add(2, 3), 5)\n\n\n"
        "if __name__ == '__main__':\n    unittest.main()\n"
    ),
}
TEST_CMD = "python3 -m unittest -q test_calc"
FIX_PROMPT = "test_calc fails: fix the add function in calc.py"
FIX_SUMMARY = "Fixed add() in calc.py: it subtracted instead of adding. test_calc passes now."


def fix_add_session(repo: Path, tag: str = "fix") -> list[Reply]:
    """A failing test run, the edit that fixes it, a passing run: the work scenario 1 wants remembered."""
    return [
        bash(TEST_CMD, id=f"toolu_{tag}_test1", text="Running the tests first."),
        edit(str(repo / "calc.py"), "return a - b", "return a + b", id=f"toolu_{tag}_edit"),
        bash(TEST_CMD, id=f"toolu_{tag}_test2"),
        say(FIX_SUMMARY),
    ]


def failed_fix_session(repo: Path, tag: str = "vague") -> list[Reply]:
    """Work on a vague request that ends with the test still failing (the edit misses the bug)."""
    return [
        bash(TEST_CMD, id=f"toolu_{tag}_test1"),
        edit(str(repo / "calc.py"), "def add(a, b):", "def add(a, b):  # adds two numbers", id=f"toolu_{tag}_edit"),
        bash(TEST_CMD, id=f"toolu_{tag}_test2"),
        say("I could not get test_calc to pass; add() still returns the wrong value."),
    ]
