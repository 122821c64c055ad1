"""A Python builder for RLX graphs.

    b = GraphBuilder("mlp")
    x = b.input("x", [2, 128])
    w = b.param("w", [128, 64])
    b.output(b.mir.relu(b.mir.matmul(x, w)))
    module = b.module()

A `GraphBuilder` is an `Emitter` appending to a new function's block, plus the
function's signature. Ops are emitted through dialect namespaces:
`b.mir.layer_norm(x, g, beta, eps=1e-5)` (positional arguments are operands,
keyword arguments the op's properties as plain Python values); result types are
inferred by the op itself. For MIR the namespace may be left out: `b.relu(x)`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from xdsl.dialects import func
from xdsl.dialects.builtin import (
    ArrayAttr,
    DictionaryAttr,
    ModuleOp,
    StringAttr,
    TensorType,
    UnitAttr,
    f32,
)
from xdsl.ir import Attribute, Block, Operation, Region, SSAValue

from rlx_xdsl.building.structured_builder import StructuredBuilder
from rlx_xdsl.dialects.mir.builders import element_type
from rlx_xdsl.dialects.mir.regions import IfOp, WhileOp, YieldOp
from rlx_xdsl.ir.emitter import NAMESPACES, Emitted, Emitter
from rlx_xdsl.ir.graph import NAME_ATTR, PARAM_ATTR
from rlx_xdsl.shapes import DYNAMIC

__all__ = ["GraphBuilder", "element_type"]


class GraphBuilder(StructuredBuilder):
    """Builds one `func.func` graph; call `module()` (or `function()`) when done.

    Region ops: `if_`, `while_` here; scans and custom functions from `StructuredBuilder`.
    """

    def __init__(self, name: str = "main"):
        self.name = name
        self.block = Block()
        self.emitter = Emitter.at_end(self.block)
        self._arg_attrs: list[dict[str, Attribute]] = []
        self._outputs: list[SSAValue] | None = None
        self._function: func.FuncOp | None = None
        self._module: ModuleOp | None = None

    # Arguments ------------------------------------------------------------

    def _argument(self, name: str, shape: Sequence[int], dtype, is_param: bool) -> SSAValue:
        t = TensorType(element_type(dtype), list(shape))
        arg = self.block.insert_arg(t, len(self.block.args))
        # Any name SSA syntax allows (`layers.0.wq` too) prints as the argument's %name.
        arg.name_hint = name if SSAValue.is_valid_name(name) else None
        attrs: dict[str, Attribute] = {NAME_ATTR: StringAttr(name)}
        if is_param:
            attrs[PARAM_ATTR] = UnitAttr()
        self._arg_attrs.append(attrs)
        return arg

    def input(self, name: str, shape: Sequence[int], dtype: str | Attribute = f32) -> SSAValue:
        return self._argument(name, shape, dtype, is_param=False)

    def param(self, name: str, shape: Sequence[int], dtype: str | Attribute = f32) -> SSAValue:
        return self._argument(name, shape, dtype, is_param=True)

    # Ops ------------------------------------------------------------------

    def insert(self, op: Operation) -> Operation:
        return self.emitter.insert(op)

    def emit(self, op: Operation) -> Emitted:
        """Append `op`; return its single result (or all results)."""
        return self.emitter.emit(op)

    def constant(self, value, dtype: str | Attribute | None = None) -> SSAValue:
        return self.mir.constant(value, dtype)

    def cast(self, x: SSAValue, to: str | Attribute) -> SSAValue:
        return self.mir.cast(x, to)

    def __getattr__(self, name: str) -> Any:
        """`b.mir`, `b.hir`...: the emitter's dialect namespaces; `b.<op>`: a MIR op."""
        if name.startswith("_"):
            raise AttributeError(name)
        emitter = self.__dict__.get("emitter")
        if emitter is None:
            raise AttributeError(name)
        if name in NAMESPACES:
            return getattr(emitter, name)
        try:
            return getattr(emitter.mir, name)
        except AttributeError:
            raise AttributeError(f"no MIR op named '{name}'") from None

    # Region ops (mir.if, mir.while; scans and custom_fn: StructuredBuilder) -----------
    #
    # A region body is written as a Python function `fn(rb, *block_args)` that
    # builds ops with the region builder `rb` (the same op methods as this
    # builder) and returns the value(s) to yield. Regions capture explicitly:
    # the body may use only its block arguments and values it creates.

    def _region(self, arg_types: Sequence[Attribute], fn, hints: Sequence[str | None]) -> Region:
        """Build one single-block region: block args of `arg_types`, ended by `mir.yield`."""
        rb = _RegionBuilder(self.name)
        rb.block = Block(arg_types=arg_types)
        rb.emitter = Emitter.at_end(rb.block, self.emitter.location)
        for arg, hint in zip(rb.block.args, hints):
            arg.name_hint = hint
        yielded = fn(rb, *rb.block.args)
        values = yielded if isinstance(yielded, tuple | list) else (yielded,)
        rb.insert(YieldOp(*values))
        return Region(rb.block)

    def if_(self, pred: SSAValue, captures: Sequence[SSAValue], then_fn, else_fn):
        """`mir.if`: `then_fn(rb, *captures)` or `else_fn(rb, *captures)` by `pred`."""
        types = [c.type for c in captures]
        hints = [c.name_hint for c in captures]
        then_region = self._region(types, then_fn, hints)
        else_region = self._region(types, else_fn, hints)
        return self.emit(IfOp(pred, captures, then_region, else_region))

    def while_(self, init: Sequence[SSAValue], cond_fn, body_fn, max_iterations: int | None = None):
        """`mir.while`: `carried = body_fn(rb, *carried)` while `cond_fn(rb, *carried)` holds."""
        types = [v.type for v in init]
        hints = [v.name_hint for v in init]
        cond_region = self._region(types, cond_fn, hints)
        body_region = self._region(types, body_fn, hints)
        op = WhileOp(init, cond_region, body_region, max_iterations=max_iterations)
        return self.emit(op)

    def elementwise_region(self, inputs: Sequence[SSAValue], body_fn, prologue: tuple[str, int] | None = None):
        """`mir.elementwise_region`: `body_fn(rb, *inputs)` of elementwise ops, fused; with
        `prologue = ("resize_nearest_2x", i)` the body reads input `i` upsampled."""
        from rlx_xdsl.dialects.mir.fused_regions import ElementwiseRegionOp

        layout, types = _prologue_read([v.type for v in inputs], prologue)
        body = self._region(types, body_fn, [v.name_hint for v in inputs])
        return self.emit(ElementwiseRegionOp(inputs, body, prologue=layout))

    def matmul_epilogue(self, lhs: SSAValue, rhs: SSAValue, extras: Sequence[SSAValue], body_fn):
        """`mir.fused_matmul_epilogue`: `body_fn(rb, lhs @ rhs, *extras)` applied in the matmul."""
        from rlx_xdsl.dialects.mir.contraction import MatmulOp
        from rlx_xdsl.dialects.mir.fused_regions import FusedMatmulEpilogueOp

        product = MatmulOp(lhs, rhs).result
        arg_types = [product.type, *(v.type for v in extras)]
        product.owner.erase()
        body = self._region(arg_types, body_fn, ["acc", *(v.name_hint for v in extras)])
        return self.emit(FusedMatmulEpilogueOp(lhs, rhs, extras, body))

    def batch_elementwise_region(
        self, slices: Sequence[SSAValue], shared: Sequence[SSAValue], body_fn, prologue: tuple[str, int] | None = None
    ):
        """`mir.batch_elementwise_region`: `body_fn(rb, slice, *shared)` on each slice, joined along
        axis 0; with `prologue = ("resize_nearest_2x", i)` the body reads argument `i` (0: the
        slice) upsampled."""
        from rlx_xdsl.dialects.mir.fused_regions import BatchElementwiseRegionOp

        layout, arg_types = _prologue_read([slices[0].type, *(v.type for v in shared)], prologue)
        body = self._region(arg_types, body_fn, ["slice", *(v.name_hint for v in shared)])
        return self.emit(BatchElementwiseRegionOp(slices, shared, body, prologue=layout))

    # Finishing ------------------------------------------------------------

    def output(self, *values: SSAValue) -> None:
        if self._function is not None:
            raise ValueError(f"@{self.name} is already built: output(...) must come before function()/module()")
        self._outputs = list(values)

    def function(self) -> func.FuncOp:
        """The built `func.func`; built once, so later calls return the same op."""
        if self._function is not None:
            return self._function
        if self._outputs is None:
            raise ValueError("call output(...) before building the function")
        self.emitter.insert(func.ReturnOp(*self._outputs))
        arg_types = [a.type for a in self.block.args]
        out_types = [v.type for v in self._outputs]
        self._function = func.FuncOp(
            self.name,
            (arg_types, out_types),
            Region(self.block),
            arg_attrs=ArrayAttr([DictionaryAttr(a) for a in self._arg_attrs]),
        )
        return self._function

    def module(self) -> ModuleOp:
        """A `builtin.module` holding `function()`; built once, so later calls return the same module."""
        if self._module is None:
            function = self.function()
            if function.parent is not None:
                raise ValueError(f"@{self.name} already belongs to another module: call module() or function(), not both")
            self._module = ModuleOp([function])
        return self._module


class _RegionBuilder(GraphBuilder):
    """Builds the body of a region op's region (see `GraphBuilder.if_`).

    Its block is the region's entry block; graph arguments and outputs belong to
    the enclosing graph, so `input`, `param` and `output` are refused here.
    """

    def _argument(self, name, shape, dtype, is_param):
        raise TypeError("regions take values through their block arguments, not input()/param()")

    def output(self, *values: SSAValue) -> None:
        raise TypeError("a region body returns the values it yields instead of calling output()")


def _prologue_read(types: list[Attribute], prologue: tuple[str, int] | None) -> tuple[Any, list[Attribute]]:
    """The `(Layout, index)` of a `("resize_nearest_2x", i)` prologue (or None), and the body
    argument types read from `types`: argument `i` upsampled 2x in H and W."""
    from rlx_xdsl.dialects.mir.fused_regions import Layout

    if prologue is None:
        return None, types
    layout = (Layout(prologue[0]), prologue[1])
    t = types[layout[1]]
    n, c, h, w = t.get_shape()
    double = lambda d: DYNAMIC if d == DYNAMIC else 2 * d
    types = [*types[: layout[1]], TensorType(t.element_type, (n, c, double(h), double(w))), *types[layout[1] + 1 :]]
    return layout, types
