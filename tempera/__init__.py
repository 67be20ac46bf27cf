"""Tempera: persistent, self-improving memory for Claude Code that needs zero tool calls.

This file also hands core what it must know of a package above it, since core imports none of them: the fact
graph's part of a project merge (core/project_movers.py says why here).
"""

from tempera.core.project_movers import ProjectMover, register

__version__ = "0.1.0"


def _fact_stances() -> ProjectMover:
    from tempera.facts.store import StanceMover

    return StanceMover()


register("stances", _fact_stances)
