"""`emitter.mir`: the MIR ops as Python calls, plus helpers taking Python values.

Every op is `mir.<short_name>(*operands, **properties)`, calling the op class's
own constructor (see `rlx_xdsl.ir.emitter`). Three ops also take plain Python values:
`constant(array_like, dtype=None)`, `cast(x, "bf16")` and `iota(shape, "i64", dimension=1)`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from xdsl.dialects.builtin import TensorType, f32
from xdsl.ir import Attribute, Dialect, SSAValue

from rlx_xdsl import dtypes
from rlx_xdsl.dialects.mir.attrs import CastConfigAttr
from rlx_xdsl.dialects.mir.elementwise import CastOp, ConstantOp, IotaOp
from rlx_xdsl.ir.emitter import Emitted, Emitter, OpNamespace


def element_type(dtype: str | Attribute) -> Attribute:
    """An element type from a dtype name such as "f32" or "bf16", or the type itself."""
    return dtypes.dtype_named(dtype).element_type if isinstance(dtype, str) else dtype


class MirNamespace(OpNamespace):
    def __init__(self, emitter: Emitter, dialect: Dialect):
        super().__init__(emitter, dialect)

    def constant(self, value: Any, dtype: str | Attribute | None = None) -> SSAValue:
        """A `mir.constant` holding `value`; Python floats default to f32."""
        import numpy as np  # only constants need it: a pass that emits none starts faster

        from rlx_xdsl.ir.dense import numpy_to_dense

        array = np.asarray(value)
        et = element_type(dtype) if dtype is not None else None
        if et is None and array.dtype == np.float64:
            et = f32
        result = self._emitter.emit(ConstantOp(numpy_to_dense(array, et)))
        assert isinstance(result, SSAValue)
        return result

    def cast(self, x: SSAValue, to: str | Attribute, config: CastConfigAttr | None = None) -> Emitted:
        """`mir.cast` of `x` to a dtype given by name or element type (blocked with a `config`)."""
        return self._emitter.emit(CastOp(x, element_type(to), config))

    def iota(
        self,
        shape: Sequence[int],
        dtype: str | Attribute = "i64",
        *,
        dimension: int,
        like: SSAValue | None = None,
        like_dims: Sequence[int] | None = None,
    ) -> Emitted:
        """`mir.iota`: the index ramp along `dimension` of `shape`, whose `?` dims are
        sized at run time by `like`'s dims `like_dims` (-1 for a static dim)."""
        result = TensorType(element_type(dtype), list(shape))
        return self._emitter.emit(IotaOp(result, dimension=dimension, like=like, like_dims=like_dims))
