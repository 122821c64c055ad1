"""A Python builder for MIR graphs.

    b = GraphBuilder("mlp")
    x = b.input("x", [2, 128])
    w = b.param("w", [128, 64])
    b.output(b.relu(b.matmul(x, w)))
    module = b.module()

Every MIR op is available as a method named after the op (`b.layer_norm(x, g, beta,
eps=1e-5)`); positional arguments are operands and keyword arguments are the op's
attributes as plain Python values. Result types are inferred by the op itself.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
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

from rlx_xdsl import dtypes
from rlx_xdsl.dialects.mir import OPS_BY_NAME
from rlx_xdsl.dialects.mir.elementwise import ConstantOp
from rlx_xdsl.graph import NAME_ATTR, PARAM_ATTR
from rlx_xdsl.interpreters.common import numpy_to_dense


def element_type(dtype: str | Attribute) -> Attribute:
    """An element type from a dtype name such as "f32" or "bf16", or the type itself."""
    return dtypes.dtype_named(dtype).element_type if isinstance(dtype, str) else dtype


class GraphBuilder:
    """Builds one `func.func` graph; call `module()` (or `function()`) when done."""

    def __init__(self, name: str = "main"):
        self.name = name
        self.block = Block()
        self._arg_attrs: list[dict[str, Attribute]] = []
        self._outputs: list[SSAValue] | None = None

    # Arguments ------------------------------------------------------------

    def _argument(self, name: str, shape: Sequence[int], dtype, is_param: bool) -> SSAValue:
        t = TensorType(element_type(dtype), list(shape))
        arg = self.block.insert_arg(t, len(self.block.args))
        arg.name_hint = name if name.isidentifier() else None
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
        self.block.add_op(op)
        return op

    def emit(self, op: Operation) -> SSAValue | tuple[SSAValue, ...]:
        """Append `op`; return its single result (or all results)."""
        self.insert(op)
        return op.results[0] if len(op.results) == 1 else tuple(op.results)

    def constant(self, value, dtype: str | Attribute | None = None) -> SSAValue:
        array = np.asarray(value)
        et = element_type(dtype) if dtype is not None else None
        if et is None and array.dtype == np.float64:
            et = f32
        return self.emit(ConstantOp(numpy_to_dense(array, et)))

    def cast(self, x: SSAValue, to: str | Attribute) -> SSAValue:
        return self.emit(OPS_BY_NAME["cast"](x, element_type(to)))

    def __getattr__(self, op_name: str):
        try:
            op_class = OPS_BY_NAME[op_name]
        except KeyError:
            raise AttributeError(f"no MIR op named '{op_name}'") from None

        def build(*operands, **attributes):
            return self.emit(op_class(*operands, **attributes))

        build.__doc__ = op_class.__doc__
        return build

    # Finishing ------------------------------------------------------------

    def output(self, *values: SSAValue) -> None:
        self._outputs = list(values)

    def function(self) -> func.FuncOp:
        if self._outputs is None:
            raise ValueError("call output(...) before building the function")
        self.block.add_op(func.ReturnOp(*self._outputs))
        arg_types = [a.type for a in self.block.args]
        out_types = [v.type for v in self._outputs]
        return func.FuncOp(
            self.name,
            (arg_types, out_types),
            Region(self.block),
            arg_attrs=ArrayAttr([DictionaryAttr(a) for a in self._arg_attrs]),
        )

    def module(self) -> ModuleOp:
        return ModuleOp([self.function()])
