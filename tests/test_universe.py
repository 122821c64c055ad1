"""The `xdsl.universe` plugin: stock `xdsl-opt` (not rlx-opt) knows RLX's dialects and passes."""

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

from xdsl.universe import Universe

from rlx_xdsl.context import RLX_DIALECTS, make_context
from rlx_xdsl.transforms import get_all_passes

SOURCE = """\
func.func @f(%a: tensor<2x3xf32>, %b: tensor<3xf32>) -> tensor<2x3xf32> {
  %0 = mir.add %a, %b : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  %unused = mir.relu %0 : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %1 = mir.compare gt, %0, %a : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xi1>
  %2 = mir.where %1, %0, %a : (tensor<2x3xi1>, tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  func.return %2 : tensor<2x3xf32>
}
"""


def xdsl_opt(*args: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    beside_python = Path(sys.executable).with_name("xdsl-opt")
    exe = str(beside_python) if beside_python.exists() else shutil.which("xdsl-opt")
    assert exe is not None, "xdsl-opt is not installed"
    # A wide terminal keeps argparse from wrapping pass names at their hyphens.
    env = {**os.environ, "COLUMNS": "100000"}
    return subprocess.run([exe, *args], input=stdin, capture_output=True, text=True, env=env, timeout=120)


def test_universe_entry_point_is_discovered():
    multiverse = Universe.get_multiverse()
    assert set(RLX_DIALECTS) <= set(multiverse.all_dialects)
    assert set(get_all_passes()) <= set(multiverse.all_passes)


def test_contexts_look_the_installed_plugins_up_once(monkeypatch):
    """`make_context` reads the installed packages' entry points once per process, not per
    context (the tests make thousands), and still knows every plugin's dialects."""
    make_context()
    calls = []
    monkeypatch.setattr(Universe, "get_multiverse", lambda: calls.append(1))
    names = make_context().registered_dialect_names
    assert calls == []
    assert {"builtin", "func", "arith", "linalg", *RLX_DIALECTS} <= set(names)


def test_stock_xdsl_opt_parses_and_prints_mir():
    proc = xdsl_opt(stdin=SOURCE)
    assert proc.returncode == 0, proc.stderr
    for line in SOURCE.splitlines()[1:-2]:
        assert line.strip() in proc.stdout


def test_stock_xdsl_opt_lists_rlx_passes():
    proc = xdsl_opt("--help")
    assert proc.returncode == 0, proc.stderr
    assert "rlx-dce" in proc.stdout
    assert "rlx-specialize" in proc.stdout


def test_stock_xdsl_opt_runs_rlx_dce():
    proc = xdsl_opt("-p", "rlx-dce", stdin=SOURCE)
    assert proc.returncode == 0, proc.stderr
    assert "%unused" not in proc.stdout
    assert "mir.where %1, %0, %a" in proc.stdout  # live ops stay


def test_stock_xdsl_opt_plans_memory_and_reads_the_plan_back():
    planned = xdsl_opt("-p", "rlx-plan-memory", stdin=SOURCE)
    assert planned.returncode == 0, planned.stderr
    assert "lir.plan arena_bytes = " in planned.stdout and "#lir.slot<offset = " in planned.stdout
    again = xdsl_opt(stdin=planned.stdout)  # parsed and verified (the plan proved) by stock xdsl-opt
    assert again.returncode == 0, again.stderr
    assert again.stdout == planned.stdout


def _readme_form() -> str:
    """The pipeline the README tells users to give stock xdsl-opt."""
    readme = (Path(__file__).resolve().parents[1] / "README.md").read_text()
    match = re.search(r"for stock `xdsl-opt`\s+write\s+`-p '([^']+)'`", readme)
    assert match is not None, "the README no longer shows the xdsl-opt form"
    return match.group(1)


def test_stock_xdsl_opt_runs_the_readme_pipeline_with_quoted_option_values():
    """xDSL's option syntax needs `shapes="x=2x8x32"` (rlx-opt also takes it unquoted)."""
    pipeline = _readme_form()
    assert '"x=2x8x32"' in pipeline
    example = Path(__file__).resolve().parents[1] / "examples" / "ffn_dynamic.mlir"
    proc = xdsl_opt(str(example), "-p", pipeline)
    assert proc.returncode == 0, proc.stderr
    assert "%x: tensor<2x8x32xf32>" in proc.stdout


def test_the_unquoted_form_is_rlx_opt_s_only():
    """Documents why the README quotes: stock xdsl-opt rejects `shapes=x=2x8x32`."""
    proc = xdsl_opt("-p", "rlx-specialize{shapes=x=2x8x32}", stdin=SOURCE)
    assert proc.returncode != 0
