"""JVP rules of the backward kernels and the moe, quant, random, signal and vision groups.

Each case is one op; `rlx-jvp` (`jvp_function`) differentiates it along random
tangents of the float operands `wrt`, and the tangent it returns is checked against

* central differences of the op in f64 through the interpreter (`fd`); complex<f32>
  ops are at most quadratic, so their central difference is exact up to rounding;
* or, for the straight-through conventions (zero true derivative almost everywhere),
  the op's reverse rule: `<g, jvp(t)> = Σ <vjp(g)_i, t_i>` (`transpose`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np
import pytest

from rlx_xdsl.autodiff.grad import Mode, build_gradient
from rlx_xdsl.autodiff.jvp import jvp_function
from rlx_xdsl.run import run_function
from rlx_xdsl.testing.op_cases import OpCase, cases_module, fixed, ints, normal, of

F = "f64"
Inputs = Callable[[np.random.Generator], list[np.ndarray]]


def t(*shape: int, dtype: str = F) -> str:
    return f"tensor<{'x'.join(map(str, shape))}x{dtype}>" if shape else f"tensor<{dtype}>"


def n(*shape: int) -> Callable[[np.random.Generator], np.ndarray]:
    return normal(*shape, dtype=np.float64)


def positive(*shape: int, low: float = 0.5) -> Callable[[np.random.Generator], np.ndarray]:
    return lambda rng: rng.uniform(low, 2.0, shape)


def away_from_zero(*shape: int) -> Callable[[np.random.Generator], np.ndarray]:
    """Normal values at least 0.1 from 0 (relu's and abs's kink)."""
    def draw(rng: np.random.Generator) -> np.ndarray:
        x = rng.standard_normal(shape)
        return x + 0.1 * np.sign(x)

    return draw


def cplx(*shape: int) -> Callable[[np.random.Generator], np.ndarray]:
    return lambda rng: (rng.standard_normal(shape) + 1j * rng.standard_normal(shape)).astype(np.complex64)


class Case:
    def __init__(self, name: str, line: str, inputs: Inputs, wrt: Sequence[int], check: str = "fd"):
        self.name, self.line, self.inputs, self.wrt, self.check = name, line, inputs, tuple(wrt), check

    def __repr__(self) -> str:
        return self.name


X, DY = t(2, 3), t(2, 3)
ACTIVATIONS = {
    "gelu": n(2, 3), "gelu_approx": n(2, 3), "silu": n(2, 3), "sigmoid": n(2, 3), "tanh": n(2, 3), "exp": n(2, 3),
    "log": positive(2, 3), "sqrt": positive(2, 3), "rsqrt": positive(2, 3), "sin": n(2, 3), "cos": n(2, 3),
    "tan": lambda rng: rng.uniform(-1, 1, (2, 3)), "atan": n(2, 3), "neg": n(2, 3), "abs": away_from_zero(2, 3),
    "relu": away_from_zero(2, 3), "round": lambda rng: rng.uniform(-3, 3, (2, 3)),
    "log1p": positive(2, 3), "expm1": n(2, 3), "erf": n(2, 3),
}  # fmt: skip

N3 = t(2, 3, 4)
Q, KV, MASK = t(2, 4, 3, 8), t(2, 2, 5, 8), t(2, 5)
KEEP = fixed(np.array([[1.0, 1.0, 0.0, 1.0, 1.0], [0.0, 1.0, 1.0, 1.0, 1.0]]))  # a custom mask: 1 keeps a key
X4, W4, DY4, DP = t(2, 4, 7, 7), t(6, 2, 3, 3), t(2, 6, 3, 3), t(2, 4, 4, 4)
D5 = t(2, 3, 5)
SCE_LABELS = fixed(np.array([[1], [-100], [3], [0]], np.int32))
RANGE_STATE = fixed(np.array([2.0, 0.5, 0.0]))
LSQ_SCALE = fixed(np.array([0.25, 0.125, 0.5]))
STE = "bits = 3 axis = 1 ste = {} scale_mode = ema decay = 7.500000e-01"
QX, QC = t(4, 3), t(3)

BACKWARD = [
    Case("relu_backward", f"mir.relu_backward %0, %1 : ({X}, {DY}) -> {X}", of(away_from_zero(2, 3), n(2, 3)), (0, 1)),
    *(Case(f"activation_backward_{kind}", f"mir.activation_backward {kind} %0, %1 : ({X}, {DY}) -> {X}",
           of(x, n(2, 3)), (0, 1)) for kind, x in ACTIVATIONS.items()),
    # x is dy too (%1 unused): its tangent enters both terms, the decomposition binding by position
    Case("activation_backward_same_operand", f"mir.activation_backward silu %0, %0 : ({X}, {X}) -> {X}",
         of(n(2, 3), n(2, 3)), (0,)),
    Case("layer_norm_backward_input", f"mir.layer_norm_backward_input %0, %1, %2 axis = -1 eps = 1.0e-05 "
         f": ({N3}, {t(4)}, {N3}) -> {N3}", of(n(2, 3, 4), n(4), n(2, 3, 4)), (0, 1, 2)),
    Case("layer_norm_backward_gamma", f"mir.layer_norm_backward_gamma %0, %1 axis = 1 eps = 1.0e-05 "
         f": ({N3}, {N3}) -> {t(3, 4)}", of(n(2, 3, 4), n(2, 3, 4)), (0, 1)),
    Case("rms_norm_backward_input", f"mir.rms_norm_backward_input %0, %1, %2 axis = -1 eps = 1.0e-06 "
         f": ({N3}, {t(4)}, {N3}) -> {N3}", of(n(2, 3, 4), n(4), n(2, 3, 4)), (0, 1, 2)),
    Case("rms_norm_backward_gamma", f"mir.rms_norm_backward_gamma %0, %1 axis = -1 eps = 1.0e-06 "
         f": ({N3}, {N3}) -> {t(4)}", of(n(2, 3, 4), n(2, 3, 4)), (0, 1)),
    Case("rms_norm_backward_beta", f"mir.rms_norm_backward_beta %0 axis = -2 : ({N3}) -> {t(3, 4)}", of(n(2, 3, 4)), (0,)),
    Case("group_norm_backward_input", f"mir.group_norm_backward_input %0, %1, %2 num_groups = 3 eps = 1.0e-05 "
         f": ({N3}, {t(3)}, {N3}) -> {N3}", of(n(2, 3, 4), n(3), n(2, 3, 4)), (0, 1, 2)),
    Case("group_norm_backward_gamma", f"mir.group_norm_backward_gamma %0, %1 num_groups = 1 eps = 1.0e-05 "
         f": ({N3}, {N3}) -> {t(3)}", of(n(2, 3, 4), n(2, 3, 4)), (0, 1)),
    Case("group_norm_backward_beta", f"mir.group_norm_backward_beta %0 : ({N3}) -> {t(3)}", of(n(2, 3, 4)), (0,)),
    Case("rope_backward", f"mir.rope_backward %0, %1, %2 head_dim = 8 n_rot = 4 : ({Q}, {t(3, 2)}, {t(3, 2)}) -> {Q}",
         of(n(2, 4, 3, 8), n(3, 2), n(3, 2)), (0, 1, 2)),
    Case("attention_backward_query", f"mir.attention_backward query %0, %1, %2, %3 num_heads = 4 head_dim = 8 "
         f"mask_kind = causal : ({Q}, {KV}, {KV}, {Q}) -> {Q}", of(n(2, 4, 3, 8), n(2, 2, 5, 8), n(2, 2, 5, 8),
         n(2, 4, 3, 8)), (0, 1, 2, 3)),
    Case("attention_backward_key", f"mir.attention_backward key %0, %1, %2, %3, %4 num_heads = 4 head_dim = 8 "
         f"mask_kind = custom score_scale = 0.5 attn_logit_softcap = 3.0 : ({Q}, {KV}, {KV}, {Q}, {MASK}) -> {KV}",
         of(n(2, 4, 3, 8), n(2, 2, 5, 8), n(2, 2, 5, 8), n(2, 4, 3, 8), KEEP), (0, 1, 2, 3)),
    Case("attention_backward_key_bias", f"mir.attention_backward key %0, %1, %2, %3, %4 num_heads = 4 head_dim = 8 "
         f"mask_kind = bias : ({Q}, {KV}, {KV}, {Q}, {t(2, 1, 3, 5)}) -> {KV}",
         of(n(2, 4, 3, 8), n(2, 2, 5, 8), n(2, 2, 5, 8), n(2, 4, 3, 8), n(2, 1, 3, 5)), (0, 1, 2, 3)),
    Case("attention_backward_value", f"mir.attention_backward value %0, %1, %2, %3 num_heads = 4 head_dim = 8 "
         f"mask_kind = sliding_window window = 2 : ({Q}, {KV}, {KV}, {Q}) -> {KV}",
         of(n(2, 4, 3, 8), n(2, 2, 5, 8), n(2, 2, 5, 8), n(2, 4, 3, 8)), (0, 1, 2, 3)),
    Case("conv_backward_input", f"mir.conv_backward_input %0, %1 input_size = [7, 7] kernel_size = [3, 3] "
         f"stride = [2, 2] padding = [0, 0] dilation = [1, 1] groups = 2 : ({DY4}, {W4}) -> {X4}",
         of(n(2, 6, 3, 3), n(6, 2, 3, 3)), (0, 1)),
    Case("conv_backward_weight", f"mir.conv_backward_weight %0, %1 kernel_size = [3, 3] stride = [2, 2] "
         f"padding = [0, 0] dilation = [1, 1] groups = 2 : ({X4}, {DY4}) -> {W4}",
         of(n(2, 4, 7, 7), n(2, 6, 3, 3)), (0, 1)),
    *(Case(f"pool_backward_{kind}", f"mir.pool_backward %0, %1 kind = {kind} kernel_size = [2, 2] stride = [2, 2] "
           f"padding = [1, 1] : ({X4}, {DP}) -> {X4}", of(n(2, 4, 7, 7), n(2, 4, 4, 4)), (0, 1))
      for kind in ("max", "mean")),
    Case("cumsum_backward", f"mir.cumsum_backward %0 axis = -1 exclusive : ({D5}) -> {D5}", of(n(2, 3, 5)), (0,)),
    Case("gather_backward", f"mir.gather_backward %0, %1 axis = 1 dim_size = 7 : ({D5}, tensor<3xi64>) -> {t(2, 7, 5)}",
         of(n(2, 3, 5), fixed(np.array([6, 0, 6], np.int64))), (0,)),
    Case("softmax_cross_entropy_backward", f"mir.softmax_cross_entropy_backward %0, %1, %2 ignore_index = -100 "
         f": ({t(4, 5)}, tensor<4x1xi32>, {t(4)}) -> {t(4, 5)}", of(n(4, 5), SCE_LABELS, n(4)), (0, 2)),
    Case("stop_gradient", f"mir.stop_gradient %0 : ({X}) -> {X}", of(n(2, 3)), (0,), check="zero"),
]  # fmt: skip

QUANT = [
    Case("fake_quantize_identity", f"mir.fake_quantize %0 bits = 8 ste = identity scale_mode = per_batch "
         f": ({QX}) -> {QX}", of(n(4, 3)), (0,), check="transpose"),
    *(Case(f"fake_quantize_{kind}", f"mir.fake_quantize %0, %1 {STE.format(kind)} : ({QX}, {QC}) -> {QX}",
           of(n(4, 3), RANGE_STATE), (0,), check="transpose") for kind in ("clipped_identity", "hard_tanh", "tanh")),
    *(Case(f"fake_quantize_backward_{kind}", f"mir.fake_quantize_backward %0, %1, %2 {STE.format(kind)} "
           f": ({QX}, {QX}, {QC}) -> {QX}", of(n(4, 3), n(4, 3), RANGE_STATE), (0, 1))
      for kind in ("identity", "clipped_identity", "hard_tanh", "tanh")),
    Case("fake_quantize_backward_tanh_per_batch", f"mir.fake_quantize_backward %0, %1 bits = 2 ste = tanh "
         f"scale_mode = per_batch : ({QX}, {QX}) -> {QX}", of(n(4, 3), n(4, 3)), (0, 1)),
    Case("fake_quantize_lsq", f"mir.fake_quantize_lsq %0, %1 bits = 3 axis = 1 : ({QX}, {QC}) -> {QX}",
         of(n(4, 3), LSQ_SCALE), (0, 1), check="transpose"),
    Case("fake_quantize_lsq_per_tensor", f"mir.fake_quantize_lsq %0, %1 bits = 4 : ({QX}, {t()}) -> {QX}",
         of(n(4, 3), fixed(np.array(0.2))), (0, 1), check="transpose"),
    Case("fake_quantize_lsq_rank_0_x", f"mir.fake_quantize_lsq %0, %1 bits = 3 : ({t()}, {t(1)}) -> {t()}",
         of(fixed(np.array(0.7)), fixed(np.array([0.3]))), (0, 1), check="transpose"),
    Case("fake_quantize_lsq_backward_x", f"mir.fake_quantize_lsq_backward_x %0, %1, %2 bits = 3 axis = 1 "
         f": ({QX}, {QC}, {QX}) -> {QX}", of(n(4, 3), LSQ_SCALE, n(4, 3)), (0, 1, 2)),
    Case("fake_quantize_lsq_backward_scale", f"mir.fake_quantize_lsq_backward_scale %0, %1, %2 bits = 3 axis = 1 "
         f": ({QX}, {QC}, {QX}) -> {QC}", of(n(4, 3), LSQ_SCALE, n(4, 3)), (0, 1, 2), check="transpose"),
    Case("fake_quantize_lsq_backward_scale_per_tensor", f"mir.fake_quantize_lsq_backward_scale %0, %1, %2 bits = 2 "
         f": ({QX}, {t(1)}, {QX}) -> {t(1)}", of(n(4, 3), fixed(np.array([0.5])), n(4, 3)), (0, 1, 2),
         check="transpose"),
    Case("dequant_matmul", f"mir.dequant_matmul %0, %1, %2, %3 scheme = int8_block block_size = 4 "
         f": ({t(3, 8)}, tensor<8x4xi8>, {t(2, 4)}, {t(1)}) -> {t(3, 4)}",
         of(n(3, 8), ints(-128, 127, 8, 4, dtype=np.int8), n(2, 4), n(1)), (0,)),
]  # fmt: skip

EXPERTS = fixed(np.array([2, 0, 2, 1, 0], np.int64))
MOE = [
    Case("lora_matmul", f"mir.lora_matmul %0, %1, %2, %3 scale = 5.000000e-01 : ({t(2, 3, 4)}, {t(4, 5)}, {t(4, 2)}, "
         f"{t(2, 5)}) -> {t(2, 3, 5)}", of(n(2, 3, 4), n(4, 5), n(4, 2), n(2, 5)), (0, 1, 2, 3)),
    Case("grouped_matmul", f"mir.grouped_matmul %0, %1, %2 : ({t(5, 4)}, {t(3, 4, 5)}, tensor<5xi64>) -> {t(5, 5)}",
         of(n(5, 4), n(3, 4, 5), EXPERTS), (0, 1)),
    Case("dequant_grouped_matmul", f"mir.dequant_grouped_matmul %0, %1, %2, %3, %4 scheme = int8_block_asym "
         f"block_size = 4 : ({t(5, 8)}, tensor<3x8x5xi8>, {t(3, 2, 5)}, {t(3, 2, 5)}, tensor<5xi64>) -> {t(5, 5)}",
         of(n(5, 8), ints(-128, 127, 3, 8, 5, dtype=np.int8), n(3, 2, 5), n(3, 2, 5), EXPERTS), (0,)),
]  # fmt: skip

C23, R23 = t(2, 3, dtype="complex<f32>"), t(2, 3, dtype="f32")


def spectra(rng: np.random.Generator) -> list[np.ndarray]:
    power = rng.random((2, 3, 6))
    power[0, 0] = 1e-6  # a quiet frame: every mel bin clamps to eps, also when moved by 1e-6
    return [power, rng.random((6, 4))]


SIGNAL = [
    Case("conjugate", f"mir.conjugate %0 : ({C23}) -> {C23}", of(cplx(2, 3)), (0,)),
    Case("complex_norm_sq", f"mir.complex_norm_sq %0 : ({C23}) -> {R23}", of(cplx(2, 3)), (0,)),
    Case("complex_norm_sq_backward", f"mir.complex_norm_sq_backward %0, %1 : ({C23}, {R23}) -> {C23}",
         of(cplx(2, 3), normal(2, 3)), (0, 1)),
    Case("fft_complex_inverse_ortho", f"mir.fft %0 inverse norm = ortho : ({t(3, 5, dtype='complex<f32>')}) -> "
         f"{t(3, 5, dtype='complex<f32>')}", of(cplx(3, 5)), (0,)),
    Case("fft_real_layout", f"mir.fft %0 norm = backward : ({t(2, 8)}) -> {t(2, 8)}", of(n(2, 8)), (0,)),
    Case("log_mel", f"mir.log_mel %0, %1 eps = 1.000000e-03 : ({t(2, 3, 6)}, {t(6, 4)}) -> {t(2, 3, 4)}",
         spectra, (0, 1)),
    Case("log_mel_backward", f"mir.log_mel_backward %0, %1, %2 eps = 1.000000e-03 : ({t(2, 3, 6)}, {t(6, 4)}, "
         f"{t(2, 3, 4)}) -> {t(2, 3, 6)}", lambda rng: [*spectra(rng), rng.standard_normal((2, 3, 4))], (0, 1, 2)),
]  # fmt: skip

VX = t(2, 4, 3, 3)
VISION = [
    Case("layer_norm_2d", f"mir.layer_norm_2d %0, %1, %2 eps = 1.000000e-06 : ({VX}, {t(4)}, {t(4)}) -> {VX}",
         of(n(2, 4, 3, 3), n(4), n(4)), (0, 1, 2)),
    Case("layer_norm_2d_beta", f"mir.layer_norm_2d %0, %1, %2 eps = 1.000000e-06 : ({VX}, {t(4)}, {t(4)}) -> {VX}",
         of(n(2, 4, 3, 3), n(4), n(4)), (2,)),
    Case("resize_nearest_2x", f"mir.resize_nearest_2x %0 : ({t(1, 2, 2, 3)}) -> {t(1, 2, 4, 6)}", of(n(1, 2, 2, 3)), (0,)),
    Case("axial_rope_2d", f"mir.axial_rope_2d %0 end_x = 3 end_y = 2 head_dim = 8 num_heads = 2 theta = 1.000000e+02 "
         f"repeat_factor = 2 : ({t(1, 2, 12, 8)}) -> {t(1, 2, 12, 8)}", of(n(1, 2, 12, 8)), (0,)),
    Case("conv_transpose_2d", f"mir.conv_transpose_2d %0, %1 kernel_size = [3, 2] stride = [2, 1] padding = [1, 0] "
         f"output_padding = [1, 0] dilation = [1, 2] groups = 1 : ({VX}, {t(4, 3, 3, 2)}) -> {t(2, 3, 6, 5)}",
         of(n(2, 4, 3, 3), n(4, 3, 3, 2)), (0, 1)),
]  # fmt: skip

CASES = [*BACKWARD, *QUANT, *MOE, *SIGNAL, *VISION]


def random_like(rng: np.random.Generator, x: np.ndarray) -> np.ndarray:
    if np.iscomplexobj(x):
        return (rng.standard_normal(x.shape) + 1j * rng.standard_normal(x.shape)).astype(x.dtype)
    return rng.standard_normal(x.shape).astype(x.dtype)


@pytest.mark.parametrize("case", CASES, ids=repr)
def test_jvp_rule(case: Case) -> None:
    module = cases_module([OpCase("f", case.line)])
    function = module.body.block.first_op
    module.body.block.add_op(jvp_function(function, case.wrt, "f_jvp"))
    module.verify()
    rng = np.random.default_rng(0)
    inputs = case.inputs(rng)
    tangents = [random_like(rng, inputs[i]) for i in case.wrt]
    primal, tangent = run_function(module, "f_jvp", [*inputs, *tangents])
    np.testing.assert_array_equal(primal, run_function(module, "f", inputs)[0])
    assert tangent.shape == primal.shape and tangent.dtype == primal.dtype
    if case.check == "zero":
        np.testing.assert_array_equal(tangent, 0)
        return
    assert np.any(tangent != 0), "a zero tangent would check nothing"
    if case.check == "transpose":
        check_transpose(module, case, inputs, tangents, tangent, rng)
    else:
        check_central_difference(module, case, inputs, tangents, tangent)


def check_central_difference(module, case: Case, inputs, tangents, tangent) -> None:
    complex_values = any(np.iscomplexobj(x) for x in inputs) or np.iscomplexobj(tangent)
    eps = 0.5 if complex_values else 1e-6  # a quadratic's central difference is exact at any step

    def moved(step: float) -> np.ndarray:
        args = list(inputs)
        for i, direction in zip(case.wrt, tangents):
            args[i] = (inputs[i] + step * direction).astype(inputs[i].dtype)
        return run_function(module, "f", args)[0].astype(np.complex128 if complex_values else np.float64)

    numeric = (moved(eps) - moved(-eps)) / (2 * eps)
    rtol, atol = (1e-4, 1e-4) if complex_values else (1e-5, 1e-7)
    np.testing.assert_allclose(tangent, numeric, rtol=rtol, atol=atol)


def check_transpose(module, case: Case, inputs, tangents, tangent, rng) -> None:
    """The reverse rule's convention: `<g, J t> = Σ <Jᵀ g, t>` (real inner products)."""
    build_gradient(module, "f", [str(i) for i in case.wrt], Mode.TRAINING)
    g = random_like(rng, tangent)
    gradients = run_function(module, "f_grad", [*inputs, g])[1:]
    forward = float(np.sum(np.real(np.conj(g) * tangent)))
    backward = sum(float(np.sum(np.real(np.conj(d) * v))) for d, v in zip(gradients, tangents))
    np.testing.assert_allclose(forward, backward, rtol=1e-9, atol=1e-12)


JAX_SIGNAL = [c for c in SIGNAL if c.name != "log_mel_backward"]
"""The signal cases `conversions.mir_to_jax` translates (log_mel_backward has no formula there)."""


@pytest.mark.parametrize("case", JAX_SIGNAL, ids=repr)
def test_jvp_rule_matches_jax_jvp(case: Case) -> None:
    """The complex ops' tangents in JAX's convention: `jax.jvp` of the op's JAX translation."""
    jax = pytest.importorskip("jax")
    from rlx_xdsl.testing.jax_oracle import jax_function

    module = cases_module([OpCase("f", case.line)])
    f = jax_function(module, "f")
    module.body.block.add_op(jvp_function(module.body.block.first_op, case.wrt, "f_jvp"))
    rng = np.random.default_rng(1)
    inputs = case.inputs(rng)
    tangents = [random_like(rng, inputs[i]) for i in case.wrt]

    def restricted(*chosen):
        args = list(inputs)
        for i, value in zip(case.wrt, chosen):
            args[i] = value
        return f(*args)[0]

    _, want = jax.jvp(restricted, [inputs[i] for i in case.wrt], tangents)
    got = run_function(module, "f_jvp", [*inputs, *tangents])[1]
    np.testing.assert_allclose(got, np.asarray(want), rtol=1e-4, atol=1e-5)
