"""`policy=torch-cpu` against what `torch.autocast("cpu", dtype=torch.bfloat16)` really does.

Each case is one MIR op and its PyTorch counterpart. Both run on the same inputs
in three ways: f32 inputs, inputs cast to bf16 first, and the first input coming
out of a matmul (which autocast and the preset both run in bf16) while the rest
stay f32, which is how a norm meets its f32 parameters inside a model. The dtype
torch gives the op's output is read by running it under autocast; the preset must
give the MIR op the same result dtype. The differences that are deliberate are
listed in `DIFFERENCES` (and in docs/deviations.md), with the reason.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
import pytest
import torch
import torch.nn.functional as F
from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Operation, SSAValue

from rlx_xdsl import dtypes
from rlx_xdsl.building.builder import GraphBuilder
from rlx_xdsl.dialects.base import tensor_type
from rlx_xdsl.dialects.mir import MIR
from rlx_xdsl.run import run_function
from rlx_xdsl.transforms.amp.mixed_precision import AutoMixedPrecisionPass

TORCH_DTYPES = {torch.float32: "f32", torch.bfloat16: "bf16", torch.float16: "f16"}
MODES = ("f32", "bf16", "after-matmul")

pytestmark = pytest.mark.filterwarnings("ignore:Mismatch dtype between input and weight:UserWarning")


@dataclass(frozen=True)
class Case:
    """A MIR op (`mir`, over the builder and its float inputs) and its torch twin (`torch_op`)."""

    name: str
    shapes: Sequence[Sequence[int]]
    mir: Callable[..., SSAValue]
    torch_op: Callable[..., torch.Tensor]


def unary(name: str, torch_op: Callable) -> Case:
    return Case(name, [(2, 4)], lambda b, x: getattr(b, name)(x), torch_op)


def binary(name: str, torch_op: Callable) -> Case:
    return Case(name, [(2, 4), (2, 4)], lambda b, x, y: getattr(b, name)(x, y), torch_op)


def reduce(kind: str, torch_op: Callable) -> Case:
    return Case(f"reduce {kind}", [(2, 4)], lambda b, x: b.reduce(x, kind=kind, axes=[1]), lambda x: torch_op(x, 1))


def shifted(y: torch.Tensor, shift: torch.Tensor) -> torch.Tensor:
    """`y + shift` in y's dtype: MIR's rms_norm adds a shift, torch's has none."""
    return y + shift.to(y.dtype)


def ids(*values: int) -> torch.Tensor:
    return torch.tensor(values, dtype=torch.int64)


CASES = [
    *(binary(n, f) for n, f in [("add", torch.add), ("sub", torch.sub), ("mul", torch.mul),
      ("div", torch.div), ("max", torch.maximum), ("min", torch.minimum), ("pow", torch.pow)]),
    *(unary(n, f) for n, f in [("gelu", F.gelu), ("silu", F.silu), ("relu", F.relu),
      ("sigmoid", torch.sigmoid), ("tanh", torch.tanh), ("exp", torch.exp), ("log", torch.log),
      ("sqrt", torch.sqrt), ("rsqrt", torch.rsqrt), ("neg", torch.neg), ("abs", torch.abs),
      ("sin", torch.sin), ("cos", torch.cos), ("tan", torch.tan), ("atan", torch.atan),
      ("round", torch.round), ("log1p", torch.log1p), ("expm1", torch.expm1), ("erf", torch.erf)]),
    unary("gelu_approx", lambda x: F.gelu(x, approximate="tanh")),
    Case("where", [(2, 4), (2, 4)],
         lambda b, x, y: b.where(b.constant(np.eye(2, 4, dtype=bool)), x, y),
         lambda x, y: torch.where(torch.eye(2, 4, dtype=torch.bool), x, y)),
    Case("matmul", [(2, 4), (4, 3)], lambda b, x, w: b.matmul(x, w), torch.matmul),
    Case("lora_matmul", [(2, 4), (4, 3), (4, 2), (2, 3)],
         lambda b, x, w, a, u: b.lora_matmul(x, w, a, u, scale=0.5),
         lambda x, w, a, u: x @ w + 0.5 * ((x @ a) @ u)),
    Case("dot_general", [(2, 4), (4, 3)],
         lambda b, x, w: b.dot_general(x, w, lhs_contracting=[1], rhs_contracting=[0]),
         lambda x, w: torch.einsum("ik,kj->ij", x, w)),
    Case("dense_solve", [(3, 3), (3, 2)], lambda b, a, r: b.dense_solve(a, r),
         lambda a, r: torch.linalg.solve(a, r)),
    Case("batched_dense_solve", [(2, 3, 3), (2, 3)], lambda b, a, r: b.batched_dense_solve(a, r),
         lambda a, r: torch.linalg.solve(a, r)),
    Case("conv", [(1, 2, 5, 5), (3, 2, 3, 3)], lambda b, x, w: b.conv(x, w, kernel_size=[3, 3]), F.conv2d),
    Case("pool max", [(1, 2, 4, 4)], lambda b, x: b.pool(x, kind="max", kernel_size=[2, 2]),
         lambda x: F.max_pool2d(x, 2)),
    Case("pool mean", [(1, 2, 4, 4)], lambda b, x: b.pool(x, kind="mean", kernel_size=[2, 2]),
         lambda x: F.avg_pool2d(x, 2)),
    Case("attention", [(1, 2, 3, 4)] * 3,
         lambda b, q, k, v: b.attention(q, k, v, num_heads=2, head_dim=4),
         F.scaled_dot_product_attention),
    Case("stop_gradient", [(2, 4)], lambda b, x: b.stop_gradient(x), torch.Tensor.detach),
    Case("reshape", [(2, 4)], lambda b, x: b.reshape(x, new_shape=[8]), lambda x: x.reshape(8)),
    Case("transpose", [(2, 4)], lambda b, x: b.transpose(x, perm=[1, 0]), lambda x: x.permute(1, 0)),
    Case("narrow", [(2, 4)], lambda b, x: b.narrow(x, axis=1, start=1, len=2), lambda x: x.narrow(1, 1, 2)),
    Case("concat", [(2, 4), (2, 4)], lambda b, x, y: b.concat(x, y, axis=0), lambda x, y: torch.cat([x, y])),
    Case("expand", [(1, 4)], lambda b, x: b.expand(x, target_shape=[3, 4]), lambda x: x.expand(3, 4)),
    Case("gather", [(5, 4)], lambda b, t: b.gather(t, b.constant(np.array([4, 0]), "i64"), axis=0),
         lambda t: t[ids(4, 0)]),
    Case("scatter_add", [(2, 4)],
         lambda b, u: b.scatter_add(u, b.constant(np.array([2, 0]), "i64"), dim_size=3),
         lambda u: torch.zeros(3, 4, dtype=u.dtype).index_add(0, ids(2, 0), u)),
    reduce("sum", torch.sum), reduce("mean", torch.mean), reduce("max", torch.amax),
    reduce("min", torch.amin), reduce("prod", torch.prod),
    Case("softmax", [(2, 4)], lambda b, x: b.softmax(x, axis=-1), lambda x: torch.softmax(x, -1)),
    Case("cumsum", [(2, 4)], lambda b, x: b.cumsum(x, axis=1), lambda x: torch.cumsum(x, 1)),
    Case("topk", [(2, 4)], lambda b, x: b.topk(x, k=2)[0], lambda x: torch.topk(x, 2).values),
    Case("layer_norm", [(2, 4), (4,), (4,)], lambda b, x, g, s: b.layer_norm(x, g, s),
         lambda x, g, s: F.layer_norm(x, (4,), g, s)),
    Case("rms_norm", [(2, 4), (4,), (1,)], lambda b, x, g, s: b.rms_norm(x, g, s),
         lambda x, g, s: shifted(F.rms_norm(x, (4,), g), s)),
    Case("group_norm", [(2, 4, 3), (4,), (4,)], lambda b, x, g, s: b.group_norm(x, g, s, num_groups=2),
         lambda x, g, s: F.group_norm(x, 2, g, s)),
    Case("batch_norm_inference", [(2, 3, 4)] + [(3,)] * 4,
         lambda b, x, g, s, m, v: b.batch_norm_inference(x, g, s, m, v),
         lambda x, g, s, m, v: F.batch_norm(x, m, v, g, s, training=False)),
    Case("layer_norm_2d", [(1, 4, 2, 3), (4,), (4,)], lambda b, x, g, s: b.layer_norm_2d(x, g, s),
         lambda x, g, s: F.layer_norm(x.permute(0, 2, 3, 1), (4,), g, s, 1e-6).permute(0, 3, 1, 2)),
    Case("resize_nearest_2x", [(1, 2, 2, 3)], lambda b, x: b.resize_nearest_2x(x),
         lambda x: F.interpolate(x, scale_factor=2, mode="nearest")),
    Case("transform_region", [(1, 2, 2, 3)],
         lambda b, x: b.transform_region(x, ["resize_nearest_2x", "resize_nearest_2x"]),
         lambda x: F.interpolate(F.interpolate(x, scale_factor=2, mode="nearest"), scale_factor=2, mode="nearest")),
    Case("conv_transpose_2d", [(1, 4, 3, 3), (4, 2, 2, 2)],
         lambda b, x, w: b.conv_transpose_2d(x, w, kernel_size=[2, 2], stride=[2, 2]),
         lambda x, w: F.conv_transpose2d(x, w, stride=2)),
    Case("softmax_cross_entropy_with_logits", [(2, 4)],
         lambda b, x: b.softmax_cross_entropy_with_logits(x, b.constant(np.array([1.0, 3.0], np.float32))),
         lambda x: F.cross_entropy(x, ids(1, 3), reduction="none")),
    Case("softmax_cross_entropy", [(2, 4), (2, 4)], lambda b, x, t: b.softmax_cross_entropy(x, t),
         lambda x, t: F.cross_entropy(x, t, reduction="none")),
    Case("fake_quantize", [(2, 4)], lambda b, x: b.fake_quantize(x, bits=8),
         lambda x: torch.fake_quantize_per_tensor_affine(x, 0.1, 0, -128, 127)),
    Case("fake_quantize per channel", [(2, 4)], lambda b, x: b.fake_quantize(x, bits=8, axis=0),
         lambda x: torch.fake_quantize_per_channel_affine(x, torch.ones(2), torch.zeros(2, dtype=torch.int32), 0, -128, 127)),
]  # fmt: skip

DIFFERENCES: dict[tuple[str, str], str] = {}
"""(case, mode) where the preset deliberately differs from CPU autocast, and why (none today)."""

NOT_COMPARED: dict[str, str] = {
    "mir.constant": "a boundary op: it computes nothing",
    "mir.iota": "a boundary op: it computes nothing",
    "mir.cast": "an explicit cast keeps its result type under every policy",
    "mir.compare": "its result is i1 under every policy",
    "mir.rope": "no torch op (torch applies RoPE as mul and add, which promote as here)",
    "mir.selective_scan": "no torch op",
    "mir.gated_delta_net": "no torch op",
    "mir.yield": "a terminator: it keeps its types",
    "mir.quantize": "its result is an integer under every policy",
    "mir.dequantize": "its operand is an integer; its result is f32 by definition (ONNX DequantizeLinear)",
    "mir.qmatmul": "integer operands and result (ONNX QLinearMatMul): AMP never casts integers",
    "mir.qconv2d": "integer operands and result (ONNX QLinearConv): AMP never casts integers",
    "mir.grouped_matmul": "no torch op (MoE expert matmuls are library kernels); the presets list it with "
    "mir.matmul, which is compared (tests/dialects/mir/test_moe.py checks its expert ids stay uncast)",
    "mir.dequant_matmul": "no torch op (weight-only quantised matmuls are library kernels outside autocast)",
    "mir.dequant_grouped_matmul": "no torch op (quantised MoE expert matmuls are library kernels outside autocast); "
    "in the presets as mir.dequant_matmul",
    "mir.dequant_moe_weights": "no torch op; its operands are codes and scales, which no preset casts",
    "mir.fake_quantize_lsq": "torch's learnable fake-quantize takes its scale as a tensor the test would have to "
    "cast too; the op is in the same AMP class as mir.fake_quantize, which is compared",
    "mir.conjugate": "complex<f32> operands: no policy casts complex values",
    "mir.complex_norm_sq": "complex<f32> operands: no policy casts complex values",
    "mir.fft": "torch.fft takes complex tensors; RLX's interleaved real layout has no torch op",
    "mir.log_mel": "no torch op (Whisper composes matmul, clamp and log10)",
    "mir.rng_uniform": "no operand to cast: its result type is its own specification",
    "mir.rng_normal": "no operand to cast: its result type is its own specification",
    "mir.sample": "its result is i64 ids under every policy (torch has no fused sampling op)",
    "mir.axial_rope_2d": "no torch op (SAM 2 applies it as complex multiplication)",
    "mir.gaussian_splat_render": "no torch op (gsplat's kernels are CUDA; autocast has no entry)",
    "mir.gaussian_splat_prepare": "no torch op (gsplat's kernels are CUDA; autocast has no entry)",
    "mir.gaussian_splat_rasterize": "no torch op (gsplat's kernels are CUDA; autocast has no entry)",
    "mir.dynamic_update_slice": "torch writes a slice in place (`index_copy_`, slice assignment), which autocast "
    "does not list; its AMP class is data movement, as mir.where's, which is compared",
}
"""MIR ops the test does not run in torch, and why. Besides these, three families are not
compared: backward ops (autocast covers the forward pass; backward kernels run in the dtypes
the forward gave them), ops with regions (they keep their signature; their bodies are
rewritten op by op) and fused ops (a composite of several torch ops)."""


def not_compared(op_class) -> bool:
    name = op_class.name
    definition = op_class.get_irdl_definition()
    return (
        name in NOT_COMPARED
        or "_backward" in name
        or bool(definition.regions)
        or name.startswith("mir.fused_")
    )


def arrays_for(case: Case) -> list[np.ndarray]:
    """Inputs in [0.5, 1.5) (a solvable system for dense_solve)."""
    rng = np.random.default_rng(0)
    arrays = [(rng.random(shape) + 0.5).astype(np.float32) for shape in case.shapes]
    if case.name in ("dense_solve", "batched_dense_solve"):
        arrays[0] += 3 * np.eye(3, dtype=np.float32)
    return arrays


def run_torch(case: Case, mode: str, arrays: Sequence[np.ndarray]) -> torch.Tensor:
    """The case's output under `torch.autocast("cpu", dtype=torch.bfloat16)` in `mode`."""
    inputs = [torch.from_numpy(a) for a in arrays]
    with torch.autocast("cpu", dtype=torch.bfloat16):
        if mode == "bf16":
            inputs = [x.to(torch.bfloat16) for x in inputs]
        elif mode == "after-matmul":
            first = inputs[0]
            inputs[0] = first @ torch.eye(first.shape[-1])
        return case.torch_op(*inputs)


def run_preset(case: Case, mode: str) -> tuple[ModuleOp, Operation]:
    """The case as a MIR function `@f` after `policy=torch-cpu`, and its op."""
    b = GraphBuilder("f")
    inputs = [b.input(f"x{i}", shape) for i, shape in enumerate(case.shapes)]
    if mode == "bf16":
        inputs = [b.cast(x, "bf16") for x in inputs]
    elif mode == "after-matmul":
        n = case.shapes[0][-1]
        inputs[0] = b.matmul(inputs[0], b.constant(np.eye(n, dtype=np.float32)))
    result = case.mir(b, *inputs)
    b.output(result)
    module = b.module()
    AutoMixedPrecisionPass(policy="torch-cpu").apply(Context(), module)
    module.verify()
    return module, result.owner


def compared_op(case: Case) -> type:
    b = GraphBuilder("f")
    return type(case.mir(b, *(b.input(f"x{i}", shape) for i, shape in enumerate(case.shapes))).owner)


def test_every_mir_op_is_compared_or_says_why_not():
    compared = {compared_op(case) for case in CASES}
    missing = [op.name for op in MIR.operations if op not in compared and not not_compared(op)]
    assert missing == [], "add a case (or a NOT_COMPARED reason) for these ops"
    assert not any(not_compared(op) for op in compared)


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("case", CASES, ids=lambda case: case.name)
def test_torch_cpu_preset_gives_each_op_the_dtype_cpu_autocast_gives_it(case, mode):
    expected = TORCH_DTYPES[run_torch(case, mode, arrays_for(case)).dtype]
    _, op = run_preset(case, mode)
    got = dtypes.dtype_of(tensor_type(op.results[0]).element_type).name
    reason = DIFFERENCES.get((case.name, mode))
    if reason is None:
        assert got == expected, f"{case.name} ({mode} inputs): torch gives {expected}, the preset {got}"
    else:
        assert got != expected, f"{case.name} ({mode}) now agrees with torch: drop its DIFFERENCES entry"


NUMERIC = ["layer_norm", "rms_norm", "group_norm", "reduce prod", "dense_solve", "matmul", "softmax"]


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("case", [c for c in CASES if c.name in NUMERIC], ids=lambda case: case.name)
def test_torch_cpu_preset_computes_what_cpu_autocast_computes(case, mode):
    """Through the interpreter, the rewritten function gives autocast's values to bf16 accuracy."""
    arrays = arrays_for(case)
    want = run_torch(case, mode, arrays).float().numpy()
    module, _ = run_preset(case, mode)
    (got,) = run_function(module, "f", arrays)
    np.testing.assert_allclose(got, want, rtol=3e-2, atol=3e-2)
