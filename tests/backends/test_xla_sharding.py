"""Sharded (SPMD) runs of the XLA backend over the 4 host devices of `tests/conftest.py`:
the attributes' checks, data-parallel training and tensor-parallel inference of the LLaMA
graph, each equal to the single-device interpreter, with XLA's collectives in the program. `RLX_XLA_DEVICE=gpu` runs them on GPUs
(a mesh needs as many as it has devices)."""

from __future__ import annotations

import os

import numpy as np
import pytest

jax = pytest.importorskip("jax")

from rlx_xdsl.autodiff.grad import build_gradient  # noqa: E402
from rlx_xdsl.autodiff.prepare import prepare_for_ad  # noqa: E402
from rlx_xdsl.backends.xla import DeviceUnavailable, XlaModule, read_layout  # noqa: E402
from rlx_xdsl.context import make_context, parse_module  # noqa: E402
from rlx_xdsl.ir.diagnostics import OpError  # noqa: E402
from rlx_xdsl.ir.graph import find_function, graph_args, random_inputs  # noqa: E402
from rlx_xdsl.ir.sharding import annotate  # noqa: E402
from rlx_xdsl.run import run_function  # noqa: E402
from rlx_xdsl.testing.llama import build_llama, rope_tables  # noqa: E402
from rlx_xdsl.testing.training import build_llama_loss  # noqa: E402

DIMS = {"seq": 4, "dim": 16, "n_heads": 4, "n_kv_heads": 2, "ffn": 32}
HEAD_DIM = DIMS["dim"] // DIMS["n_heads"]
TOL = 1e-4
DEVICE = os.environ.get("RLX_XLA_DEVICE", "cpu")


def test_there_are_four_host_devices():
    assert len(jax.devices("cpu")) == 4  # tests/conftest.py's XLA_FLAGS reached jax


def needs_devices(n: int) -> None:
    """On CPU there are always four; a GPU machine may have fewer."""
    if len(jax.devices(DEVICE)) < n:
        pytest.skip(f"needs {n} {DEVICE} devices")


def inputs_for(f, seed=0):
    """Random arguments with real RoPE tables and norm gains near one."""
    inputs = random_inputs(f, seed)
    for i, arg in enumerate(graph_args(f)):
        if arg.name in ("cos", "sin"):
            inputs[i] = rope_tables(DIMS["seq"], HEAD_DIM)[arg.name == "sin"]
        elif arg.name.endswith("gamma"):
            inputs[i] = (1.0 + 0.1 * inputs[i]).astype(np.float32)
        elif arg.is_param:
            inputs[i] = (0.3 * inputs[i]).astype(np.float32)
    return inputs


def run_sharded(module, f, inputs):
    """`f` compiled over the mesh, parameters bound (placed by their shardings), inputs passed."""
    compiled = XlaModule(module, device=DEVICE, function=f.sym_name.data)
    args = graph_args(f)
    compiled.bind({a.name: x for a, x in zip(args, inputs) if a.is_param})
    outputs = compiled(*[x for a, x in zip(args, inputs) if not a.is_param])
    return compiled, outputs


@pytest.fixture(scope="module")
def training():
    """The LLaMA training graph (`@llama_grad`), its inputs and the interpreter's gradients."""
    module = build_llama_loss(1, batch=4, vocab=8, **DIMS)
    prepare_for_ad(module)
    build_gradient(module, "llama")
    # The backward kernels as primitives (the JAX translation covers these today).
    from rlx_xdsl.transforms.decompose_backward import DecomposeBackwardPass
    from rlx_xdsl.transforms.lower_sce import LowerSoftmaxCrossEntropyPass

    LowerSoftmaxCrossEntropyPass().apply(make_context(), module)
    DecomposeBackwardPass().apply(make_context(), module)
    inputs = inputs_for(find_function(module, "llama_grad"))
    return module, inputs, run_function(module, "llama_grad", inputs)


@pytest.mark.parametrize("devices", [2, 4])
def test_data_parallel_training_gives_the_single_device_gradients(training, devices):
    """The batch split over `data`, every weight replicated: XLA all-reduces the gradients."""
    needs_devices(devices)
    module, inputs, expected = training
    module = module.clone()
    f = find_function(module, "llama_grad")
    annotate(module, f, {"data": devices}, {"x": ["data", None, None]})
    compiled, outputs = run_sharded(module, f, inputs)
    assert "all-reduce" in compiled.compiled_text()
    assert len(compiled.device) == devices
    assert len(outputs) == len(expected) == 1 + sum(a.is_param for a in graph_args(f))
    for got, want in zip(outputs, expected, strict=True):
        scale = np.abs(want).max()
        assert scale > 1e-5, "a vanishing gradient would prove nothing"
        np.testing.assert_allclose(np.asarray(got), want, rtol=TOL, atol=TOL * scale)  # small gradients too


def test_tensor_parallel_inference_gives_the_single_device_result():
    """Megatron-style over a 2x2 mesh: the batch over `data`; the q/k/v projections (attention
    heads) and the FFN's gate/up columns over `model`, wo and w_down by rows."""
    needs_devices(4)
    module = build_llama(1, batch=2, **DIMS)
    f = find_function(module)
    columns, rows = [None, "model"], ["model", None]
    split = {f"layers.0.{w}": columns for w in ("wq", "wk", "wv", "w_gate", "w_up")}
    split |= {"layers.0.wo": rows, "layers.0.w_down": rows, "x": ["data", None, None]}
    annotate(module, f, {"data": 2, "model": 2}, split)
    inputs = inputs_for(f, seed=1)
    compiled, (got,) = run_sharded(module, f, inputs)
    wq = compiled._bound[next(a.index for a in graph_args(f) if a.name == "layers.0.wq")]
    assert {s.data.shape for s in wq.addressable_shards} == {(16, 8)}  # each device holds half the heads
    assert "all-reduce" in compiled.compiled_text()
    (want,) = run_function(module, None, inputs)
    np.testing.assert_allclose(np.asarray(got), want, rtol=TOL, atol=TOL)


# The attributes' checks -----------------------------------------------------------------


def graph(mesh: str, sharding: str, shape: str = "4x2x6") -> str:
    return (
        f"builtin.module attributes {{rlx.mesh = {mesh}}} {{\n"
        f'  func.func @f(%x: tensor<{shape}xf32> {{rlx.name = "x", rlx.sharding = {sharding}}}) -> tensor<{shape}xf32> {{\n'
        f"    %y = mir.relu %x : (tensor<{shape}xf32>) -> tensor<{shape}xf32>\n"
        f"    func.return %y : tensor<{shape}xf32>\n  }}\n}}\n"
    )


def layout(text: str):
    module = parse_module(text)
    return read_layout(module, find_function(module))


def test_a_valid_layout_is_read():
    got = layout(graph("{data = 2, model = 2}", '["data", unit, "model"]'))
    assert got.mesh == {"data": 2, "model": 2} and got.devices == 4
    assert got.args == ((("data",), (), ("model",)),)
    both = layout(graph("{data = 2, model = 2}", '[["data", "model"], [], unit]'))
    assert both.args == ((("data", "model"), (), ()),)


@pytest.mark.parametrize(
    ("mesh", "sharding", "message"),
    [
        ("{data = 2}", '["data", unit, "model"]', r"names axis 'model', which is not in the mesh \(axes: 'data'\)"),
        ("{data = 2}", '["data", unit]', r"has 2 entries, but its type tensor<4x2x6xf32> has rank 3"),
        ("{data = 4}", '[unit, "data", unit]', r"splits dimension 1 of size 2 over 'data' \(4 devices\), which does not divide it"),
        ("{data = 2}", '["data", "data", unit]', "uses mesh axis 'data' more than once"),
        ("{data = 0}", '["data", unit, unit]', "axis 'data' must have a positive integer size"),
        ("{data = 2}", '["data", 3, unit]', "an entry must be an axis name, unit or a list of axis names"),
    ],
)  # fmt: skip
def test_bad_layouts_are_errors_at_the_function(mesh, sharding, message):
    with pytest.raises(OpError, match=message):
        layout(graph(mesh, sharding))


def test_a_sharding_needs_a_mesh():
    text = graph("{data = 2}", '["data", unit, unit]').replace("attributes {rlx.mesh = {data = 2}} ", "")
    with pytest.raises(OpError, match="has 'rlx.sharding' but the module has no 'rlx.mesh'"):
        layout(text)


def test_a_mesh_larger_than_the_machine_is_a_run_time_error():
    module = parse_module(graph("{data = 8}", '["data", unit, unit]', shape="8x2x6"))
    with pytest.raises(DeviceUnavailable, match=r"the mesh data=8 needs 8 cpu devices, but JAX sees 4"):
        XlaModule(module, device="cpu")
