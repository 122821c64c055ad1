"""The XLA backend on CPU: StableHLO export (run by XLA itself and by IREE) and `XlaModule`,
every result checked against the numpy interpreter.

Compiles cost seconds on a small machine, so graphs are tiny and each is compiled once
per module (module-scoped fixtures). `RLX_XLA_DEVICE=gpu` runs the same tests on a GPU
(the f32 results must then match the interpreter as closely as on the CPU: no TF32).
"""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pytest

jax = pytest.importorskip("jax")

from xdsl.dialects.builtin import TensorType, f64  # noqa: E402

from rlx_xdsl.backends.iree import lower_hir  # noqa: E402
from rlx_xdsl.backends.xla import DeviceUnavailable, XlaModule, to_stablehlo  # noqa: E402
from rlx_xdsl.building.builder import GraphBuilder  # noqa: E402
from rlx_xdsl.context import parse_module  # noqa: E402
from rlx_xdsl.ir.diagnostics import OpError  # noqa: E402
from rlx_xdsl.ir.graph import find_function, graph_args, random_inputs  # noqa: E402
from rlx_xdsl.run import run_function  # noqa: E402
from rlx_xdsl.testing.llama import build_llama, rope_tables  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
MLP = ROOT / "examples" / "mlp.mlir"
TOL = 2e-5
DEVICE = os.environ.get("RLX_XLA_DEVICE", "cpu")


def close(got, want, tol=TOL):
    for g, w in zip(got, want, strict=True):
        np.testing.assert_allclose(np.asarray(g), w, rtol=tol, atol=tol)


@pytest.fixture(scope="module")
def mlp():
    module = parse_module(MLP.read_text())
    inputs = random_inputs(find_function(module))
    return module, inputs, run_function(module, None, inputs)


@pytest.fixture(scope="module")
def mlp_text(mlp):
    return to_stablehlo(mlp[0])


# Export ---------------------------------------------------------------------------


def test_the_export_is_a_stablehlo_module_at_full_f32_precision(mlp_text):
    assert "module @jit_mlp" in mlp_text
    assert "func.func public @main(" in mlp_text
    dots = [line for line in mlp_text.splitlines() if "stablehlo.dot_general" in line]
    assert len(dots) == 2
    assert all("precision = [HIGHEST, HIGHEST]" in line for line in dots)


def test_tf32_is_asked_for_in_the_text(mlp):
    text = to_stablehlo(mlp[0], tf32=True)
    dots = [line for line in text.splitlines() if "stablehlo.dot_general" in line]
    assert len(dots) == 2 and all("precision = [HIGH, HIGH]" in line for line in dots)  # JAX's "tensorfloat32"


def test_bf16_products_leave_the_precision_to_the_dtype():
    """f16/bf16 dots and attention products say `DEFAULT` (f32 ones stay `HIGHEST`): at
    `highest` XLA's GPU compiler widens bf16 operands to f32 and makes a matrix-vector product
    an f32 reduction; the results are the interpreter's either way."""
    b = GraphBuilder("f")
    x, w = b.input("x", [1, 1, 64], "bf16"), b.input("w", [64, 32], "bf16")
    q, k = b.input("q", [1, 4, 1, 8], "bf16"), b.input("k", [1, 2, 16, 8], "bf16")
    y, a = b.matmul(x, w), b.attention(q, k, k, num_heads=4, head_dim=8)
    b.output(y, a, b.matmul(b.cast(x, "f32"), b.cast(w, "f32")))
    module = b.module()
    products = [line for line in to_stablehlo(module).splitlines() if "dot_general" in line]
    precisions = sorted(line.split("precision = ")[1].split("]")[0] + "]" for line in products)
    assert precisions == ["[DEFAULT, DEFAULT]"] * 3 + ["[HIGHEST, HIGHEST]"]
    inputs = random_inputs(find_function(module))
    close(XlaModule(module, device=DEVICE)(*inputs), run_function(module, None, inputs), tol=1e-2)


@pytest.fixture(scope="module", params=["mlp", "llama"])
def exported(request, mlp, mlp_text):
    """(module name, inputs, the interpreter's outputs, StableHLO text) of the MLP and of a
    LLaMA layer (attention, RoPE, RMSNorm, GQA by narrow/concat)."""
    if request.param == "mlp":
        return "jit_mlp", mlp[1], mlp[2], mlp_text
    module = _llama()
    inputs = random_inputs(find_function(module))
    inputs[1:3] = rope_tables(4, 8)
    return "jit_llama", inputs, run_function(module, None, inputs), to_stablehlo(module)


def test_every_product_is_at_full_f32_precision(exported):
    """Attention's products too: XLA would otherwise run f32 dots in TF32 on NVIDIA GPUs."""
    products = [line for line in exported[3].splitlines() if "dot_general" in line or "convolution" in line]
    assert products and all("precision = [HIGHEST, HIGHEST]" in line for line in products)


def test_xla_compiles_and_runs_the_exported_text(exported):
    """The text itself, not a re-trace, compiled by XLA's client."""
    import jax.extend
    from jax._src.lib import xla_client

    _, inputs, expected, text = exported
    backend = jax.extend.backend.get_backend(DEVICE)
    device = backend.local_devices()[0]
    executable = backend.compile_and_load(text, xla_client.DeviceList((device,)), xla_client.CompileOptions())
    outputs = executable.execute([jax.device_put(x, device) for x in inputs])
    close(outputs, expected, tol=1e-4)


def test_iree_compiles_and_runs_the_exported_text(exported):
    compiler = pytest.importorskip("iree.compiler")
    runtime = pytest.importorskip("iree.runtime")
    name, inputs, expected, text = exported
    vmfb = compiler.compile_str(
        text,
        input_type="stablehlo",
        extra_args=[
            "--iree-hal-target-device=local",
            "--iree-hal-local-target-device-backends=llvm-cpu",
            "--iree-llvmcpu-target-cpu=host",
        ],
    )
    context = runtime.SystemContext(config=runtime.Config("local-task"))
    context.add_vm_module(runtime.VmModule.copy_buffer(context.instance, vmfb))
    result = context.modules[name]["main"](*inputs)
    close([result.to_host()], expected, tol=1e-4)


def test_an_op_without_a_translation_is_an_error_at_the_op():
    from rlx_xdsl.conversions.mir_to_jax import JAX_OPS
    from rlx_xdsl.dialects.mir.elementwise import TanhOp

    module = parse_module(
        'func.func @f(%x: tensor<2xf32>) -> tensor<2xf32> {\n'
        "  %y = mir.tanh %x : (tensor<2xf32>) -> tensor<2xf32>\n"
        "  func.return %y : tensor<2xf32>\n}\n"
    )
    formula = JAX_OPS.remove(TanhOp)
    try:
        with pytest.raises(OpError, match=r"'mir.tanh' cannot be exported to StableHLO") as error:
            to_stablehlo(module)
    finally:
        JAX_OPS.add(TanhOp, formula)
    assert isinstance(error.value.op, TanhOp)


def test_random_bits_are_identical_but_f64_normals_only_within_ulps():
    """README: Philox bits (and uniforms) match the interpreter exactly; `rng_normal` goes
    through log and cos, whose results differ by ulps between XLA's and numpy's libraries."""
    b = GraphBuilder("f")
    t = TensorType(f64, [4096])
    b.output(b.rng_uniform(t, seed=2, low=0.0, high=1.0), b.rng_normal(t, seed=2, mean=0.0, std=1.0))
    module = b.module()
    (uniform, normal), (xla_uniform, xla_normal) = run_function(module, "f", []), run_function(module, "f", [], backend="xla", device=DEVICE)
    np.testing.assert_array_equal(xla_uniform, uniform)
    assert not np.array_equal(xla_normal, normal)
    np.testing.assert_allclose(xla_normal, normal, rtol=0, atol=1e-13)


def test_an_hir_op_is_lowered_before_export_and_xla_module_asks_for_rlx_lower_hir():
    module = parse_module((ROOT / "examples" / "llama_hir.mlir").read_text())
    lowered = module.clone()
    lower_hir(lowered)
    assert to_stablehlo(module) == to_stablehlo(lowered)
    with pytest.raises(OpError, match="is an HIR op: run rlx-lower-hir first"):
        XlaModule(module, "cpu")


def test_a_dynamic_argument_is_an_error():
    module = parse_module(
        'func.func @f(%x: tensor<?x2xf32> {rlx.name = "x"}) -> tensor<?x2xf32> {\n'
        "  %y = mir.abs %x : (tensor<?x2xf32>) -> tensor<?x2xf32>\n"
        "  func.return %y : tensor<?x2xf32>\n}\n"
    )
    with pytest.raises(OpError, match=r"argument #0 \('x'\) of @f has dynamic type .*rlx-specialize"):
        to_stablehlo(module)


# XlaModule --------------------------------------------------------------------------


@pytest.fixture(scope="module")
def compiled_mlp(mlp):
    compiled = XlaModule(mlp[0], device=DEVICE)
    names = [a.name for a in graph_args(compiled.function)]
    compiled.bind(dict(zip(names[1:], mlp[1][1:])))
    return compiled


def test_bound_parameters_stay_on_the_device(mlp, compiled_mlp):
    _, inputs, expected = mlp
    assert compiled_mlp.unbound == ["x"]
    resident = dict(compiled_mlp._bound)
    assert all(isinstance(a, jax.Array) and a.devices() == {compiled_mlp.device} for a in resident.values())
    outputs = compiled_mlp(inputs[0])
    assert isinstance(outputs, tuple) and isinstance(outputs[0], jax.Array)
    close(outputs, expected)
    close(compiled_mlp(x=jax.device_put(inputs[0])), expected)  # device arrays in, by name
    assert all(compiled_mlp._bound[i] is a for i, a in resident.items())  # not copied again


def test_run_function_with_the_xla_backend(mlp):
    module, inputs, expected = mlp
    close(run_function(module, None, inputs, backend="xla", device=DEVICE), expected)


def test_rebinding_a_parameter_changes_the_result(mlp, compiled_mlp):
    module, inputs, expected = mlp
    changed = [inputs[0], inputs[1], inputs[2], inputs[3], inputs[4] + 1.0]
    compiled_mlp.bind({"fc2.bias": changed[4]})
    try:
        close(compiled_mlp(inputs[0]), run_function(module, None, changed))
    finally:
        compiled_mlp.bind({"fc2.bias": inputs[4]})


def test_wrong_arguments_are_clear_errors(mlp, compiled_mlp):
    inputs = mlp[1]
    with pytest.raises(KeyError, match="no argument named 'nope'"):
        compiled_mlp.bind({"nope": inputs[1]})
    with pytest.raises(ValueError, match=r"argument 'x' of @mlp has type tensor<4x16xf32>, got .* float64"):
        compiled_mlp(inputs[0].astype(np.float64))
    with pytest.raises(TypeError, match="misses the arguments 'x'"):
        compiled_mlp()


def cache_step():
    """`@step(w, cache [6, 2], new [1, 2], pos) -> (cache with row pos = new * w, sum of the cache)`."""
    b = GraphBuilder("step")
    w = b.param("w", [1, 2])
    cache, new, pos = b.input("cache", [6, 2]), b.input("new", [1, 2]), b.input("pos", [], "i32")
    written = b.dynamic_update_slice(cache, b.mul(new, w), pos, b.constant(0, "i32"))
    b.output(written, b.reduce(written, kind="sum", axes=[0, 1]))
    return b.module()


def test_a_donated_cache_is_updated_in_place_with_the_same_results():
    module = cache_step()
    rng = np.random.default_rng(0)
    w, cache, new = (rng.standard_normal(s).astype(np.float32) for s in ((1, 2), (6, 2), (1, 2)))
    donating = XlaModule(module, DEVICE, donate=["cache"])
    donating.bind({"w": w})
    state = jax.device_put(cache)
    for pos in (3, 9):  # 9 is clamped to the last row, 5
        expected = run_function(module, "step", [w, np.asarray(state), new, np.int32(pos)])
        given = state
        state, total = donating(state, new, np.int32(pos))
        assert given.is_deleted()  # its buffer went to the result
        close([state, total], expected)
    with pytest.raises(ValueError, match="@step: 'cache' is donated: pass it at every call, it cannot be bound"):
        donating.bind({"cache": cache})
    with pytest.raises(KeyError, match="no argument named 'kv'"):
        XlaModule(module, DEVICE, donate=["kv"])


def test_gpu_without_a_gpu_says_what_is_missing(mlp):
    try:
        jax.devices("gpu")
    except RuntimeError:
        pass
    else:
        pytest.skip("this machine has a GPU")
    with pytest.raises(DeviceUnavailable, match=r"device 'gpu' needs an NVIDIA GPU .*jax\[cuda12\]"):
        XlaModule(mlp[0], device="gpu")


def _conv_net():
    b = GraphBuilder("conv")
    x = b.input("x", [2, 1, 6, 6])
    w = b.param("w", [3, 1, 3, 3])
    h = b.relu(b.conv(x, w, kernel_size=[3, 3], padding=[1, 1]))
    b.output(b.pool(h, kind="max", kernel_size=[2, 2]))
    return b.module()


def _if_while():
    b = GraphBuilder("flow")
    x, w = b.input("x", [2, 3]), b.param("w", [3, 3])
    total = b.reduce(x, kind="sum", axes=[0, 1], keep_dim=True)
    positive = b.compare(total, b.constant(np.zeros((1, 1)), "f32"), "gt")
    h = b.if_(positive, [x, w], lambda rb, x, w: rb.tanh(rb.matmul(x, w)), lambda rb, x, w: rb.sin(x))
    h, _ = b.while_(
        [h, b.constant(np.zeros(1), "f32")],
        lambda rb, h, i: rb.compare(i, rb.constant(np.full(1, 2.0), "f32"), "lt"),
        lambda rb, h, i: (rb.add(rb.tanh(h), h), rb.add(i, rb.constant(np.ones(1), "f32"))),
        max_iterations=3,
    )
    b.output(h)
    return b.module()


def _llama():
    return build_llama(1, batch=1, seq=4, dim=16, n_heads=2, n_kv_heads=1, ffn=24)


@pytest.mark.parametrize("build", [_conv_net, _if_while, _llama], ids=["conv", "if-while", "llama"])
def test_graphs_match_the_interpreter(build):
    module = build()
    f = find_function(module)
    inputs = random_inputs(f, seed=3)
    if f.sym_name.data == "llama":
        inputs[1:3] = rope_tables(4, 8)
    compiled = XlaModule(module, device=DEVICE)
    close(compiled(*inputs), run_function(module, None, inputs), tol=1e-4)


def test_dynamic_dims_are_specialized_per_call():
    """`examples/ffn_dynamic.mlir` (x: ?x?x32) compiled for each new shape of x, each result
    the interpreter's; the parameters are bound once for both."""
    module = parse_module((ROOT / "examples" / "ffn_dynamic.mlir").read_text())
    compiled = XlaModule(module, device=DEVICE)
    with pytest.raises(RuntimeError, match="has dynamic dims and is compiled at its first call"):
        compiled.stablehlo()
    rng = np.random.default_rng(0)
    params = {a.name: (0.3 * rng.standard_normal(a.type.get_shape())).astype(np.float32) for a in compiled.args[1:]}
    compiled.bind(params)
    for shape in [(2, 3, 32), (1, 5, 32)]:
        x = rng.standard_normal(shape).astype(np.float32)
        close(compiled(x), run_function(module, None, [x, *params.values()]), tol=1e-4)
        assert f"tensor<{shape[0]}x{shape[1]}x32xf32>" in compiled.stablehlo()
    assert len(compiled._executables) == 2


def test_cudnn_flash_attention_is_chosen_only_where_it_computes_the_op():
    """On NVIDIA GPUs the attention formula calls cuDNN's fused kernel where it computes exactly
    the op (f16/bf16, no mask operand or soft-cap, causal over Sq == Sk or no mask, head dim
    <= 128 and a multiple of 8); everything else keeps the reference formula."""
    import jax.numpy as jnp

    from rlx_xdsl.conversions.mir_to_jax.attention import flash_applies
    from rlx_xdsl.dialects.mir.attention import AttentionOp, MaskKind

    def case(kind=MaskKind.CAUSAL, dtype=jnp.bfloat16, sq=16, sk=16, d=64, heads=8, kv=2, softcap=None):
        q, k = jnp.zeros((1, heads, sq, d), dtype), jnp.zeros((1, kv, sk, d), dtype)
        text = f"tensor<1x{heads}x{sq}x{d}xbf16>"
        kv_type = f"tensor<1x{kv}x{sk}x{d}xbf16>"
        cap = "" if softcap is None else f" attn_logit_softcap = {softcap}"
        mask = {MaskKind.CAUSAL: "causal", MaskKind.NONE: "none", MaskKind.SLIDING_WINDOW: "sliding_window window = 4"}[kind]
        heads_and_dim = f"num_heads = {heads} head_dim = {d}"
        module = parse_module(
            f"func.func @f(%q: {text}, %k: {kv_type}, %v: {kv_type}) -> {text} {{\n"
            f"  %o = mir.attention %q, %k, %v {heads_and_dim} mask_kind = {mask}{cap} : ({text}, {kv_type}, {kv_type}) -> {text}\n"
            f"  func.return %o : {text}\n}}"
        )
        op = next(o for o in module.walk() if isinstance(o, AttentionOp))
        return flash_applies(op, q, k, k, None)

    assert case() and case(kind=MaskKind.NONE) and case(kind=MaskKind.NONE, sq=4)
    assert not case(dtype=jnp.float32)  # f32 keeps full precision
    assert not case(sq=4)  # causal with Sq != Sk: cuDNN aligns the mask the other way
    assert not case(kind=MaskKind.SLIDING_WINDOW)
    assert not case(d=160) and not case(d=60)
    assert not case(softcap=30.0)
