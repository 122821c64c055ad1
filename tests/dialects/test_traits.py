"""Every MIR op declares the traits passes read: purity and RLX's AMP precision class."""

import pytest
from xdsl.traits import Pure, RecursiveMemoryEffect

from rlx_xdsl.dialects.mir import ALL_OPS, OPS_BY_NAME
from rlx_xdsl.dialects.traits import Precision, PrecisionClass, is_elementwise, precision_class

# RLX's `precision::op_kind` table (rlx-compile precision.rs), written out independently.
EXPECTED_CLASS = {
    Precision.COMPUTE: {"matmul", "dot_general", "dense_solve", "attention", "conv"},
    Precision.REDUCTION: {
        "layer_norm", "rms_norm", "group_norm", "softmax", "reduce", "cumsum",
        "softmax_cross_entropy_with_logits", "softmax_cross_entropy", "softmax_cross_entropy_backward",
    },
    Precision.ELEMENTWISE: {
        "add", "sub", "mul", "div", "max", "min", "pow", "compare", "where",
        "gelu", "gelu_approx", "silu", "relu", "sigmoid", "tanh", "exp", "log", "sqrt", "rsqrt",
        "neg", "abs", "sin", "cos", "tan", "atan", "round",
    },
    Precision.DATA_MOVEMENT: {
        "cast", "reshape", "transpose", "narrow", "concat", "expand", "gather", "scatter_add",
        "topk", "rope", "pool", "if", "while",
    },
    Precision.BOUNDARY: {"constant"},
}  # fmt: skip

ELEMENTWISE = EXPECTED_CLASS[Precision.ELEMENTWISE] | {"cast"}
TERMINATORS = {"yield"}


def test_table_covers_every_op():
    classified = set().union(*EXPECTED_CLASS.values())
    assert classified | TERMINATORS == set(OPS_BY_NAME)


@pytest.mark.parametrize("name", sorted(set(OPS_BY_NAME) - TERMINATORS))
def test_precision_class_matches_rlx(name):
    op = OPS_BY_NAME[name]
    assert len(op.get_traits_of_type(PrecisionClass)) == 1
    expected = next(cls for cls, names in EXPECTED_CLASS.items() if name in names)
    assert precision_class(op) is expected


@pytest.mark.parametrize("op", ALL_OPS, ids=lambda op: op.name)
def test_ops_are_pure_or_pure_when_their_bodies_are(op):
    if op.has_trait(RecursiveMemoryEffect):
        assert op.name in ("mir.if", "mir.while")
    else:
        assert op.has_trait(Pure)


@pytest.mark.parametrize("name", sorted(OPS_BY_NAME))
def test_elementwise_trait(name):
    assert is_elementwise(OPS_BY_NAME[name]) == (name in ELEMENTWISE)
