"""Declared types less specific than the inferred ones: graphs for passes that re-infer types.

A program may declare `tensor<?xf32>` where inference knows `tensor<3xf32>`
(`mir.add` of a `3` and a `?`), and a pass that re-infers result types must keep
what the program declared. The random graph generator writes every shape in
full; `loosen_returned` makes the values a function only returns say `?` in
every dim, in their producers' results and the function's signature, which
`func.return` compares exactly.
"""

from __future__ import annotations

from xdsl.dialects import func
from xdsl.dialects.builtin import FunctionType, ModuleOp, TensorType
from xdsl.ir import OpResult
from xdsl.rewriter import Rewriter
from xdsl.utils.exceptions import VerifyException

from rlx_xdsl.shapes import DYNAMIC, tensor


def loosened(t: TensorType) -> TensorType:
    """`t` with every dim `?`."""
    return tensor(t.element_type, [DYNAMIC] * t.get_num_dims())


def loosen_returned(module: ModuleOp) -> int:
    """Declare each value that a function only returns with `?` dims; the number loosened.

    A value whose producer rejects the looser type (a constant's type is its
    data's) keeps its type.
    """
    count = 0
    for function in module.ops:
        if not isinstance(function, func.FuncOp):
            continue
        ret = function.body.block.last_op
        assert isinstance(ret, func.ReturnOp)
        for value in set(ret.operands):
            if not (
                isinstance(value, OpResult)
                and isinstance(value.type, TensorType)
                and value.type.get_num_dims() > 0
                and all(use.operation is ret for use in value.uses)
            ):
                continue
            before = value.type
            new = Rewriter.replace_value_with_new_type(value, loosened(before))
            try:
                new.owner.verify()
                count += 1
            except VerifyException:
                Rewriter.replace_value_with_new_type(new, before)
        outputs = [v.type for v in ret.operands]
        function.function_type = FunctionType.from_lists(function.function_type.inputs.data, outputs)
    return count
