"""Every VJP rule against central differences in float64 (`testing.gradcheck`).

Each case builds `@f(inputs) = mir.<op>(inputs)`, differentiates it with
`rlx-grad` (seeded with a random cotangent of the op's result shape) and
compares the gradient of every floating-point input with central differences of
`@f` run by the interpreter. Shapes cover broadcasting and the edge cases each
rule handles (ties, zeros, masked rows). `test_every_rule_has_a_case` fails
when a rule is registered without a case here.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pytest

from rlx_xdsl import dtypes, layers
from rlx_xdsl.autodiff.registry import VJP_RULES, no_gradient
from rlx_xdsl.building.builder import GraphBuilder
from rlx_xdsl.dialects.mir import ALL_OPS, MIR
from rlx_xdsl.dialects.mir.attrs import Activation
from rlx_xdsl.dialects.traits import data_operands
from rlx_xdsl.ir.emitter import short_names
from rlx_xdsl.testing.gradcheck import check_directional, check_gradients

layers.load("vjp")
OPS = short_names(MIR)
RNG = np.random.default_rng(2024)


def rand(*shape, low=None, high=None):
    if low is not None:
        return RNG.uniform(low, high, shape)
    return RNG.standard_normal(shape)


@dataclass
class Case:
    op: str
    inputs: list
    props: dict = field(default_factory=dict)
    id: str = ""
    output: int = 0
    check: dict = field(default_factory=dict)
    """gradcheck options: f32 inputs need a larger step and tolerance (the step is taken in
    the input's dtype)."""

    def param(self):
        return pytest.param(self, id=f"{self.op}-{self.id}" if self.id else self.op)


F32_CHECK = {"eps": 1e-3, "rtol": 1e-3, "atol": 1e-4}


def case(op, *inputs, id="", output=0, check=None, **props) -> Case:
    return Case(op, [np.asarray(x) for x in inputs], props, id, output, check or {})


def build(c: Case) -> tuple:
    """`@f` for the case, and the indices of its floating-point DATA inputs (the ones differentiated)."""
    b = GraphBuilder("f")
    args = [
        b.input(f"in{i}", x.shape, dtypes.dtype_of_numpy(x.dtype).element_type)
        for i, x in enumerate(c.inputs)
    ]
    result = getattr(b.mir, c.op)(*args, **c.props)
    output = result[c.output] if isinstance(result, tuple) else result
    b.output(output)
    data = data_operands(output.owner)  # the inputs are the op's operands, in order
    wrt = [i for i, x in enumerate(c.inputs) if x.dtype.kind == "f" and i in data]
    return b.module(), wrt


def ties(shape, pairs=2):
    """A random array in which some elements repeat exactly."""
    x = rand(*shape)
    flat = x.reshape(-1)
    for i in range(0, min(pairs * 2, flat.size - 1), 2):
        flat[i + 1] = flat[i]
    return x


# The cases ------------------------------------------------------------------------


def binary_cases():
    shapes = [((3, 4), (3, 4)), ((2, 3, 4), (4,)), ((3, 1), (1, 4)), ((), (2, 3)), ((2, 1, 3), (4, 1))]
    for op in ("add", "sub", "mul", "max", "min"):
        for a, b in shapes:
            yield case(op, rand(*a), rand(*b), id=f"{a}x{b}")
    for a, b in shapes:
        yield case("div", rand(*a), rand(*b, low=0.5, high=2.0) * RNG.choice([-1, 1], b), id=f"{a}x{b}")
        yield case("pow", rand(*a, low=0.3, high=2.0), rand(*b), id=f"{a}x{b}")
    a = rand(3, 4)
    yield case("max", a, np.where(RNG.random((3, 4)) < 0.5, a, rand(3, 4)), id="ties")
    yield case("min", a, np.where(RNG.random((3, 4)) < 0.5, a, rand(3, 4)), id="ties")
    yield case("max", rand(3, 4), rand(3, 4).astype(np.float32), id="promoted-f32", check=F32_CHECK)
    yield case(
        "pow", np.array([0.0, 1.5, 0.0, 2.0]), np.array([2.0, 0.0, 3.0, 1.5]), id="zero-base-and-exponent"
    )
    yield case("mul", rand(2, 3), np.arange(3, dtype=np.int32), id="int-operand")


ACTIVATION_DOMAINS = {
    "log": (0.2, 3.0),
    "log1p": (-0.5, 3.0),
    "sqrt": (0.2, 3.0),
    "rsqrt": (0.2, 3.0),
    "tan": (-1.2, 1.2),
}


def unary_cases():
    for kind in Activation:
        if kind is Activation.ROUND:
            continue
        low, high = ACTIVATION_DOMAINS.get(kind.value, (-3.0, 3.0))
        yield case(kind.value, rand(3, 4, low=low, high=high))
    yield case("cast", rand(3, 4).astype(np.float32), id="f32-to-f64", check=F32_CHECK, to="f64")
    yield case("cast", rand(2, 3), id="f64-to-f64", to="f64")


def select_cases():
    cond = RNG.random((3, 4)) < 0.5
    yield case("where", cond, rand(3, 4), rand(3, 4))
    yield case("where", cond, rand(4), rand(3, 1), id="broadcast")
    yield case("where", cond[:, :1], rand(3, 4), rand(), id="broadcast-cond")


def contraction_cases():
    shapes = [
        ((3, 4), (4, 5)),
        ((2, 3, 4), (4, 5)),
        ((2, 3, 4), (2, 4, 5)),
        ((3, 4), (2, 4, 5)),
        ((2, 1, 3, 4), (5, 4, 2)),
    ]
    for a, b in shapes:
        yield case("matmul", rand(*a), rand(*b), id=f"{a}x{b}")
    yield case("matmul", rand(2, 3, 4).astype(np.float32), rand(4, 5), id="promoted-f32", check=F32_CHECK)
    yield case("dot_general", rand(3, 4), rand(4, 5), id="2d", lhs_contracting=[1], rhs_contracting=[0])
    yield case(
        "dot_general", rand(4, 2, 3, 5), rand(3, 2, 6, 4), id="batch-multi-contract",
        lhs_contracting=[2, 0], rhs_contracting=[0, 3], lhs_batch=[1], rhs_batch=[1],
    )  # fmt: skip
    yield case(
        "dot_general", rand(2, 3, 4), rand(4, 2), id="contract-lead-axis",
        lhs_contracting=[0], rhs_contracting=[1],
    )  # fmt: skip
    well_conditioned = rand(3, 3) + 4 * np.eye(3)
    yield case("dense_solve", well_conditioned, rand(3), id="vector")
    yield case("dense_solve", well_conditioned, rand(3, 2), id="matrix")
    batch = np.stack([well_conditioned, well_conditioned.T + np.eye(3)])
    yield case("batched_dense_solve", batch, rand(2, 3), id="vector")
    yield case("batched_dense_solve", batch, rand(2, 3, 2), id="matrix")


def shape_cases():
    yield case("reshape", rand(2, 3, 4), new_shape=[6, -1])
    yield case("transpose", rand(2, 3, 4), perm=[2, 0, 1])
    yield case("expand", rand(3, 1), target_shape=[2, 3, 4])
    yield case("expand", rand(1, 4), id="keep", target_shape=[3, -1])
    for start, length in [(0, 2), (1, 2), (2, 3)]:
        yield case("narrow", rand(3, 5), id=f"{start}+{length}", axis=1, start=start, len=length)
    yield case("concat", rand(2, 3), rand(2, 1), rand(2, 2), axis=-1)


def indexing_cases():
    yield case("gather", rand(5, 3), np.array([4, 0, 4, 2]), id="axis0-repeats", axis=0)
    yield case("gather", rand(2, 5, 3), np.array([[1, 1], [0, 4]]), id="axis1-2d-indices", axis=1)
    yield case("gather", rand(3, 4), np.array([3.0, 1.0, 3.0]), id="float-indices", axis=-1)
    yield case("scatter_add", rand(4, 3), np.array([1, 0, 1, 2]), dim_size=3)
    at = np.array(1, np.int32), np.array(0, np.int64)
    yield case("dynamic_update_slice", rand(3, 4), rand(2, 4), *at, id="inside")
    yield case("dynamic_update_slice", rand(3, 4), rand(2, 4), np.array(5, np.int32), np.array(-2, np.int32), id="clamped")
    # Expert 1 takes two rows (dw sums them), expert 2 none (its dw is zero).
    yield case("grouped_matmul", rand(4, 3), rand(3, 3, 2), np.array([1, 0, 1, 1]), id="repeats-unused-expert")
    yield case("grouped_matmul", rand(3, 2), rand(2, 2, 4), np.array([1.0, 0.0, 1.0]), id="float-ids")


def reduction_cases():
    for kind in ("sum", "mean", "max", "min", "prod"):
        yield case("reduce", rand(3, 4, 2), id=f"{kind}-01", kind=kind, axes=[0, 1])
        yield case("reduce", rand(3, 4), id=f"{kind}-keep", kind=kind, axes=[-1], keep_dim=True)
    yield case("reduce", ties((3, 4)), id="max-pair-ties", kind="max", axes=[1])
    yield case("reduce", -ties((3, 4)), id="min-pair-ties", kind="min", axes=[1])
    with_zeros = rand(4, 3)
    with_zeros[0, 1] = 0.0  # one zero in the row
    with_zeros[1, :2] = 0.0  # two zeros
    yield case("reduce", with_zeros, id="prod-zeros", kind="prod", axes=[1])
    yield case("softmax", rand(3, 4), axis=-1)
    yield case("softmax", rand(3, 4, 2), id="axis0", axis=0)
    yield case("cumsum", rand(3, 4), axis=1)
    yield case("cumsum", rand(3, 4), id="exclusive", axis=0, exclusive=True)
    yield case("topk", rand(3, 5), k=2)
    yield case("topk", rand(6), id="rank1", k=6)


def norm_cases():
    for op in ("layer_norm", "rms_norm"):
        yield case(op, rand(2, 3, 4), rand(4), rand(4), id="last-axis", axis=-1, eps=1e-5)
        yield case(op, rand(2, 3, 4), rand(3, 1), rand(4), id="axis1-broadcast-gamma", axis=1, eps=1e-3)
    yield case("group_norm", rand(2, 4, 3), rand(4), rand(4), num_groups=2, eps=1e-5)
    yield case("group_norm", rand(1, 6, 2, 2), rand(6), rand(6), id="spatial", num_groups=3, eps=1e-3)
    yield case(
        "batch_norm_inference", rand(2, 3, 2), rand(3), rand(3), rand(3), rand(3, low=0.5, high=1.5), eps=1e-3
    )


def signal_cases():
    """Real operands only (central differences are real); the complex rules are checked
    against `jax.vjp` in `tests/dialects/mir/test_signal.py` and `tests/autodiff/test_complex.py`."""
    for inverse, norm in ((False, "backward"), (True, "ortho"), (True, "forward")):
        yield case("fft", rand(2, 8), id=f"real-layout-{inverse}-{norm}", inverse=inverse, norm=norm)
    spectrum = rand(2, 3, 5, low=0.1, high=1.0)
    spectrum[0, 1] = 0  # a silent frame: clamped to eps
    yield case("log_mel", spectrum, rand(5, 4, low=0.1, high=1.0), eps=1e-3)
    # the second-order log-mel gradient: spectrum, filters and dy (a silent frame clamped too)
    yield case("log_mel_backward", spectrum, rand(5, 4, low=0.1, high=1.0), rand(2, 3, 4), eps=1e-3)


def attention_cases():
    q, kv = (1, 2, 3, 4), (1, 2, 5, 4)
    common = {"num_heads": 2, "head_dim": 4}
    yield case("attention", rand(*q), rand(*kv), rand(*kv), id="none", **common)
    yield case("attention", rand(*q), rand(*kv), rand(*kv), id="causal", mask_kind="causal", **common)
    yield case(
        "attention", rand(1, 2, 5, 4), rand(1, 2, 3, 4), rand(1, 2, 3, 4), id="causal-masked-rows",
        mask_kind="causal", **common,
    )  # fmt: skip
    yield case(
        "attention", rand(*q), rand(*kv), rand(*kv), id="window-scale-softcap",
        mask_kind="sliding_window", window=2, score_scale=0.7, attn_logit_softcap=1.5, **common,
    )  # fmt: skip
    custom = np.array([[1.0, 0.0, 1.0, 1.0, 0.0], [0.0, 0.0, 0.0, 0.0, 0.0]])
    yield case(
        "attention", rand(2, 2, 3, 4), rand(2, 2, 5, 4), rand(2, 2, 5, 4), custom, id="custom-masked-batch",
        mask_kind="custom", **common,
    )  # fmt: skip
    yield case(
        "attention", rand(*q), rand(*kv), rand(*kv), rand(1, 1, 3, 5), id="bias", mask_kind="bias", **common
    )
    yield case(
        "attention", rand(1, 4, 3, 4), rand(1, 2, 5, 4), rand(1, 2, 5, 4), id="gqa",
        num_heads=4, head_dim=4, mask_kind="causal",
    )  # fmt: skip
    yield case("rope", rand(1, 2, 3, 6), rand(3, 2), rand(3, 2), head_dim=6, n_rot=4)
    yield case("rope", rand(2, 3, 4), rand(1, 3, 2), rand(3, 2), id="full-rotation", head_dim=4, n_rot=4)


def conv_cases():
    yield case("conv", rand(2, 3, 5, 5), rand(4, 3, 3, 3), kernel_size=[3, 3], stride=[2, 1], padding=[1, 0])
    yield case(
        "conv", rand(1, 3, 6, 5), rand(3, 1, 2, 2), id="depthwise-dilated",
        kernel_size=[2, 2], dilation=[2, 1], groups=3,
    )  # fmt: skip
    yield case(
        "conv", rand(1, 2, 6, 6), rand(2, 2, 3, 3), id="stride-remainder", kernel_size=[3, 3], stride=[2, 2]
    )
    for kind in ("max", "mean"):
        yield case("pool", rand(2, 2, 5, 5), id=kind, kind=kind, kernel_size=[2, 2])
        yield case(
            "pool", rand(1, 2, 5, 4), id=f"{kind}-overlap-padded", kind=kind,
            kernel_size=[3, 2], stride=[1, 2], padding=[1, 1],
        )  # fmt: skip


def loss_cases():
    yield case("softmax_cross_entropy_with_logits", rand(4, 5), np.array([0, 4, 2, 2]))
    yield case("softmax_cross_entropy_with_logits", rand(3, 4), np.array([1.0, 3.0, 0.0]), id="float-labels")
    yield case("softmax_cross_entropy_with_logits", rand(4, 5), np.array([[0], [4], [2], [2]]), id="column-labels")
    yield case(
        "softmax_cross_entropy_with_logits", rand(4, 5), np.array([0, -100, 2, -100]), id="ignore-index",
        ignore_index=-100,
    )  # fmt: skip
    targets = RNG.random((4, 5))
    yield case("softmax_cross_entropy", rand(4, 5), targets / targets.sum(1, keepdims=True))


def quant_cases():
    """The fake-quantisation backward ops are linear in dy; their masks are piecewise constant
    in x, the state and the scale, whose cotangents are zero away from the mask's edges."""
    x, dy = rand(4, 3) * 2, rand(4, 3)
    training = {"mode": "training"}  # x, the state and the scale get (exact) zeros
    ema = {"bits": 3, "axis": 1, "scale_mode": "ema", "decay": 0.75, "check": {"mode": "training"}}
    state = np.array([2.0, 0.5, 1.0])
    yield case("fake_quantize_backward", x, dy, state, ste="clipped_identity", id="clipped-ema", **ema)
    yield case("fake_quantize_backward", x, dy, ste="hard_tanh", bits=2, id="hard-tanh-per-batch", check=training)
    yield case("fake_quantize_lsq_backward_x", x, np.array([0.25, 0.125, 0.5]), dy, bits=3, axis=1, check=training)


def vision_cases():
    yield case("layer_norm_2d", rand(2, 3, 2, 2), rand(3), rand(3), eps=1e-5)
    yield case("resize_nearest_2x", rand(1, 2, 2, 3))
    rope = {"end_x": 2, "end_y": 2, "head_dim": 8, "num_heads": 1, "theta": 100.0, "repeat_factor": 2}
    yield case("axial_rope_2d", rand(1, 1, 8, 8), **rope)
    yield case("axial_rope_2d", rand(1, 1, 8, 8), id="inverse", inverse=True, **rope)
    yield case(
        "conv_transpose_2d", rand(1, 4, 3, 2), rand(4, 1, 3, 2), id="strided-grouped",
        kernel_size=[3, 2], stride=[2, 1], padding=[1, 0], output_padding=[1, 0], dilation=[1, 2], groups=2,
    )  # fmt: skip


CASES = [
    c.param()
    for group in (
        binary_cases,
        unary_cases,
        select_cases,
        contraction_cases,
        shape_cases,
        indexing_cases,
        reduction_cases,
        norm_cases,
        signal_cases,
        attention_cases,
        conv_cases,
        loss_cases,
        quant_cases,
        vision_cases,
    )  # fmt: skip
    for c in group()
]


@pytest.mark.parametrize("c", CASES)
def test_rule_matches_central_differences(c: Case):
    module, wrt = build(c)
    check_gradients(module, "f", c.inputs, wrt, seed=len(c.id), **c.check)


REGION_OPS_TESTED_ELSEWHERE = {"scan", "custom_fn"}
"""Ops whose rules need bodies, not single-op cases: `tests/autodiff/test_structured.py`."""
STRAIGHT_THROUGH_TESTED_ELSEWHERE = {"fake_quantize", "fake_quantize_lsq", "fake_quantize_lsq_backward_scale",
                                     "dequant_matmul", "dequant_grouped_matmul"}
"""Ops whose rules are estimators, not derivatives: the fake quantisations (checked against
PyTorch's fake-quantize autograd; LSQ's scale gradient, straight through its rounding, against
JAX's second derivatives of LSQ) and dequant_matmul (zero for its scales, as RLX; its x
gradient is checked by central differences), in `tests/autodiff/test_quant.py`;
dequant_grouped_matmul likewise in `tests/dialects/mir/test_moe.py`."""
SPLAT_TESTED_ELSEWHERE = {"gaussian_splat_render"}
"""The camera operand gets zero by convention (RLX's), not its derivative: the six other
gradients are checked against gsplat's autograd and central differences in
`tests/dialects/mir/test_splat.py`."""
COMPLEX_OPS_TESTED_ELSEWHERE = {"conjugate", "complex_norm_sq", "complex_norm_sq_backward"}
"""Ops of complex values: their rules are checked against `jax.vjp` (`tests/dialects/mir/test_signal.py`)."""


def test_every_rule_has_a_case():
    """A registered MIR rule (other than `no_gradient`) without a case above fails here."""
    covered = (
        {p.values[0].op for p in CASES}
        | REGION_OPS_TESTED_ELSEWHERE
        | STRAIGHT_THROUGH_TESTED_ELSEWHERE
        | COMPLEX_OPS_TESTED_ELSEWHERE
        | SPLAT_TESTED_ELSEWHERE
    )
    rules = [op for op in ALL_OPS if op in VJP_RULES and VJP_RULES[op] is not no_gradient]
    assert sorted(op.name for op in rules if op.name.split(".", 1)[1] not in covered) == []


# Ties of three or more: no gradient matches every partial difference ----------------


def test_reduce_max_splits_a_gradient_among_many_ties_along_the_tie():
    """With three tied maxima the function has no gradient; the rule's `g/3` each is the
    one whose directional derivatives along moves of the tied group and of the others match."""
    x = np.array([[0.5, 2.0, 2.0, 2.0, -1.0]])
    c = case("reduce", x, kind="max", axes=[1])
    module, wrt = build(c)
    from rlx_xdsl.autodiff.grad import build_gradient
    from rlx_xdsl.run import run_function
    from rlx_xdsl.testing.gradcheck import module_function

    forward = module_function(module, "f")
    build_gradient(module, "f", ["0"])
    cotangent = np.array([1.5])
    _, grad = run_function(module, "f_grad", [x, cotangent])
    np.testing.assert_allclose(grad, [[0.0, 0.5, 0.5, 0.5, 0.0]])
    together = np.array([[0.0, 1.0, 1.0, 1.0, 0.0]])
    others = np.array([[1.0, 0.0, 0.0, 0.0, 1.0]])
    check_directional(grad, forward, [x], 0, cotangent, [together, others])
