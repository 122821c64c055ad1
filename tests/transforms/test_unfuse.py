"""`rlx-unfuse` applies the rule registered for each composite op, at the op's location."""

import numpy as np
from xdsl.context import Context
from xdsl.dialects.builtin import FileLineColLoc, IntAttr, StringAttr, TensorType
from xdsl.irdl import irdl_op_definition, operand_def, result_def, traits_def
from xdsl.traits import Pure

from rlx_xdsl.building.builder import GraphBuilder
from rlx_xdsl.dialects.base import RlxOperation, tensor_type
from rlx_xdsl.dialects.mir.elementwise import AddOp, MulOp
from rlx_xdsl.interpreters import KERNELS
from rlx_xdsl.run import run_function
from rlx_xdsl.transforms.unfuse import UNFUSE_RULES, UnfusePass


@irdl_op_definition
class SquarePlusOp(RlxOperation):
    """A composite test op: `x * x + x`."""

    name = "test_unfuse.square_plus"
    input = operand_def(TensorType)
    result = result_def(TensorType)
    traits = traits_def(Pure())

    def __init__(self, x):
        super().__init__(operands=[x])

    def infer_result_types(self):
        return [tensor_type(self.input)]


def test_a_registered_rule_replaces_the_op_by_primitives_with_its_location():
    b = GraphBuilder("f")
    x = b.input("x", [4])
    op = SquarePlusOp(x)
    op.location = FileLineColLoc(StringAttr("model.mlir"), IntAttr(7), IntAttr(3))
    b.output(b.emit(op))
    module = b.module()
    data = np.array([1.0, -2.0, 0.5, 3.0], np.float32)
    UNFUSE_RULES.add(SquarePlusOp, lambda e, op: [e.mir.add(e.mir.mul(op.input, op.input), op.input)])
    KERNELS.add(SquarePlusOp, lambda op, x: (x * x + x,))
    try:
        (before,) = run_function(module, "f", [data])
        UnfusePass().apply(Context(), module)
    finally:
        UNFUSE_RULES.remove(SquarePlusOp)
        KERNELS.remove(SquarePlusOp)
    body = list(module.ops.first.body.block.ops)
    assert [type(o) for o in body[:-1]] == [MulOp, AddOp]
    assert all(o.location == op.location for o in body[:-1])
    (after,) = run_function(module, "f", [data])
    np.testing.assert_array_equal(after, before)
    np.testing.assert_array_equal(after, data * data + data)


def test_ops_without_a_rule_are_left_alone():
    b = GraphBuilder("f")
    x = b.input("x", [4])
    b.output(b.mir.exp(x))
    module = b.module()
    text = str(module)
    UnfusePass().apply(Context(), module)
    assert str(module) == text
