"""`rlx-run --params FILE`: parameters by `rlx.name` from .safetensors, .npz and .onnx
files; --input wins; missing and unknown entries are notes; every bad file is one
`rlx-run: error:` line naming the file (and the parameter, expected and got)."""

from __future__ import annotations

import sys

import ml_dtypes
import numpy as np
import onnx
import pytest
from onnx import TensorProto as T
from onnx import helper, numpy_helper
from safetensors.numpy import save_file

from rlx_xdsl.formats.weights import WeightsError, read_weights, write_weights
from rlx_xdsl.tools.rlx_run import main

GRAPH = """\
func.func @f(%x: tensor<2x3xf32> {rlx.name = "x"},
             %w: tensor<3x2xf32> {rlx.name = "lin.weight", rlx.param},
             %b: tensor<2xbf16> {rlx.name = "lin.bias", rlx.param}) -> (tensor<2x2xf32>, tensor<2xbf16>) {
  %0 = mir.matmul %x, %w : (tensor<2x3xf32>, tensor<3x2xf32>) -> tensor<2x2xf32>
  func.return %0, %b : tensor<2x2xf32>, tensor<2xbf16>
}
"""

X = np.arange(6, dtype=np.float32).reshape(2, 3)
W = np.array([[1, -1], [0.5, 2], [-3, 0.25]], dtype=np.float32)
B = np.array([1.5, -2.25], dtype=ml_dtypes.bfloat16)


@pytest.fixture
def graph(tmp_path):
    path = tmp_path / "g.mlir"
    path.write_text(GRAPH)
    return path


def run(capsys, *argv):
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


def outputs(capsys, tmp_path, *argv):
    code, _, err = run(capsys, *argv, "--save", tmp_path / "out")
    assert code == 0, err
    return np.load(tmp_path / "out" / "out0.npy"), np.load(tmp_path / "out" / "out1.npy"), err


@pytest.mark.parametrize("suffix", [".npz", ".safetensors"])
def test_parameters_come_from_the_file_by_rlx_name(graph, tmp_path, capsys, suffix):
    weights = tmp_path / f"w{suffix}"
    write_weights(weights, {"lin.weight": W, "lin.bias": B})
    np.save(tmp_path / "x.npy", X)
    y, b, err = outputs(capsys, tmp_path, graph, "--params", weights, "--input", f"x={tmp_path / 'x.npy'}")
    assert err == ""
    np.testing.assert_array_equal(y, X.astype(np.float64) @ W.astype(np.float64))  # exact in f32 at these values
    np.testing.assert_array_equal(b.view(ml_dtypes.bfloat16), B)  # bf16 read back as bf16, bit for bit


def test_a_file_written_by_numpy_savez_is_read(graph, tmp_path, capsys):
    np.savez(tmp_path / "w.npz", **{"lin.weight": W, "lin.bias": B})
    y, _, _ = outputs(capsys, tmp_path, graph, "--params", tmp_path / "w.npz", "--input", "x=1.0")
    np.testing.assert_array_equal(y, np.ones((2, 3)) @ W)


def test_input_wins_over_the_file(graph, tmp_path, capsys):
    save_file({"lin.weight": W, "lin.bias": np.zeros(2, dtype=ml_dtypes.bfloat16)}, tmp_path / "w.safetensors")
    y, b, err = outputs(capsys, tmp_path, graph, "--params", tmp_path / "w.safetensors", "--input", "lin.weight=2.0", "--input", "x=1.0")
    assert err == ""
    np.testing.assert_array_equal(y, np.full((2, 2), 6.0))
    np.testing.assert_array_equal(b.view(ml_dtypes.bfloat16).astype(np.float32), [0, 0])


def test_a_parameter_missing_from_the_file_is_an_error_naming_it(graph, tmp_path, capsys):
    np.savez(tmp_path / "w.npz", **{"lin.weight": W})
    message = (
        f"--params: '{tmp_path / 'w.npz'}' has no entry for 1 parameter of @f: 'lin.bias' "
        "(give them with --input, or --random-params for seeded random values)"
    )
    expect_error(capsys, [graph, "--params", tmp_path / "w.npz"], message)
    _, b, err = outputs(capsys, tmp_path, graph, "--params", tmp_path / "w.npz", "--input", "lin.bias=[1, 2]")
    assert err == "" and b.view(ml_dtypes.bfloat16).tolist() == [1, 2]  # --input gives what the file lacks


def test_a_file_naming_no_parameter_is_an_error_with_the_near_entries(graph, tmp_path, capsys):
    np.savez(tmp_path / "w.npz", **{"model.lin.weight": W, "model.lin.bias": B})
    message = (
        f"--params: '{tmp_path / 'w.npz'}' has no entry for 2 parameters of @f: "
        "'lin.weight' (did you mean 'model.lin.weight'?), 'lin.bias' (did you mean 'model.lin.bias'?) "
        "(give them with --input, or --random-params for seeded random values)"
    )
    expect_error(capsys, [graph, "--params", tmp_path / "w.npz"], message)


def test_random_params_gives_a_missing_parameter_a_random_value_with_a_note(graph, tmp_path, capsys):
    np.savez(tmp_path / "w.npz", **{"lin.weight": W})
    _, b, err = outputs(capsys, tmp_path, graph, "--params", tmp_path / "w.npz", "--seed", "3", "--random-params")
    assert err == f"rlx-run: note: not in '{tmp_path / 'w.npz'}', random values (seed 3) for 1 parameter of @f: 'lin.bias'\n"
    assert b.shape == (2,)


def test_entries_naming_no_parameter_are_ignored_with_a_note(graph, tmp_path, capsys):
    path = tmp_path / "w.npz"
    np.savez(path, **{"lin.weight": W, "lin.bias": B, "lin.wieght": W, "x": X, "w": W})
    _, _, err = outputs(capsys, tmp_path, graph, "--params", path)
    assert err.splitlines() == [
        f"rlx-run: note: '{path}' entry 'lin.wieght' names no parameter of @f, ignored; did you mean 'lin.weight'?",
        f"rlx-run: note: '{path}' entry 'x' names no parameter of @f, ignored (an input, not a parameter: give it with --input)",
        f"rlx-run: note: '{path}' entry 'w' names no parameter of @f, ignored (the SSA name of 'lin.weight': entries are matched by rlx.name)",
    ]


def expect_error(capsys, argv, message):
    code, out, err = run(capsys, *argv)
    assert (code, out) == (1, "")
    assert err == f"rlx-run: error: {message}\n"  # one line, no traceback


def test_wrong_shape_names_the_parameter_expected_and_got(graph, tmp_path, capsys):
    np.savez(tmp_path / "w.npz", **{"lin.weight": W.T, "lin.bias": B})
    message = f"parameter 'lin.weight' in '{tmp_path / 'w.npz'}' has shape [2, 3], but the argument has type tensor<3x2xf32>"
    expect_error(capsys, [graph, "--params", tmp_path / "w.npz"], message)


def test_wrong_dtype_names_the_parameter_expected_and_got(graph, tmp_path, capsys):
    save_file({"lin.weight": W, "lin.bias": B.astype(np.float32)}, tmp_path / "w.safetensors")
    message = f"parameter 'lin.bias' in '{tmp_path / 'w.safetensors'}' has dtype f32, but the argument has type tensor<2xbf16>"
    expect_error(capsys, [graph, "--params", tmp_path / "w.safetensors"], message)


def test_missing_file_and_unknown_format(graph, tmp_path, capsys):
    expect_error(capsys, [graph, "--params", tmp_path / "none.npz"], f"--params: no such file: '{tmp_path / 'none.npz'}'")
    (tmp_path / "w.pt").write_bytes(b"")
    message = f"--params: cannot read '{tmp_path / 'w.pt'}': the weight file format is chosen by its suffix, one of .safetensors, .npz, .onnx"
    expect_error(capsys, [graph, "--params", tmp_path / "w.pt"], message)


@pytest.mark.parametrize(
    "name, data, message",
    [
        ("w.npz", b"garbage", "is not a valid .npz archive (not a zip file)"),
        ("w.npz", b"PK\x03\x04trunc", "is not a valid .npz archive (BadZipFile: File is not a zip file)"),
        ("w.safetensors", b"\x08\x00\x00\x00\x00\x00\x00\x00{not json", "is not a valid .safetensors file ("),
        ("w.onnx", b"\x08\x07garbage\xff\xff\xff", ": not a valid ONNX model (DecodeError"),
    ],
)
def test_corrupt_files_are_one_error_line(graph, tmp_path, capsys, name, data, message):
    (tmp_path / name).write_bytes(data)
    code, out, err = run(capsys, graph, "--params", tmp_path / name)
    assert (code, out) == (1, "")
    assert err.startswith(f"rlx-run: error: --params: '{tmp_path / name}'") and message in err
    assert err.count("\n") == 1 and "Traceback" not in err


def test_an_npz_of_pickled_objects_is_refused(graph, tmp_path, capsys):
    np.savez(tmp_path / "w.npz", **{"lin.weight": np.array([None], dtype=object)})
    code, _, err = run(capsys, graph, "--params", tmp_path / "w.npz")
    assert code == 1 and "is not a valid .npz archive (ValueError: Object arrays cannot be loaded" in err


def test_initializers_of_an_onnx_model_are_parameters(graph, tmp_path, capsys):
    node = helper.make_node("Identity", ["i"], ["o"])
    inits = [numpy_helper.from_array(W, "lin.weight"), numpy_helper.from_array(np.ones(2, np.float32), "lin.bias")]
    graph_proto = helper.make_graph(
        [node], "g", [helper.make_tensor_value_info("i", T.FLOAT, [1])], [helper.make_tensor_value_info("o", T.FLOAT, [1])], inits
    )
    onnx.save(helper.make_model(graph_proto), tmp_path / "m.onnx")
    assert read_weights(tmp_path / "m.onnx")["lin.weight"].tolist() == W.tolist()
    message = f"parameter 'lin.bias' in '{tmp_path / 'm.onnx'}' has dtype f32, but the argument has type tensor<2xbf16>"
    expect_error(capsys, [graph, "--params", tmp_path / "m.onnx"], message)


def test_without_the_safetensors_package_the_error_says_what_to_install(graph, tmp_path, capsys, monkeypatch):
    write_weights(tmp_path / "w.safetensors", {"lin.weight": W})
    monkeypatch.setitem(sys.modules, "safetensors.numpy", None)  # as if not installed
    message = (
        f"--params: reading '{tmp_path / 'w.safetensors'}' needs the 'safetensors' package "
        "(pip install safetensors), which is not installed"
    )
    expect_error(capsys, [graph, "--params", tmp_path / "w.safetensors"], message)
    with pytest.raises(WeightsError, match=r"writing .* \(or write a .npz file\) needs the 'safetensors' package"):
        write_weights(tmp_path / "v.safetensors", {"a": W})
    assert not (tmp_path / "v.safetensors").exists()
    write_weights(tmp_path / "v.npz", {"a": W})  # .npz needs nothing more


def test_a_failed_write_leaves_the_old_file(tmp_path):
    path = tmp_path / "w.npz"
    write_weights(path, {"a": W})
    with pytest.raises(WeightsError, match="cannot write"):
        write_weights(path, {"a": np.array([None], dtype=object)})  # object arrays are refused
    np.testing.assert_array_equal(read_weights(path)["a"], W)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["w.npz"]  # no temporary left


def test_help_documents_params():
    from rlx_xdsl.tools.rlx_run import make_parser

    text = " ".join(make_parser().format_help().split())
    assert "--params FILE" in text and "--input wins over it" in text and "is an error (unless --random-params)" in text
    assert "--random-params with --params: seeded random values" in text
