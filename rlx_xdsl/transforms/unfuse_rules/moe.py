"""Unfuse rules of the MIR mixture-of-experts and LoRA ops.

`lora_matmul` always expands (as RLX's unfuse): three matmuls, a `mul` by the scale
and an `add`, stage for stage as its kernel. `grouped_matmul` is a primitive (it has a
VJP rule and runs in the interpreter); `expand_grouped_matmul` is the expansion the
linalg lowering uses for it.
"""

from __future__ import annotations

from collections.abc import Sequence

from xdsl.ir import SSAValue

from rlx_xdsl.diagnostics import OpError
from rlx_xdsl.dialects.base import tensor_type
from rlx_xdsl.dialects.mir.moe import GroupedMatmulOp, LoraMatmulOp
from rlx_xdsl.emitter import Emitter
from rlx_xdsl.shapes import DYNAMIC
from rlx_xdsl.transforms.unfuse import UNFUSE_RULES


@UNFUSE_RULES.register(LoraMatmulOp)
def unfuse_lora_matmul(e: Emitter, op: LoraMatmulOp) -> Sequence[SSAValue]:
    """`matmul(x, w) + matmul(matmul(x, a), b) * scale`."""
    element = tensor_type(op.x).element_type
    adapter = e.mir.matmul(e.mir.matmul(op.x, op.a), op.b)
    scaled = e.mir.mul(adapter, e.mir.constant(op.scale_value, element))
    return [e.mir.add(e.mir.matmul(op.x, op.w), scaled)]


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
