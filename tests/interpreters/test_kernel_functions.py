"""The interpreter's derived implementations follow every change to `KERNELS`."""

import numpy as np
from xdsl.dialects.builtin import TensorType
from xdsl.irdl import irdl_op_definition, operand_def, result_def, traits_def
from xdsl.traits import Pure

from rlx_xdsl.building.builder import GraphBuilder
from rlx_xdsl.dialects.base import RlxOperation, tensor_type
from rlx_xdsl.interpreters import KERNELS
from rlx_xdsl.run import run_function


def _unary_test_op(op_name: str):
    @irdl_op_definition
    class UnaryTestOp(RlxOperation):
        name = op_name
        input = operand_def(TensorType)
        result = result_def(TensorType)
        traits = traits_def(Pure())

        def __init__(self, x):
            super().__init__(operands=[x])

        def infer_result_types(self):
            return [tensor_type(self.input)]

    return UnaryTestOp


def _run(op_class, data):
    b = GraphBuilder("f")
    b.output(b.emit(op_class(b.input("x", [3]))))
    (result,) = run_function(b.module(), "f", [data])
    return result


def test_a_kernel_registered_after_another_was_removed_is_found():
    """Removing one kernel and adding another keeps the registry's length: the cache must notice."""
    first, second = _unary_test_op("test_kf.first"), _unary_test_op("test_kf.second")
    data = np.array([1.0, 2.0, 3.0], np.float32)
    KERNELS.add(first, lambda op, x: (x + 1,))
    try:
        np.testing.assert_array_equal(_run(first, data), data + 1)
    finally:
        KERNELS.remove(first)
    KERNELS.add(second, lambda op, x: (x * 2,))
    try:
        np.testing.assert_array_equal(_run(second, data), data * 2)
    finally:
        KERNELS.remove(second)
