"""numpy semantics of the MIR mixture-of-experts and LoRA ops.

`lora_matmul` rounds each stage as its `rlx-unfuse` expansion does (matmul, matmul,
matmul, mul by the scale in the operands' dtype, add), so the two agree bit for bit.
`grouped_matmul` sorts the rows by expert and runs one `[M_e, K] @ [K, N]` matmul per
expert over its rows, scattering the products back (no per-token `[M, K, N]` weights;
each row's dot products accumulate in the accumulation dtype as its expansion's batched
matmul does). `dequant_grouped_matmul` decodes each expert with `mir.dequant_matmul`'s
decoder (GGUF: `W[e]` the transpose of expert e's decoded rows), then multiplies as
`grouped_matmul` in x's accumulation dtype; `dequant_moe_weights` returns those weights.
"""

from __future__ import annotations

import numpy as np

from rlx_xdsl.dialects.mir import moe
from rlx_xdsl.interpreters.common import result_dtype
from rlx_xdsl.interpreters.mir.fused import add, matmul, rounded
from rlx_xdsl.interpreters.mir.indexing import checked_indices
from rlx_xdsl.interpreters.mir.quant import dequantized_weights, gguf_weights
from rlx_xdsl.numerics import accumulate_matmul, convert, widened


def run_lora_matmul(op: moe.LoraMatmulOp, x, w, a, b) -> tuple[np.ndarray]:
    adapter = matmul(matmul(x, a), b)
    scale = np.asarray(op.scale_value, adapter.dtype)
    with np.errstate(all="ignore"):
        scaled = rounded(adapter.dtype, adapter.astype(np.float64) * np.float64(scale))
    return (add(matmul(x, w), scaled),)


def by_expert(x: np.ndarray, weights: np.ndarray, ids: np.ndarray) -> np.ndarray:
    """`out[m] = x[m] @ weights[ids[m]]` in the accumulation dtype: the rows sorted by expert
    (a stable argsort, segment offsets from the counts), one matmul per expert present."""
    x, weights = widened(x), widened(weights)
    order = np.argsort(ids, kind="stable")
    offsets = np.concatenate([[0], np.cumsum(np.bincount(ids, minlength=len(weights)))])
    out = np.zeros((len(x), weights.shape[2]), np.result_type(x, weights))
    for e in np.flatnonzero(np.diff(offsets)):
        rows = order[offsets[e] : offsets[e + 1]]
        out[rows] = accumulate_matmul(x[rows], weights[e])
    return out


def run_grouped_matmul(op: moe.GroupedMatmulOp, x, w, expert) -> tuple[np.ndarray]:
    ids = checked_indices(expert, w.shape[0], from_the_end=False)
    return (rounded(x.dtype, by_expert(x, w, ids)),)


def expert_weights(op: moe.ExpertQuantOperation, w_q, scale, zp, k: int, dtype) -> np.ndarray:
    """`W[E, K, N]` in `dtype`; a `[1]` zp is shared by the experts; GGUF rows transposed."""
    if op.quant_scheme().is_gguf:
        return np.stack([gguf_weights(op, w_q[e].reshape(-1), k, dtype).T for e in range(len(w_q))])
    return np.stack(
        [dequantized_weights(op, w_q[e], scale[e], zp if zp.ndim == 1 else zp[e], dtype) for e in range(len(w_q))]
    )


def run_dequant_grouped_matmul(op: moe.DequantGroupedMatmulOp, x, w_q, scale, zp, expert) -> tuple[np.ndarray]:
    ids = checked_indices(expert, w_q.shape[0], from_the_end=False)
    xw = widened(x)
    weights = expert_weights(op, w_q, scale, zp, x.shape[1], xw.dtype)
    return (convert(by_expert(xw, weights, ids), x.dtype),)


def run_dequant_moe_weights(op: moe.DequantMoeWeightsOp, w_q, scale, zp) -> tuple[np.ndarray]:
    dtype = result_dtype(op)
    k = op.result.type.get_shape()[1]
    return (convert(expert_weights(op, w_q, scale, zp, k, widened(np.zeros((), dtype)).dtype), dtype),)


KERNELS = {
    moe.DequantMoeWeightsOp: run_dequant_moe_weights,
    moe.LoraMatmulOp: run_lora_matmul,
    moe.GroupedMatmulOp: run_grouped_matmul,
    moe.DequantGroupedMatmulOp: run_dequant_grouped_matmul,
}
