"""Recipes of the MIR mixture-of-experts and LoRA ops: weights and adapters are parameters."""

from __future__ import annotations

import numpy as np
from xdsl.ir import SSAValue

from rlx_xdsl.dialects.mir.elementwise import ConstantOp
from rlx_xdsl.dialects.mir.moe import (
    DequantGroupedMatmulOp,
    DequantMoeWeightsOp,
    GroupedMatmulOp,
    LoraMatmulOp,
)
from rlx_xdsl.dialects.mir.quant import QuantScheme
from rlx_xdsl.registry import OpClass
from rlx_xdsl.testing.graphgen.recipes import RECIPES
from rlx_xdsl.testing.graphgen.roles import with_ids
from rlx_xdsl.testing.graphgen.state import MAX_DIM, GraphState, dense
from rlx_xdsl.testing.graphgen.values import (
    element_type,
    float_min_rank,
    is_float,
    rank,
    shape_of,
)


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


def expert_codes(s: GraphState, scheme: QuantScheme, experts: int, k: int, n: int) -> SSAValue:
    """Constant codes of `E` experts: i8 `[E, K, N]`, int4 nibbles `[E, K/2, N]` ui8, or GGUF
    Q8_0 rows `[E, N, K/32 · 34]` ui8 whose f16 scales are sane."""
    rng = s.rng()
    if scheme is QuantScheme.INT4_BLOCK:
        return s.emit(ConstantOp, dense(rng.integers(0, 256, (experts, k // 2, n)), "ui8"))
    if scheme is QuantScheme.GGUF_Q8_0:
        blocks = rng.integers(0, 256, (experts * n * k // 32, 34)).astype(np.uint8)
        blocks[:, :2] = rng.uniform(-1, 1, len(blocks)).astype(np.float16).view(np.uint8).reshape(-1, 2)
        return s.emit(ConstantOp, dense(blocks.reshape(experts, n, -1), "ui8"))
    return s.emit(ConstantOp, dense(rng.integers(-128, 128, (experts, k, n)), "i8"))


def expert_params(s: GraphState, scheme: QuantScheme, experts: int, k: int, n: int, et) -> dict:
    """`w_q`, `scale`, `zp` of a scheme: blocks of `BLOCKS[scheme]` values along K."""
    block = BLOCKS[scheme]
    blocks = (experts, k // block, n)
    if scheme is QuantScheme.GGUF_Q8_0:
        return {"w_q": expert_codes(s, scheme, experts, k, n), "scale": s.operand((1,), et), "zp": s.operand((1,), et)}
    zp = s.operand(blocks if scheme is QuantScheme.INT8_BLOCK_ASYM else (1,), et)
    return {"w_q": expert_codes(s, scheme, experts, k, n), "scale": s.operand(blocks, et), "zp": zp}


SCHEMES = (QuantScheme.INT8_BLOCK, QuantScheme.INT8_BLOCK_ASYM, QuantScheme.INT4_BLOCK, QuantScheme.GGUF_Q8_0)
BLOCKS = {QuantScheme.INT8_BLOCK: 2, QuantScheme.INT8_BLOCK_ASYM: 4, QuantScheme.INT4_BLOCK: 4, QuantScheme.GGUF_Q8_0: 32}
"""The values per block along K (GGUF Q8_0's is fixed)."""


def block_size(scheme: QuantScheme) -> int | None:
    return BLOCKS[scheme] if scheme.has_block_size else None


@RECIPES.register(DequantGroupedMatmulOp)
def dequant_grouped_matmul(s: GraphState, op: OpClass) -> None:
    """x `[M, K]` from the pool (K a multiple of the block) or new; `E` experts' codes as
    constants (int8, int4 nibbles, or GGUF Q8_0 rows), their scales (and asymmetric zero
    points) new."""
    scheme = s.choice(SCHEMES)
    block = BLOCKS[scheme]
    x = s.pick(lambda v: is_float(v) and rank(v) == 2 and shape_of(v)[1] % block == 0)
    if x is None:
        x = s.operand((s.integer(1, 3), block * s.integer(1, 2)))
    (m, k), et = shape_of(x), element_type(x)
    experts, n = s.integer(1, 3), s.integer(1, 4)
    data = {"x": x, **expert_params(s, scheme, experts, k, n, et)}
    s.emit(op, *with_ids(s, op, (m,), experts, **data), scheme=scheme, block_size=block_size(scheme))


@RECIPES.register(DequantMoeWeightsOp)
def dequant_moe_weights(s: GraphState, op: OpClass) -> None:
    """`E` experts' codes as constants (int8, int4 nibbles or GGUF Q8_0 rows), their scales
    (and asymmetric zero points) new."""
    scheme = s.choice(SCHEMES)
    experts, k, n = s.integer(1, 3), BLOCKS[scheme] * s.integer(1, 2), s.integer(1, 4)
    params = expert_params(s, scheme, experts, k, n, s.choice(("f32", "f64")))
    s.emit(op, params["w_q"], params["scale"], params["zp"], scheme=scheme, block_size=block_size(scheme))
