"""The one error every importer raises: what failed, and where in the user's model."""

from __future__ import annotations


class ImportFailure(Exception):
    """A model that cannot be imported: an unsupported op, a shape MIR cannot express,
    a corrupt file. `where` is the node's source line or name, when known."""

    def __init__(self, message: str, where: str | None = None):
        self.message = message
        self.where = where
        super().__init__(f"{where}: {message}" if where else message)
