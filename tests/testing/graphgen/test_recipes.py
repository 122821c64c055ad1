"""The recipe table: MIR recipes sit with their dialect group, and another dialect's
ops get recipes the same way (registered by class, drawn by `graphs(ops=...)`)."""

import pytest
from hypothesis import HealthCheck, Phase, given, settings
from xdsl.dialects.builtin import TensorType
from xdsl.ir import SSAValue
from xdsl.irdl import (
    IRDLOperation,
    irdl_op_definition,
    operand_def,
    result_def,
    traits_def,
)

from rlx_xdsl import layers
from rlx_xdsl.dialects import hir as hir_dialect
from rlx_xdsl.dialects import mir as mir_dialect
from rlx_xdsl.dialects.mir.elementwise import AddOp, ConstantOp
from rlx_xdsl.dialects.traits import OperandRoles, Role, operand_roles
from rlx_xdsl.ir.dense import dense_to_numpy
from rlx_xdsl.testing import graphgen
from rlx_xdsl.testing.graphgen import (
    RECIPES,
    GraphState,
    graphs,
    needs_recipe,
    with_ids,
)
from rlx_xdsl.testing.graphgen.values import rank, shape_of


def _module_name(module) -> str:
    return module.__name__.rsplit(".", 1)[1]


@pytest.mark.parametrize(
    "recipes, group",
    list(zip(layers.load("mir-graphgen"), mir_dialect.GROUPS, strict=True)),
    ids=[_module_name(g) for g in mir_dialect.GROUPS],
)
def test_each_group_module_registers_exactly_its_dialect_groups_ops(recipes, group):
    assert _module_name(recipes) == _module_name(group)
    registered = {op for op in RECIPES if RECIPES[op].__module__ == recipes.__name__}
    assert registered == {op for op in group.OPS if needs_recipe(op)}


@pytest.mark.parametrize(
    "recipes, group",
    list(zip(layers.load("hir-graphgen"), hir_dialect.GROUPS, strict=True)),
    ids=[_module_name(g) for g in hir_dialect.GROUPS],
)
def test_each_hir_group_module_registers_exactly_its_groups_ops(recipes, group):
    assert _module_name(recipes) == _module_name(group)
    registered = {op for op in RECIPES if RECIPES[op].__module__ == recipes.__name__}
    assert registered == set(group.OPS)


@settings(max_examples=10, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(graphs(max_ops=4, ops=hir_dialect.ALL_OPS))
def test_hir_ops_drawn_when_named(module):
    """`graphs(ops=...)` with HIR classes grows graphs of HIR blocks (and the constants they need)."""
    module.verify()
    ops = {op.name for op in module.ops.first.body.block.ops} - {"func.return"}
    assert all(name.startswith("hir.") or name == "mir.constant" for name in ops)


SELF_SUFFICIENT_BLOCKS = (
    hir_dialect.attention.AttentionOp,
    hir_dialect.attention.RopeOp,
    hir_dialect.conv.DepthwiseConv1dCausalOp,
    hir_dialect.blocks.LlamaDecoderBlockOp,
    hir_dialect.moe.MoeSwigluOp,
)
"""Blocks whose recipes create every operand they lack, so they never decline."""


@settings(max_examples=10, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(graphs(max_ops=2, ops=SELF_SUFFICIENT_BLOCKS))
def test_named_hir_blocks_are_drawn(module):
    assert any(isinstance(op, SELF_SUFFICIENT_BLOCKS) for op in module.walk())


# Another dialect's op ----------------------------------------------------------------


@irdl_op_definition
class PickRowsOp(IRDLOperation):
    """Rows of `table` at `ids`: a stand-in for an op of another project's dialect."""

    name = "thirdparty.pick_rows"
    table = operand_def(TensorType)
    ids = operand_def(TensorType)
    result = result_def(TensorType)
    traits = traits_def(OperandRoles.of(ids=Role.INDEX))

    def __init__(self, table: SSAValue, ids: SSAValue):
        t, i = table.type, ids.type
        assert isinstance(t, TensorType) and isinstance(i, TensorType)
        shape = [*i.get_shape(), *t.get_shape()[1:]]
        super().__init__(operands=[table, ids], result_types=[TensorType(t.element_type, shape)])


@RECIPES.register(PickRowsOp)
def pick_rows(s: GraphState, op) -> None:
    table = s.need(lambda v: rank(v) >= 1)
    s.emit(op, *with_ids(s, op, (s.integer(1, 3),), shape_of(table)[0], table=table))


def test_another_dialect_registers_recipes_for_its_ops():
    picks: list[PickRowsOp] = []

    @settings(max_examples=20, deadline=None, database=None, phases=[Phase.generate])
    @given(graphs(max_ops=4, ops=[PickRowsOp, AddOp]))
    def collect(module):
        module.verify()
        picks.extend(op for op in module.walk() if isinstance(op, PickRowsOp))

    collect()
    assert picks
    for op in picks:
        assert operand_roles(op) == [Role.DATA, Role.INDEX]
        assert isinstance(op.ids.owner, ConstantOp)
        ids = dense_to_numpy(op.ids.owner.value)
        assert ((ids >= 0) & (ids < shape_of(op.table)[0])).all()


def test_another_dialects_ops_stay_out_of_the_default_draw():
    """`graphs()` without `ops` draws MIR ops only: other ops may lack interpreter kernels."""
    assert PickRowsOp in RECIPES
    assert PickRowsOp not in graphgen.available_ops()
    assert graphgen.missing_recipes([PickRowsOp, AddOp]) == []
