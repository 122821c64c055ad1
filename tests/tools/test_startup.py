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

from rlx_xdsl.printer import print_ir
from rlx_xdsl.testing.llama import build_llama
from rlx_xdsl.tools.rlx_opt import run_opt

HEAVY = ("numpy", "ml_dtypes", "rlx_xdsl.interpreters")

INFERENCE = (
    "rlx-specialize{shapes=x=1x16x64,cos=16x8,sin=16x8},rlx-canonicalize,rlx-dce,"
    "rlx-fusion-pipeline{target=cpu},rlx-amp{policy=auto-mixed},rlx-fold-casts,rlx-plan-memory"
)


def loaded_after(argv: list[str]) -> list[str]:
    """The heavy modules a fresh interpreter has loaded after `run_opt(argv)`."""
    script = textwrap.dedent(
        f"""
        import json, sys
        from rlx_xdsl.tools.rlx_opt import run_opt
        try:
            run_opt({argv!r})
        except SystemExit:
            pass
        print(json.dumps([m for m in {HEAVY!r} if m in sys.modules]))
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

        seen = []

        class Probe:  # notes the collector's pace when the tool's module is imported
            def find_spec(self, name, path=None, target=None):
                if name == "rlx_xdsl.tools.rlx_opt":
                    seen.append(gc.get_threshold())
                return None

        sys.meta_path.insert(0, Probe())
        sys.argv = ["rlx-opt", "--version"]
        from rlx_xdsl.tools.launch import rlx_opt
        try:
            rlx_opt()
        except SystemExit:
            pass
        print(json.dumps(seen))
        """
    )
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True)
    assert "rlx-opt" in proc.stdout  # the tool ran (--version)
    assert json.loads(proc.stdout.splitlines()[-1]) == [[YOUNG, OLDER, OLDER]]
