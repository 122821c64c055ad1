"""PyTorch autocast's per-op lists as `rlx-amp` presets: `policy=torch-cuda` and `policy=torch-cpu`.

Autocast casts the inputs of the ops on its "lower precision" list to the low
type (`low=f16|bf16`), those on its "fp32" list to f32, and runs every other op
in the widest type of its inputs (`promote`). The tables below carry those
lists over to MIR, keyed by op class (torch 2.13, `autocast_test_lists` and
`autocast_mode.cpp` in the PyTorch repository):

| MIR op | CUDA | CPU | torch ops |
|---|---|---|---|
| matmul, dot_general, conv, attention | low | low | mm/matmul/bmm, einsum, conv*d, sdpa / MHA |
| softmax, layer_norm, rms_norm, group_norm | f32 | promote | softmax, layer_norm, rms_norm, group_norm |
| exp, log, rsqrt, tan, pow | f32 | promote | exp, log, rsqrt, tan, pow |
| cumsum; reduce sum/prod | f32 | promote | cumsum; sum, prod (mean, amax, amin are unlisted) |
| the three softmax-cross-entropy ops | f32 | f32 | log_softmax + nll_loss (cross_entropy) and its backward |
| everything else | promote | promote | unlisted ops (add, mul, gelu, silu, cat...) |

`einsum` is not on the CPU list, but it runs as `bmm`, which is, so
`dot_general` is low on both. A new op joins a preset by registering its rule
next to its group: `TORCH_CUDA.add(MyFusedMatmulOp, LOW)`.
"""

from __future__ import annotations

from xdsl.ir import Operation

from rlx_xdsl.dialects.mir.attention import AttentionOp
from rlx_xdsl.dialects.mir.attrs import ReduceKind
from rlx_xdsl.dialects.mir.contraction import DotGeneralOp, MatmulOp
from rlx_xdsl.dialects.mir.conv import ConvOp
from rlx_xdsl.dialects.mir.elementwise import ExpOp, LogOp, PowOp, RsqrtOp, TanOp
from rlx_xdsl.dialects.mir.loss import (
    SoftmaxCrossEntropyBackwardOp,
    SoftmaxCrossEntropyOp,
    SoftmaxCrossEntropyWithLogitsOp,
)
from rlx_xdsl.dialects.mir.norm import GroupNormOp, LayerNormOp, RmsNormOp
from rlx_xdsl.dialects.mir.reduction import CumsumOp, ReduceOp, SoftmaxOp
from rlx_xdsl.registry import OpRegistry
from rlx_xdsl.transforms.amp.policy import (
    BF16,
    F16,
    F32,
    LOW,
    PROMOTE,
    OpRule,
    OpTablePolicy,
)

TORCH_CUDA: OpRegistry[OpRule] = OpRegistry("PyTorch CUDA autocast rule")
TORCH_CPU: OpRegistry[OpRule] = OpRegistry("PyTorch CPU autocast rule")

LOW_PRECISION_OPS = (MatmulOp, DotGeneralOp, ConvOp, AttentionOp)
CROSS_ENTROPY_OPS = (SoftmaxCrossEntropyWithLogitsOp, SoftmaxCrossEntropyOp, SoftmaxCrossEntropyBackwardOp)


def sum_or_prod_in_f32(op: Operation) -> str:
    """CUDA lists `sum` and `prod` as f32; `mean`, `amax` and `amin` are unlisted."""
    assert isinstance(op, ReduceOp)
    return F32 if op.kind.data in (ReduceKind.SUM, ReduceKind.PROD) else PROMOTE


for _table in (TORCH_CUDA, TORCH_CPU):
    _table.register(*LOW_PRECISION_OPS)(LOW)
    _table.register(*CROSS_ENTROPY_OPS)(F32)

TORCH_CUDA.register(SoftmaxOp, LayerNormOp, RmsNormOp, GroupNormOp)(F32)
TORCH_CUDA.register(ExpOp, LogOp, RsqrtOp, TanOp, PowOp)(F32)
TORCH_CUDA.register(CumsumOp)(F32)
TORCH_CUDA.add(ReduceOp, sum_or_prod_in_f32)


TORCH_PRESETS: dict[str, tuple[OpRegistry[OpRule], str]] = {
    "torch-cuda": (TORCH_CUDA, F16),
    "torch-cpu": (TORCH_CPU, BF16),
}
"""Each preset's table and its default low precision (`torch.get_autocast_dtype`)."""


def torch_preset(name: str, low: str | None = None) -> OpTablePolicy:
    """The preset `name` with `low` (default: the device's autocast dtype) as its low precision."""
    table, default_low = TORCH_PRESETS[name]
    return OpTablePolicy(name, table, low if low is not None else default_low)
