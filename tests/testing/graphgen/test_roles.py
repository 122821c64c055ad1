"""`with_ids`: operands whose declared role is INDEX or LABEL get ids in range."""

import numpy as np
import pytest
from hypothesis import Phase, given, settings
from xdsl.dialects.builtin import TensorType
from xdsl.ir import SSAValue
from xdsl.irdl import IRDLOperation, irdl_op_definition, operand_def, result_def

from rlx_xdsl.building.builder import GraphBuilder
from rlx_xdsl.dialects.mir.elementwise import ConstantOp
from rlx_xdsl.dialects.mir.indexing import GatherOp, ScatterAddOp
from rlx_xdsl.dialects.mir.loss import (
    SoftmaxCrossEntropyBackwardOp,
    SoftmaxCrossEntropyWithLogitsOp,
)
from rlx_xdsl.dialects.traits import Role, operand_roles
from rlx_xdsl.ir.dense import dense_to_numpy
from rlx_xdsl.testing.graphgen import GraphState, graphs, with_ids
from rlx_xdsl.testing.graphgen.values import shape_of

# How many ids each op accepts, written out independently of the recipes.
BOUND = {
    GatherOp: lambda op: shape_of(op.table)[op.axis.value.data],
    ScatterAddOp: lambda op: op.dim_size.value.data,
    SoftmaxCrossEntropyWithLogitsOp: lambda op: shape_of(op.logits)[1],
    SoftmaxCrossEntropyBackwardOp: lambda op: shape_of(op.logits)[1],
}


def test_generated_indices_and_labels_are_in_range():
    checked: dict[type, int] = dict.fromkeys(BOUND, 0)

    @settings(max_examples=60, deadline=None, database=None, phases=[Phase.generate])
    @given(graphs(max_ops=4, ops=list(BOUND)))
    def collect(module):
        for op in module.walk():
            for value, role in zip(op.operands, operand_roles(op)):
                if role in (Role.INDEX, Role.LABEL):
                    assert isinstance(value.owner, ConstantOp)
                    ids = dense_to_numpy(value.owner.value)
                    assert np.array_equal(ids, np.trunc(ids))
                    assert ((ids >= 0) & (ids < BOUND[type(op)](op))).all()
                    checked[type(op)] += 1

    collect()
    assert all(checked.values()), checked


@irdl_op_definition
class UndeclaredOp(IRDLOperation):
    """Takes ids but does not declare their role."""

    name = "test.undeclared"
    table = operand_def(TensorType)
    ids = operand_def(TensorType)
    result = result_def(TensorType)


def _state_with_table() -> tuple[GraphState, SSAValue]:
    builder = GraphBuilder()
    return GraphState(None, builder, 0), builder.input("t", [3])


def test_an_operand_without_a_role_must_be_given():
    s, table = _state_with_table()
    with pytest.raises(ValueError, match="'test.undeclared' operand 'ids' is neither given nor"):
        with_ids(s, UndeclaredOp, (2,), 3, table=table)


def test_unknown_operand_names_are_refused():
    s, table = _state_with_table()
    with pytest.raises(ValueError, match="'mir.gather' has no operand named 'tables'"):
        with_ids(s, GatherOp, (2,), 3, tables=table)
