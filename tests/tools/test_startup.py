"""What an `rlx-opt` process loads, and what a run leaves behind in the process.

numpy, ml_dtypes and the interpreter are for running graphs: `--help`, a parse-only
run and the inference passes on a graph without constants never import them (each
costs a large share of a short run's start-up).
"""

from __future__ import annotations

import gc
import json
import subprocess
import sys
import textwrap
import tomllib
from pathlib import Path

import pytest

from rlx_xdsl.ir.printer import print_ir
from rlx_xdsl.testing.llama import build_llama
from rlx_xdsl.tools.rlx_opt import run_opt

HEAVY = ("numpy", "ml_dtypes", "rlx_xdsl.interpreters")

INFERENCE = (
    "rlx-specialize{shapes=x=1x16x64,cos=16x8,sin=16x8},rlx-canonicalize,rlx-dce,"
    "rlx-fusion-pipeline{target=cpu},rlx-amp{policy=auto-mixed},rlx-fold-casts,rlx-plan-memory"
)


def loaded_after(argv: list[str], modules: tuple[str, ...] = HEAVY) -> list[str]:
    """Those of `modules` a fresh interpreter has loaded after `run_opt(argv)`."""
    script = textwrap.dedent(
        f"""
        import json, sys
        from rlx_xdsl.tools.rlx_opt import run_opt
        try:
            run_opt({argv!r})
        except SystemExit:
            pass
        print(json.dumps([m for m in {modules!r} if m in sys.modules]))
        """
    )
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True)
    return json.loads(proc.stdout.splitlines()[-1])


@pytest.fixture(scope="module")
def llama_file(tmp_path_factory):
    path = tmp_path_factory.mktemp("startup") / "llama.mlir"
    path.write_text(print_ir(build_llama(1)))
    return path


def test_help_loads_neither_numpy_nor_the_interpreter():
    assert loaded_after(["--help"]) == []


def test_a_parse_only_run_loads_neither_numpy_nor_the_interpreter(llama_file, tmp_path):
    assert loaded_after([str(llama_file), "-o", str(tmp_path / "out.mlir")]) == []


def test_a_pass_on_mir_does_not_load_lir(llama_file, tmp_path):
    """The pipeline looks for LIR plans only once LIR is loaded (`refuse_planned`)."""
    argv = [str(llama_file), "-p", "rlx-dce", "-o", str(tmp_path / "out.mlir")]
    assert loaded_after(argv, ("rlx_xdsl.dialects.lir", "rlx_xdsl.dialects.mir")) == ["rlx_xdsl.dialects.mir"]


def test_the_inference_passes_load_neither_on_a_graph_without_constants(llama_file, tmp_path):
    assert loaded_after([str(llama_file), "-p", INFERENCE, "-o", str(tmp_path / "out.mlir")]) == []


def test_a_graph_with_float_constants_loads_numpy_for_them(tmp_path):
    path = tmp_path / "c.mlir"
    path.write_text(
        "func.func @f() -> tensor<2xf32> {\n"
        "  %c = mir.constant dense<[1.5, 2.0]> : tensor<2xf32>\n"
        "  func.return %c : tensor<2xf32>\n}\n"
    )
    assert "numpy" in loaded_after([str(path), "-o", str(tmp_path / "out.mlir")])  # the check can fail


def test_a_run_gives_the_collector_its_settings_back(llama_file, tmp_path, capsys):
    before = gc.get_threshold()
    assert run_opt([str(llama_file), "-p", "rlx-dce", "-o", str(tmp_path / "out.mlir")]) == 0
    assert gc.get_threshold() == before
    assert gc.get_freeze_count() == 0


def test_the_rlx_opt_script_imports_the_tool_at_a_compilers_pace():
    """The console script sets the collector's pace before the tool's imports run."""
    from rlx_xdsl.tools.collector import OLDER, YOUNG

    pyproject = Path(__file__).resolve().parents[2] / "pyproject.toml"
    scripts = tomllib.loads(pyproject.read_text())["project"]["scripts"]
    assert scripts["rlx-opt"] == "rlx_xdsl.tools.launch:rlx_opt"
    script = textwrap.dedent(
        """
        import gc, json, sys

        class Probe:  # notes the collector's pace when the tool's module is imported
            def find_spec(self, name, path=None, target=None):
                if name == "rlx_xdsl.tools.rlx_opt":
                    print("pace", json.dumps(gc.get_threshold()), file=sys.stderr, flush=True)
                return None

        sys.meta_path.insert(0, Probe())
        sys.argv = ["rlx-opt", "--version"]
        from rlx_xdsl.tools.launch import rlx_opt
        rlx_opt()
        """
    )
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    assert "rlx-opt" in proc.stdout  # the tool ran (--version)
    paces = [json.loads(line[len("pace ") :]) for line in proc.stderr.splitlines() if line.startswith("pace ")]
    assert paces == [[YOUNG, OLDER, OLDER]]


def _launch(args: list[str], stdin: str | None = None) -> subprocess.CompletedProcess:
    """`rlx-opt ARGS` through the console script's entry point, in a fresh interpreter."""
    script = f"import sys; sys.argv = ['rlx-opt', *{args!r}]; from rlx_xdsl.tools.launch import rlx_opt; rlx_opt()"
    return subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, input=stdin)


def test_the_script_ends_without_tear_down_yet_flushes_everything(tmp_path, capsys):
    """The process skips the interpreter's tear-down, so the streams are flushed by hand:
    all of stdout (larger than a pipe's buffer), all of the -o file, the exit status."""
    llama_file = tmp_path / "llama.mlir"
    llama_file.write_text(print_ir(build_llama(32)))
    proc = _launch([str(llama_file), "-p", "rlx-dce"])
    assert proc.returncode == 0, proc.stderr
    assert run_opt([str(llama_file), "-p", "rlx-dce"]) == 0
    expected = capsys.readouterr().out
    assert len(expected) > 65536 and proc.stdout == expected
    out = tmp_path / "out.mlir"
    assert _launch([str(llama_file), "-p", "rlx-dce", "-o", str(out)]).returncode == 0
    assert out.read_text() == expected


def test_the_script_keeps_every_exit_status():
    bad = _launch(["-"], stdin="func.func @f() {\n  %x = mir.nope\n}\n")
    assert bad.returncode == 1 and bad.stderr.startswith("<stdin>:2:8: error: ")
    assert _launch(["--help"]).returncode == 0
    usage = _launch(["--no-such-flag"])
    assert usage.returncode == 2 and "usage" in usage.stderr


def test_rlx_run_interprets_a_call_without_loading_xdsls_interpreters(tmp_path):
    """Importing any `xdsl.interpreters.*` module runs that package's `__init__`, which loads
    every xDSL interpreter (RISC-V, Snitch, ...): about a third of `rlx-run`'s start-up.
    The engine implements `func` itself; a run through `func.call` still works."""
    path = tmp_path / "call.mlir"
    path.write_text(
        "func.func @twice(%a: tensor<2xf32>) -> tensor<2xf32> {\n"
        "  %s = mir.add %a, %a : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>\n"
        "  func.return %s : tensor<2xf32>\n}\n"
        "func.func @f(%x: tensor<2xf32>) -> tensor<2xf32> {\n"
        "  %y = func.call @twice(%x) : (tensor<2xf32>) -> tensor<2xf32>\n"
        "  func.return %y : tensor<2xf32>\n}\n"
    )
    script = textwrap.dedent(
        f"""
        import sys
        from rlx_xdsl.tools.rlx_run import main
        status = main([{str(path)!r}, "--func", "f", "--input", "x=[1.5,-2]"])
        print(status, sorted(m for m in sys.modules if m.startswith("xdsl.interpreters")))
        """
    )
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True)
    assert "values: [3, -4]" in proc.stdout  # 2 * [1.5, -2], through the call
    assert proc.stdout.splitlines()[-1] == "0 []"
