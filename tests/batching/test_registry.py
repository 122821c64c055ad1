"""The batching registry's coverage of MIR: every op with a VJP rule has a batching rule."""

from rlx_xdsl import layers
from rlx_xdsl.autodiff.registry import VJP_RULES
from rlx_xdsl.batching.registry import BATCH_RULES, NoBatchRule
from rlx_xdsl.dialects.mir import ALL_OPS

layers.load("vjp")
layers.load("batching")


def test_every_op_with_a_vjp_rule_has_a_batching_rule_or_a_reason():
    assert BATCH_RULES.missing(op for op in ALL_OPS if op in VJP_RULES) == []


def test_every_mir_op_has_a_batching_rule_or_a_reason():
    assert BATCH_RULES.missing(ALL_OPS) == []


def test_the_ops_without_a_rule_are_those_never_batched():
    """Only ops without operands (never batched) and a terminator (batched with its parent)."""
    without = {op.name: BATCH_RULES[op].reason for op in ALL_OPS if isinstance(BATCH_RULES[op], NoBatchRule)}
    assert sorted(without) == ["mir.constant", "mir.yield"]  # `mir.iota` only through its `like`
    assert all(reason for reason in without.values())


LIKE = """func.func @f(%b: tensor<1x3xf32>, %ids: tensor<4x2xi64>) -> (tensor<4x3xf32>, tensor<4xi64>) {
  %0 = mir.expand %b target_shape = [-1, 3] like %ids like_dims = [0, -1] : (tensor<1x3xf32>, tensor<4x2xi64>) -> tensor<4x3xf32>
  %1 = mir.iota dimension = 0 like %ids like_dims = [0] : tensor<4x2xi64> : tensor<4xi64>
  func.return %0, %1 : tensor<4x3xf32>, tensor<4xi64>
}
"""


def test_ops_sized_by_a_batched_like_read_its_dims_one_axis_on():
    """`mir.expand` and `mir.iota` with `like`, batched over each argument and both."""
    import numpy as np

    from rlx_xdsl.context import parse_module
    from rlx_xdsl.testing.vmap_check import check_vmap

    rng = np.random.default_rng(3)
    examples = [[rng.standard_normal((1, 3)).astype(np.float32), np.zeros((4, 2), np.int64)] for _ in range(2)]
    for batched in ([0], [1], [0, 1]):
        check_vmap(parse_module(LIKE), "f", examples, batched)


RESHAPE_NARROW_LIKE = """func.func @f(%x: tensor<8x3xf32>, %ids: tensor<2x4xi64>) -> (tensor<2x4x3xf32>, tensor<4x3xf32>) {
  %0 = mir.reshape %x new_shape = [-1, -1, 3] like %ids like_dims = [0, 1, -1] : (tensor<8x3xf32>, tensor<2x4xi64>) -> tensor<2x4x3xf32>
  %1 = mir.narrow %x axis = 0 start = 1 len = -1 like %ids like_dims = [1, -1] : (tensor<8x3xf32>, tensor<2x4xi64>) -> tensor<4x3xf32>
  func.return %0, %1 : tensor<2x4x3xf32>, tensor<4x3xf32>
}
"""


def test_reshape_and_narrow_sized_by_like_batch_over_each_argument_and_both():
    import numpy as np

    from rlx_xdsl.context import parse_module
    from rlx_xdsl.testing.vmap_check import check_vmap

    rng = np.random.default_rng(4)
    examples = [[rng.standard_normal((8, 3)).astype(np.float32), np.zeros((2, 4), np.int64)] for _ in range(2)]
    for batched in ([0], [1], [0, 1]):
        check_vmap(parse_module(RESHAPE_NARROW_LIKE), "f", examples, batched)


def test_an_op_without_a_rule_is_a_located_error():
    """Nothing is silently unrolled: the error names the op, at its line."""
    import pytest

    from rlx_xdsl.batching.vmap import build_vmap
    from rlx_xdsl.context import parse_module
    from rlx_xdsl.dialects.mir.elementwise import ExpOp
    from rlx_xdsl.ir.diagnostics import OpError

    module = parse_module(
        "func.func @f(%x: tensor<3xf32>) -> tensor<3xf32> {\n"
        "  %0 = mir.exp %x : (tensor<3xf32>) -> tensor<3xf32>\n"
        "  func.return %0 : tensor<3xf32>\n"
        "}\n"
    )
    rule = BATCH_RULES.remove(ExpOp)
    try:
        with pytest.raises(OpError, match="'rlx-vmap' no batching rule for 'mir.exp'") as error:
            build_vmap(module, "f", ["x"], 2)
    finally:
        BATCH_RULES.add(ExpOp, rule)
    assert error.value.op.name == "mir.exp"
    assert [op.sym_name.data for op in module.ops] == ["f"], "the module is left unchanged"
