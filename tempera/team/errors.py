"""The team part's domain exceptions; the CLI shows their message as a one-line error."""

from tempera.core.errors import TemperaError


class TeamError(TemperaError):
    """The team database cannot be used as asked (not connected, unreachable, schema missing, no access)."""


class NotConnected(TeamError):
    """This data dir is not connected to a team database."""
