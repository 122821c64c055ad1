"""The VJP registry's coverage of MIR, and a third-party dialect differentiated through its own rule."""

from __future__ import annotations

import numpy as np
import pytest
from xdsl.dialects.builtin import TensorType
from xdsl.irdl import irdl_op_definition, operand_def, result_def, traits_def
from xdsl.traits import IsTerminator, Pure

from rlx_xdsl import layers
from rlx_xdsl.autodiff.grad import build_gradient
from rlx_xdsl.autodiff.prepare import prepare_rewrites
from rlx_xdsl.autodiff.registry import VJP_RULES
from rlx_xdsl.autodiff.rules.mir import pending
from rlx_xdsl.building.builder import GraphBuilder
from rlx_xdsl.dialects import mir
from rlx_xdsl.dialects.base import RlxOperation, tensor_type
from rlx_xdsl.interpreters import KERNELS
from rlx_xdsl.ir.diagnostics import OpError
from rlx_xdsl.testing.gradcheck import check_gradients

layers.load("vjp")
PENDING = pending()


def short(module) -> str:
    return module.__name__.rsplit(".", 1)[1]


def test_every_mir_op_has_a_rule_or_is_rewritten_by_prepare_ad_or_is_a_known_gap():
    """A new MIR op fails here until it gets a rule (or `no_gradient`), a prepare-ad rewrite,
    or an entry in its group's `PENDING` naming the issue that will add one."""
    uncovered = [
        op
        for op in mir.ALL_OPS
        if not op.has_trait(IsTerminator) and op not in VJP_RULES and not prepare_rewrites(op)
    ]
    assert sorted(op.name for op in uncovered) == sorted(op.name for op in PENDING)


def test_known_gaps_have_neither_a_rule_nor_a_rewrite():
    for op in PENDING:
        assert op not in VJP_RULES and not prepare_rewrites(op), op.name


# A dialect of another project ------------------------------------------------------------


@irdl_op_definition
class CubeOp(RlxOperation):
    """`toy.cube`: x^3, with a kernel and a VJP rule registered by the test."""

    name = "toy.cube"
    input = operand_def(TensorType)
    result = result_def(TensorType)
    traits = traits_def(Pure())
    assembly_format = "$input attr-dict `:` functional-type(operands, results)"

    def __init__(self, x):
        super().__init__(operands=[x])

    def infer_result_types(self):
        return [tensor_type(self.input)]


@irdl_op_definition
class OpaqueOp(RlxOperation):
    """`toy.opaque`: an op with a kernel but no rule."""

    name = "toy.opaque"
    input = operand_def(TensorType)
    result = result_def(TensorType)
    traits = traits_def(Pure())
    assembly_format = "$input attr-dict `:` functional-type(operands, results)"

    def __init__(self, x):
        super().__init__(operands=[x])

    def infer_result_types(self):
        return [tensor_type(self.input)]


def cube_vjp(e, op, cotangents):
    (g,) = cotangents
    three = e.mir.constant(3.0, "f64")
    return [e.mir.mul(g, e.mir.mul(three, e.mir.mul(op.input, op.input)))]


@pytest.fixture
def toy_dialect():
    KERNELS.add(CubeOp, lambda op, x: (x**3,))
    KERNELS.add(OpaqueOp, lambda op, x: (x + 1,))
    VJP_RULES.add(CubeOp, cube_vjp)
    yield
    for op in (CubeOp, OpaqueOp):
        KERNELS.remove(op)
    VJP_RULES.remove(CubeOp)


def toy_graph(op_class):
    b = GraphBuilder("f")
    x = b.param("x", [2, 3], "f64")
    y = b.emit(op_class(b.sin(x)))
    b.output(b.reduce(b.mul(y, x), kind="sum", axes=[0, 1]))
    return b.module()


def test_a_third_party_op_is_differentiated_through_the_rule_it_registers(toy_dialect):
    x = np.random.default_rng(3).standard_normal((2, 3))
    (gradient,) = check_gradients(toy_graph(CubeOp), "f", [x], [0], cotangent=np.array(1.0))
    np.testing.assert_allclose(gradient, np.sin(x) ** 3 + 3 * np.sin(x) ** 2 * np.cos(x) * x, rtol=1e-12)


def test_a_third_party_op_without_a_rule_is_named_in_the_error(toy_dialect):
    with pytest.raises(OpError, match=r"^'rlx-grad' no VJP rule for 'toy.opaque'$"):
        build_gradient(toy_graph(OpaqueOp), "f")
