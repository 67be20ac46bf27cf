"""Domain exceptions. The CLI and MCP edges turn these into one-line user errors."""


class TemperaError(Exception):
    """Base of every expected error; its message is shown to the user as is."""


class InvalidInput(TemperaError):
    """The caller sent something we cannot store or answer."""


class NotFound(TemperaError):
    """An id, project or file that does not exist."""


class AmbiguousId(TemperaError):
    """An id prefix that matches more than one episode."""


class StorageError(TemperaError):
    """The data dir or database cannot be used (not SQLite, read-only, locked ...)."""


class ModelUnavailable(TemperaError):
    """No embedding model can be loaded without a download."""


class MissingExtra(TemperaError):
    """An optional extra the command needs is not installed; the message names the extra to install."""
