"""Errors that know which op they are about.

This module sits below both the transforms and the tools: a pass raises an
`OpError` to point at the offending op, and `rlx-opt` (`tools.diagnostics`)
reports it at that op's source position.
"""

from __future__ import annotations

from xdsl.ir import Operation
from xdsl.utils.exceptions import DiagnosticException


class OpError(DiagnosticException):
    """A diagnostic about one op; passes may raise it to point at the offending op."""

    def __init__(self, op: Operation, message: str, note: str | None = None):
        super().__init__(message)
        self.op = op
        self.message = message
        self.note = note
