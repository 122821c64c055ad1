"""The IREE backend: run_function(backend="iree"), rlx-run --backend=iree, the compile cache,
the CUDA device, and what happens without IREE."""

import sys

import numpy as np
import pytest

from rlx_xdsl.backends import iree as backend
from rlx_xdsl.backends.iree import (
    DEVICES,
    DeviceUnavailable,
    IreeModule,
    IreeUnavailable,
    compile_text,
    lowered_text,
)
from rlx_xdsl.building.builder import GraphBuilder
from rlx_xdsl.run import run_function
from rlx_xdsl.testing.llama import build_llama
from rlx_xdsl.tools.rlx_run import main as rlx_run

SMALL = """\
func.func @f(%x: tensor<2x3xf32> {rlx.name = "x"}, %w: tensor<3x4xf32> {rlx.name = "w", rlx.param}) -> tensor<2x4xf32> {
  %0 = mir.matmul %x, %w : (tensor<2x3xf32>, tensor<3x4xf32>) -> tensor<2x4xf32>
  %1 = mir.gelu %0 : (tensor<2x4xf32>) -> tensor<2x4xf32>
  func.return %1 : tensor<2x4xf32>
}
"""

COMPLEX = """\
func.func @f(%z: tensor<2xcomplex<f32>>) -> tensor<2xcomplex<f32>> {
  %0 = mir.max %z, %z : (tensor<2xcomplex<f32>>, tensor<2xcomplex<f32>>) -> tensor<2xcomplex<f32>>
  func.return %0 : tensor<2xcomplex<f32>>
}
"""


def graph(n: int):
    """A small graph whose lowered text is unique to `n` (so caches start cold)."""
    b = GraphBuilder("f")
    x = b.input("x", [n, 3])
    b.output(b.tanh(b.mul(x, x)))
    return b.module()


def test_run_function_runs_on_iree_like_the_interpreter():
    module = graph(2)
    x = np.linspace(-1, 1, 6, dtype=np.float32).reshape(2, 3)
    (got,) = run_function(module, "f", [x], backend="iree")
    np.testing.assert_allclose(got, np.tanh(x * x), rtol=1e-6)
    (first,) = run_function(module, None, [x], backend="iree")
    np.testing.assert_array_equal(first, got)
    with pytest.raises(ValueError, match="unknown backend 'tvm'"):
        run_function(module, "f", [x], backend="tvm")


def test_calls_check_the_function_and_its_arity():
    compiled = IreeModule(graph(3))
    with pytest.raises(KeyError, match="no function named 'g'"):
        compiled.run("g", [])
    with pytest.raises(ValueError, match="@f takes 1 arguments, got 2"):
        compiled.run("f", [np.zeros((3, 3), np.float32)] * 2)


def test_compiled_modules_are_cached_by_their_text(monkeypatch, tmp_path):
    calls = []
    compiler = backend._iree()[0]
    real = compiler.compile_str
    monkeypatch.setattr(compiler, "compile_str", lambda *a, **k: calls.append(1) or real(*a, **k))
    module = graph(4)
    first = IreeModule(module)
    second = IreeModule(module)
    assert len(calls) == 1 and first.vmfb == second.vmfb

    # Across processes: a cache directory, read back when the in-process cache is empty.
    monkeypatch.setenv("RLX_IREE_CACHE_DIR", str(tmp_path))
    module = graph(5)
    IreeModule(module)
    assert len(calls) == 2 and len(list(tmp_path.glob("*.vmfb"))) == 1
    monkeypatch.setattr(backend, "_COMPILED", {})
    x = np.ones((5, 3), np.float32)
    (got,) = IreeModule(module).run("f", [x])
    assert len(calls) == 2
    np.testing.assert_allclose(got, np.tanh(x), rtol=1e-6)


def test_the_cuda_target_compiles_the_llama_block_on_any_machine():
    """iree-compile needs no GPU; sm_80 code also runs on newer GPUs."""
    vmfb = compile_text(lowered_text(build_llama(1)), DEVICES["cuda"])
    assert len(vmfb) > 1000


def _cuda_device_available() -> bool:
    try:
        backend._runtime_device(DEVICES["cuda"])
    except DeviceUnavailable:
        return False
    return True


def test_cuda_runs_or_says_clearly_that_there_is_no_gpu(capsys):
    module = graph(2)
    x = np.ones((2, 3), np.float32)
    if _cuda_device_available():
        (got,) = run_function(module, "f", [x], backend="iree", device="cuda")
        np.testing.assert_allclose(got, np.tanh(x), rtol=1e-5)
        return
    with pytest.raises(DeviceUnavailable, match="--device=cuda needs an NVIDIA GPU with its driver"):
        IreeModule(module, device="cuda")
    assert rlx_run(["examples/mlp.mlir", "--backend=iree", "--device=cuda"]) == 1
    out, err = capsys.readouterr()
    assert (
        out == ""
        and err.startswith("rlx-run: error: --device=cuda needs an NVIDIA GPU")
        and err.count("\n") == 1
    )


def test_without_iree_installed_the_backend_says_how_to_install_it(monkeypatch, tmp_path, capsys):
    for name in ("iree.compiler", "iree.runtime"):
        monkeypatch.setitem(sys.modules, name, None)  # makes `import` raise ImportError
    with pytest.raises(IreeUnavailable, match=r"pip install -e '\.\[iree\]'"):
        IreeModule(graph(2))
    path = tmp_path / "g.mlir"
    path.write_text(SMALL)
    assert rlx_run([str(path), "--backend=iree"]) == 1
    out, err = capsys.readouterr()
    assert out == ""
    assert err == "rlx-run: error: the IREE backend needs IREE: " + backend.INSTALL_HINT + "\n"


def test_rlx_run_on_iree_prints_what_the_interpreter_prints(tmp_path, capsys):
    path = tmp_path / "g.mlir"
    path.write_text(SMALL)
    assert rlx_run([str(path)]) == 0
    reference = capsys.readouterr().out.splitlines()
    assert rlx_run([str(path), "--backend=iree"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == "@f: 2 arguments, 1 output (seed 0, IREE cpu)"
    assert reference[0] == "@f: 2 arguments, 1 output (seed 0)"
    assert lines[1:2] == reference[1:2]  # shape and dtype
    got = [float(v) for v in lines[-1].split("[")[1].rstrip("]").split(", ")[:-1]]
    want = [float(v) for v in reference[-1].split("[")[1].rstrip("]").split(", ")[:-1]]
    np.testing.assert_allclose(got, want, rtol=1e-4)


HIR = """\
func.func @f(%x: tensor<2x3xf32> {rlx.name = "x"}, %w: tensor<3x4xf32> {rlx.name = "w", rlx.param}) -> tensor<2x4xf32> {
  %0 = hir.linear %x, %w : (tensor<2x3xf32>, tensor<3x4xf32>) -> tensor<2x4xf32>
  func.return %0 : tensor<2x4xf32>
}
"""


def test_rlx_run_lowers_hir_before_iree_as_the_interpreter_runs_it(tmp_path, capsys):
    """The HIR block becomes MIR first (it used to be "no lowering for 'hir.linear'")."""
    path = tmp_path / "h.mlir"
    path.write_text(HIR)
    inputs = ["--input", "x=[[1, 2, 3], [-1, 0, 2]]", "--input", "w=[[1, 0, 0, 1], [0, 1, 0, 1], [0, 0, 1, 1]]"]
    assert rlx_run([str(path), "--backend=iree", *inputs, "--save", str(tmp_path / "o")]) == 0
    out, err = capsys.readouterr()
    assert err == ""
    assert out.startswith("@f: 2 arguments, 1 output (IREE cpu)\n")  # every input given: no seed
    np.testing.assert_array_equal(np.load(tmp_path / "o" / "out0.npy"), [[1, 2, 3, 6], [-1, 0, 2, 1]])
    assert "hir.linear" in path.read_text()  # the input itself is not changed


def test_rlx_run_locates_an_op_iree_cannot_take(tmp_path, capsys):
    path = tmp_path / "c.mlir"
    path.write_text(COMPLEX)
    assert rlx_run([str(path), "--backend=iree", "--input", "z=" + str(tmp_path / "z.npy")]) == 1
    _, err = capsys.readouterr()
    assert "z.npy" in err  # inputs are read before anything is lowered
    np.save(tmp_path / "z.npy", np.ones(2, np.complex64))
    assert rlx_run([str(path), "--backend=iree", "--input", "z=" + str(tmp_path / "z.npy")]) == 1
    _, err = capsys.readouterr()
    assert err.startswith(
        f"{path}:2:3: error: cannot lower 'mir.max': max of element type complex<f32> has no lowering"
    )
    assert "Traceback" not in err


def test_rlx_run_device_needs_the_iree_backend(capsys):
    assert rlx_run(["examples/mlp.mlir", "--device=cuda"]) == 1
    assert capsys.readouterr().err == "rlx-run: error: --device=cuda needs --backend=iree or --backend=xla\n"


# Resident parameters --------------------------------------------------------------


def llama_case():
    """The 1-layer LLaMA graph, its inputs and the interpreter's output."""
    from rlx_xdsl.ir.graph import graph_args, random_inputs

    module = build_llama(1, seq=4, dim=16, n_heads=2, n_kv_heads=1, ffn=32)
    f = module.ops.first
    inputs = [x * np.float32(0.3) for x in random_inputs(f, seed=1)]
    params = {a.name: inputs[a.index] for a in graph_args(f) if a.is_param}
    (want,) = run_function(module, "llama", inputs)
    return module, inputs, params, want


def test_bound_parameters_are_uploaded_once_and_give_the_same_results(monkeypatch):
    module, inputs, params, want = llama_case()
    compiled = IreeModule(module)
    (unbound,) = compiled.run("llama", inputs)
    uploads = []
    real = IreeModule._to_device
    monkeypatch.setattr(IreeModule, "_to_device", lambda self, *a: uploads.append(1) or real(self, *a))

    compiled.bind("llama", params)
    assert len(uploads) == len(params) == 11
    assert compiled.unbound("llama") == ["x", "cos", "sin"]
    for _ in range(3):
        (got,) = compiled.run("llama", inputs[:3])
        np.testing.assert_array_equal(got, unbound)
    assert len(uploads) == len(params) + 3 * 3  # only the activations move per call
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5)

    # A buffer already on the device is not copied again; outputs may stay there.
    x = compiled.put("llama", "x", inputs[0])
    count = len(uploads)
    (on_device,) = compiled.run("llama", [x, *inputs[1:3]], to_host=False)
    assert len(uploads) == count + 2
    np.testing.assert_array_equal(compiled.fetch("llama", [on_device])[0], unbound)

    # Rebinding one parameter replaces only it.
    compiled.bind("llama", {"layers.0.wo": np.zeros_like(params["layers.0.wo"])})
    (changed,) = compiled.run("llama", inputs[:3])
    assert not np.array_equal(changed, unbound)


def test_binding_checks_names_shapes_and_the_remaining_arity():
    module, inputs, params, _ = llama_case()
    compiled = IreeModule(module)
    with pytest.raises(KeyError, match=r"@llama has no parameter named 'x' \(parameters: layers\.0\."):
        compiled.bind("llama", {"x": inputs[0]})  # an input, not a parameter
    with pytest.raises(ValueError, match=r"parameter 'layers.0.wq' has shape \(16, 16\), got \(16, 8\)"):
        compiled.bind("llama", {"layers.0.wq": np.zeros((16, 8), np.float32)})
    with pytest.raises(KeyError, match="no function named 'g'"):
        compiled.bind("g", {})
    compiled.bind("llama", params)
    with pytest.raises(ValueError, match="@llama takes 3 unbound arguments, got 14"):
        compiled.run("llama", inputs)


# The CUDA target ------------------------------------------------------------------


@pytest.mark.parametrize(
    ("capability", "accepted", "target"),
    [
        (None, None, "sm_80"),  # no GPU: Ampere's code, which newer GPUs JIT
        ((8, 0), None, "sm_80"),
        ((8, 6), False, "sm_86"),  # a known target needs no probe
        ((8, 9), None, "sm_89"),
        ((9, 0), False, "sm_89"),  # Hopper on IREE 3.13: the newest known target below it
        ((9, 0), None, "sm_89"),  # no compiler to ask (a run from the compile cache)
        ((9, 0), True, "sm_90"),  # a compiler that takes sm_90 gets it
        ((12, 0), False, "sm_89"),
        ((5, 2), False, "sm_52"),  # older than every known target: its own, for the compiler to judge
    ],
)
def test_the_cuda_target_follows_the_compute_capability(capability, accepted, target):
    asked = []
    assert backend.cuda_target(capability, lambda t: asked.append(t) or accepted) == target
    assert asked in ([], [f"sm_{capability[0]}{capability[1]}"] if capability else [])


def test_iree_3_13_takes_the_known_targets_and_not_sm_90():
    """The facts `KNOWN_CUDA_TARGETS` records, asked of the installed compiler."""
    from iree.compiler.version import VERSION

    assert backend.compiler_accepts_cuda_target("sm_89") is True
    if VERSION.startswith("3.13."):
        assert backend.compiler_accepts_cuda_target("sm_90") is False


def test_the_gpu_capability_comes_from_nvidia_smi_and_the_override_wins(monkeypatch, tmp_path):
    smi = tmp_path / "nvidia-smi"
    smi.write_text("#!/bin/sh\necho 9.0\necho 9.0\n")
    smi.chmod(0o755)
    monkeypatch.setenv("PATH", str(tmp_path))
    monkeypatch.delenv(backend.CUDA_TARGET_ENV, raising=False)
    assert backend.gpu_capability() == (9, 0)
    assert backend.cuda_device().flags[-1] == "--iree-cuda-target=sm_89"
    monkeypatch.setenv(backend.CUDA_TARGET_ENV, "sm_86")
    assert backend.cuda_device().flags[-1] == "--iree-cuda-target=sm_86"
    assert backend.cuda_device("sm_75").flags[-1] == "--iree-cuda-target=sm_75"
    smi.write_text("#!/bin/sh\nexit 9\n")
    assert backend.gpu_capability() is None
    monkeypatch.setenv("PATH", "")
    assert backend.gpu_capability() is None
