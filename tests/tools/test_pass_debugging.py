"""rlx-opt's pipeline debugging aids (issue 27): statistics, instrumentation hooks, reproducers.

The output formats are checked by the lit tests in `lit_tests/tools/debugging`; these
tests check what the numbers mean and the contracts the passes rely on.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from xdsl.pattern_rewriter import GreedyRewritePatternApplier

from rlx_xdsl.tools.rlx_opt import run_opt
from rlx_xdsl.transforms import get_all_passes
from rlx_xdsl.transforms.canonicalize import PATTERNS
from rlx_xdsl.transforms.options import pass_options
from rlx_xdsl.transforms.statistics import CountedPattern, collecting, counted, declared

EXAMPLES = Path(__file__).parents[2] / "examples"


def _instance(name: str):
    cls = get_all_passes()[name]()
    required = {o.field: o.example for o in pass_options(cls) if o.required}  # rlx-grad's func, ...
    return cls(**required)


@pytest.mark.parametrize("name", sorted(get_all_passes()))
def test_every_rlx_pass_declares_a_statistic(name):
    stats = declared(_instance(name))
    assert stats, f"{name} reports no counter"
    assert all(s.name and s.description for s in stats)


def test_counting_costs_nothing_unless_statistics_are_collected():
    pattern = GreedyRewritePatternApplier(list(PATTERNS))
    assert counted(pattern) is pattern
    with collecting():
        wrapped = counted(pattern)
    assert isinstance(wrapped, GreedyRewritePatternApplier)
    assert all(isinstance(p, CountedPattern) for p in wrapped.rewrite_patterns)


def _statistics(capsys, *args: str) -> tuple[str, dict[str, int]]:
    """The output and the `(S) VALUE NAME` counters of one rlx-opt run."""
    assert run_opt([*args, "--mlir-pass-statistics", "--mlir-pass-statistics-display=list"]) == 0
    out, err = capsys.readouterr()
    return out, {name: int(value) for value, name in re.findall(r"\(S\) +(\d+) (\S+) ", err)}


def test_fusion_counts_match_the_fused_ops_in_the_output(capsys):
    out, stats = _statistics(
        capsys, str(EXAMPLES / "ffn_dynamic.mlir"), "-p", "rlx-specialize{shapes=x=2x8x32},rlx-fusion-pipeline"
    )
    assert stats["FuseSwiglu"] == out.count("mir.fused_swiglu") > 0
    assert stats["num-args-specialized"] == 1


def test_casts_counted_are_the_casts_in_the_output(capsys, tmp_path):
    source = EXAMPLES / "mlp.mlir"
    before = source.read_text().count("mir.cast")
    out, stats = _statistics(capsys, str(source), "-p", "rlx-amp{policy=always-f16}")
    assert stats["num-casts"] == out.count("mir.cast") - before > 0


def test_counts_sum_over_the_functions_a_nested_pass_runs_on(capsys, tmp_path):
    def function(name: str, dead: int) -> str:
        body = "".join(f"  %d{i} = mir.neg %x : (tensor<2xf32>) -> tensor<2xf32>\n" for i in range(dead))
        return f"func.func @{name}(%x: tensor<2xf32>) -> tensor<2xf32> {{\n{body}  func.return %x : tensor<2xf32>\n}}\n"

    path = tmp_path / "two.mlir"
    path.write_text(function("f", 1) + function("g", 2))
    _, stats = _statistics(capsys, str(path), "-p", "func.func(rlx-dce)")
    assert stats["num-erased"] == 3
