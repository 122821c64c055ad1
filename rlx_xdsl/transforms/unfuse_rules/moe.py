"""Unfuse rules of the MIR mixture-of-experts and LoRA ops.

`lora_matmul` always expands (as RLX's unfuse): three matmuls, a `mul` by the scale
and an `add`, stage for stage as its kernel. `dequant_grouped_matmul` splits into
`dequant_moe_weights` and `grouped_matmul` in x's accumulation dtype (RLX's VJP table
treats it as that pair), so a target that has `grouped_matmul` needs no quantised
expert kernel. `grouped_matmul` is a primitive (it has a VJP rule and runs in the
interpreter); `expand_grouped_matmul` is the expansion `rlx-legalize` uses for a target
without it; `expand_dequant_grouped_matmul` decodes each expert
with `dequant_matmul` instead (the VJP's dx), and `expand_dequant_moe_weights` likewise.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from xdsl.dialects.builtin import BFloat16Type, Float16Type, f32
from xdsl.ir import Attribute, SSAValue

from rlx_xdsl import dtypes
from rlx_xdsl.dialects.base import tensor_type
from rlx_xdsl.dialects.mir.moe import (
    DequantGroupedMatmulOp,
    DequantMoeWeightsOp,
    ExpertQuantOperation,
    GroupedMatmulOp,
    LoraMatmulOp,
)
from rlx_xdsl.ir.diagnostics import OpError
from rlx_xdsl.ir.emitter import Emitter
from rlx_xdsl.shapes import DYNAMIC
from rlx_xdsl.transforms.unfuse import UNFUSE_RULES


@UNFUSE_RULES.register(LoraMatmulOp)
def unfuse_lora_matmul(e: Emitter, op: LoraMatmulOp) -> Sequence[SSAValue]:
    """`matmul(x, w) + matmul(matmul(x, a), b) * scale`."""
    element = tensor_type(op.x).element_type
    adapter = e.mir.matmul(e.mir.matmul(op.x, op.a), op.b)
    scaled = e.mir.mul(adapter, e.mir.constant(op.scale_value, element))
    return [e.mir.add(e.mir.matmul(op.x, op.w), scaled)]


@UNFUSE_RULES.register(DequantGroupedMatmulOp)
def unfuse_dequant_grouped_matmul(e: Emitter, op: DequantGroupedMatmulOp) -> Sequence[SSAValue]:
    """`grouped_matmul(x, dequant_moe_weights(w_q, scale, zp), expert)`, x and the weights in
    x's accumulation dtype (f32 for halves), the product rounded to x's dtype: the kernel's
    arithmetic whenever the weights' dtype (the scale's) is that accumulation dtype."""
    x = tensor_type(op.x).element_type
    acc = f32 if isinstance(x, Float16Type | BFloat16Type) else x
    block = None if op.block_size is None else op.block_size.value.data
    weights = e.mir.dequant_moe_weights(op.w_q, op.scale, op.zp, scheme=op.quant_scheme(), block_size=block)

    def in_type(value: SSAValue, element: Attribute) -> SSAValue:
        return value if tensor_type(value).element_type == element else e.mir.cast(value, element)

    product = e.mir.grouped_matmul(in_type(op.x, acc), in_type(weights, acc), op.expert)
    return [in_type(product, x)]


def expand_grouped_matmul(e: Emitter, op: GroupedMatmulOp) -> Sequence[SSAValue]:
    """Each row's expert weight gathered (`[M, K, N]`), then `[M, 1, K] @ [M, K, N]`.

    M may be dynamic; K and N size the reshapes, so they must be static.
    """
    _, k, n = tensor_type(op.w).get_shape()
    if DYNAMIC in (k, n):
        raise OpError(op, f"'{op.name}' cannot be expanded: K and N must be static")
    weights = e.mir.gather(op.w, op.expert, axis=0)
    rows = e.mir.reshape(op.x, new_shape=[-1, 1, k])
    return [e.mir.reshape(e.mir.matmul(rows, weights), new_shape=[-1, n])]


def decoded_expert_weights(e: Emitter, op: ExpertQuantOperation, element_type: Attribute, k: int) -> SSAValue:
    """`W[E, K, N]` in `element_type`: each expert decoded by `mir.dequant_matmul` of the
    identity (the op decodes W itself; a GGUF expert's `[N, R]` rows flattened to its bytes),
    stacked with `concat`. E and K must be static."""
    experts = tensor_type(op.w_q).get_shape()[0]
    if DYNAMIC in (experts, k):
        raise OpError(op, f"'{op.name}' cannot be expanded: E and K must be static")
    eye = e.mir.constant(np.eye(k, dtype=dtypes.numpy_dtype(element_type)), element_type)
    shared_zp = tensor_type(op.zp).get_num_dims() == 1

    def expert(value: SSAValue, i: int) -> SSAValue:
        shape = tensor_type(value).get_shape()[1:]
        return e.mir.reshape(e.mir.narrow(value, axis=0, start=i, len=1), new_shape=list(shape))

    block = None if op.block_size is None else op.block_size.value.data
    scheme = op.quant_scheme()
    decoded = []
    for i in range(experts):
        if scheme.is_gguf:  # expert i's rows as the flat bytes dequant_matmul reads
            w = e.mir.dequant_matmul(eye, e.mir.reshape(expert(op.w_q, i), new_shape=[-1]), scheme=scheme)
        else:
            zp = op.zp if shared_zp else expert(op.zp, i)
            w = e.mir.dequant_matmul(eye, expert(op.w_q, i), expert(op.scale, i), zp, scheme=scheme, block_size=block)
        decoded.append(e.mir.reshape(w, new_shape=[1, *tensor_type(w).get_shape()]))
    return decoded[0] if experts == 1 else e.mir.concat(*decoded, axis=0)


def expand_dequant_grouped_matmul(e: Emitter, op: DequantGroupedMatmulOp) -> Sequence[SSAValue]:
    """The decoded expert weights, then `mir.grouped_matmul`. W is rounded to x's dtype
    first, so for f16/bf16 x the result may differ from the kernel's (which multiplies the
    decoded weights in f32) by a rounding of W; f32 and f64 agree."""
    x = tensor_type(op.x)
    weights = decoded_expert_weights(e, op, x.element_type, x.get_shape()[1])
    return [e.mir.grouped_matmul(op.x, weights, op.expert)]


def expand_dequant_moe_weights(e: Emitter, op: DequantMoeWeightsOp) -> Sequence[SSAValue]:
    """The decoded expert weights in the result's dtype."""
    result = tensor_type(op.result)
    return [decoded_expert_weights(e, op, result.element_type, result.get_shape()[1])]
