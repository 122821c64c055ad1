"""One place that knows which dialects an RLX tool loads."""

from __future__ import annotations

from collections.abc import Callable

from xdsl.context import Context
from xdsl.dialects.arith import Arith
from xdsl.dialects.builtin import Builtin, ModuleOp
from xdsl.dialects.func import Func
from xdsl.ir import Dialect
from xdsl.parser import Parser


def _mir() -> Dialect:
    from rlx_xdsl.dialects.mir import MIR

    return MIR


RLX_DIALECTS: dict[str, Callable[[], Dialect]] = {"mir": _mir}
"""Dialect factories by name (lazy, as xDSL's universe expects)."""


def make_context(allow_unregistered: bool = False) -> Context:
    ctx = Context(allow_unregistered=allow_unregistered)
    for dialect in (Builtin, Func, Arith):
        ctx.load_dialect(dialect)
    for name, factory in RLX_DIALECTS.items():
        ctx.register_dialect(name, factory)
    return ctx


def parse_module(text: str, name: str = "<input>", ctx: Context | None = None) -> ModuleOp:
    return Parser(ctx or make_context(), text, name).parse_module()
