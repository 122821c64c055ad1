"""Run one MIR (or HIR) op through the interpreter, and the same op through ONNX's reference.

Op semantics tests compare `run_op` against an independent oracle: a formula
written in the test, or `onnx_run` (onnx.reference) for ops ONNX defines.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from rlx_xdsl import dtypes
from rlx_xdsl.building.builder import GraphBuilder
from rlx_xdsl.run import run_function


def run_op(op_name: str, inputs: Sequence[np.ndarray], **attributes):
    """Build `f(inputs) = mir.<op_name>(inputs, **attributes)`, verify it and run it.

    Returns the single output array (or a list for multi-result ops).
    """
    return _run_one("mir", op_name, inputs, attributes)


def run_block(op_name: str, inputs: Sequence[np.ndarray | None], **attributes):
    """`run_op` for an HIR block op: `hir.<op_name>(inputs, **attributes)` (None: an omitted
    optional operand such as a bias)."""
    return _run_one("hir", op_name, inputs, attributes)


def _run_one(dialect: str, op_name: str, inputs: Sequence[np.ndarray | None], attributes: dict):
    b = GraphBuilder("f")
    args = []
    for i, x in enumerate(inputs):
        if x is None:
            args.append(None)
            continue
        x = np.asarray(x)
        args.append(b.input(f"in{i}", x.shape, dtypes.dtype_of_numpy(x.dtype).element_type))
    result = getattr(getattr(b, dialect), op_name)(*args, **attributes)
    results = result if isinstance(result, tuple) else (result,)
    b.output(*results)
    module = b.module()
    module.verify()
    outs = run_function(module, "f", [np.asarray(x) for x in inputs if x is not None])
    return outs[0] if len(outs) == 1 else outs


def onnx_run(op_type: str, inputs: Sequence[np.ndarray | None], n_outputs: int = 1,
             opset: int = 23, domain: str = "", **attributes):
    """Evaluate one ONNX node with `onnx.reference` (None marks an omitted input)."""
    from onnx import TensorProto, helper
    from onnx.reference import ReferenceEvaluator

    names = [f"x{i}" if x is not None else "" for i, x in enumerate(inputs)]
    outs = [f"y{i}" for i in range(n_outputs)]
    node = helper.make_node(op_type, names, outs, domain=domain, **attributes)
    graph = helper.make_graph(
        [node],
        "g",
        [
            helper.make_tensor_value_info(
                n, helper.np_dtype_to_tensor_dtype(np.asarray(x).dtype), np.asarray(x).shape
            )
            for n, x in zip(names, inputs)
            if n
        ],
        [helper.make_tensor_value_info(o, TensorProto.UNDEFINED, None) for o in outs],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid(domain, opset)])
    feeds = {n: np.asarray(x) for n, x in zip(names, inputs) if n}
    result = ReferenceEvaluator(model).run(None, feeds)
    return result[0] if n_outputs == 1 else result
