"""The PyTorch importer: models exported with torch.export, imported, and run by the
interpreter against PyTorch's own output (the independent oracle)."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import numpy as np
import pytest
import torch
from xdsl.context import Context
from xdsl.dialects.builtin import FileLineColLoc

from rlx_xdsl.context import parse_module
from rlx_xdsl.dialects.mir.attention import AttentionOp
from rlx_xdsl.importers.errors import ImportFailure
from rlx_xdsl.importers.torch import import_module, supported_ops
from rlx_xdsl.importers.torch.translator import source_name
from rlx_xdsl.ir.graph import argument_name, find_function, is_param
from rlx_xdsl.ir.printer import print_ir
from rlx_xdsl.run import run_function
from rlx_xdsl.shapes import DYNAMIC
from rlx_xdsl.tools import import_torch
from rlx_xdsl.transforms.fusion.pipeline import FusionPipelinePass

from .models import MLP, Zoo, Zoo2

MODELS_FILE = "models.py"
ROOT = Path(__file__).resolve().parents[2]


def weights(model: torch.nn.Module) -> dict[str, np.ndarray]:
    """The model's parameters and buffers by name, read from the model itself."""
    return {k: v.detach().numpy() for k, v in [*model.named_parameters(), *model.named_buffers()]}


def run(module, model, *inputs: torch.Tensor) -> list[np.ndarray]:
    """Run the imported function: parameters by `rlx.name`, inputs in order."""
    f = find_function(module)
    table, pending = weights(model), [t.numpy() for t in inputs]
    args = [table[argument_name(f, i)] if is_param(f, i) else pending.pop(0) for i in range(len(f.args))]
    return run_function(module, None, args)


def expect_same(module, model, *inputs, atol=1e-5):
    with torch.no_grad():
        expected = model(*inputs)
    expected = expected if isinstance(expected, tuple) else (expected,)
    got = run(module, model, *inputs)
    assert len(got) == len(expected)
    for g, e in zip(got, expected):
        np.testing.assert_allclose(g, e.numpy(), rtol=1e-5, atol=atol)


def test_mlp_matches_torch_at_several_batch_sizes(mlp):
    model, module = mlp
    for batch in (1, 5):
        expect_same(module, model, torch.randn(batch, 6))


def test_dynamic_batch_is_a_question_mark(mlp):
    _, module = mlp
    f = find_function(module)
    x = f.args[-1]
    assert x.type.get_shape() == (DYNAMIC, 6)
    assert f.function_type.outputs.data[0].get_shape() == (DYNAMIC, 4)


def test_parameters_and_buffers_are_named_by_state_dict_keys(mlp):
    model, module = mlp
    f = find_function(module)
    params = {argument_name(f, i) for i in range(len(f.args)) if is_param(f, i)}
    assert params == set(model.state_dict())
    inputs = [argument_name(f, i) for i in range(len(f.args)) if not is_param(f, i)]
    assert inputs == ["x"]


def test_imported_module_prints_and_parses_back(mlp):
    _, module = mlp
    text = print_ir(module)
    assert print_ir(parse_module(text)) == text


def test_ops_are_located_at_the_model_source_lines(mlp):
    _, module = mlp
    locations = [op.location for op in find_function(module).body.block.ops]
    ours = [loc for loc in locations if isinstance(loc, FileLineColLoc) and loc.filename.data.endswith(MODELS_FILE)]
    lines = {loc.line.data for loc in ours}
    source = open(MLP.forward.__code__.co_filename).read().splitlines()
    assert lines and all("F.softmax(self.fc2" in source[line - 1] for line in lines)


def test_a_library_beside_torch_is_the_models_source_and_the_importer_never_is():
    """torchvision's frames (its directory starts with torch's, `site-packages/torch`) locate
    its models' ops; a model made only of torch.nn modules is located in torch, not here."""
    from rlx_xdsl.importers.torch import translator

    site = Path(torch.__file__).parents[1]
    trace = "".join(
        f'  File "{path}", line {line}, in f\n    code\n'
        for path, line in [
            (Path(translator.__file__).with_name("__init__.py"), 44),
            (site / "torchvision/models/resnet.py", 268),
            (site / "torch/nn/modules/conv.py", 565),
        ]
    )
    node = torch.fx.Graph().placeholder("x")
    node.meta["stack_trace"] = trace
    assert translator.user_frame(node) == (str(site / "torchvision/models/resnet.py"), 268)
    module = import_module(torch.nn.Sequential(torch.nn.Linear(2, 3)), (torch.ones(1, 2),))
    files = {op.location.filename.data for op in find_function(module).body.block.ops if isinstance(op.location, FileLineColLoc)}
    assert files == {"torch/nn/modules/linear.py"}  # relative to its sys.path entry


def test_locations_are_relative_with_the_statement_column(mlp, monkeypatch):
    """No absolute paths in imported IR: the model file relative to the working directory (or
    its sys.path entry), the column where the statement starts on its line (from the source)."""
    _, module = mlp
    ours = [op.location for op in find_function(module).body.block.ops if isinstance(op.location, FileLineColLoc)]
    assert ours and all(not os.path.isabs(loc.filename.data) for loc in ours)
    source = open(MLP.forward.__code__.co_filename).read().splitlines()
    for loc in ours:
        text = source[loc.line.data - 1] if loc.filename.data.endswith(MODELS_FILE) else None
        if text is not None:
            assert loc.column.data == len(text) - len(text.lstrip()) + 1 > 1
    monkeypatch.chdir(os.path.dirname(MLP.forward.__code__.co_filename))
    assert source_name(MLP.forward.__code__.co_filename) == MODELS_FILE
    monkeypatch.setattr(sys, "path", ["/nowhere", "/a"])
    assert source_name("/a/b/model.py") == "b/model.py"
    monkeypatch.setattr(sys, "path", [])
    assert source_name("/a/b/model.py") == "/a/b/model.py"


def test_conv_net_matches_torch(convnet):
    model, module = convnet
    expect_same(module, model, torch.randn(2, 3, 8, 8))


def test_llama_block_matches_torch_at_several_batch_sizes(llama):
    model, module = llama
    assert find_function(module).args[-1].type.get_shape() == (DYNAMIC, 8, 16)
    for batch in (1, 3):
        expect_same(module, model, torch.randn(batch, 8, 16), atol=1e-4)


def test_fusion_pipeline_runs_on_the_imported_block(llama):
    model, module = llama
    fused = module.clone()
    FusionPipelinePass(target="cpu").apply(Context(), fused)
    fused.verify()
    expect_same(fused, model, torch.randn(2, 8, 16), atol=1e-4)


def test_fusion_sees_the_hand_written_norms(llama):
    """The imported RMSNorms fuse with the residual add before the second one."""
    _, module = llama
    fused = module.clone()
    FusionPipelinePass(target="best").apply(Context(), fused)
    names = [op.name for op in fused.walk()]
    assert names.count("mir.fused_residual_rms_norm") == 1 and names.count("mir.rms_norm") == 1


def test_sdpa_becomes_one_grouped_causal_attention(llama):
    _, module = llama
    attention = [op for op in module.walk() if isinstance(op, AttentionOp)]
    assert len(attention) == 1
    op = attention[0]
    assert op.mask_kind.data == "causal"
    assert op.k.type.get_shape()[1] == 2 and op.num_heads.value.data == 4


def test_many_op_families_match_torch():
    torch.manual_seed(3)
    model = Zoo().eval()
    inputs = (torch.randn(6, 8), torch.tensor([1, 4, 2, 9]), torch.randn(2, 4, 3, 3))
    with torch.no_grad():
        model.rms.weight.uniform_(0.5, 1.5)
    module = import_module(model, inputs)
    expect_same(module, model, *inputs)
    names = {op.name for op in module.walk()}
    assert {"mir.rms_norm", "mir.layer_norm", "mir.group_norm", "mir.gather"} <= names


def test_ops_built_from_shared_sequences_match_torch():
    """Ties included: round to even (x * 2 holds halves), topk/argmax keep the first index."""
    torch.manual_seed(4)
    x = torch.tensor([[0.25, -1.75, 2.5, 1.0], [-0.5, 3.0, -2.25, 0.75], [1.5, -1.75, 0.0, 3.0]])
    inputs = (x, torch.randn(2, 3, 4, 4))
    model = Zoo2()
    module = import_module(model, inputs)
    expect_same(module, model, *inputs)


class Rounding(torch.nn.Module):
    def forward(self, x):
        return torch.round(x), torch.floor(x), torch.ceil(x), torch.trunc(x)


def test_rounding_keeps_the_sign_of_zero():
    """torch.round(-0.5), ceil(-0.7) and trunc(-0.7) are -0.0, as torch computes them."""
    x = torch.tensor([-0.5, -0.4, -0.7, -0.0, 0.0, 0.3, -1.5, 2.5, 0.5])
    model = Rounding()
    module = import_module(model, (x,))
    for got, want in zip(run(module, model, x), model(x)):
        np.testing.assert_array_equal(got, want.numpy())
        np.testing.assert_array_equal(np.signbit(got), np.signbit(want.numpy()))


def test_ops_kept_whole_become_one_mir_op_each(llama):
    """SDPA and silu are one op each, and so is each hand-written RMSNorm."""
    _, module = llama
    names = [op.name for op in module.walk()]
    assert names.count("mir.attention") == 1 and names.count("mir.silu") == 1
    assert names.count("mir.rms_norm") == 2
    assert "mir.sigmoid" not in names and "mir.rsqrt" not in names and "mir.reduce" not in names


class RmsVariants(torch.nn.Module):
    """The RMSNorm idiom written three ways, and once with a value used twice (kept as primitives)."""

    def __init__(self):
        super().__init__()
        self.w = torch.nn.Parameter(torch.rand(8) + 0.5)

    def forward(self, x):
        a = x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + 1e-5) * self.w
        b = self.w * (torch.rsqrt(1e-3 + (x * x).mean(dim=2, keepdim=True)) * x)
        r = torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + 1e-6)
        c = x * r * self.w + r  # r has two users: not one norm
        d = x * torch.rsqrt(x.pow(2).mean(1, keepdim=True) + 1e-6) * self.w[:4, None]  # not the last dim
        return a, b, c, d


def test_hand_written_rms_norms_become_one_op_each_and_match_torch():
    torch.manual_seed(7)
    model = RmsVariants()
    x = torch.randn(2, 4, 8)
    module = import_module(model, (x,))
    expect_same(module, model, x)
    norms = [op for op in module.walk() if op.name == "mir.rms_norm"]
    assert sorted(op.eps.value.data for op in norms) == pytest.approx([1e-5, 1e-3])
    assert sum(op.name == "mir.rsqrt" for op in module.walk()) == 2


class Erfinv(torch.nn.Module):
    def forward(self, x):
        return torch.special.erfinv(x) + 1


def test_unsupported_op_names_the_op_and_the_source_line():
    with pytest.raises(ImportFailure) as info:
        import_module(Erfinv(), (torch.rand(3),))
    message = str(info.value)
    assert "unsupported ATen op 'aten.erfinv.default'" in message
    line = Erfinv.forward.__code__.co_firstlineno + 1
    assert f"test_torch.py:{line}" in message


def test_the_table_lists_each_family():
    names = supported_ops()
    for op in ("aten.mm.default", "aten.convolution.default", "aten._softmax.default", "aten.embedding.default"):
        assert op in names


class BooleanMask(torch.nn.Module):
    def forward(self, x):
        return x[x > 0]


def test_a_data_dependent_shape_is_one_located_error():
    with pytest.raises(ImportFailure) as info:
        import_module(BooleanMask(), (torch.randn(5),))
    line = BooleanMask.forward.__code__.co_firstlineno + 1
    assert f"test_torch.py:{line}: 'aten.index.Tensor': indexing with a boolean mask" in str(info.value)


class Complex(torch.nn.Module):
    def forward(self, x):
        return x * 2


def test_a_dtype_without_a_mir_twin_is_refused():
    with pytest.raises(ImportFailure, match="dtype torch.complex128 has no MIR equivalent"):
        import_module(Complex(), (torch.randn(3, dtype=torch.complex128),))


# The tool ----------------------------------------------------------------------------


def test_tool_imports_a_factory_with_a_dynamic_dim(tmp_path, monkeypatch):
    monkeypatch.syspath_prepend(str(ROOT))
    out = tmp_path / "mlp.mlir"
    argv = ["tests.importers.models:mlp", "--example-shapes", "x=3x6", "--dynamic", "x=0", "-o", str(out)]
    assert import_torch.main(argv) == 0
    f = find_function(parse_module(out.read_text()), "forward")
    assert f.args[-1].type.get_shape() == (DYNAMIC, 6)
    assert 'loc("' in out.read_text() and "models.py" in out.read_text()


def test_tool_passes_the_example_inputs_by_forwards_parameter_names(tmp_path, monkeypatch):
    monkeypatch.syspath_prepend(str(ROOT))
    out = tmp_path / "blend.mlir"
    argv = ["tests.importers.models:blend", "--example-shapes", "y=3", "x=2x3", "--dynamic", "x=0", "-o", str(out)]
    assert import_torch.main(argv) == 0
    f = find_function(parse_module(out.read_text()), "forward")
    assert [(argument_name(f, i), f.args[i].type.get_shape()) for i in range(len(f.args))] == [("x", (DYNAMIC, 3)), ("y", (3,))]


def test_tool_help_describes_the_example_inputs(capsys):
    with pytest.raises(SystemExit):
        import_torch.main(["--help"])
    text = " ".join(capsys.readouterr().out.split())
    assert "by the names of forward's parameters" in text and "torch.export specialises sizes 0 and 1" in text


@pytest.mark.parametrize(
    "argv, message",
    [
        (["tests.importers.models:nope", "--example-shapes", "x=3x6"], "'tests.importers.models' has no 'nope'"),
        (["tests.importers.models:mlp", "--example-shapes", "x=3y6"], "bad --example-shapes entry 'x=3y6'"),
        (["tests.importers.models:mlp", "--example-shapes", "x=3x6", "--dynamic", "y=0"], "--dynamic names 'y'"),
        (["nomodule", "--example-shapes", "x=3x6"], "expected MODULE:FACTORY, got 'nomodule'"),
        (
            ["tests.importers.models:mlp", "--example-shapes", "img=3x6"],
            "--example-shapes names 'img', which is not a parameter of forward (forward's parameters: 'x')",
        ),
        (["tests.importers.models:blend", "--example-shapes", "x=3", "y=3", "masks=3"], "names 'masks', which is not a parameter of forward; did you mean 'mask'?"),
        (["tests.importers.models:blend", "--example-shapes", "y=3"], "forward's parameter 'x' needs an --example-shapes entry: it has no default"),
        (
            ["tests.importers.models:blend", "--example-shapes", "x=3", "mask=3"],
            "forward's parameter 'y' needs an --example-shapes entry: it has no default",
        ),
        (["tests.importers.models:blend", "--example-shapes", "x=3", "x=3", "y=3"], "--example-shapes gives 'x' twice"),
        (["tests.importers.models:mlp", "--example-shapes", "x=3x6", "--dynamic", "x=2"], "--dynamic x=2: 'x' has no dim 2 (its example shape has rank 2)"),
        (
            ["tests.importers.models:mlp", "--example-shapes", "x=1x6", "--dynamic", "x=0"],
            "--dynamic x=0: the example size of dim 0 of 'x' is 1, and torch.export specialises sizes 0 and 1 "
            "to constants; give it an example size of 2 or more",
        ),
    ],
)
def test_tool_reports_bad_arguments_in_one_line(argv, message, tmp_path, monkeypatch, capsys):
    monkeypatch.syspath_prepend(str(ROOT))
    out = tmp_path / "out.mlir"
    assert import_torch.main([*argv, "-o", str(out)]) == 1
    err = capsys.readouterr().err
    assert err.startswith("rlx-import-torch: error: ") and message in err and err.count("\n") == 1
    assert not out.exists()


class _NearZero(torch.nn.Module):
    """The ops whose naive forms lose every digit near 0 (`log(1 + x)`, `exp(x) - 1`) and
    the torch activations that decompose to log1p/expm1."""

    def forward(self, x):
        f = torch.nn.functional
        return (
            torch.log1p(x),
            torch.expm1(x),
            f.softplus(x),
            f.softplus(x, beta=2.0, threshold=5.0),
            f.logsigmoid(x),
            f.mish(x),
            f.celu(x, alpha=0.5),
            f.binary_cross_entropy_with_logits(x, torch.full_like(x, 0.25), reduction="none"),
        )


def test_log1p_expm1_and_their_decompositions_stay_precise_near_zero():
    """x = 1e-8: log(1 + x) and exp(x) - 1 are 0 in f32 (100% error); softplus(-20) is
    2.06e-9, not 0. torch (float32) is the oracle, relative error only."""
    x = torch.tensor([1e-8, -1e-8, 3e-6, -20.0, -90.0, 30.0, -0.5, 2.0])
    model = _NearZero()
    module = import_module(model, (x,))
    with torch.no_grad():
        expected = model(x)
    got = run(module, model, x)
    for g, want in zip(got, expected):
        np.testing.assert_allclose(g, want.numpy(), rtol=2e-6, atol=0)
    assert got[2][3] == pytest.approx(2.061153622438558e-9, rel=1e-6)  # softplus(-20) = log1p(exp(-20))
    assert {"mir.log1p", "mir.expm1"} <= {op.name for op in module.walk()}


def test_log1p_and_expm1_edge_values_match_torch():
    """log1p(-1) = -inf, log1p(x < -1) = NaN; expm1 overflows to inf and tends to -1."""

    class Edges(torch.nn.Module):
        def forward(self, x):
            return torch.log1p(x), torch.expm1(x)

    x = torch.tensor([-1.0, -2.0, -1e-30, 0.0, 1e30, 100.0, -100.0, float("inf"), float("-inf"), float("nan")])
    model = Edges()
    with np.errstate(all="ignore"):
        got = run(import_module(model, (x,)), model, x)
    with torch.no_grad():
        expected = model(x)
    for g, e in zip(got, expected):
        np.testing.assert_array_equal(g, e.numpy())
