"""Imported torch models through the compiler: fusion, AMP, memory planning, gradients
(against torch autograd) and the linalg lowering run on IREE CPU (against torch)."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from xdsl.context import Context

from rlx_xdsl.conversions.mir_to_linalg import ConvertMirToLinalgPass
from rlx_xdsl.conversions.mir_to_lir.plan_memory import PlanMemoryPass
from rlx_xdsl.dialects.lir import plan_of
from rlx_xdsl.ir.graph import argument_name, find_function, is_param
from rlx_xdsl.transforms.amp.mixed_precision import AutoMixedPrecisionPass
from rlx_xdsl.transforms.fusion.pipeline import FusionPipelinePass
from rlx_xdsl.transforms.specialize import SpecializeShapesPass

from .pipeline_support import compute, rlx_gradients, torch_gradients, transformed

MODELS = ["mlp", "convnet", "llama"]
EXAMPLES = {"mlp": (2, 6), "convnet": (2, 3, 8, 8), "llama": (2, 8, 16)}


def arguments(model, module, x: torch.Tensor) -> list[np.ndarray]:
    """The function's arguments: the model's weights by `rlx.name`, then `x`."""
    table = {k: v.detach().numpy() for k, v in [*model.named_parameters(), *model.named_buffers()]}
    f = find_function(module)
    return [table[argument_name(f, i)] if is_param(f, i) else x.numpy() for i in range(len(f.args))]


@pytest.fixture(scope="module", params=MODELS)
def case(request):
    """(model, static module, arguments in order, torch input, torch output) per model."""
    model, module = request.getfixturevalue(request.param)
    shape = EXAMPLES[request.param]
    module = module.clone()
    SpecializeShapesPass(shapes=("x=" + "x".join(map(str, shape)),)).apply(Context(), module)
    torch.manual_seed(5)
    x = torch.randn(*shape)
    args = arguments(model, module, x)
    with torch.no_grad():
        expected = model(x).numpy()
    return model, module, args, x, expected


def test_the_interpreter_matches_torch(case):
    _, module, args, _, expected = case
    np.testing.assert_allclose(compute(module, args), expected, rtol=1e-5, atol=1e-4)


def test_fusion_pipeline_for_the_best_target_keeps_the_output(case):
    _, module, args, _, expected = case
    fused = transformed(module, FusionPipelinePass(target="best"))
    np.testing.assert_allclose(compute(fused, args), expected, rtol=1e-5, atol=1e-4)


def test_amp_keeps_the_output_within_half_precision(case):
    """auto-mixed (f16 compute): max |amp - f32| within 1e-2 of max |f32|."""
    _, module, args, _, expected = case
    amp = transformed(module, AutoMixedPrecisionPass(policy="auto-mixed"))
    assert any(op.name == "mir.cast" for op in amp.walk())
    got = compute(amp, args)
    assert got.dtype == np.float32
    assert np.max(np.abs(got - expected)) <= 1e-2 * np.max(np.abs(expected))


def test_plan_memory_runs_on_one_arena_with_the_same_output(case):
    _, module, args, _, expected = case
    planned = transformed(module, PlanMemoryPass())
    assert plan_of(find_function(planned)) is not None
    np.testing.assert_allclose(compute(planned, args), expected, rtol=1e-5, atol=1e-4)


def test_parameter_gradients_match_torch_autograd(case):
    """The gradient of sum(c * model(x)) for a random c, seeded through `d_output`,
    against `param.grad` after torch's backward of the same loss."""
    model, module, args, x, expected = case
    names = [name for name, _ in model.named_parameters()]
    cotangent = np.random.default_rng(6).standard_normal(expected.shape).astype(np.float32)
    out, *gradients = rlx_gradients(module, names, args, cotangent)
    np.testing.assert_allclose(out, expected, rtol=1e-5, atol=1e-4)

    torch_grads = torch_gradients(model, x, cotangent)
    assert len(gradients) == len(names)
    for key, got in zip(names, gradients, strict=True):
        want = torch_grads[key]
        np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4 * max(1.0, np.abs(want).max()), err_msg=key)


def test_linalg_lowering_runs_on_iree_cpu(case):
    _, module, args, _, expected = case
    lowered = transformed(module, ConvertMirToLinalgPass())
    assert not any(op.name.startswith("mir.") for op in lowered.walk())
    np.testing.assert_allclose(compute(module, args, backend="iree"), expected, rtol=1e-4, atol=1e-4)


def test_a_dynamic_batch_runs_on_iree_cpu(mlp):
    """The MLP imported with `batch` dynamic, not specialised: IREE takes any batch."""
    model, module = mlp
    x = torch.randn(5, 6)
    args = arguments(model, module, x)
    with torch.no_grad():
        expected = model(x).numpy()
    np.testing.assert_allclose(compute(module, args, backend="iree"), expected, rtol=1e-4, atol=1e-5)
