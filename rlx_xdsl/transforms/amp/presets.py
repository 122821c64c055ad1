"""PyTorch autocast's per-op lists as `rlx-amp` presets: `policy=torch-cuda` and `policy=torch-cpu`.

Autocast casts the inputs of the ops on its "lower precision" list to the low
type (`low=f16|bf16`), those on its "fp32" list to f32, and runs every other op
in the widest type of its inputs (`promote`). The tables below carry those
lists over to MIR, keyed by op class (torch 2.13: the lists of
`torch/testing/_internal/autocast_test_lists.py` and `aten/src/ATen/autocast_mode.cpp`,
and on CPU what running each op under `torch.autocast("cpu")` gives):

| MIR op | CUDA | CPU | torch ops |
|---|---|---|---|
| matmul, dot_general, conv, attention | low | low | mm/matmul/bmm, einsum, conv*d, sdpa / MHA |
| lora_matmul, grouped_matmul | low | low | their matmuls (the expert ids are an INDEX operand, never cast) |
| softmax | f32 | promote | softmax |
| layer_norm, rms_norm, group_norm | f32 | input | layer_norm, rms_norm, group_norm |
| batch_norm_inference | promote | input | batch_norm (eval mode) |
| exp, log, rsqrt, tan, pow | f32 | promote | exp, log, rsqrt, tan, pow |
| cumsum | f32 | promote | cumsum |
| reduce sum; reduce prod | f32; f32 | promote; f32 | sum, prod (mean, amax, amin are unlisted) |
| dense_solve, batched_dense_solve | promote | f32 | linalg_solve |
| the three softmax-cross-entropy ops | f32 | f32 | log_softmax + nll_loss (cross_entropy) and its backward |
| everything else | promote | promote | unlisted ops (add, mul, gelu, silu, cat...) |

`input` is the precision of the op's data input: PyTorch's CPU norms are on no
autocast list, and given a bf16 input with f32 weights they return bf16 (the
weights join the input's precision). `tests/transforms/test_amp_torch.py` runs
each op under `torch.autocast("cpu")` and checks the CPU column against it.

`einsum` is not on the CPU list, but it runs as `bmm`, which is, so
`dot_general` is low on both. A new op joins a preset by registering its rule
next to its group: `TORCH_CUDA.add(MyFusedMatmulOp, LOW)`.
"""

from __future__ import annotations

from xdsl.ir import Operation

from rlx_xdsl import dtypes
from rlx_xdsl.dialects.base import tensor_type
from rlx_xdsl.dialects.mir.attention import AttentionOp
from rlx_xdsl.dialects.mir.attrs import ReduceKind
from rlx_xdsl.dialects.mir.contraction import BatchedDenseSolveOp, DenseSolveOp, DotGeneralOp, MatmulOp
from rlx_xdsl.dialects.mir.conv import ConvOp
from rlx_xdsl.dialects.mir.elementwise import Expm1Op, ExpOp, Log1pOp, LogOp, PowOp, RsqrtOp, TanOp
from rlx_xdsl.dialects.mir.loss import (
    SoftmaxCrossEntropyBackwardOp,
    SoftmaxCrossEntropyOp,
    SoftmaxCrossEntropyWithLogitsOp,
)
from rlx_xdsl.dialects.mir.moe import GroupedMatmulOp, LoraMatmulOp
from rlx_xdsl.dialects.mir.norm import BatchNormInferenceOp, GroupNormOp, LayerNormOp, RmsNormOp
from rlx_xdsl.dialects.mir.quant import FakeQuantizeOp
from rlx_xdsl.dialects.mir.reduction import CumsumOp, ReduceOp, SoftmaxOp
from rlx_xdsl.dialects.mir.vision import ConvTranspose2dOp, LayerNorm2dOp
from rlx_xdsl.registry import OpRegistry
from rlx_xdsl.transforms.amp.policy import (
    BF16,
    F16,
    F32,
    FLOATS,
    LOW,
    PROMOTE,
    OpRule,
    OpTablePolicy,
)

TORCH_CUDA: OpRegistry[OpRule] = OpRegistry("PyTorch CUDA autocast rule")
TORCH_CPU: OpRegistry[OpRule] = OpRegistry("PyTorch CPU autocast rule")

LOW_PRECISION_OPS = (MatmulOp, DotGeneralOp, ConvOp, ConvTranspose2dOp, AttentionOp, LoraMatmulOp, GroupedMatmulOp)
CROSS_ENTROPY_OPS = (SoftmaxCrossEntropyWithLogitsOp, SoftmaxCrossEntropyOp, SoftmaxCrossEntropyBackwardOp)


def sum_or_prod_in_f32(op: Operation) -> str:
    """f32 for sum and prod, promote for mean, max and min.

    CUDA lists `sum` and `prod` as f32; `mean`, `amax` and `amin` are unlisted.
    """
    assert isinstance(op, ReduceOp)
    return F32 if op.kind.data in (ReduceKind.SUM, ReduceKind.PROD) else PROMOTE


def prod_in_f32(op: Operation) -> str:
    """f32 for prod, promote for sum, mean, max and min.

    CPU autocast runs `prod` in f32 (it is on the fp32 list of `autocast_mode.cpp`,
    though not in the test lists); the other reductions are unlisted.
    """
    assert isinstance(op, ReduceOp)
    return F32 if op.kind.data == ReduceKind.PROD else PROMOTE


def per_tensor_fake_quantize_in_f32(op: Operation) -> str:
    """f32 for per-tensor fake quantisation, promote per channel.

    CPU autocast runs `fake_quantize_per_tensor_affine` in f32 (what running it under
    `torch.autocast("cpu")` gives); the per-channel variant is unlisted.
    """
    assert isinstance(op, FakeQuantizeOp)
    return F32 if op.axis is None else PROMOTE


def like_input(op: Operation) -> str:
    """input (the data input's precision; the weights join it).

    PyTorch's CPU norms are on no autocast list; given a bf16 input and f32
    weights they return bf16.
    """
    element = tensor_type(op.operands[0]).element_type
    name = dtypes.dtype_of(element).name
    return name if name in FLOATS else PROMOTE


for _table in (TORCH_CUDA, TORCH_CPU):
    _table.register(*LOW_PRECISION_OPS)(LOW)
    _table.register(*CROSS_ENTROPY_OPS)(F32)

TORCH_CUDA.register(SoftmaxOp, LayerNormOp, RmsNormOp, GroupNormOp, LayerNorm2dOp)(F32)
TORCH_CUDA.register(ExpOp, LogOp, RsqrtOp, TanOp, PowOp, Log1pOp, Expm1Op)(F32)
TORCH_CUDA.register(CumsumOp)(F32)
TORCH_CUDA.add(ReduceOp, sum_or_prod_in_f32)

TORCH_CPU.register(LayerNormOp, RmsNormOp, GroupNormOp, BatchNormInferenceOp, LayerNorm2dOp)(like_input)
TORCH_CPU.add(ReduceOp, prod_in_f32)
TORCH_CPU.register(DenseSolveOp, BatchedDenseSolveOp)(F32)
TORCH_CPU.add(FakeQuantizeOp, per_tensor_fake_quantize_in_f32)


TORCH_PRESETS: dict[str, tuple[OpRegistry[OpRule], str]] = {
    "torch-cuda": (TORCH_CUDA, F16),
    "torch-cpu": (TORCH_CPU, BF16),
}
"""Each preset's table and its default low precision (`torch.get_autocast_dtype`)."""


def rule_text(rule: OpRule) -> str:
    """How `docs/amp.md` shows a table entry: the choice, or the first line of a rule's docstring."""
    if isinstance(rule, str):
        return rule
    assert rule.__doc__ is not None, f"{rule.__name__} needs a docstring (docs/amp.md shows its first line)"
    return rule.__doc__.splitlines()[0].rstrip(".")


def torch_preset(name: str, low: str | None = None) -> OpTablePolicy:
    """The preset `name` with `low` (default: the device's autocast dtype) as its low precision."""
    table, default_low = TORCH_PRESETS[name]
    return OpTablePolicy(name, table, low if low is not None else default_low)
