"""`rlx-run --backend=xla` and `rlx-opt --emit=stablehlo`, in process (jax starts once):
results against the interpreter's, errors as the tools report them. `RLX_XLA_DEVICE=gpu`
runs them on GPUs (the sharded example needs 4)."""

from __future__ import annotations

import os
import re
import shlex
from pathlib import Path

import numpy as np
import pytest

jax = pytest.importorskip("jax")

from rlx_xdsl.backends.xla import to_stablehlo  # noqa: E402
from rlx_xdsl.context import parse_module  # noqa: E402
from rlx_xdsl.tools.rlx_opt import run_opt  # noqa: E402
from rlx_xdsl.tools.rlx_run import main  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples"
DEVICE = os.environ.get("RLX_XLA_DEVICE", "cpu")
XLA = ["--backend=xla", f"--device={DEVICE}"]


def run(capsys, *argv):
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


def saved(directory: Path) -> list[np.ndarray]:
    return [np.load(p) for p in sorted(directory.glob("out*.npy"))]


# Every shipped example but ffn_dynamic.mlir, whose `?` dims need --input values
# (tests/backends/test_xla.py compiles it once per shape).
STATIC_EXAMPLES = sorted(p.name for p in EXAMPLES.glob("*.mlir") if p.name != "ffn_dynamic.mlir")


@pytest.mark.parametrize("example", STATIC_EXAMPLES)
def test_xla_runs_match_the_interpreter(capsys, tmp_path, example):
    """Every example: the MLP over a 2x2 mesh, HIR graphs (lowered to MIR first), the scan RNN,
    complex values, the training loss..."""
    path = EXAMPLES / example
    if example == "mlp_sharded.mlir" and len(jax.devices(DEVICE)) < 4:
        pytest.skip(f"the 2x2 mesh needs 4 {DEVICE} devices")  # only on a GPU machine with fewer
    code, out, err = run(capsys, path, *XLA, "--save", tmp_path / "xla")
    assert (code, err) == (0, "")
    assert f"XLA {DEVICE}" in out.splitlines()[0]
    assert ("mesh data=2 model=2 on 4 devices" in out) == (example == "mlp_sharded.mlir")
    assert run(capsys, path, "--save", tmp_path / "interp")[0] == 0
    got, want = saved(tmp_path / "xla"), saved(tmp_path / "interp")
    assert len(got) == len(want) > 0
    for g, w in zip(got, want):
        # Unscaled random weights make outputs of ~1e3 (llama_block): f32 rounding is relative
        # to that scale, not to each element.
        np.testing.assert_allclose(g, w, rtol=1e-4, atol=1e-4 + 1e-5 * float(np.abs(w).max()))


def test_params_and_inputs_are_taken_as_by_the_other_backends(capsys, tmp_path):
    path = EXAMPLES / "mlp_sharded.mlir"
    rng = np.random.default_rng(5)
    np.savez(tmp_path / "w.npz", **{"fc2.bias": rng.standard_normal(10).astype(np.float32)})
    np.save(tmp_path / "x.npy", rng.standard_normal((4, 16)).astype(np.float32))
    common = ["--params", tmp_path / "w.npz", "--random-params", "--input", f"x={tmp_path / 'x.npy'}", "--seed", "2"]
    assert run(capsys, path, *XLA, *common, "--save", tmp_path / "xla")[0] == 0
    assert run(capsys, path, *common, "--save", tmp_path / "interp")[0] == 0
    np.testing.assert_allclose(saved(tmp_path / "xla")[0], saved(tmp_path / "interp")[0], rtol=1e-4, atol=1e-4)


def test_dynamic_dims_take_the_shapes_of_the_inputs(capsys, tmp_path):
    np.save(tmp_path / "x.npy", np.random.default_rng(1).standard_normal((2, 3, 32)).astype(np.float32))
    given = ["--input", f"x={tmp_path / 'x.npy'}"]
    path = EXAMPLES / "ffn_dynamic.mlir"
    assert run(capsys, path, *XLA, *given, "--save", tmp_path / "xla")[0] == 0
    assert run(capsys, path, *given, "--save", tmp_path / "interp")[0] == 0
    np.testing.assert_allclose(saved(tmp_path / "xla")[0], saved(tmp_path / "interp")[0], rtol=1e-4, atol=1e-4)


def test_a_bad_sharding_is_located(capsys, tmp_path):
    text = (EXAMPLES / "mlp_sharded.mlir").read_text().replace('rlx.sharding = ["model"]', 'rlx.sharding = ["data", unit]')
    path = tmp_path / "bad.mlir"
    path.write_text(text)
    code, out, err = run(capsys, path, "--backend=xla")
    assert code == 1 and out == ""
    line = next(i for i, s in enumerate(text.splitlines(), 1) if s.lstrip().startswith("func.func"))
    assert err.startswith(f"{path}:{line}:3: error: 'rlx.sharding' of argument #2 ('fc1.bias') of @mlp has 2 entries")
    assert "Traceback" not in err


def test_flag_misuse_is_an_error(capsys):
    assert run(capsys, EXAMPLES / "mlp.mlir", "--tf32")[2] == "rlx-run: error: --tf32 needs --backend=xla\n"
    code, _, err = run(capsys, EXAMPLES / "mlp.mlir", "--device=gpu")
    assert code == 1 and "needs --backend=iree or --backend=xla" in err


def test_emit_stablehlo_writes_the_export(capsys, tmp_path):
    path = EXAMPLES / "mlp.mlir"
    out = tmp_path / "mlp.stablehlo.mlir"
    assert run_opt([str(path), "--emit=stablehlo", "-o", str(out)]) == 0
    assert out.read_text() == to_stablehlo(parse_module(path.read_text()))


def test_emit_stablehlo_after_passes_and_its_errors(capsys, tmp_path):
    hir = EXAMPLES / "llama_hir.mlir"
    assert run_opt([str(hir), "-p", "rlx-lower-hir", "--emit=stablehlo"]) == 0
    lowered = capsys.readouterr().out
    assert lowered.startswith("module @jit_llama")
    # HIR is lowered first, as rlx-run --backend=xla does.
    assert run_opt([str(hir), "--emit=stablehlo"]) == 0
    assert capsys.readouterr().out == lowered
    assert run_opt([str(hir), "--emit=stablehlo", "--emit-func=nope"]) == 1
    assert "rlx-opt: error: --emit=stablehlo: no function named 'nope' (functions: 'llama')" in capsys.readouterr().err


def test_the_data_parallel_training_step_of_docs_distributed_md_runs_as_written(capsys, tmp_path):
    """The doc's command on the shipped example (its --device=gpu as this run's device): the
    gradient function runs over the example's mesh and names its loss and gradients."""
    text = (ROOT / "docs" / "distributed.md").read_text()
    command = re.search(r"```sh\n(rlx-opt examples/llama_loss_sharded\.mlir.*?)\n```", text, re.S).group(1)
    opt, _, run_part = command.replace("\\\n", " ").partition("|")
    opt_args, run_args = shlex.split(opt)[1:], shlex.split(run_part)[1:]
    assert run_args[-1] == "--device=gpu"
    graph = tmp_path / "grad.mlir"
    assert run_opt([str(ROOT / opt_args[0]), *opt_args[1:], "-o", str(graph)]) == 0
    code, out, err = run(capsys, graph, *run_args[1:-1], f"--device={DEVICE}")
    assert (code, err) == (0, "")
    lines = out.splitlines()
    assert lines[0].startswith("@llama_grad: 18 arguments, 15 outputs") and "mesh data=2 on 2 devices" in lines[0]
    assert lines[1] == "loss: shape [] dtype f32" and "d_layers.0.wq: shape [16, 16] dtype f32" in lines
