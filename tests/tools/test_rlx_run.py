"""rlx-run: results against numpy, deterministic inputs, --input/--save, and every error path.

Errors about the input file must read exactly as rlx-opt's (same located
diagnostics, same rendering); interpreter failures are located at the failing op.
"""

import io
import re
import subprocess
import sys
from pathlib import Path

import ml_dtypes
import numpy as np
import pytest

from rlx_xdsl.context import parse_module
from rlx_xdsl.ir.graph import find_function, random_inputs
from rlx_xdsl.ir.locations import LocatingParser
from rlx_xdsl.tools import rlx_run
from rlx_xdsl.tools.rlx_opt import run_opt
from rlx_xdsl.tools.rlx_run import main

ROOT = Path(__file__).resolve().parents[2]
MLP = ROOT / "examples" / "mlp.mlir"
RLX_RUN = Path(sys.executable).parent / "rlx-run"

TWO_FUNCS = """\
func.func @first(%a: tensor<3xf32> {rlx.name = "a"}, %b: tensor<2x3xf32>) -> (tensor<2x3xf32>, tensor<3xf32>) {
  %0 = mir.mul %a, %b : (tensor<3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  %1 = mir.neg %a : (tensor<3xf32>) -> tensor<3xf32>
  func.return %0, %1 : tensor<2x3xf32>, tensor<3xf32>
}
func.func @second(%p: tensor<2xbf16>) -> tensor<2xbf16> {
  %0 = mir.add %p, %p : (tensor<2xbf16>, tensor<2xbf16>) -> tensor<2xbf16>
  func.return %0 : tensor<2xbf16>
}
"""

DYNAMIC = """\
func.func @dyn(%x: tensor<?x2xf32> {rlx.name = "x"}) -> tensor<?x2xf32> {
  %0 = mir.abs %x : (tensor<?x2xf32>) -> tensor<?x2xf32>
  func.return %0 : tensor<?x2xf32>
}
"""


def write(tmp_path, text, name="g.mlir") -> str:
    path = tmp_path / name
    path.write_text(text)
    return str(path)


def run(capsys, *argv):
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


def mlp_reference(x, w1, b1, w2, b2):
    """softmax(relu(x w1 + b1) w2 + b2), written out in float64."""
    x, w1, b1, w2, b2 = (np.asarray(v, np.float64) for v in (x, w1, b1, w2, b2))
    logits = np.maximum(x @ w1 + b1, 0) @ w2 + b2
    e = np.exp(logits - logits.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


MLP_ARGS = ["x", "fc1.weight", "fc1.bias", "fc2.weight", "fc2.bias"]


def test_mlp_example_matches_numpy(tmp_path, capsys):
    code, out, err = run(capsys, MLP, "--save", tmp_path)
    assert code == 0, err
    inputs = [np.load(tmp_path / "inputs" / f"{name}.npy") for name in MLP_ARGS]
    result = np.load(tmp_path / "out0.npy")
    np.testing.assert_allclose(result, mlp_reference(*inputs), rtol=1e-5, atol=1e-7)
    assert out.splitlines()[0] == "@mlp: 5 arguments, 1 output (seed 0)"
    assert "out0: shape [4, 10] dtype f32" in out
    assert "sum=4 " in out  # four softmax rows


def test_random_inputs_follow_graph_random_inputs(tmp_path, capsys):
    code, _, _ = run(capsys, MLP, "--seed", 5, "--save", tmp_path)
    assert code == 0
    expected = random_inputs(find_function(parse_module(MLP.read_text())), seed=5)
    for name, value in zip(MLP_ARGS, expected):
        np.testing.assert_array_equal(np.load(tmp_path / "inputs" / f"{name}.npy"), value)


def test_seed_is_deterministic_and_matters(capsys):
    outputs = [run(capsys, MLP, "--seed", seed)[1] for seed in (1, 1, 2)]
    assert outputs[0] == outputs[1]
    assert outputs[0] != outputs[2]


def test_input_files_are_used(tmp_path, capsys):
    x = np.arange(12, dtype=np.float32).reshape(4, 3)[:, :1].repeat(16, axis=1) / 10
    np.save(tmp_path / "x.npy", x)
    code, _, err = run(capsys, MLP, "--input", f"x={tmp_path / 'x.npy'}", "--save", tmp_path / "o")
    assert code == 0, err
    inputs = [np.load(tmp_path / "o" / "inputs" / f"{name}.npy") for name in MLP_ARGS]
    np.testing.assert_array_equal(inputs[0], x)
    np.testing.assert_allclose(np.load(tmp_path / "o" / "out0.npy"), mlp_reference(*inputs), rtol=1e-5, atol=1e-7)


def test_multiple_outputs_and_func_selection(tmp_path, capsys):
    path = write(tmp_path, TWO_FUNCS)
    a = np.float32([1, -2, 3])
    np.save(tmp_path / "a.npy", a)
    code, out, err = run(capsys, path, "--input", f"a={tmp_path / 'a.npy'}", "--save", tmp_path / "o")
    assert code == 0, err
    assert "out0: shape [2, 3] dtype f32" in out and "out1: shape [3] dtype f32" in out
    np.testing.assert_array_equal(np.load(tmp_path / "o" / "out1.npy"), -a)
    b = np.load(tmp_path / "o" / "inputs" / "arg1.npy")
    np.testing.assert_array_equal(np.load(tmp_path / "o" / "out0.npy"), a * b)
    # The second argument has no rlx.name: it answers to its positional name and its SSA name.
    np.save(tmp_path / "b.npy", np.ones((2, 3), np.float32))
    for alias in ("arg1", "b", "%b"):
        code, out, err = run(capsys, path, "--input", f"{alias}={tmp_path / 'b.npy'}", "--input", f"a={tmp_path / 'a.npy'}")
        assert code == 0, err
        assert "values: [1, -2, 3, 1, -2, 3]" in out


def test_bf16_values_survive_save_and_input(tmp_path, capsys):
    path = write(tmp_path, TWO_FUNCS)
    p = np.array([1.5, -0.25], ml_dtypes.bfloat16)
    np.save(tmp_path / "p.npy", p)
    code, out, err = run(capsys, path, "--func", "second", "--input", f"p={tmp_path / 'p.npy'}", "--save", tmp_path / "o")
    assert code == 0, err
    assert "out0: shape [2] dtype bf16" in out
    assert "values: [3, -0.5]" in out
    saved = np.load(tmp_path / "o" / "out0.npy")
    np.testing.assert_array_equal(saved.view(ml_dtypes.bfloat16).astype(np.float32), [3.0, -0.5])


def test_dynamic_argument_runs_with_an_input(tmp_path, capsys):
    path = write(tmp_path, DYNAMIC)
    np.save(tmp_path / "x.npy", np.float32([[1, -2], [-3, 4], [5, -6]]))
    code, out, err = run(capsys, path, "--input", f"x={tmp_path / 'x.npy'}")
    assert code == 0, err
    assert "out0: shape [3, 2] dtype f32" in out
    assert "min=1  max=6  mean=3.5  sum=21" in out


NO_EXPERTS = """\
func.func @f(%x: tensor<Mx4xf32> {rlx.name = "x"}, %w: tensor<0x4x5xf32> {rlx.name = "w"}, %e: tensor<Mxi64> {rlx.name = "e"}) -> tensor<Mx5xf32> {
  %r = mir.grouped_matmul %x, %w, %e : (tensor<Mx4xf32>, tensor<0x4x5xf32>, tensor<Mxi64>) -> tensor<Mx5xf32>
  func.return %r : tensor<Mx5xf32>
}
"""


def test_indices_into_nothing_are_not_invented(tmp_path, capsys):
    """0 experts is a valid op (no rows: an empty result), but no expert id is valid: rlx-run
    says so instead of an internal error, and a given id is a located run-time error."""
    path = write(tmp_path, NO_EXPERTS.replace("M", "2"))
    code, _, err = run(capsys, path)
    assert code == 1
    assert err == (
        "rlx-run: error: argument 'e' indexes 'mir.grouped_matmul' with nothing to select from (0 entries): "
        "no value of it is valid; give it with --input e=VALUE or change the graph\n"
    )
    code, _, err = run(capsys, path, "--input", "e=[0,0]")
    assert code == 1 and "g.mlir:2:3: error: interpretation failed: 'mir.grouped_matmul' index 0 is out of range [0, 0)" in err
    code, out, err = run(capsys, write(tmp_path, NO_EXPERTS.replace("M", "0"), "empty.mlir"), "--save", tmp_path / "o")
    assert code == 0, err
    assert np.load(tmp_path / "o" / "out0.npy").shape == (0, 5)


def test_summary_counts_non_finite_values(tmp_path, capsys):
    path = write(tmp_path, DYNAMIC)
    np.save(tmp_path / "x.npy", np.float32([[np.inf, 1], [2, 3]]))
    code, out, _ = run(capsys, path, "--input", f"x={tmp_path / 'x.npy'}")
    assert code == 0
    assert "min=1  max=3  mean=2" in out and "non-finite: 1 of 4" in out


PARSE_ERROR = """\
func.func @f(%a: tensor<3xf32>) -> tensor<3xf32> {
  %0 = mir.add %a, %a : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
  %1 = mir.bogus %0 : (tensor<3xf32>) -> tensor<3xf32>
  func.return %1 : tensor<3xf32>
}
"""

VERIFY_ERROR = """\
func.func @f(%a: tensor<3xf32>, %b: tensor<4xf32>) -> tensor<3xf32> {
  %0 = mir.add %a, %b : (tensor<3xf32>, tensor<4xf32>) -> tensor<3xf32>
  func.return %0 : tensor<3xf32>
}
"""


def expect_error(capsys, argv, message):
    code, out, err = run(capsys, *argv)
    assert code == 1
    assert out == ""
    assert message in err
    assert "Traceback" not in err
    return err


def test_missing_file(capsys):
    expect_error(capsys, ["/nonexistent/model.mlir"], "rlx-run: error: no such file: '/nonexistent/model.mlir'")


def test_parse_error_is_located(tmp_path, capsys):
    path = write(tmp_path, PARSE_ERROR)
    err = expect_error(capsys, [path], f"{path}:3:8: error: Operation mir.bogus is not registered")
    lines = err.splitlines()
    assert lines[0].startswith(f"{path}:3:8: error: ")
    assert lines[1] == "  %1 = mir.bogus %0 : (tensor<3xf32>) -> tensor<3xf32>"
    assert lines[2] == " " * 7 + "^"  # the caret under the op name


def test_verify_error_is_located_at_the_failing_op(tmp_path, capsys):
    path = write(tmp_path, VERIFY_ERROR)
    err = expect_error(capsys, [path], "'mir.add' shapes [3], [4] do not broadcast")
    assert err.splitlines() == [
        f"{path}:2:3: error: 'mir.add' shapes [3], [4] do not broadcast",
        "  %0 = mir.add %a, %b : (tensor<3xf32>, tensor<4xf32>) -> tensor<3xf32>",
        "  ^",
        f'{path}:2:3: note: see current operation: %0 = "mir.add"(%a, %b) : (tensor<3xf32>, tensor<4xf32>) -> tensor<3xf32>',
    ]


NESTED_VERIFY_ERROR = """\
func.func @f(%p: tensor<1xi1>, %a: tensor<3xf32>, %b: tensor<4xf32>) -> tensor<3xf32> {
  %r = mir.if %p (%a, %b) : (tensor<1xi1>, tensor<3xf32>, tensor<4xf32>) -> tensor<3xf32> {
  ^bb0(%x: tensor<3xf32>, %y: tensor<4xf32>):
    %s = mir.add %x, %y : (tensor<3xf32>, tensor<4xf32>) -> tensor<3xf32>
    mir.yield %s : tensor<3xf32>
  } else {
  ^bb0(%x: tensor<3xf32>, %y: tensor<4xf32>):
    mir.yield %x : tensor<3xf32>
  }
  func.return %r : tensor<3xf32>
}
"""


@pytest.mark.parametrize("text", [PARSE_ERROR, VERIFY_ERROR, NESTED_VERIFY_ERROR], ids=["parse", "verify", "nested"])
def test_file_errors_read_exactly_as_rlx_opt_reports_them(tmp_path, capsys, text):
    path = write(tmp_path, text)
    code, out, err = run(capsys, path)
    assert (code, out) == (1, "")
    assert run_opt([path]) == 1
    assert capsys.readouterr().err == err
    assert err.startswith(f"{path}:")


def test_unexpected_parser_failure_reads_as_rlx_opt_reports_it(tmp_path, capsys, monkeypatch):
    def fail(self, allow_implicit_module=True):
        raise ValueError("odd input")

    monkeypatch.setattr(LocatingParser, "parse_module", fail)
    path = write(tmp_path, VERIFY_ERROR)
    err = expect_error(capsys, [path], f"{path}:1:1: error: ValueError: odd input")
    assert run_opt([path]) == 1
    assert capsys.readouterr().err == err


def test_stdin_verify_errors_name_stdin():
    bad = subprocess.run([RLX_RUN, "-"], input=VERIFY_ERROR, capture_output=True, text=True)
    assert bad.returncode == 1
    assert bad.stderr.startswith("<stdin>:2:3: error: 'mir.add' shapes [3], [4] do not broadcast\n")


# Failures while interpreting: located at the op that failed -------------------------------

GATHER = """\
func.func @f(%t: tensor<4x2xf32>, %i: tensor<3xi64>) -> tensor<3x2xf32> {
  %n = mir.neg %t : (tensor<4x2xf32>) -> tensor<4x2xf32>
  %g = mir.gather %n, %i axis = 0 : (tensor<4x2xf32>, tensor<3xi64>) -> tensor<3x2xf32>
  func.return %g : tensor<3x2xf32>
}
"""

GATHER_OP = '%g = "mir.gather"(%n, %i) <{axis = 0 : i64}> : (tensor<4x2xf32>, tensor<3xi64>) -> tensor<3x2xf32>'


def test_kernel_failure_is_located_at_its_op(tmp_path, capsys):
    path = write(tmp_path, GATHER)
    np.save(tmp_path / "i.npy", np.int64([0, 7, 1]))
    err = expect_error(capsys, [path, "--input", f"i={tmp_path / 'i.npy'}"], "index 7 is out of range")
    assert err.splitlines() == [
        f"{path}:3:3: error: interpretation failed: 'mir.gather' index 7 is out of range [-4, 4)",
        "  %g = mir.gather %n, %i axis = 0 : (tensor<4x2xf32>, tensor<3xi64>) -> tensor<3x2xf32>",
        "  ^",
        f"{path}:3:3: note: while running @f",
        f"{path}:3:3: note: see current operation: {GATHER_OP}",
    ]


def test_valid_indices_run(tmp_path, capsys):
    path = write(tmp_path, GATHER)
    np.save(tmp_path / "t.npy", np.arange(8, dtype=np.float32).reshape(4, 2))
    np.save(tmp_path / "i.npy", np.int64([3, 0, 3]))
    code, out, err = run(capsys, path, "--input", f"t={tmp_path / 't.npy'}", "--input", f"i={tmp_path / 'i.npy'}")
    assert code == 0, err
    assert "values: [-6, -7, -0, -1, -6, -7]" in out


IN_REGION_AND_CALLEE = """\
func.func @pick(%t: tensor<4x2xf32>, %i: tensor<3xi64>) -> tensor<3x2xf32> {
  %g = mir.gather %t, %i axis = 0 : (tensor<4x2xf32>, tensor<3xi64>) -> tensor<3x2xf32>
  func.return %g : tensor<3x2xf32>
}
func.func @main(%p: tensor<1xi1>, %t: tensor<4x2xf32>, %i: tensor<3xi64>) -> tensor<3x2xf32> {
  %r = mir.if %p (%t, %i) : (tensor<1xi1>, tensor<4x2xf32>, tensor<3xi64>) -> tensor<3x2xf32> {
  ^bb0(%a: tensor<4x2xf32>, %b: tensor<3xi64>):
    %c = func.call @pick(%a, %b) : (tensor<4x2xf32>, tensor<3xi64>) -> tensor<3x2xf32>
    mir.yield %c : tensor<3x2xf32>
  } else {
  ^bb0(%a: tensor<4x2xf32>, %b: tensor<3xi64>):
    %e = mir.gather %a, %b axis = 0 : (tensor<4x2xf32>, tensor<3xi64>) -> tensor<3x2xf32>
    mir.yield %e : tensor<3x2xf32>
  }
  func.return %r : tensor<3x2xf32>
}
"""


@pytest.mark.parametrize(("taken", "line"), [(True, 2), (False, 12)])
def test_kernel_failure_deep_inside_regions_and_calls_is_located_at_the_innermost_op(tmp_path, capsys, taken, line):
    path = write(tmp_path, IN_REGION_AND_CALLEE)
    np.save(tmp_path / "p.npy", np.array([taken]))
    np.save(tmp_path / "i.npy", np.int64([1, 2, -5]))
    inputs = ["--input", f"p={tmp_path / 'p.npy'}", "--input", f"i={tmp_path / 'i.npy'}"]
    err = expect_error(capsys, [path, "--func", "main", *inputs], "index -5 is out of range [-4, 4)")
    lines = err.splitlines()
    assert lines[0].startswith(f"{path}:{line}:")
    assert lines[1] == IN_REGION_AND_CALLEE.splitlines()[line - 1]
    assert f"{path}:{line}:{lines[2].index('^') + 1}: note: while running @main" in lines


WITHOUT_KERNEL = """\
func.func @f(%t: tensor<2xf32>) -> tensor<2xf32> {
  %s = mir.exp %t : (tensor<2xf32>) -> tensor<2xf32>
  %c = arith.constant dense<1.0> : tensor<2xf32>
  func.return %c : tensor<2xf32>
}
"""


def test_op_without_a_kernel_is_located_at_that_op(tmp_path, capsys):
    path = write(tmp_path, WITHOUT_KERNEL)
    err = expect_error(capsys, [path], "interpretation failed: ")
    assert err.startswith(f"{path}:3:3: error: interpretation failed: ")
    assert "arith.constant" in err.splitlines()[0]


def test_failure_before_any_op_is_located_at_the_function(tmp_path, capsys, monkeypatch):
    path = write(tmp_path, "\n" + GATHER)
    np.save(tmp_path / "i.npy", np.int64([0, 1, 2]))

    def refuse(self, op, inputs=()):
        raise RuntimeError("no call for you")

    monkeypatch.setattr(rlx_run.Interpreter, "call_op", refuse)
    err = expect_error(capsys, [path, "--input", f"i={tmp_path / 'i.npy'}"], "no call for you")
    assert err.startswith(f"{path}:2:1: error: interpretation failed: RuntimeError: no call for you\n")
    assert 'note: see current operation: "func.func"() <{sym_name = "f"' in err


def test_kernel_failure_subprocess_has_no_traceback(tmp_path):
    path = write(tmp_path, GATHER)
    np.save(tmp_path / "i.npy", np.int64([9, 0, 0]))
    done = subprocess.run([RLX_RUN, path, "--input", f"i={tmp_path / 'i.npy'}"], capture_output=True, text=True)
    assert done.returncode == 1
    assert done.stdout == ""
    assert done.stderr.startswith(f"{path}:3:3: error: interpretation failed: 'mir.gather' index 9")
    assert "Traceback" not in done.stderr


def test_internal_error_is_one_line_unless_debugging(tmp_path, capsys, monkeypatch):
    def boom(*args):
        raise RuntimeError("boom")

    monkeypatch.delenv("RLX_DEBUG", raising=False)
    monkeypatch.setattr(rlx_run, "summarize", boom)
    code, out, err = run(capsys, MLP)
    assert (code, out) == (1, "")
    assert err == "rlx-run: internal error: RuntimeError: boom (set RLX_DEBUG=1 for a traceback)\n"
    monkeypatch.setenv("RLX_DEBUG", "1")
    with pytest.raises(RuntimeError, match="boom"):
        main([str(MLP)])


def test_unknown_function_lists_the_available_ones(tmp_path, capsys):
    path = write(tmp_path, TWO_FUNCS)
    expect_error(capsys, [path, "--func", "third"], "no function named 'third' (available: 'first', 'second')")


def test_module_without_functions(tmp_path, capsys):
    expect_error(capsys, [write(tmp_path, "builtin.module {}\n")], "the module contains no func.func")


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("x", "--input expects NAME=VALUE or NAME=FILE.npy, got 'x'"),
        ("=a.npy", "--input expects NAME=VALUE or NAME=FILE.npy"),
        ("nope=a.npy", "--input names no argument 'nope' (arguments: 'x', 'fc1.weight'"),
        ("fc1.weihgt=a.npy", "--input names no argument 'fc1.weihgt'; did you mean 'fc1.weight'? (arguments: 'x'"),
        ("x=/nonexistent.npy", "cannot read input 'x' from '/nonexistent.npy'"),
    ],
)
def test_bad_input_spec(capsys, spec, message):
    expect_error(capsys, [MLP, "--input", spec], message)


def test_input_given_twice(tmp_path, capsys):
    np.save(tmp_path / "x.npy", np.zeros((4, 16), np.float32))
    spec = f"x={tmp_path / 'x.npy'}"
    expect_error(capsys, [MLP, "--input", spec, "--input", spec], "--input given twice for 'x'")
    expect_error(capsys, [MLP, "--input", spec, "--input", f"%x={tmp_path / 'x.npy'}"], "--input given twice for 'x'")


def test_input_with_wrong_shape(tmp_path, capsys):
    np.save(tmp_path / "x.npy", np.zeros((4, 15), np.float32))
    expect_error(
        capsys,
        [MLP, "--input", f"x={tmp_path / 'x.npy'}"],
        "input 'x' has shape [4, 15], but the argument has type tensor<4x16xf32>",
    )


def test_input_with_wrong_rank_for_dynamic_arg(tmp_path, capsys):
    np.save(tmp_path / "x.npy", np.zeros((3,), np.float32))
    expect_error(capsys, [write(tmp_path, DYNAMIC), "--input", f"x={tmp_path / 'x.npy'}"], "has shape [3]")


def test_input_with_wrong_dtype(tmp_path, capsys):
    np.save(tmp_path / "x.npy", np.zeros((4, 16), np.float64))
    expect_error(
        capsys,
        [MLP, "--input", f"x={tmp_path / 'x.npy'}"],
        "input 'x' has dtype f64, but the argument has type tensor<4x16xf32>",
    )


def test_input_with_unsupported_dtype(tmp_path, capsys):
    np.save(tmp_path / "x.npy", np.array([["a"] * 16] * 4))
    expect_error(capsys, [MLP, "--input", f"x={tmp_path / 'x.npy'}"], "input 'x' has dtype <U1")


def test_dynamic_argument_without_input(tmp_path, capsys):
    expect_error(
        capsys,
        [write(tmp_path, DYNAMIC)],
        "argument 'x' has dynamic type tensor<?x2xf32>; pass its value with --input x=VALUE or x=FILE.npy",
    )


# Inline values and the gradient seed ------------------------------------------------------

GRADIENT = """\
func.func @loss(%x: tensor<2x3xf32> {rlx.name = "x"}, %w: tensor<2x3xf32> {rlx.name = "w", rlx.param}) -> tensor<f32> {
  %p = mir.mul %x, %w : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  %s = mir.reduce sum %p axes = [0, 1] : (tensor<2x3xf32>) -> tensor<f32>
  func.return %s : tensor<f32>
}
"""


@pytest.fixture
def gradient_file(tmp_path):
    """`@loss_grad(x, w, d_output) -> (loss, d_w)` of `loss = sum(x * w)`: `d_w = x * d_output`."""
    source = write(tmp_path, GRADIENT, "loss.mlir")
    out = tmp_path / "grad.mlir"
    assert run_opt([source, "-p", "rlx-grad{func=loss}", "-o", str(out)]) == 0
    return out


def test_the_gradient_seed_is_ones_by_default(gradient_file, tmp_path, capsys):
    """The outputs are the plain gradient (d_w = x), as jax.grad gives it, not a random multiple."""
    code, out, err = run(capsys, gradient_file, "--func", "loss_grad", "--save", tmp_path / "o")
    assert code == 0, err
    x = np.load(tmp_path / "o" / "inputs" / "x.npy")
    np.testing.assert_array_equal(np.load(tmp_path / "o" / "inputs" / "d_output.npy"), np.float32(1))
    np.testing.assert_array_equal(np.load(tmp_path / "o" / "d_w.npy"), x)


def test_the_gradient_seed_can_be_given_inline(gradient_file, tmp_path, capsys):
    args = ["--func", "loss_grad", "--input", "d_output=2.5", "--input", "x=[[1, 2, 3], [4, 5, -6]]"]
    code, out, err = run(capsys, gradient_file, *args, "--save", tmp_path / "o")
    assert code == 0, err
    np.testing.assert_array_equal(np.load(tmp_path / "o" / "d_w.npy"), np.float32([[2.5, 5, 7.5], [10, 12.5, -15]]))


def test_outputs_are_named_by_rlx_grad_and_the_seed_shows_only_for_random_inputs(gradient_file, tmp_path, capsys):
    """rlx-grad names its results (the loss, d_<param>); with every input given nothing is random."""
    args = ["--func", "loss_grad", "--input", "x=[[1, 2, 3], [4, 5, -6]]", "--input", "w=2", "--save", tmp_path / "o"]
    code, out, err = run(capsys, gradient_file, *args)
    assert code == 0, err
    assert out.splitlines()[0] == "@loss_grad: 3 arguments, 2 outputs"
    assert "\nloss: shape [] dtype f32\n" in out and "\nd_w: shape [2, 3] dtype f32\n" in out
    np.testing.assert_array_equal(np.load(tmp_path / "o" / "d_w.npy"), np.float32([[1, 2, 3], [4, 5, -6]]))
    code, out, err = run(capsys, gradient_file, "--func", "loss_grad", "--input", "w=2", "--seed", "4")
    assert out.splitlines()[0] == "@loss_grad: 3 arguments, 2 outputs (seed 4)"


def test_help_says_the_gradient_seed_is_ones():
    text = " ".join(rlx_run.make_parser().format_help().split())
    assert "'d_output' of a function made by rlx-grad, which is ones" in text
    assert "d_output=1.0" in text


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("1.5", np.full((2, 3), 1.5, np.float32)),  # one value fills the shape
        ("[[1, 2, 3], [4, 5, 6]]", np.float32([[1, 2, 3], [4, 5, 6]])),
        ("-0.1", np.full((2, 3), -0.1, np.float32)),  # rounded once to f32
        ("0x7FC00000", np.full((2, 3), np.nan, np.float32)),  # MLIR's bit-pattern literal
    ],
)
def test_inline_values_of_a_float_argument(gradient_file, tmp_path, capsys, value, expected):
    code, _, err = run(capsys, gradient_file, "--func", "loss", "--input", f"x={value}", "--save", tmp_path / "o")
    assert code == 0, err
    np.testing.assert_array_equal(np.load(tmp_path / "o" / "inputs" / "x.npy"), expected)


def test_inline_values_of_other_dtypes_and_dynamic_shapes(tmp_path, capsys):
    path = write(tmp_path, TWO_FUNCS)
    code, out, err = run(capsys, path, "--input", "a=[1, -2, 3]", "--input", "b=2", "--save", tmp_path / "o")
    assert code == 0, err
    assert "values: [2, -4, 6, 2, -4, 6]" in out
    code, out, err = run(capsys, path, "--func", "second", "--input", "p=[1.5, -0.25]")
    assert code == 0, err
    assert "values: [3, -0.5]" in out
    code, out, err = run(capsys, write(tmp_path, DYNAMIC, "dyn.mlir"), "--input", "x=[[1, -2], [-3, 4], [5, -6]]")
    assert code == 0, err
    assert "out0: shape [3, 2] dtype f32" in out and "sum=21" in out


@pytest.mark.parametrize(
    ("spec", "message", "caret"),
    [
        ("x=[1, 2", "--input x=[1, 2: ']' expected", 9),
        ("x=[[1, 2, 3], [4, 5]]", "--input x=[[1, 2, 3], [4, 5]]: the nested lists differ in length or depth", None),
        ("x=1 2", "--input x=1 2: expected the end of the value, found '2'", 6),
        ("x=[1, nan]", "--input x=[1, nan]: Expected either a float, integer, or complex literal (NaN and infinities are bit patterns, as in MLIR: 0x7FC00000, 0x7F800000 for f32)", 8),
        ("x=inf", "--input x=inf: Expected either a float, integer, or complex literal (NaN and infinities are bit patterns, as in MLIR: 0x7FC00000, 0x7F800000 for f32)", 4),
    ],
)
def test_bad_inline_values_are_errors_at_the_place(gradient_file, capsys, spec, message, caret):
    err = expect_error(capsys, [gradient_file, "--func", "loss", "--input", spec], f"rlx-run: error: {message}\n")
    lines = err.splitlines()
    assert lines[1] == f"  {spec}"
    if caret is not None:
        assert lines[2] == " " * caret + "^"


def test_inline_values_must_fit_the_argument(tmp_path, gradient_file, capsys):
    expect_error(
        capsys,
        [gradient_file, "--func", "loss", "--input", "x=[1, 2, 3]"],
        "rlx-run: error: input 'x' has shape [3], but the argument has type tensor<2x3xf32>",
    )
    labels = write(tmp_path, "func.func @f(%l: tensor<2xi8>) -> tensor<2xi8> {\n  func.return %l : tensor<2xi8>\n}\n", "i.mlir")
    expect_error(capsys, [labels, "--input", "l=[1.5, 2]"], "--input l=[1.5, 2]: float literal 1.5 for integer type i8")
    expect_error(capsys, [labels, "--input", "l=300"], "--input l=300: integer literal 300 is out of range for i8")
    expect_error(
        capsys,
        [write(tmp_path, DYNAMIC, "dyn.mlir"), "--input", "x=1.0"],
        "input 'x': one value cannot give the dims of the dynamic type tensor<?x2xf32>",
    )


def test_a_real_value_for_a_complex_argument_says_how_to_write_a_complex_one(capsys):
    """The argument is complex: the error shows the (real, imag) form (it was "malformed number literal '.'")."""
    example = Path(__file__).parents[2] / "examples" / "complex_filter.mlir"
    err = expect_error(
        capsys,
        [example, "--input", "h=1.0"],
        "rlx-run: error: --input h=1.0: real literal 1.0 for complex type complex<f32>: "
        "write a complex value as (real, imag), e.g. (1.0, 0.0)\n  h=1.0\n    ^\n",
    )
    code, out, err = run(capsys, example, "--input", "h=(1.0, 0.0)", "--input", "x=[" + ", ".join(["[1.0" + ", 0.0" * 15 + "]"] * 4) + "]")
    assert code == 0, err
    # With h = 1 the filter only keeps the first 8 bins; numpy's FFT is the oracle.
    x = np.zeros((4, 16), np.complex64)
    x[:, 0] = 1
    expected = (np.abs(np.fft.ifft(np.fft.fft(x, norm="ortho")[:, :8], norm="ortho")) ** 2).sum()
    assert f"values: [{expected:.6g}]" in out


def test_a_file_that_looks_like_a_number_is_read_by_its_path(tmp_path, capsys):
    np.save(tmp_path / "1.npy", np.zeros((4, 16), np.float32))
    code, _, err = run(capsys, MLP, "--input", f"x={tmp_path / '1.npy'}")
    assert code == 0, err


def test_unwritable_save_directory(tmp_path, capsys):
    blocker = tmp_path / "file"
    blocker.write_text("")
    expect_error(capsys, [MLP, "--save", blocker / "sub"], "cannot save to")


def test_console_script_help_and_error():
    help_text = subprocess.run([RLX_RUN, "--help"], capture_output=True, text=True, check=True).stdout
    for flag in ("--func", "--input", "--seed", "--save", "NAME=VALUE", "numpy reference interpreter"):
        assert flag in help_text
    bad = subprocess.run([RLX_RUN, "/nonexistent.mlir"], capture_output=True, text=True)
    assert bad.returncode == 1
    assert bad.stderr == "rlx-run: error: no such file: '/nonexistent.mlir'\n"


def test_console_script_runs_the_llama_example():
    done = subprocess.run([RLX_RUN, ROOT / "examples" / "llama_block.mlir"], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("@llama: 14 arguments, 1 output (seed 0)\nout0: shape [1, 8, 32] dtype f32\n")


def test_mlp_example_through_rlx_dce_runs_the_same(tmp_path, capsys):
    rlx_opt = Path(sys.executable).parent / "rlx-opt"
    done = subprocess.run([rlx_opt, MLP, "-p", "rlx-dce"], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert "mir.sigmoid" in MLP.read_text() and "mir.sigmoid" not in done.stdout
    assert done.stdout.count("mir.matmul") == 2 and "mir.softmax" in done.stdout
    optimised = write(tmp_path, done.stdout, "mlp_dce.mlir")
    before, after = run(capsys, MLP)[1], run(capsys, optimised)[1]
    assert before == after


def test_rlx_names_win_over_ssa_names(tmp_path, capsys):
    clash = """\
func.func @f(%a: tensor<2xf32> {rlx.name = "b"}, %b: tensor<2xf32>) -> tensor<2xf32> {
  %0 = mir.sub %a, %b : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
  func.return %0 : tensor<2xf32>
}
"""
    path = write(tmp_path, clash)
    np.save(tmp_path / "v.npy", np.float32([10, 20]))
    np.save(tmp_path / "z.npy", np.float32([0, 0]))
    code, out, err = run(capsys, path, "--input", f"b={tmp_path / 'v.npy'}", "--input", f"%b={tmp_path / 'z.npy'}")
    assert code == 0, err
    assert "values: [10, 20]" in out  # `b` is arg0's rlx.name; `%b` is arg1


def test_invalid_utf8_is_located_at_the_first_bad_byte(tmp_path, capsys):
    binary = tmp_path / "weights.mlir"
    binary.write_bytes(b"func.func\n  @f \xff\xfe\x00garbage")
    expect_error(capsys, [binary], f"{binary}:2:6: error: invalid UTF-8 (byte 0xFF at offset 15)")


@pytest.mark.parametrize("text", [b"", b"\n  \n"])
def test_empty_stdin_says_the_input_is_empty(capsys, monkeypatch, text):
    """`rlx-opt missing.mlir | rlx-run -`: the failed rlx-opt printed nothing."""
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(text)))
    err = expect_error(capsys, ["-"], "")
    assert err == "rlx-run: error: the input on stdin is empty: nothing to run (did the command before the pipe fail?)\n"


def test_empty_file_says_it_is_empty(tmp_path, capsys):
    path = tmp_path / "empty.mlir"
    path.write_text("")
    assert expect_error(capsys, [path], "") == f"rlx-run: error: '{path}' is empty: nothing to run\n"


def test_a_module_without_functions_says_so(tmp_path, capsys):
    path = write(tmp_path, "// no functions here\n")
    expect_error(capsys, [path], "rlx-run: error: the module contains no func.func to run")


def test_reads_stdin_from_a_pipe():
    rlx_opt = Path(sys.executable).parent / "rlx-opt"
    optimised = subprocess.run([rlx_opt, MLP, "-p", "rlx-dce"], capture_output=True, text=True, check=True).stdout
    piped = subprocess.run([RLX_RUN, "-"], input=optimised, capture_output=True, text=True)
    direct = subprocess.run([RLX_RUN, MLP], capture_output=True, text=True)
    assert piped.returncode == 0, piped.stderr
    assert piped.stdout == direct.stdout


def test_stdin_parse_errors_name_stdin():
    bad = subprocess.run([RLX_RUN, "-"], input=PARSE_ERROR, capture_output=True, text=True)
    assert bad.returncode == 1
    assert bad.stderr.startswith("<stdin>:3:8: error: Operation mir.bogus is not registered\n")


# Planned (LIR) functions run on their arena ------------------------------------------------


def planned_text(text: str) -> str:
    from xdsl.context import Context

    from rlx_xdsl.conversions.mir_to_lir.plan_memory import PlanMemoryPass

    module = parse_module(text)
    PlanMemoryPass().apply(Context(), module)
    return str(module)


def test_a_planned_function_runs_on_its_arena_with_the_same_values(tmp_path, capsys):
    mir = run(capsys, MLP)[1]
    code, lir, err = run(capsys, write(tmp_path, planned_text(MLP.read_text()), "mlp_lir.mlir"))
    assert code == 0, err
    header, *values = lir.splitlines()
    assert header.startswith("@mlp: 5 arguments, 1 output (seed 0), on an arena of ") and header.endswith(" bytes")
    assert values == mir.splitlines()[1:]


def test_a_kernel_failure_on_the_arena_is_located_at_its_op(tmp_path, capsys):
    path = write(tmp_path, planned_text(GATHER))
    np.save(tmp_path / "i.npy", np.int64([0, 7, 1]))
    err = expect_error(capsys, [path, "--input", f"i={tmp_path / 'i.npy'}"], "index 7 is out of range")
    first, source, caret, note = err.splitlines()[:4]
    assert first == f"{path}:5:5: error: interpretation failed: 'mir.gather' index 7 is out of range [-4, 4)"
    assert source.lstrip().startswith("%g = mir.gather %n, %i axis = 0 {lir.slot = #lir.slot<")
    assert note == f"{path}:5:5: note: while running @f on its arena"


def test_disable_verify_runs_a_plan_the_verifier_rejects(tmp_path, capsys):
    text = re.sub(r"naive_bytes = \d+", "naive_bytes = 0", planned_text(GATHER))
    path = write(tmp_path, text)
    expect_error(capsys, [path], "'lir.plan' naive_bytes = 0, but the function's buffers give ")
    np.save(tmp_path / "ok.npy", np.int64([0, 1, 2]))
    inputs = ["--input", f"i={tmp_path / 'ok.npy'}"]
    code, out, err = run(capsys, "--disable-verify", path, *inputs)
    assert code == 0, err
    expected = run(capsys, write(tmp_path, GATHER, "mir.mlir"), *inputs)[1]
    assert out.splitlines()[1:] == expected.splitlines()[1:]  # only a figure was wrong
