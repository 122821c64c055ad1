"""One place that knows which dialects an RLX tool loads.

`rlx-opt`, `rlx-run` and the Python API read the same IR: xDSL's dialects
(builtin, func, arith, scf, tensor, linalg, ...), those of other installed
`xdsl.universe` plugins, and RLX's own. All are registered lazily, so a
dialect is only imported when a file uses it.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import cache

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Dialect
from xdsl.universe import Universe


def _mir() -> Dialect:
    from rlx_xdsl.dialects.mir import MIR

    return MIR


def _hir() -> Dialect:
    from rlx_xdsl.dialects.hir import HIR

    return HIR


def _lir() -> Dialect:
    from rlx_xdsl.dialects.lir import LIR

    return LIR


RLX_DIALECTS: dict[str, Callable[[], Dialect]] = {"mir": _mir, "hir": _hir, "lir": _lir}
"""RLX's dialect factories by name (lazy, as xDSL's universe expects)."""


@cache
def universe_dialects() -> dict[str, Callable[[], Dialect]]:
    """The dialect factories of every installed `xdsl.universe` plugin (xDSL's own included),
    looked up once per process: xDSL's `get_multiverse` reads every installed package's
    entry points on each call (about 6 ms with the test extras installed)."""
    return Universe.get_multiverse().all_dialects


def register_dialects(ctx: Context) -> None:
    """Register every dialect the tools read with `ctx`, lazily; names already known are kept."""
    for factories in (universe_dialects(), RLX_DIALECTS):
        for name, factory in factories.items():
            if name not in ctx.registered_dialect_names:
                ctx.register_dialect(name, factory)


def make_context(allow_unregistered: bool = False) -> Context:
    ctx = Context(allow_unregistered=allow_unregistered)
    register_dialects(ctx)
    return ctx


def parse_module(text: str, name: str = "<input>", ctx: Context | None = None) -> ModuleOp:
    """Parse `text` with `RlxParser`, as `rlx-opt` does (exact literals, the type memo)."""
    from rlx_xdsl.ir.parser import RlxParser

    return RlxParser(ctx or make_context(), text, name).parse_module()
