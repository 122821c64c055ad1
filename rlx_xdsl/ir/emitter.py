"""One way to create ops: at an insertion point, with inferred types and a location.

Passes and the graph builder both emit ops through an `Emitter`:

    # inside a RewritePattern
    e = Emitter.replacing(op, rewriter)        # before `op`, at `op`'s location
    y = e.mir.add(e.mir.matmul(x, w), b)
    e.replace(op, y)

    # appending to a block (what GraphBuilder does)
    e = Emitter.at_end(block)
    h = e.mir.silu(x)

`e.mir.<op>(*operands, **properties)` calls the op class's own constructor, so
result types are inferred by the op and the emitter never computes a type.

Locations: an op emitted without one of its own gets the emitter's location,
by default that of the op being rewritten, so diagnostics (and the fusion
report) point at the user's source line. `labelled("layers.0.ffn")` wraps it in
a `NameLoc` (HIR provenance); `fused(ops)` uses a `FusedLoc` of several ops.

Dialect namespaces (`e.mir`, `e.hir`, `e.lir`) are registered with
`register_namespace` by each dialect's package when it is imported (the emitter knows
no dialect), so another dialect plugs in the same way.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from xdsl.builder import Builder
from xdsl.dialects.builtin import (
    FusedLoc,
    LocationAttr,
    NameLoc,
    NoneAttr,
    StringAttr,
    UnknownLoc,
)
from xdsl.ir import Block, Dialect, Operation, SSAValue
from xdsl.pattern_rewriter import PatternRewriter
from xdsl.rewriter import InsertPoint

Emitted = SSAValue | tuple[SSAValue, ...]
"""What emitting an op returns: its only result, or all of them."""


class Emitter:
    """Creates ops at an insertion point, giving them a default location."""

    def __init__(self, builder: Builder, location: LocationAttr | None = None):
        self.builder = builder
        self.location: LocationAttr = location if location is not None else UnknownLoc()
        self._namespaces: dict[str, Any] = {}

    # Where ops go -----------------------------------------------------------------

    @staticmethod
    def at_end(block: Block, location: LocationAttr | None = None) -> Emitter:
        """Append to `block`."""
        return Emitter(Builder(InsertPoint.at_end(block)), location)

    @staticmethod
    def before(op: Operation, rewriter: PatternRewriter | None = None) -> Emitter:
        """Insert before `op`, at `op`'s location (through `rewriter` when in a pattern)."""
        if rewriter is None:
            return Emitter(Builder(InsertPoint.before(op)), op.location)
        emitter = Emitter(rewriter, op.location)
        emitter._insertion_point = InsertPoint.before(op)
        return emitter

    @staticmethod
    def at(
        point: InsertPoint, location: LocationAttr | None = None, rewriter: PatternRewriter | None = None
    ) -> Emitter:
        """Insert at `point` (through `rewriter` when in a pattern), e.g. right after a value's definition."""
        emitter = Emitter(rewriter if rewriter is not None else Builder(point), location)
        emitter._insertion_point = point
        return emitter

    @staticmethod
    def replacing(op: Operation, rewriter: PatternRewriter) -> Emitter:
        """The emitter a pattern uses to rewrite `op`: before it, at its location."""
        return Emitter.before(op, rewriter)

    _insertion_point: InsertPoint | None = None
    """Where to insert when the builder is shared (a rewriter); else the builder's own."""

    def _derived(self, location: LocationAttr) -> Emitter:
        emitter = Emitter(self.builder, location)
        emitter._insertion_point = self._insertion_point
        return emitter

    # Locations ---------------------------------------------------------------------

    def labelled(self, label: str) -> Emitter:
        """The same insertion point, with locations wrapped in `NameLoc(label)`."""
        inner = self.location if not isinstance(self.location, UnknownLoc) else NoneAttr()
        return self._derived(NameLoc(StringAttr(label), inner))

    def fused(self, ops: Sequence[Operation], metadata: str | None = None) -> Emitter:
        """The same insertion point, located at all of `ops` (what a fusion replaces)."""
        meta = StringAttr(metadata) if metadata is not None else NoneAttr()
        return self._derived(FusedLoc([op.location for op in ops], meta))

    # Emitting ---------------------------------------------------------------------

    def insert(self, op: Operation) -> Operation:
        """Insert `op`, giving it the emitter's location unless it has its own."""
        if isinstance(op.location, UnknownLoc):
            op.location = self.location
        self.builder.insert(op, self._insertion_point)
        return op

    def emit(self, op: Operation) -> Emitted:
        """Insert `op`; return its only result, or the tuple of its results."""
        self.insert(op)
        return op.results[0] if len(op.results) == 1 else tuple(op.results)

    def replace(self, op: Operation, *values: SSAValue) -> None:
        """Replace `op`'s results by `values` (already emitted) and erase `op`."""
        rewriter = self.builder
        assert isinstance(rewriter, PatternRewriter), "replace() needs an emitter made from a rewriter"
        rewriter.replace(op, (), values)

    def __getattr__(self, namespace: str) -> Any:
        """`e.mir`, `e.hir`, ...: the registered dialect namespaces."""
        if namespace.startswith("_"):
            raise AttributeError(namespace)
        if namespace not in NAMESPACES:
            known = ", ".join(sorted(NAMESPACES)) or "none"
            raise AttributeError(f"no dialect namespace '{namespace}' is registered (known: {known}); "
                                 f"importing the dialect's package registers it (rlx_xdsl.dialects.{namespace})")
        made = self._namespaces.get(namespace)
        if made is None:
            made = self._namespaces[namespace] = NAMESPACES[namespace](self)
        return made


class OpNamespace:
    """`ns.<short_name>(*operands, **properties)` emits that op of one dialect.

    Subclasses add helpers taking Python values where an op's constructor takes
    attributes (`mir.constant(numpy_array)`), as methods of the same name.
    """

    def __init__(self, emitter: Emitter, dialect: Dialect):
        self._emitter = emitter
        self._ops = short_names(dialect)

    def op_class(self, short_name: str) -> type[Operation]:
        try:
            return self._ops[short_name]
        except KeyError:
            dialect = next(iter(self._ops.values())).name.split(".")[0] if self._ops else "?"
            raise AttributeError(f"no {dialect} op named '{short_name}'") from None

    def __getattr__(self, short_name: str) -> Callable[..., Emitted]:
        if short_name.startswith("_"):
            raise AttributeError(short_name)
        op_class = self.op_class(short_name)

        def build(*operands: Any, **properties: Any) -> Emitted:
            return self._emitter.emit(op_class(*operands, **properties))

        build.__doc__ = op_class.__doc__
        build.__name__ = short_name
        return build

    def __dir__(self) -> list[str]:
        return sorted({*super().__dir__(), *self._ops})


_SHORT_NAMES: dict[str, dict[str, type[Operation]]] = {}


def short_names(dialect: Dialect) -> dict[str, type[Operation]]:
    """`{"matmul": MatmulOp, ...}` for one dialect: how Python spells its ops."""
    table = _SHORT_NAMES.get(dialect.name)
    if table is None:
        table = _SHORT_NAMES[dialect.name] = {op.name.split(".", 1)[1]: op for op in dialect.operations}
    return table


NAMESPACES: dict[str, Callable[[Emitter], Any]] = {}
"""Namespace factories by attribute name (`"mir"` -> a namespace of MIR ops)."""


def register_namespace(name: str, factory: Callable[[Emitter], Any]) -> None:
    """Make `Emitter.<name>` (and `GraphBuilder.<name>`) available."""
    NAMESPACES[name] = factory
