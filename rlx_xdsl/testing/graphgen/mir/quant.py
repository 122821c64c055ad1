"""Recipes of the quantisation MIR ops.

Scales, ranges and LSQ steps are positive constants (a zero LSQ step divides by zero);
integer operands of dequantize come from the pool or are new i8/ui8 arguments. The
`tanh` surrogate is left out of `fake_quantize_backward`'s draws: its second derivative
is a documented gap (`rlx-grad` reports it), which random gradient graphs would hit.
"""

from __future__ import annotations

import numpy as np
from xdsl.ir import SSAValue

from rlx_xdsl.dialects.mir import quant
from rlx_xdsl.dialects.mir.elementwise import ConstantOp
from rlx_xdsl.registry import OpClass
from rlx_xdsl.testing.graphgen.recipes import RECIPES
from rlx_xdsl.testing.graphgen.state import GraphState, dense
from rlx_xdsl.testing.graphgen.values import element_type, is_float, rank, shape_of

STEPS = (0.0625, 0.25, 0.5, 1.0, 2.0)


def _channels(s: GraphState, x: SSAValue) -> tuple[int | None, int]:
    """A channel axis of x (or None: per tensor) and how many values it takes."""
    if rank(x) == 0 or s.flag():
        return None, 1
    axis = s.axis(rank(x))
    return axis, shape_of(x)[axis]


def _positive(s: GraphState, x: SSAValue, axis: int | None, count: int) -> SSAValue:
    """A constant of positive steps shaped `[C]` (per channel) or `[1]`/`[]` (per tensor)."""
    values = [s.choice(STEPS) for _ in range(count)]
    shape = (count,) if axis is not None or s.flag() else ()
    data = values if shape else values[0]
    return s.emit(ConstantOp, dense(data, element_type(x)))


def _affine(s: GraphState, x: SSAValue, storage: str) -> dict:
    axis, count = _channels(s, x)
    lo, hi = quant.INT_RANGES[storage]
    return {
        "scales": [s.choice(STEPS) for _ in range(count)],
        "zero_points": [s.integer(lo, hi) if storage == "ui8" else s.integer(-4, 4) for _ in range(count)],
        "axis": axis,
    }


@RECIPES.register(quant.QuantizeOp)
def quantize(s: GraphState, op: OpClass) -> None:
    x = s.need(is_float)
    s.emit(op, x, **_affine(s, x, s.choice(("i8", "ui8"))))


@RECIPES.register(quant.DequantizeOp)
def dequantize(s: GraphState, op: OpClass) -> None:
    """An i8/ui8 value from the pool (a quantize's result), or a new one."""
    storage = s.choice(("i8", "ui8"))
    x = s.pick(lambda v: str(element_type(v)) == storage) or s.operand(s.shape(), storage)
    s.emit(op, x, **_affine(s, x, storage))


def _ste_props(s: GraphState, kinds) -> dict:
    mode = s.choice(tuple(quant.ScaleMode))
    return {
        "bits": s.integer(quant.MIN_BITS, quant.MAX_BITS),
        "ste": s.choice(kinds),
        "scale_mode": mode,
        "decay": 0.75 if mode is quant.ScaleMode.EMA else None,
    }


def _state(s: GraphState, x: SSAValue, props: dict, axis: int | None, count: int) -> SSAValue | None:
    return None if props["scale_mode"] is quant.ScaleMode.PER_BATCH else _positive(s, x, axis, count)


@RECIPES.register(quant.FakeQuantizeOp)
def fake_quantize(s: GraphState, op: OpClass) -> None:
    x = s.need(is_float)
    axis, count = _channels(s, x)
    props = _ste_props(s, tuple(quant.SteKind))
    s.emit(op, x, _state(s, x, props, axis, count), axis=axis, **props)


@RECIPES.register(quant.FakeQuantizeBackwardOp)
def fake_quantize_backward(s: GraphState, op: OpClass) -> None:
    x = s.need(is_float)
    axis, count = _channels(s, x)
    props = _ste_props(s, tuple(k for k in quant.SteKind if k is not quant.SteKind.TANH))
    dy = s.operand(shape_of(x), element_type(x))
    s.emit(op, x, dy, _state(s, x, props, axis, count), axis=axis, **props)


@RECIPES.register(quant.FakeQuantizeLsqOp)
def fake_quantize_lsq(s: GraphState, op: OpClass) -> None:
    x = s.need(is_float)
    axis, count = _channels(s, x)
    s.emit(op, x, _positive(s, x, axis, count), bits=s.integer(quant.MIN_BITS, quant.MAX_BITS), axis=axis)


@RECIPES.register(quant.FakeQuantizeLsqBackwardXOp, quant.FakeQuantizeLsqBackwardScaleOp)
def fake_quantize_lsq_backward(s: GraphState, op: OpClass) -> None:
    x = s.need(is_float)
    axis, count = _channels(s, x)
    scale = _positive(s, x, axis, count)
    dy = s.operand(shape_of(x), element_type(x))
    s.emit(op, x, scale, dy, bits=s.integer(quant.MIN_BITS, quant.MAX_BITS), axis=axis)


def _int8(s: GraphState, shape) -> SSAValue:
    storage = s.choice(("i8", "ui8"))
    return s.pick(lambda v: shape_of(v) == tuple(shape) and str(element_type(v)) == storage) or s.operand(
        shape, storage
    )


def _requant(s: GraphState, x: SSAValue, w: SSAValue) -> dict:
    def zero_point(v):
        return s.integer(0, 255) if str(element_type(v)) == "ui8" else s.integer(-4, 4)

    return {"x_zp": zero_point(x), "w_zp": zero_point(w), "out_zp": s.integer(-8, 200),
            "mult": s.choice((1e-3, 0.01, 0.05))}  # fmt: skip


@RECIPES.register(quant.QMatmulOp)
def qmatmul(s: GraphState, op: OpClass) -> None:
    m, k, n = s.integer(1, 4), s.integer(1, 4), s.integer(1, 4)
    x, w = _int8(s, (m, k)), _int8(s, (k, n))
    s.emit(op, x, w, s.operand((n,), "i32"), **_requant(s, x, w))


@RECIPES.register(quant.QConv2dOp)
def qconv2d(s: GraphState, op: OpClass) -> None:
    groups = s.choice((1, 2))
    cin, cout, kernel = groups * s.integer(1, 2), groups * s.integer(1, 2), s.integer(1, 2)
    x = _int8(s, (s.integer(1, 2), cin, s.integer(kernel, 4), s.integer(kernel, 4)))
    w = _int8(s, (cout, cin // groups, kernel, kernel))
    window = {"kernel_size": [kernel, kernel], "stride": [s.integer(1, 2)] * 2, "groups": groups}
    s.emit(op, x, w, s.operand((cout,), "i32"), **window, **_requant(s, x, w))


@RECIPES.register(quant.DequantMatmulOp)
def dequant_matmul(s: GraphState, op: OpClass) -> None:
    """x `[M, K]` from the pool (K a multiple of the block) or new; weights and scales new.

    Random fp8 codes include NaN and inf: fp8 weights draw codes of magnitude below 2^4."""
    Scheme = quant.QuantScheme
    scheme = s.choice(tuple(Scheme))
    if scheme.is_gguf:
        return gguf_matmul(s, op, scheme)
    block = 16 if scheme is Scheme.NVFP4_BLOCK else (s.choice((2, 4)) if scheme.has_block_size else 1)
    x = s.pick(lambda v: is_float(v) and rank(v) == 2 and shape_of(v)[1] % max(block, 2) == 0)
    if x is None:
        x = s.operand((s.integer(1, 3), max(block, 2) * s.integer(1, 2)))
    (_, k), n, et = shape_of(x), s.integer(1, 4), element_type(x)
    rng = s.rng()
    blocks = k // block
    if scheme in (Scheme.FP8_E4M3, Scheme.FP8_E5M2):
        limit = 0x58 if scheme is Scheme.FP8_E4M3 else 0x4C
        codes = rng.integers(0, limit, (k, n)) | (rng.integers(0, 2, (k, n)) << 7)
        w_q, scale = dense(codes, "ui8"), s.operand((s.choice((1, n)),), et)
    elif scheme.packs_nibbles:
        w_q = dense(rng.integers(0, 256, (k // 2, n)), "ui8")
        nvfp4 = scheme is Scheme.NVFP4_BLOCK
        scale = s.emit(ConstantOp, dense(rng.integers(0x28, 0x40, (blocks, n)), "ui8")) if nvfp4 else None
        scale = scale if nvfp4 else s.operand((blocks, n), et)
    else:
        w_q, scale = dense(rng.integers(-128, 128, (k, n)), "i8"), s.operand((blocks, n), et)
    zp = s.operand((blocks, n) if scheme is Scheme.INT8_BLOCK_ASYM else (1,), et)
    block_size = block if scheme.has_block_size else None
    s.emit(op, x, s.emit(ConstantOp, w_q), scale, zp, scheme=scheme, block_size=block_size)


GGUF_SCALES_AT = {
    quant.QuantScheme.GGUF_Q4_0: (0,),
    quant.QuantScheme.GGUF_Q8_0: (0,),
    quant.QuantScheme.GGUF_Q6_K: (208,),
    quant.QuantScheme.GGUF_Q4_K: (0, 2),
    quant.QuantScheme.GGUF_Q5_K: (0, 2),
    quant.QuantScheme.GGUF_Q2_K: (80, 82),
    quant.QuantScheme.GGUF_Q3_K: (108,),
}
"""Where each GGUF block keeps its f16 scales (`d`; Q4_K also `dmin`; Q6_K's `d` follows
its codes and sub-scales)."""


def gguf_matmul(s: GraphState, op: OpClass, scheme) -> None:
    """GGML blocks of random codes with sane f16 scales (finite, magnitude 0.01 to 1;
    Q8_K's is an f32)."""
    values, size = quant.GGUF_BLOCKS[scheme]
    x = s.pick(lambda v: is_float(v) and rank(v) == 2 and shape_of(v)[1] % values == 0)
    if x is None:
        x = s.operand((s.integer(1, 3), values))
    k, rows, rng = shape_of(x)[1], s.integer(1, 3), s.rng()
    blocks = rng.integers(0, 256, (rows * k // values, size)).astype(np.uint8)
    top = 1 if values == 32 else 0.01  # the K-quants multiply by sub-block scales too
    scales = (rng.uniform(0.01, 1, len(blocks)) * top * rng.choice([-1, 1], len(blocks))).astype(np.float16)
    if scheme is quant.QuantScheme.GGUF_Q8_K:
        blocks[:, :4] = scales.astype(np.float32).view(np.uint8).reshape(-1, 4)
    for at in GGUF_SCALES_AT.get(scheme, ()):
        blocks[:, at : at + 2] = scales.view(np.uint8).reshape(-1, 2)
    s.emit(op, x, s.emit(ConstantOp, dense(blocks.reshape(-1), "ui8")), scheme=scheme)
