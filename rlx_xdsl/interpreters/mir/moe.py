"""numpy semantics of the MIR mixture-of-experts and LoRA ops.

`lora_matmul` rounds each stage as its `rlx-unfuse` expansion does (matmul, matmul,
matmul, mul by the scale in the operands' dtype, add), so the two agree bit for bit.
`grouped_matmul` multiplies each row by its expert's weight as a batched matmul of
`[M, 1, K] @ [M, K, N]` (its expansion: `gather`, `matmul`). `dequant_grouped_matmul`
decodes each expert with `mir.dequant_matmul`'s decoder, then multiplies as
`grouped_matmul` in x's accumulation dtype; `dequant_moe_weights` returns those weights.
"""

from __future__ import annotations

import numpy as np

from rlx_xdsl.dialects.mir import moe
from rlx_xdsl.interpreters.common import result_dtype
from rlx_xdsl.interpreters.mir.fused import add, matmul, rounded
from rlx_xdsl.interpreters.mir.indexing import checked_indices
from rlx_xdsl.interpreters.mir.quant import dequantized_weights
from rlx_xdsl.numerics import convert, widened


def run_lora_matmul(op: moe.LoraMatmulOp, x, w, a, b) -> tuple[np.ndarray]:
    adapter = matmul(matmul(x, a), b)
    scale = np.asarray(op.scale_value, adapter.dtype)
    with np.errstate(all="ignore"):
        scaled = rounded(adapter.dtype, adapter.astype(np.float64) * np.float64(scale))
    return (add(matmul(x, w), scaled),)


def run_grouped_matmul(op: moe.GroupedMatmulOp, x, w, expert) -> tuple[np.ndarray]:
    ids = checked_indices(expert, w.shape[0])
    return (matmul(x[:, None, :], w[ids])[:, 0, :],)


def expert_weights(op: moe.DequantGroupedMatmulOp, w_q, scale, zp, dtype) -> np.ndarray:
    """`W[E, K, N]` in `dtype`; a `[1]` zp is shared by the experts."""
    return np.stack(
        [dequantized_weights(op, w_q[e], scale[e], zp if zp.ndim == 1 else zp[e], dtype) for e in range(len(w_q))]
    )


def run_dequant_grouped_matmul(op: moe.DequantGroupedMatmulOp, x, w_q, scale, zp, expert) -> tuple[np.ndarray]:
    ids = checked_indices(expert, w_q.shape[0])
    xw = widened(x)
    weights = expert_weights(op, w_q, scale, zp, xw.dtype)
    return (convert((xw[:, None, :] @ weights[ids])[:, 0, :], x.dtype),)


def run_dequant_moe_weights(op: moe.DequantMoeWeightsOp, w_q, scale, zp) -> tuple[np.ndarray]:
    dtype = result_dtype(op)
    return (convert(expert_weights(op, w_q, scale, zp, widened(np.zeros((), dtype)).dtype), dtype),)


KERNELS = {
    moe.DequantMoeWeightsOp: run_dequant_moe_weights,
    moe.LoraMatmulOp: run_lora_matmul,
    moe.GroupedMatmulOp: run_grouped_matmul,
    moe.DequantGroupedMatmulOp: run_dequant_grouped_matmul,
}
