"""Lowering of the MIR vision ops.

* layer_norm_2d: norm's `standardized` over the channel dim;
* resize_nearest_2x: a broadcast to `[N, C, H, 2, W, 2]`, collapsed to `[N, C, 2H, 2W]`;
* axial_rope_2d: one generic over x's channel pairs and constant cos/sin tables
  (computed at compile time by the interpreter's `rope_tables`);
* conv_transpose_2d: expanded into `mir.conv_backward_input` of the output size,
  which the same walk lowers (through its decomposition into a conv).
"""

from __future__ import annotations

from collections.abc import Sequence

from xdsl.dialects import arith
from xdsl.dialects.builtin import TensorType
from xdsl.ir import SSAValue
from xdsl.ir.affine import AffineExpr, AffineMap

from rlx_xdsl.conversions.mir_to_linalg.lowering import LOWERINGS, Lowering, LoweringError
from rlx_xdsl.conversions.mir_to_linalg.norm import standardized
from rlx_xdsl.conversions.mir_to_linalg.scalars import Scalars, accumulator, storage_type
from rlx_xdsl.conversions.mir_to_linalg.tensors import PARALLEL, identity, loops
from rlx_xdsl.dialects.mir import vision
from rlx_xdsl.interpreters.mir.vision import rope_tables
from rlx_xdsl.ir.dense import numpy_to_dense
from rlx_xdsl.shapes import is_static

_d = AffineExpr.dimension


@LOWERINGS.register(vision.LayerNorm2dOp)
def lower_layer_norm_2d(lw: Lowering, op: vision.LayerNorm2dOp) -> Sequence[SSAValue]:
    channel = loops(4, [1])
    affine = [(op.gamma, lw.operand_dtype(1), channel), (op.beta, lw.operand_dtype(2), channel)]
    return [standardized(lw, op.x, lw.result_dtype(), [1], op.eps.value.data, True, affine)]


@LOWERINGS.register(vision.ResizeNearest2xOp)
def lower_resize_nearest_2x(lw: Lowering, op: vision.ResizeNearest2xOp) -> Sequence[SSAValue]:
    """Broadcast `x` to `[N, C, H, 2, W, 2]`, then merge `(H, 2)` and `(W, 2)`: each pixel a
    2x2 block (no `floordiv` maps, which IREE cannot tile)."""
    n, c, h, w = lw.dims(op.input)
    blocks = [n, c, h, 2, w, 2]
    init = lw.empty(blocks, lw.result_dtype())
    source = loops(6, [0, 1, 2, 4])
    spread = lw.generic([(op.input, source)], [(init, identity(6))], [PARALLEL] * 6, lambda s, v, _: v)[0]
    return [lw.collapse(spread, [[0], [1], [2, 3], [4, 5]])]


@LOWERINGS.register(vision.AxialRope2dOp)
def lower_axial_rope_2d(lw: Lowering, op: vision.AxialRope2dOp) -> Sequence[SSAValue]:
    """On x viewed as `[B, H, L, D/2, 2]`: `out[.., i, 0] = re cos - im sin`,
    `out[.., i, 1] = re sin + im cos`, with `(re, im) = x[.., i, :]` and the tables at `[l, i]`."""
    dt = lw.result_dtype()
    acc = accumulator(dt)
    tables = [
        lw.emit(arith.ConstantOp(numpy_to_dense(t.astype(acc.numpy), storage_type(acc))))
        for t in rope_tables(op)
    ]
    # Every dim but the batch is fixed by the properties (the verifier checks `?` dims
    # against them); x is cast to those static dims, which the constant tables need.
    end_x, end_y, repeat, heads, width = op.ints("end_x", "end_y", "repeat_factor", "num_heads", "head_dim")
    batch = op.input.type.get_shape()[0]
    static = lw.cast_to(op.input, TensorType(op.input.type.element_type, [batch, heads, end_x * end_y * repeat, width]))
    pairs = [*lw.dims(static)[:3], width // 2, 2]
    x = lw.expand(static, [[0], [1], [2], [3, 4]], pairs)
    real, imag = (AffineMap(5, 0, (_d(0), _d(1), _d(2), _d(3), AffineExpr.constant(k))) for k in (0, 1))
    at_pair = loops(5, [2, 3])

    def body(s: Scalars, re: SSAValue, im: SSAValue, cos: SSAValue, sin: SSAValue, _: SSAValue) -> SSAValue:
        re, im = s.cast(re, dt, acc), s.cast(im, dt, acc)
        first = s.sub(s.mul(re, cos, acc), s.mul(im, sin, acc), acc)
        second = s.add(s.mul(re, sin, acc), s.mul(im, cos, acc), acc)
        is_first = s.index_compare("eq", s.loop_index(4), s.index_constant(0))
        return s.cast(s.select(is_first, first, second), acc, dt)

    inputs = [(x, real), (x, imag), (tables[0], at_pair), (tables[1], at_pair)]
    init = lw.empty(pairs, dt)
    rotated = lw.generic(inputs, [(init, identity(5))], [PARALLEL] * 5, body)[0]
    return [lw.collapse(rotated, [[0], [1], [2], [3, 4]])]


@LOWERINGS.register(vision.ConvTranspose2dOp)
def lower_conv_transpose_2d(lw: Lowering, op: vision.ConvTranspose2dOp) -> Sequence[SSAValue]:
    size = lw.types.results[0].get_shape()[2:]
    if not is_static(size):
        raise LoweringError(f"the output height and width must be static, got {list(size)}")
    props = {name: list(op.pair(name)) for name in ("kernel_size", "stride", "padding", "dilation")}
    return [lw.e.mir.conv_backward_input(op.x, op.w, input_size=list(size), groups=op.groups.value.data, **props)]
