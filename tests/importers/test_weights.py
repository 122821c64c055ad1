"""Weights beside the imported IR: `import_module(..., weights=)`, `import_model(..., weights=)`
and the tools' `--weights`, read back by `rlx-run --params` and compared with the source
framework's own output (PyTorch, `onnx.reference`: the independent oracles)."""

from __future__ import annotations

from pathlib import Path

import ml_dtypes
import numpy as np
import onnx
import pytest
import torch
from onnx import TensorProto as T
from onnx import helper, numpy_helper
from onnx.reference import ReferenceEvaluator

from rlx_xdsl.formats.weights import WeightsError, read_weights
from rlx_xdsl.importers.onnx import import_model
from rlx_xdsl.importers.torch import import_module
from rlx_xdsl.ir.printer import print_ir
from rlx_xdsl.tools import import_onnx, import_torch, rlx_run

from .models import mlp

ROOT = Path(__file__).resolve().parents[2]


def run_saved(capsys, tmp_path: Path, *argv) -> np.ndarray:
    """`rlx-run ARGV --save DIR`: its single output, as saved."""
    out = tmp_path / "run"
    assert rlx_run.main([*map(str, argv), "--save", str(out)]) == 0, capsys.readouterr().err
    return np.load(out / "out0.npy")


def test_torch_mlp_runs_with_its_saved_weights_and_matches_torch(tmp_path, capsys):
    model = mlp().eval()
    x = torch.randn(3, 6, generator=torch.Generator().manual_seed(7))
    weights = tmp_path / "mlp.safetensors"
    module = import_module(model, (x,), weights=weights)
    (tmp_path / "mlp.mlir").write_text(print_ir(module))
    np.save(tmp_path / "x.npy", x.numpy())
    got = run_saved(capsys, tmp_path, tmp_path / "mlp.mlir", "--params", weights, "--input", f"x={tmp_path / 'x.npy'}")
    assert capsys.readouterr().err == ""  # every parameter came from the file, no entry left over
    with torch.no_grad():
        expected = model(x).numpy()
    np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-6)
    assert sorted(read_weights(weights)) == ["fc1.bias", "fc1.weight", "fc2.bias", "fc2.weight", "scale"]


class ScaledNorm(torch.nn.Module):
    """A BatchNorm (whose buffers include the 0-d `num_batches_tracked`) and a 0-d parameter."""

    def __init__(self):
        super().__init__()
        self.bn = torch.nn.BatchNorm1d(3)
        self.gain = torch.nn.Parameter(torch.tensor(1.75))

    def forward(self, x):
        return self.bn(x) * self.gain


@pytest.mark.parametrize("suffix", [".safetensors", ".npz"])
def test_rank_0_weights_keep_their_shape_and_run_against_torch(tmp_path, capsys, suffix):
    model = ScaledNorm().eval()
    with torch.no_grad():
        model.bn.running_mean.copy_(torch.tensor([0.5, -1.0, 2.0]))
        model.bn.running_var.copy_(torch.tensor([4.0, 0.25, 1.0]))
    x = torch.randn(2, 3, generator=torch.Generator().manual_seed(1))
    weights = tmp_path / f"w{suffix}"
    (tmp_path / "m.mlir").write_text(print_ir(import_module(model, (x,), weights=weights)))
    saved = read_weights(weights)
    assert saved["gain"].shape == () and saved["bn.num_batches_tracked"].shape == ()
    np.save(tmp_path / "x.npy", x.numpy())
    got = run_saved(capsys, tmp_path, tmp_path / "m.mlir", "--params", weights, "--input", f"x={tmp_path / 'x.npy'}")
    with torch.no_grad():
        np.testing.assert_allclose(got, model(x).numpy(), rtol=1e-6, atol=1e-6)


def test_the_tool_writes_npz_weights_and_bf16_survives(tmp_path, monkeypatch):
    monkeypatch.syspath_prepend(str(ROOT))
    out, weights = tmp_path / "mlp.mlir", tmp_path / "w.npz"
    argv = ["tests.importers.models:mlp", "--example-shapes", "x=3x6", "-o", str(out), "--weights", str(weights)]
    assert import_torch.main(argv) == 0
    expected = {k: v.detach().numpy() for k, v in mlp().state_dict().items()}
    got = read_weights(weights)
    assert got.keys() == expected.keys()
    for name in expected:
        np.testing.assert_array_equal(got[name], expected[name])
    from rlx_xdsl.importers.torch.types import to_numpy

    bf16 = torch.tensor([1.5, -2.25, 3e38], dtype=torch.bfloat16)
    array = to_numpy(bf16)
    assert array.dtype == ml_dtypes.bfloat16
    np.testing.assert_array_equal(array.astype(np.float32), bf16.float().numpy())


def test_the_torch_tool_reports_a_weight_file_it_cannot_write(tmp_path, monkeypatch, capsys):
    monkeypatch.syspath_prepend(str(ROOT))
    out = tmp_path / "mlp.mlir"
    argv = ["tests.importers.models:mlp", "--example-shapes", "x=3x6", "-o", str(out), "--weights", str(tmp_path / "w.pt")]
    assert import_torch.main(argv) == 1
    err = capsys.readouterr().err
    assert err.startswith("rlx-import-torch: error: cannot write") and "one of .safetensors, .npz" in err
    assert err.count("\n") == 1 and not out.exists()


@pytest.fixture(scope="module")
def onnx_mlp() -> onnx.ModelProto:
    rng = np.random.default_rng(3)

    def init(name, *shape, dtype=np.float32):
        return numpy_helper.from_array(rng.standard_normal(shape).astype(dtype), name)

    nodes = [
        helper.make_node("MatMul", ["x", "w1"], ["h"], name="fc1"),
        helper.make_node("Add", ["h", "b1"], ["hb"], name="bias1"),
        helper.make_node("Reshape", ["hb", "shape"], ["y"], name="flat"),
    ]
    inits = [init("w1", 6, 4), init("b1", 4), numpy_helper.from_array(np.array([-1], np.int64), "shape")]
    graph = helper.make_graph(
        nodes, "g", [helper.make_tensor_value_info("x", T.FLOAT, [2, 6])], [helper.make_tensor_value_info("y", T.FLOAT, [8])], inits
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


def test_onnx_weights_from_the_tool_or_the_model_itself_match_the_reference(onnx_mlp, tmp_path, capsys):
    source, out, weights = tmp_path / "m.onnx", tmp_path / "m.mlir", tmp_path / "w.safetensors"
    onnx.save(onnx_mlp, source)
    assert import_onnx.main([str(source), "-o", str(out), "--weights", str(weights)]) == 0
    assert sorted(read_weights(weights)) == ["b1", "w1"]  # the folded shape is no parameter
    x = np.random.default_rng(4).standard_normal((2, 6)).astype(np.float32)
    np.save(tmp_path / "x.npy", x)
    (expected,) = ReferenceEvaluator(onnx_mlp).run(None, {"x": x})
    for params in (weights, source):  # the written file, or the model's initializers directly
        got = run_saved(capsys, tmp_path, out, "--params", params, "--input", f"x={tmp_path / 'x.npy'}")
        assert capsys.readouterr().err == ""  # the .onnx file's folded 'shape' is not reported
        np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-6)


def test_import_model_writes_only_the_parameters(onnx_mlp, tmp_path):
    import_model(onnx_mlp, weights=tmp_path / "w.npz")
    assert sorted(read_weights(tmp_path / "w.npz")) == ["b1", "w1"]
    with pytest.raises(WeightsError, match="one of .safetensors, .npz"):
        import_model(onnx_mlp, weights=tmp_path / "w.onnx")  # .onnx is read, never written
    assert not (tmp_path / "w.onnx").exists()
