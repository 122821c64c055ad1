"""Recipes of the MIR mixture-of-experts and LoRA ops: weights and adapters are parameters."""

from __future__ import annotations

from rlx_xdsl.dialects.mir.elementwise import ConstantOp
from rlx_xdsl.dialects.mir.moe import DequantGroupedMatmulOp, DequantMoeWeightsOp, GroupedMatmulOp, LoraMatmulOp
from rlx_xdsl.dialects.mir.quant import QuantScheme
from rlx_xdsl.registry import OpClass
from rlx_xdsl.testing.graphgen.recipes import RECIPES
from rlx_xdsl.testing.graphgen.roles import with_ids
from rlx_xdsl.testing.graphgen.state import MAX_DIM, GraphState, dense
from rlx_xdsl.testing.graphgen.values import element_type, float_min_rank, is_float, rank, shape_of


@RECIPES.register(LoraMatmulOp)
def lora_matmul(s: GraphState, op: OpClass) -> None:
    """`x[..., k]` from the pool, new `[k, n]` weight, `[k, r]` and `[r, n]` adapters, a random scale."""
    x = s.need(float_min_rank(2))
    k, et = shape_of(x)[-1], element_type(x)
    n, r = s.integer(1, MAX_DIM), s.integer(1, 3)
    w, a, b = (s.operand(shape, et, param=True) for shape in ((k, n), (k, r), (r, n)))
    s.emit(op, x, w, a, b, scale=s.choice((0.5, 1.0, 2.0)))


@RECIPES.register(GroupedMatmulOp)
def grouped_matmul(s: GraphState, op: OpClass) -> None:
    """`x[m, k]` from the pool (or new), `E` new `[k, n]` expert weights, an expert id per row."""
    x = s.pick(lambda v: is_float(v) and rank(v) == 2)
    if x is None:
        x = s.operand(s.shape(2, 2))
    m, k = shape_of(x)
    experts, n = s.integer(1, 3), s.integer(1, MAX_DIM)
    w = s.operand((experts, k, n), element_type(x), param=True)
    s.emit(op, *with_ids(s, op, (m,), experts, x=x, w=w))


@RECIPES.register(DequantGroupedMatmulOp)
def dequant_grouped_matmul(s: GraphState, op: OpClass) -> None:
    """x `[M, K]` from the pool (K a multiple of the block) or new; `E` experts' int8 block codes
    as constants, their scales (and asymmetric zero points) new. The ui8-coded schemes are
    left out: they have no linalg lowering yet (the op's tests cover their kernel)."""
    scheme = s.choice((QuantScheme.INT8_BLOCK, QuantScheme.INT8_BLOCK_ASYM))
    block = s.choice((2, 4))
    x = s.pick(lambda v: is_float(v) and rank(v) == 2 and shape_of(v)[1] % block == 0)
    if x is None:
        x = s.operand((s.integer(1, 3), block * s.integer(1, 2)))
    (m, k), et = shape_of(x), element_type(x)
    experts, n, rng = s.integer(1, 3), s.integer(1, 4), s.rng()
    codes = dense(rng.integers(-128, 128, (experts, k, n)), "i8")
    blocks = (experts, k // block, n)
    zp = s.operand(blocks if scheme is QuantScheme.INT8_BLOCK_ASYM else (1,), et)
    data = {"x": x, "w_q": s.emit(ConstantOp, codes), "scale": s.operand(blocks, et), "zp": zp}
    s.emit(op, *with_ids(s, op, (m,), experts, **data), scheme=scheme, block_size=block)


@RECIPES.register(DequantMoeWeightsOp)
def dequant_moe_weights(s: GraphState, op: OpClass) -> None:
    """`E` experts' int8 block codes as constants, their scales (and asymmetric zero points) new."""
    scheme = s.choice((QuantScheme.INT8_BLOCK, QuantScheme.INT8_BLOCK_ASYM))
    block = s.choice((2, 4))
    experts, k, n, rng = s.integer(1, 3), block * s.integer(1, 2), s.integer(1, 4), s.rng()
    et = s.choice(("f32", "f64"))
    codes = s.emit(ConstantOp, dense(rng.integers(-128, 128, (experts, k, n)), "i8"))
    blocks = (experts, k // block, n)
    zp = s.operand(blocks if scheme is QuantScheme.INT8_BLOCK_ASYM else (1,), et)
    s.emit(op, codes, s.operand(blocks, et), zp, scheme=scheme, block_size=block)
