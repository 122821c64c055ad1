"""Values named as the printed IR names them (`%x`, `%3`), for diagnostics and plan reports."""

from __future__ import annotations

from io import StringIO

from xdsl.ir import Operation, SSAValue
from xdsl.printer import Printer


class ValueNames:
    """`names[value]` is `%name` as printing the whole IR would show it.

    The printer decides names (hints, de-duplicated, and numbers in print order),
    so the top-level op is printed once, on first use, and its choices are kept.
    """

    def __init__(self, anchor: Operation):
        self._anchor = anchor
        self._names: dict[SSAValue, str] | None = None

    def __getitem__(self, value: SSAValue) -> str:
        if self._names is None:
            top = self._anchor.get_toplevel_object()
            printer = Printer(stream=StringIO())
            printer.print_op(top if isinstance(top, Operation) else self._anchor)
            # The printer's own table: the only record of the names it chose.
            self._names = dict(printer._ssa_values)  # pyright: ignore[reportPrivateUsage]
        name = self._names.get(value)
        return f"%{name}" if name is not None else f"%<{value.name_hint or 'unnamed'}>"
