"""Hand-written idioms (`importers/torch/idioms.py`): RoPE as `rotate_half`, SwiGLU from two
`nn.Linear`s, RMSNorm, as MIR ops and, with `hir=True`, as HIR blocks; checked against
torch's output, by op counts and FileCheck, and by what the fusion report then sees."""

from __future__ import annotations

import subprocess
from pathlib import Path

import numpy as np
import pytest
import torch
from torch import nn
from xdsl.context import Context

from rlx_xdsl.context import parse_module
from rlx_xdsl.conversions.hir_to_mir.lower import LowerHirPass
from rlx_xdsl.importers.torch import import_module, import_program
from rlx_xdsl.ir.graph import argument_name, find_function, is_param
from rlx_xdsl.ir.printer import print_ir
from rlx_xdsl.run import run_function
from rlx_xdsl.tools import import_torch
from rlx_xdsl.transforms.fusion.pipeline import FusionPipelinePass
from rlx_xdsl.transforms.fusion.report import FusionReport

from .models import rotate_half, swiglu_ffn
from .pipeline_support import torch_gradients


def names(module) -> list[str]:
    return [op.name for op in module.walk()]


def arguments(f, weights: dict, x: torch.Tensor) -> list[np.ndarray]:
    """`f`'s arguments in order: each parameter from `weights` by name, `x` for the others."""
    return [weights[argument_name(f, i)] if is_param(f, i) else x.numpy() for i in range(len(f.args))]


def run(module, weights: dict, x: torch.Tensor) -> np.ndarray:
    f = find_function(module)
    (out,) = run_function(module, f.sym_name.data, arguments(f, weights, x))
    return out


def assert_outputs_match_torch(module, model, x: torch.Tensor) -> None:
    """Every result of `@forward` against the model's, with the model's weights."""
    args = arguments(find_function(module), state(model), x)
    with torch.no_grad():
        for got, want in zip(run_function(module, "forward", args), model(x), strict=True):
            np.testing.assert_allclose(got, want.numpy(), rtol=1e-5, atol=1e-5)


def state(model) -> dict:
    return {k: v.detach().numpy() for k, v in [*model.named_parameters(), *model.named_buffers()]}


class Rotary(nn.Module):
    """RoPE on `[B, H, S, D]` with the angles built in forward, as Hugging Face does, and
    three near misses that must stay primitive ops."""

    def __init__(self, head_dim=8, seq=6):
        super().__init__()
        inv = 1.0 / (100 ** (torch.arange(0, head_dim, 2).float() / head_dim))
        self.register_buffer("inv", inv)
        angles = torch.outer(torch.arange(seq).float(), inv)
        self.register_buffer("cos_table", torch.cat((angles, angles), -1).cos())  # values, not provably halves

    def forward(self, x):
        angles = torch.arange(x.shape[2]).float()[:, None] * self.inv
        emb = torch.cat((angles, angles), dim=-1)
        cos, sin = emb.cos()[None, None], emb.sin()[None, None]
        rope = x * cos + rotate_half(x) * sin
        from_buffer = x * self.cos_table + rotate_half(x) * sin
        swapped = x * cos + torch.cat((x[..., 4:], -x[..., :4]), dim=-1) * sin
        other_angles = torch.cat((angles, 2 * angles), dim=-1).cos()
        uneven = x * other_angles + rotate_half(x) * sin
        return rope, from_buffer, swapped, uneven


def test_rotate_half_rope_becomes_mir_rope_only_where_it_is_one():
    torch.manual_seed(1)
    model, x = Rotary(), torch.randn(2, 3, 6, 8)
    module = import_module(model, (x,))
    assert names(module).count("mir.rope") == 1
    assert_outputs_match_torch(module, model, x)


class Ffn(nn.Module):
    """A SwiGLU feed-forward, and a near miss whose up projection reads another input."""

    def __init__(self):
        super().__init__()
        self.gate, self.up, self.down = nn.Linear(8, 12, bias=False), nn.Linear(8, 12, bias=False), nn.Linear(12, 8)

    def forward(self, x):
        y = self.down(nn.functional.silu(self.gate(x)) * self.up(x))
        miss = nn.functional.silu(self.gate(x)) * self.up(x + 1)
        return y, miss


def test_swiglu_from_two_linears_is_what_the_dual_matmul_fusion_takes():
    torch.manual_seed(2)
    model, x = Ffn().eval(), torch.randn(2, 5, 8)
    module = import_module(model, (x,))
    fused = module.clone()
    FusionPipelinePass(target="best").apply(Context(), fused)
    assert names(fused).count("mir.fused_swiglu") == 1
    assert_outputs_match_torch(fused, model, x)


def test_hf_llama_idioms_are_mir_ops_and_fusion_sees_them(zoo_model):
    """One layer: three RMSNorms, RoPE of q and k, one SwiGLU; fused like a hand-written graph."""
    _, module, _, _ = zoo_model("llama")
    ops = names(module)
    assert ops.count("mir.rms_norm") == 3 and ops.count("mir.rope") == 2 and ops.count("mir.silu") == 1
    assert "mir.rsqrt" not in ops and "mir.neg" not in ops
    fused = module.clone()
    FusionPipelinePass(target="best").apply(Context(), fused)
    report = FusionReport.analyze(module, fused).to_json()
    assert report["fused_swiglu"] == 1 and report["missed_swiglu"] == 0
    assert report["fused_residual_rms_norm"] == 2 and report["rope"] == 2


HIR_CHECKS = """
CHECK:      func.func @forward
CHECK:      hir.rms_norm
CHECK-COUNT-2: hir.rope
CHECK:      mir.attention
CHECK:      hir.residual_rms_norm
CHECK:      hir.swiglu
CHECK:      hir.residual_rms_norm
CHECK-NOT:  mir.rsqrt
CHECK-NOT:  mir.silu
"""


@pytest.fixture(scope="module")
def hf_llama_hir(zoo_export):
    model, program, weights, x = zoo_export("llama")
    with torch.no_grad():
        expected = model(x).numpy()
    return import_program(program, hir=True), weights, x, expected


def test_hir_option_gives_hir_blocks(hf_llama_hir, tmp_path):
    module = hf_llama_hir[0]
    checks = tmp_path / "checks.txt"
    checks.write_text(HIR_CHECKS)
    result = subprocess.run(["filecheck", str(checks)], input=print_ir(module), text=True, capture_output=True)
    assert result.returncode == 0, result.stderr


@pytest.mark.parametrize("policy", ["interpret", "fusable", "direct"])
def test_hir_blocks_match_torch_interpreted_and_lowered(hf_llama_hir, policy):
    module, weights, x, expected = hf_llama_hir
    module = module.clone()
    if policy != "interpret":
        LowerHirPass(policy=policy).apply(Context(), module)
        assert not any(name.startswith("hir.") for name in names(module))
    np.testing.assert_allclose(run(module, weights, x), expected, rtol=1e-4, atol=1e-4)


def test_hir_blocks_lowered_directly_are_the_fused_ops(hf_llama_hir):
    module = hf_llama_hir[0].clone()
    LowerHirPass(policy="direct").apply(Context(), module)
    ops = names(module)
    assert ops.count("mir.fused_swiglu") == 1 and ops.count("mir.fused_residual_rms_norm") == 2


def test_the_tool_writes_hir_blocks_with_hir(tmp_path, monkeypatch):
    """`rlx-import-torch --hir`: the residual norm and the SwiGLU as blocks, read back."""
    monkeypatch.syspath_prepend(str(Path(__file__).resolve().parents[2]))
    out = tmp_path / "ffn.mlir"
    argv = ["tests.importers.models:swiglu_ffn", "--example-shapes", "x=2x5x8", "residual=2x5x8", "--hir"]
    assert import_torch.main([*argv, "-o", str(out)]) == 0
    module = parse_module(out.read_text())
    ops = names(module)
    assert ops.count("hir.residual_rms_norm") == 1 and ops.count("hir.swiglu") == 1
    assert "mir.silu" not in ops and "mir.rsqrt" not in ops
    model, x, r = swiglu_ffn().eval(), torch.randn(2, 5, 8), torch.randn(2, 5, 8)
    f = find_function(module)
    inputs = iter([x.numpy(), r.numpy()])
    args = [state(model)[argument_name(f, i)] if is_param(f, i) else next(inputs) for i in range(len(f.args))]
    (got,) = run_function(module, "forward", args)
    with torch.no_grad():
        np.testing.assert_allclose(got, model(x, r).numpy(), rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("policy", ["fusable", "direct"])
def test_gradients_through_the_lowered_hir_blocks_match_torch_autograd(hf_llama_hir, zoo_export, policy):
    from rlx_xdsl.autodiff.grad import GradPass
    from rlx_xdsl.autodiff.prepare import PrepareAdPass
    from rlx_xdsl.context import make_context

    model, _, _, _ = zoo_export("llama")
    module, weights, x, expected = hf_llama_hir
    module = module.clone()
    LowerHirPass(policy=policy).apply(Context(), module)
    trained = dict(model.named_parameters())
    PrepareAdPass().apply(make_context(), module)
    GradPass(func="forward", wrt=tuple(trained)).apply(make_context(), module)
    module.verify()
    args = arguments(find_function(module, "forward"), weights, x)
    cotangent = np.random.default_rng(8).standard_normal(expected.shape).astype(np.float32)
    _, *gradients = run_function(module, "forward_grad", [*args, cotangent])
    torch_grads = torch_gradients(model, x, cotangent)
    for key, got in zip(trained, gradients, strict=True):
        want = torch_grads[key]
        np.testing.assert_allclose(got, want, rtol=2e-4, atol=2e-4 * max(1.0, np.abs(want).max()), err_msg=key)


RMS_FORMS = {
    "x*rsqrt*w": lambda x, r, w: x * torch.rsqrt(r) * w,
    "w*x*rsqrt": lambda x, r, w: w * x * torch.rsqrt(r),
    "w*(x*rsqrt)": lambda x, r, w: w * (x * torch.rsqrt(r)),
    "rsqrt*x*w": lambda x, r, w: torch.rsqrt(r) * x * w,
    "x*(rsqrt*w)": lambda x, r, w: x * (torch.rsqrt(r) * w),
    "x*w*rsqrt": lambda x, r, w: x * w * torch.rsqrt(r),
    "x/sqrt*w": lambda x, r, w: x / torch.sqrt(r) * w,
    "w*(x/sqrt)": lambda x, r, w: w * (x / torch.sqrt(r)),
    "w*x/sqrt": lambda x, r, w: w * x / torch.sqrt(r),
}
"""RMSNorm as people write it: `x`, `w` and `rsqrt(mean(x²) + eps)` in every order and grouping,
or `x / sqrt(mean(x²) + eps)` times `w` (r is `mean(x²) + eps`)."""


class RmsNormForm(nn.Module):
    def __init__(self, form: str, square: str):
        super().__init__()
        self.weight = nn.Parameter(torch.linspace(0.5, 1.5, 8))
        self.form, self.square = RMS_FORMS[form], square

    def forward(self, x):
        squared = x.pow(2) if self.square == "pow" else x * x
        return (self.form(x, squared.mean(-1, keepdim=True) + 1e-6, self.weight),)


@pytest.mark.parametrize("form", RMS_FORMS)
def test_every_written_rms_norm_form_is_one_mir_rms_norm_matching_torch(form):
    model = RmsNormForm(form, "pow" if list(RMS_FORMS).index(form) % 2 else "mul")
    x = torch.randn(2, 3, 8, generator=torch.Generator().manual_seed(0))
    module = import_module(model, (x,))
    ops = [name for name in names(module) if name.startswith("mir.")]
    assert ops.count("mir.rms_norm") == 1
    assert not {"mir.rsqrt", "mir.sqrt", "mir.div", "mir.mul", "mir.reduce", "mir.pow"} & set(ops), ops
    assert_outputs_match_torch(module, model, x)


@pytest.mark.parametrize(
    "form",
    [
        lambda x, r, w: x / torch.rsqrt(r) * w,  # divides by the rsqrt
        lambda x, r, w: x * torch.sqrt(r) * w,  # multiplies by the sqrt
        lambda x, r, w: w / x * torch.rsqrt(r),  # x in the denominator
    ],
)
def test_near_misses_of_rms_norm_stay_primitives(form):
    model = RmsNormForm("x*rsqrt*w", "pow")
    model.form = form
    x = torch.randn(2, 3, 8, generator=torch.Generator().manual_seed(0))
    module = import_module(model, (x,))
    assert "mir.rms_norm" not in names(module)
    assert_outputs_match_torch(module, model, x)
