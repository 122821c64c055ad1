"""The quantisation passes: `rlx-insert-qdq` against running the original graph on values
quantised and dequantised by ONNX's reference (QuantizeLinear / DequantizeLinear)."""

import json

import ml_dtypes
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from xdsl.context import Context
from xdsl.dialects import func
from xdsl.utils.exceptions import PassFailedException

from rlx_xdsl.context import parse_module
from rlx_xdsl.dialects.mir.quant import DequantizeOp, QuantizeOp
from rlx_xdsl.ir.graph import argument_names
from rlx_xdsl.run import run_function
from rlx_xdsl.testing.graphgen import graphs, inputs_for
from rlx_xdsl.testing.oracles import onnx_run
from rlx_xdsl.transforms.quant.insert_qdq import InsertQdqError, InsertQdqPass


def onnx_qdq(x, scales, zero_points=None, axis=None):
    """ONNX's QuantizeLinear then DequantizeLinear (i8 or, for zero points past 127, ui8)."""
    zero_points = [0] * len(scales) if zero_points is None else zero_points
    storage = np.int8 if all(-128 <= z <= 127 for z in zero_points) else np.uint8
    shape = () if axis is None else (-1,)
    scale, zero = np.float32(scales).reshape(shape), np.asarray(zero_points, storage).reshape(shape)
    extra = {} if axis is None else {"axis": axis}
    q = onnx_run("QuantizeLinear", [x, scale, zero], **extra)
    return onnx_run("DequantizeLinear", [q, scale, zero], **extra)


def insert_qdq(module, calibration: dict, tmp_path) -> None:
    path = tmp_path / "calibration.json"
    path.write_text(json.dumps(calibration))
    InsertQdqPass(calibration=str(path)).apply(Context(), module)
    module.verify()


LABELLED = """
func.func @f(%x: tensor<3x4xf32> {rlx.name = "x"}, %w: tensor<4x5xf32> {rlx.param, rlx.name = "w"}) -> (tensor<3x5xf32>, tensor<3x5xf32>) {
  %0 = mir.matmul %x, %w : (tensor<3x4xf32>, tensor<4x5xf32>) -> tensor<3x5xf32> loc("h1")
  %1 = mir.tanh %0 : (tensor<3x5xf32>) -> tensor<3x5xf32>
  func.return %1, %0 : tensor<3x5xf32>, tensor<3x5xf32>
}
"""


def test_a_labelled_result_and_an_argument_are_quantised_for_every_consumer(tmp_path):
    rng = np.random.default_rng(1)
    x, w = rng.standard_normal((3, 4)).astype(np.float32), rng.standard_normal((4, 5)).astype(np.float32)
    module = parse_module(LABELLED)
    per_channel = {"scales": [0.05, 0.1, 0.2, 0.4, 0.8], "zero_points": [0, 1, 2, 200, 255], "axis": 1}
    insert_qdq(module, {"w": {"scales": [0.01]}, "h1": per_channel}, tmp_path)
    tanh_out, h1_out = run_function(module, "f", [x, w])
    h1 = onnx_qdq(x @ onnx_qdq(w, [0.01]), **per_channel)
    np.testing.assert_allclose(h1_out, h1, rtol=1e-6)  # the function result reads the dequantised value
    np.testing.assert_allclose(tanh_out, np.tanh(h1), rtol=1e-6)
    kinds = [type(op) for op in module.ops.first.body.block.ops]
    assert kinds.count(QuantizeOp) == kinds.count(DequantizeOp) == 2


def test_a_second_run_adds_nothing(tmp_path):
    module = parse_module(LABELLED)
    insert_qdq(module, {"x": {"scales": [0.5]}, "h1": {"scales": [0.5]}}, tmp_path)
    once = str(module)
    insert_qdq(module, {"x": {"scales": [0.5]}, "h1": {"scales": [0.5]}}, tmp_path)
    assert str(module) == once


@pytest.mark.parametrize(("calibration", "error", "message"), [
    ({"nope": {"scales": [1.0]}}, InsertQdqError, "the calibration names 'nope', which no function has"),
    ({"h1": {"scales": [1.0, 2.0], "axis": 1}}, InsertQdqError, "has 2 scales but dim 1 of the operand has 5"),
    ({"x": {"scale": [1.0]}}, PassFailedException, "must be an object with 'scales'"),
    ({"x": {"scales": [1.0], "axes": 1}}, PassFailedException, r"unknown keys \['axes'\]"),
    # No coercion: what the JSON holds must already be the entry's type (round 4).
    ({"x": {"scales": "a"}}, PassFailedException, """'scales' must be a list of numbers, got "a\""""),
    ({"x": {"scales": [True]}}, PassFailedException, r"'scales' must be a list of numbers, got \[true\]"),
    ({"x": {"scales": [0.1], "zero_points": [0.5]}}, PassFailedException,
     r"'zero_points' must be a list of integers, got \[0.5\]"),
    ({"x": {"scales": [0.1], "zero_points": [99999999999999999999999]}}, PassFailedException,
     r"'zero_points' must be a list of integers, got \[99999999999999999999999\]"),
    ({"x": {"scales": [0.1], "zero_points": 0}}, PassFailedException, "'zero_points' must be a list of integers, got 0"),
    ({"h1": {"scales": [0.1] * 5, "axis": "1"}}, PassFailedException, """'axis' must be an integer, got "1\""""),
    ({"h1": {"scales": [0.1] * 5, "axis": 1.5}}, PassFailedException, "'axis' must be an integer, got 1.5"),
    ({"h1": {"scales": [0.1] * 5, "axis": 1.0}}, PassFailedException, "'axis' must be an integer, got 1.0"),
    ({"x": {"scales": [0.1], "zero_points": [1000]}}, InsertQdqError, "calibration does not fit"),
])  # fmt: skip
def test_bad_calibrations_are_reported_and_leave_the_module_alone(tmp_path, calibration, error, message):
    module = parse_module(LABELLED)
    before = str(module)
    with pytest.raises(error, match=message):
        insert_qdq(module, calibration, tmp_path)
    if error is PassFailedException:
        assert str(module) == before


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(graphs(max_ops=8))
def test_quantising_arguments_is_running_on_quantised_arguments(tmp_path, module):
    """Random graphs: Q/DQ after every f32 argument computes what the original graph computes
    on the arguments ONNX quantises and dequantises."""
    function = module.ops.first
    assert isinstance(function, func.FuncOp)
    inputs = inputs_for(module)
    names = argument_names(function)
    calibration, expected_inputs = {}, []
    for name, arg, x in zip(names, function.body.block.args, inputs):
        if str(arg.type.element_type) == "f32":
            calibration[name] = {"scales": [0.125], "zero_points": [3]}
            x = onnx_qdq(x, [0.125], [3]).reshape(x.shape)
        expected_inputs.append(x)
    expected = run_function(module, None, expected_inputs)
    if not calibration:
        return
    insert_qdq(module, calibration, tmp_path)
    for want, got in zip(expected, run_function(module, None, inputs), strict=True):
        np.testing.assert_array_equal(got, want)


# --- rlx-quant-propagate ------------------------------------------------------------------


def chain(rng, dtype: str, per_channel: bool):
    """`fq(g(fq(x)))` with a random chain `g` of grid-preserving ops and one shared fixed state."""
    from rlx_xdsl.building.builder import GraphBuilder

    b = GraphBuilder("f")
    x = b.input("x", [4, 6], dtype)
    state = b.input("s", [6] if per_channel else [1], dtype)
    props = {"bits": int(rng.integers(2, 9)), "scale_mode": "fixed", "axis": 1 if per_channel else None}
    value = b.mir.fake_quantize(x, state, ste="tanh", **props)
    for _ in range(int(rng.integers(0, 4))):
        step = "relu" if per_channel else rng.choice(["relu", "transpose", "narrow", "reshape"])
        shape = value.type.get_shape()
        if step == "relu":
            value = b.mir.relu(value)
        elif step == "transpose":
            value = b.mir.transpose(value, perm=[1, 0])
        elif step == "narrow" and shape[0] > 1:
            value = b.mir.narrow(value, axis=0, start=1, len=shape[0] - 1)
        elif step == "reshape":
            value = b.mir.reshape(value, new_shape=[shape[1], shape[0]])
    b.output(b.mir.fake_quantize(value, state, ste=rng.choice(["identity", "clipped_identity"]), **props))
    return b.module()


@pytest.mark.parametrize("seed", range(12))
def test_quant_propagate_drops_only_what_changes_nothing(seed):
    """On random chains, the rewritten graph computes bit-identical outputs (halves too,
    per channel too), and the downstream fake-quantize is gone."""
    from rlx_xdsl.dialects.mir.quant import FakeQuantizeOp
    from rlx_xdsl.transforms.quant.propagate import QuantPropagatePass

    rng = np.random.default_rng(seed)
    dtype, per_channel = ["f32", "f16", "bf16"][seed % 3], seed % 2 == 1
    module = chain(rng, dtype, per_channel)
    x = (rng.standard_normal((4, 6)) * 3).astype(np.float32)
    state = rng.uniform(0.5, 4, 6 if per_channel else 1).astype(np.float32)
    np_dtype = {"f32": np.float32, "f16": np.float16, "bf16": ml_dtypes.bfloat16}[dtype]
    inputs = [x.astype(np_dtype), state.astype(np_dtype)]
    (before,) = run_function(module, "f", inputs)
    QuantPropagatePass().apply(Context(), module)
    module.verify()
    (after,) = run_function(module, "f", inputs)
    np.testing.assert_array_equal(after, before)
    assert sum(isinstance(op, FakeQuantizeOp) for op in module.walk()) == 1


# --- rlx-quantize-weights -----------------------------------------------------------------

SCHEMES = [("int8_block", 16), ("int8_block_asym", 16), ("int4_block", 16), ("fp8_e4m3", None),
           ("fp8_e5m2", None), ("nvfp4_block", None), ("gguf_q8_0", None), ("gguf_q4_0", None),
           ("gguf_q2_k", None), ("gguf_q3_k", None), ("gguf_q4_k", None), ("gguf_q5_k", None),
           ("gguf_q6_k", None), ("gguf_q8_k", None)]  # fmt: skip


def dequantised(w, scheme, block):
    """The weights a packed parameter set stands for, decoded here independently of the
    kernels (numpy integer arithmetic; ml_dtypes for FP8/FP4; gguf's own reader)."""
    from rlx_xdsl.formats.quantpack import pack

    p = pack(w, scheme, block)
    rep = (lambda a, b: np.repeat(a, b, axis=0))
    if scheme == "int8_block":
        return p["q"].astype(np.float32) * rep(p["scale"], block)
    if scheme == "int8_block_asym":
        return (p["q"] - rep(p["zp"], block)) * rep(p["scale"], block)
    if scheme == "int4_block":
        as_int = p["q"].astype(np.int8)
        codes = np.stack([(as_int << 4) >> 4, as_int >> 4], axis=1).reshape(w.shape)
        return codes * rep(p["scale"], block)
    if scheme.startswith("fp8"):
        dtype = ml_dtypes.float8_e4m3fn if scheme == "fp8_e4m3" else ml_dtypes.float8_e5m2
        return p["q"].view(dtype).astype(np.float32) * p["scale"]
    if scheme == "nvfp4_block":
        codes = np.stack([p["q"] & 15, p["q"] >> 4], axis=1).reshape(w.shape).view(ml_dtypes.float4_e2m1fn)
        scales = rep(p["scale"].view(ml_dtypes.float8_e4m3fn).astype(np.float32), 16)
        return codes.astype(np.float32) * scales * p["zp"]
    import gguf
    from gguf import quants

    rows = p["q"].reshape(w.shape[1], -1)
    if scheme == "gguf_q8_k":  # gguf has no Q8_K reader: llama.cpp's struct, read by numpy
        blocks = rows.reshape(-1).view(np.dtype([("d", "<f4"), ("qs", "i1", 256), ("bsums", "<i2", 16)]))
        return (blocks["d"][:, None] * blocks["qs"]).reshape(w.shape[1], -1).T
    return quants.dequantize(rows, gguf.GGMLQuantizationType[scheme.removeprefix("gguf_").upper()]).T


@pytest.mark.parametrize(("scheme", "block"), SCHEMES)
def test_quantize_weights_computes_with_the_packed_weights(scheme, block):
    """The rewritten function on `pack`'s parameters computes what the original computes on
    the weights they stand for, and stays near the f32 result."""
    from rlx_xdsl.building.builder import GraphBuilder
    from rlx_xdsl.formats.quantpack import pack
    from rlx_xdsl.transforms.quant.quantize_weights import QuantizeWeightsPass

    rng = np.random.default_rng(3)
    b = GraphBuilder("f")
    k = 256 if scheme.endswith("_k") else 64  # the K-quants' super-block
    x, w = b.input("x", [2, 3, k]), b.param("w", [k, 8])
    b.output(b.mir.relu(b.mir.matmul(x, w)))
    module = b.module()
    xs, ws = rng.standard_normal((2, 3, k)).astype(np.float32), rng.standard_normal((k, 8)).astype(np.float32)
    (exact,) = run_function(module, "f", [xs, ws])
    (on_decoded,) = run_function(module, "f", [xs, dequantised(ws, scheme, block).astype(np.float32)])
    QuantizeWeightsPass(scheme=scheme, block_size=block).apply(Context(), module)
    module.verify()
    (got,) = run_function(module, "f", [xs, *pack(ws, scheme, block).values()])
    np.testing.assert_allclose(got, on_decoded, rtol=1e-5, atol=1e-5)
    coarse = 0.3 if scheme in ("gguf_q2_k", "gguf_q3_k") else 0.15  # 2- and 3-bit codes
    assert np.abs(got - exact).max() < coarse * np.abs(exact).max()


TORCH_LINEAR = """
func.func @forward(%w: tensor<8x64xf32> {rlx.name = "0.weight", rlx.param}, %b: tensor<8xf32> {rlx.name = "0.bias", rlx.param}, %x: tensor<2x3x64xf32> {rlx.name = "input"}) -> tensor<2x3x8xf32> {
  %0 = mir.transpose %w perm = [1, 0] : (tensor<8x64xf32>) -> tensor<64x8xf32>
  %1 = mir.matmul %x, %0 : (tensor<2x3x64xf32>, tensor<64x8xf32>) -> tensor<2x3x8xf32>
  %2 = mir.add %1, %b : (tensor<2x3x8xf32>, tensor<8xf32>) -> tensor<2x3x8xf32>
  func.return %2 : tensor<2x3x8xf32>
}
"""


@pytest.mark.parametrize(("scheme", "block"), [("int8_block", 16), ("int4_block", 32), ("gguf_q8_0", None)])
def test_quantize_weights_quantises_a_weight_read_through_a_transpose(scheme, block):
    """A PyTorch nn.Linear imports as `x @ transpose(w[out, in])`: the weight is quantised
    as the `[in, out]` matrix the matmul reads (parameters `pack(w.T)`), the transpose goes,
    and the result is `x @ W + b` for W decoded independently (`dequantised`), near f32."""
    from rlx_xdsl.dialects.mir.shape import TransposeOp
    from rlx_xdsl.formats.quantpack import pack
    from rlx_xdsl.transforms.quant.quantize_weights import QuantizeWeightsPass

    rng = np.random.default_rng(5)
    x, w, b = (rng.standard_normal(s).astype(np.float32) for s in ((2, 3, 64), (8, 64), (8,)))
    module = parse_module(TORCH_LINEAR)
    (exact,) = run_function(module, "forward", [w, b, x])
    QuantizeWeightsPass(scheme=scheme, block_size=block).apply(Context(), module)
    module.verify()
    function = module.ops.first
    assert not any(isinstance(op, TransposeOp) for op in function.body.block.ops)
    packed = pack(w.T.copy(), scheme, block)
    assert argument_names(function) == [f"0.weight.{key}" for key in packed] + ["0.bias", "input"]
    (got,) = run_function(module, "forward", [*packed.values(), b, x])
    np.testing.assert_allclose(got, x @ dequantised(w.T.copy(), scheme, block) + b, rtol=1e-5, atol=1e-5)
    assert np.abs(got - exact).max() < 0.15 * np.abs(exact).max()  # int4: 4-bit codes


def test_quantize_weights_leaves_a_weight_read_both_ways_alone():
    """A weight read directly and through a transpose would need two packings: kept, with a note."""
    from rlx_xdsl.ir.diagnostics import collecting_notes
    from rlx_xdsl.transforms.quant.quantize_weights import QuantizeWeightsPass

    module = parse_module("""
    func.func @f(%x: tensor<2x8xf32>, %w: tensor<8x8xf32> {rlx.param, rlx.name = "w"}) -> (tensor<2x8xf32>, tensor<2x8xf32>) {
      %t = mir.transpose %w perm = [1, 0] : (tensor<8x8xf32>) -> tensor<8x8xf32>
      %0 = mir.matmul %x, %t : (tensor<2x8xf32>, tensor<8x8xf32>) -> tensor<2x8xf32>
      %1 = mir.matmul %x, %w : (tensor<2x8xf32>, tensor<8x8xf32>) -> tensor<2x8xf32>
      func.return %0, %1 : tensor<2x8xf32>, tensor<2x8xf32>
    }""")
    before = str(module)
    with collecting_notes() as notes:
        QuantizeWeightsPass(block_size=8).apply(Context(), module)
    assert str(module) == before
    assert [(n.severity, n.message) for n in notes] == [
        ("note", "'rlx-quantize-weights' quantised nothing: no parameter is a static 2-D weight read only "
                 "as a mir.matmul's rhs (directly or through mir.transpose perm = [1, 0])")
    ]  # fmt: skip


def test_quantize_weights_checks_every_weight_before_changing_anything():
    from rlx_xdsl.transforms.quant.quantize_weights import QuantizeWeightsError, QuantizeWeightsPass

    module = parse_module("""
    func.func @f(%x: tensor<2x8xf32>, %w: tensor<8x64xf32> {rlx.param}, %v: tensor<64x3xf32> {rlx.param}) -> tensor<2x3xf32> {
      %0 = mir.matmul %x, %w : (tensor<2x8xf32>, tensor<8x64xf32>) -> tensor<2x64xf32>
      %1 = mir.matmul %0, %v : (tensor<2x64xf32>, tensor<64x3xf32>) -> tensor<2x3xf32>
      func.return %1 : tensor<2x3xf32>
    }""")
    before = str(module)
    with pytest.raises(QuantizeWeightsError, match="cannot pack 'arg1': K = 8 is not a multiple of gguf_q8_0's block"):
        QuantizeWeightsPass(scheme="gguf_q8_0").apply(Context(), module)
    assert str(module) == before


def test_the_fusion_pipeline_keeps_quantised_matmuls_as_kernels_of_their_own():
    """RLX's is_blas boundary: no elementwise region or epilogue absorbs a dequant_matmul."""
    from rlx_xdsl.dialects.mir.quant import DequantMatmulOp
    from rlx_xdsl.transforms.fusion.pipeline import FusionPipelinePass

    module = parse_module("""
    func.func @f(%x: tensor<2x64xf32>, %p: tensor<204xui8>, %b: tensor<3xf32>) -> tensor<2x3xf32> {
      %0 = mir.dequant_matmul %x, %p scheme = gguf_q8_0 : (tensor<2x64xf32>, tensor<204xui8>) -> tensor<2x3xf32>
      %1 = mir.add %0, %b : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
      %2 = mir.relu %1 : (tensor<2x3xf32>) -> tensor<2x3xf32>
      %3 = mir.exp %2 : (tensor<2x3xf32>) -> tensor<2x3xf32>
      func.return %3 : tensor<2x3xf32>
    }""")
    rng = np.random.default_rng(0)
    packed = rng.integers(0, 256, 204).astype(np.uint8)
    packed.reshape(6, 34)[:, :2] = np.float16([0.1] * 6).view(np.uint8).reshape(6, 2)
    inputs = [rng.standard_normal((2, 64)).astype(np.float32), packed, rng.standard_normal(3).astype(np.float32)]
    (before,) = run_function(module, "f", inputs)
    FusionPipelinePass(target="cpu").apply(Context(), module)
    module.verify()
    top = list(module.ops.first.body.block.ops)
    assert sum(isinstance(op, DequantMatmulOp) for op in top) == 1
    (after,) = run_function(module, "f", inputs)
    np.testing.assert_allclose(after, before, rtol=1e-6)


@pytest.mark.parametrize(("scheme", "block", "k"), [("int4_block", 16, 64), ("gguf_q4_k", None, 256)])
def test_rlx_run_takes_the_packed_parameters_by_name(tmp_path, capsys, scheme, block, k):
    """rlx-opt's output runs under rlx-run with `--input <name>.q=...`: the same values as
    the interpreter gives the packed parameters."""
    from rlx_xdsl.formats.quantpack import pack
    from rlx_xdsl.tools.rlx_run import main
    from rlx_xdsl.transforms.quant.quantize_weights import QuantizeWeightsPass

    module = parse_module("""
    func.func @f(%x: tensor<2xKxf32> {rlx.name = "x"}, %w: tensor<Kx8xf32> {rlx.param, rlx.name = "w"}) -> tensor<2x8xf32> {
      %0 = mir.matmul %x, %w : (tensor<2xKxf32>, tensor<Kx8xf32>) -> tensor<2x8xf32>
      func.return %0 : tensor<2x8xf32>
    }""".replace("K", str(k)))
    QuantizeWeightsPass(scheme=scheme, block_size=block).apply(Context(), module)
    (tmp_path / "q.mlir").write_text(str(module))
    rng = np.random.default_rng(4)
    x, w = rng.standard_normal((2, k)).astype(np.float32), rng.standard_normal((k, 8)).astype(np.float32)
    args = ["--input", f"x={tmp_path / 'x.npy'}"]
    np.save(tmp_path / "x.npy", x)
    packed = pack(w, scheme, block)
    for key, value in packed.items():
        np.save(tmp_path / f"w.{key}.npy", value)
        args += ["--input", f"w.{key}={tmp_path / f'w.{key}.npy'}"]
    assert main([str(tmp_path / "q.mlir"), *args, "--save", str(tmp_path / "out")]) == 0, capsys.readouterr().err
    (expected,) = run_function(module, "f", [x, *packed.values()])
    np.testing.assert_array_equal(np.load(tmp_path / "out" / "out0.npy"), expected)


# --- rlx-decompose-backward on the fake-quantisation kernels -------------------------------


DECOMPOSE_CASES = [
    (ste, mode, axis, dtype)
    for ste in ("identity", "clipped_identity", "hard_tanh", "tanh")
    for mode, axis in (("per_batch", None), ("ema", 1), ("fixed", None), ("fixed", 0))
    for dtype in ("f32", "bf16")
]


@pytest.mark.parametrize(("ste", "mode", "axis", "dtype"), DECOMPOSE_CASES)
def test_decomposed_fake_quantize_backward_is_the_kernel(ste, mode, axis, dtype):
    from rlx_xdsl.building.builder import GraphBuilder
    from rlx_xdsl.dialects.mir.quant import FakeQuantizeBackwardOp
    from rlx_xdsl.transforms.decompose_backward import DecomposeBackwardPass

    rng = np.random.default_rng(len(ste) + len(mode) + (axis or 0))
    np_dtype = {"f32": np.float32, "bf16": ml_dtypes.bfloat16}[dtype]
    b = GraphBuilder("f")
    x, dy = b.input("x", [4, 6], dtype), b.input("dy", [4, 6], dtype)
    channels = None if axis is None else [4, 6][axis]
    state = None if mode == "per_batch" else b.input("s", [channels or 1], dtype)
    decay = 0.75 if mode == "ema" else None
    b.output(b.mir.fake_quantize_backward(x, dy, state, bits=3, axis=axis, ste=ste, scale_mode=mode, decay=decay))
    module = b.module()
    inputs = [(rng.standard_normal((4, 6)) * 2).astype(np_dtype), rng.standard_normal((4, 6)).astype(np_dtype)]
    if state is not None:
        inputs.append(rng.uniform(0.5, 3, channels or 1).astype(np_dtype))
    (before,) = run_function(module, "f", inputs)
    DecomposeBackwardPass().apply(Context(), module)
    module.verify()
    assert not any(isinstance(op, FakeQuantizeBackwardOp) for op in module.walk())
    (after,) = run_function(module, "f", inputs)
    np.testing.assert_array_equal(after, before)


@pytest.mark.parametrize(("axis", "dtype"), [(None, "f32"), (1, "f32"), (0, "bf16")])
def test_decomposed_lsq_backward_x_is_the_kernel(axis, dtype):
    from rlx_xdsl.building.builder import GraphBuilder
    from rlx_xdsl.transforms.decompose_backward import DecomposeBackwardPass

    rng = np.random.default_rng(9)
    np_dtype = {"f32": np.float32, "bf16": ml_dtypes.bfloat16}[dtype]
    channels = 1 if axis is None else [4, 6][axis]
    b = GraphBuilder("f")
    x, scale, dy = b.input("x", [4, 6], dtype), b.input("s", [channels], dtype), b.input("dy", [4, 6], dtype)
    b.output(b.mir.fake_quantize_lsq_backward_x(x, scale, dy, bits=3, axis=axis))
    module = b.module()
    # Values on the grid's clipping edges (v = qmin - 1/2, qmax + 1/2 with s = 0.25) too.
    xs = (rng.standard_normal((4, 6)) * 2).astype(np.float32)
    xs[0, :2] = [-4.5 * 0.25, 3.5 * 0.25]
    inputs = [xs.astype(np_dtype), np.full(channels, 0.25, np_dtype), rng.standard_normal((4, 6)).astype(np_dtype)]
    (before,) = run_function(module, "f", inputs)
    DecomposeBackwardPass().apply(Context(), module)
    module.verify()
    (after,) = run_function(module, "f", inputs)
    np.testing.assert_array_equal(after, before)
    assert before[0, 0] == inputs[2][0, 0] and before[0, 1] == 0  # -4.5 rounds to -4 (in), 3.5 to 4 (out)


def test_pack_file_packs_the_matrices_of_an_npz_file(tmp_path):
    from rlx_xdsl.formats.quantpack import pack, pack_file

    rng = np.random.default_rng(5)
    w, gamma = rng.standard_normal((32, 4)).astype(np.float32), rng.standard_normal(4).astype(np.float32)
    np.savez(tmp_path / "weights.npz", w=w, gamma=gamma)
    packed = pack_file(tmp_path / "weights.npz", "int8_block", 16)
    assert sorted(packed) == ["gamma", "w.q", "w.scale", "w.zp"]
    np.testing.assert_array_equal(packed["gamma"], gamma)
    for key, value in pack(w, "int8_block", 16).items():
        np.testing.assert_array_equal(packed[f"w.{key}"], value)


@pytest.mark.parametrize(("axis", "dtype"), [(None, "f32"), (1, "f32"), (0, "bf16"), (None, "f64")])
def test_decomposed_lsq_backward_scale_is_the_kernel(axis, dtype):
    """Ties of the grid (`v = k + 1/2`, rounded half to even) and its clipping edges included."""
    from rlx_xdsl.building.builder import GraphBuilder
    from rlx_xdsl.dialects.mir.quant import FakeQuantizeLsqBackwardScaleOp
    from rlx_xdsl.transforms.decompose_backward import DecomposeBackwardPass

    rng = np.random.default_rng(11)
    np_dtype = {"f32": np.float32, "bf16": ml_dtypes.bfloat16, "f64": np.float64}[dtype]
    channels = 1 if axis is None else [4, 6][axis]
    b = GraphBuilder("f")
    x, scale, dy = b.input("x", [4, 6], dtype), b.input("s", [channels], dtype), b.input("dy", [4, 6], dtype)
    b.output(b.mir.fake_quantize_lsq_backward_scale(x, scale, dy, bits=3, axis=axis))
    module = b.module()
    xs = (rng.standard_normal((4, 6)) * 2).astype(np.float32)
    xs[:, 0] = np.array([-4.5, 3.5, 2.5, -1.5]) * 0.25  # qmin - 1/2, qmax + 1/2, ties to even
    inputs = [xs.astype(np_dtype), np.full(channels, 0.25, np_dtype), rng.standard_normal((4, 6)).astype(np_dtype)]
    (before,) = run_function(module, "f", inputs)
    DecomposeBackwardPass().apply(Context(), module)
    module.verify()
    assert not any(isinstance(op, FakeQuantizeLsqBackwardScaleOp) for op in module.walk())
    (after,) = run_function(module, "f", inputs)
    np.testing.assert_array_equal(after, before)


@pytest.mark.parametrize("kernel", ["fixed", "ema", "per_batch", "lsq_x", "lsq_scale"])
def test_decomposed_rank0_kernels_keep_their_rank0_results(kernel):
    """A rank-0 x with a `[1]` scale or state: the decomposition's result stays rank 0 (the
    `[1]` operand broadcast it to `tensor<1xf32>`) and computes what the kernel computes."""
    from rlx_xdsl.building.builder import GraphBuilder
    from rlx_xdsl.transforms.decompose_backward import DecomposeBackwardPass

    b = GraphBuilder("f")
    x, s, dy = b.input("x", [], "f32"), b.input("s", [1], "f32"), b.input("dy", [], "f32")
    if kernel == "lsq_x":
        b.output(b.mir.fake_quantize_lsq_backward_x(x, s, dy, bits=2))
    elif kernel == "lsq_scale":
        b.output(b.mir.fake_quantize_lsq_backward_scale(x, s, dy, bits=2))
    else:
        state = None if kernel == "per_batch" else s
        decay = 0.75 if kernel == "ema" else None
        b.output(b.mir.fake_quantize_backward(x, dy, state, bits=4, ste="clipped_identity", scale_mode=kernel,
                                              decay=decay))
    module = b.module()
    for xv in (0.3, 5.0):
        inputs = [np.array(xv, np.float32), np.array([0.5], np.float32), np.array(1.5, np.float32)]
        (before,) = run_function(module, "f", inputs)
        decomposed = module.clone()
        DecomposeBackwardPass().apply(Context(), decomposed)
        decomposed.verify()
        (after,) = run_function(decomposed, "f", inputs)
        assert after.shape == before.shape
        np.testing.assert_array_equal(after, before)
