"""Building blocks the JVP rules share: applying an op to tangents, and differentiating an expansion.

* `apply_to(e, op, operands)`: `op` again (same properties and result types) on
  other operands; a linear op's tangent is the op applied to its operand's
  tangent, a bilinear op's the sum of two such calls.
* `jvp_of_expansion(e, op, tangents, expand)`: the tangent of an op that has a
  primitive expansion (`rlx-legalize`'s primitive rules, the SCE lowering,
  `rlx-lower-group-norm`): the expansion is built in a region, pushed forward by
  the primitives' own rules (`jvp_region`) and inlined, so the op's derivative
  follows its definition with no formula of its own to get wrong (attention
  through q, k, v and the mask; the norms through their statistics). The
  primal ops of the inlined expansion that the tangent does not use are removed
  by the pass's final sweep.
* `linear_in(e, op, tangents, *indices)` / `linear_rule(*indices)`: an op linear
  in each of some operands on its own (a backward kernel in `dy`, a conv in x
  and in w), the others without a tangent.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from xdsl.builder import Builder
from xdsl.ir import Block, Operation, Region, SSAValue
from xdsl.rewriter import InsertPoint

from rlx_xdsl.autodiff.emit import add_tangents, zeros_like
from rlx_xdsl.autodiff.jvp_registry import JvpRule, OutTangents, Tangents
from rlx_xdsl.dialects.mir.regions import YieldOp
from rlx_xdsl.dialects.traits import data_operands
from rlx_xdsl.ir.emitter import Emitter
from rlx_xdsl.transforms.inlining import inline_block


def apply_to(e: Emitter, op: Operation, operands: Sequence[SSAValue]) -> list[SSAValue]:
    """A copy of `op` (properties, result types) on `operands`; its results."""
    copy = op.clone()
    copy.operands = list(operands)
    e.insert(copy)
    return list(copy.results)


def linear(e: Emitter, op: Operation, tangents: Tangents) -> OutTangents:
    """The rule of an op linear in its DATA operands: the op on their tangents (zeros for a zero one).

    Every DATA operand must be linear (a reshape, a sum); the others (indices) are kept.
    """
    operands = [
        v if i not in _data(op) else (t if t is not None else zeros_like(e, v))
        for i, (v, t) in enumerate(zip(op.operands, tangents))
    ]
    return apply_to(e, op, operands)


def bilinear(e: Emitter, op: Operation, tangents: Tangents, first: int = 0, second: int = 1) -> OutTangents:
    """`op(t_a, b) + op(a, t_b)` for an op bilinear in operands `first` and `second`."""
    terms = []
    for index, tangent in ((first, tangents[first]), (second, tangents[second])):
        if tangent is not None:
            operands = list(op.operands)
            operands[index] = tangent
            terms.append(apply_to(e, op, operands)[0])
    total = terms[0] if len(terms) == 1 else e.mir.add(*terms)
    return [total]


def _data(op: Operation) -> set[int]:
    return set(data_operands(op))


def jvp_of_expansion(
    e: Emitter, op: Operation, tangents: Tangents, expand: Callable[[Emitter, Operation], SSAValue]
) -> OutTangents:
    """The tangent of `op`'s one result, through the primitives `expand(e, op)` emits."""
    from rlx_xdsl.autodiff.jvp import jvp_region  # the pass module imports the rules lazily

    block = Block(arg_types=[v.type for v in op.operands])
    region = Region(block)
    inner = op.clone()
    inner.operands = list(block.args)  # by position: a value used twice has one tangent per use
    block.add_op(inner)
    body = Emitter(Builder(InsertPoint.at_end(block)), op.location)
    value = expand(body, inner)
    body.insert(YieldOp(value))
    block.erase_op(inner)
    active = [t is not None for t in tangents]
    pushed, present = jvp_region(region, active, [len(active)])
    if not present[0]:
        return [None]
    values = inline_block(e, pushed.block, [*op.operands, *(t for t in tangents if t is not None)])
    return [values[1]]


def linear_in(e: Emitter, op: Operation, tangents: Tangents, *indices: int) -> SSAValue | None:
    """The tangent of a single-result `op` along operands it is linear in, each on its own
    (multilinear: `op(.., t_i, ..)` summed over the `indices` that have a tangent); None when none has.

    A backward kernel is linear in its cotangent `dy`, so `dy`'s term is the kernel on `t_dy`.
    """
    terms = [
        apply_to(e, op, [tangents[i] if j == i else v for j, v in enumerate(op.operands)])[0]
        for i in indices
        if tangents[i] is not None
    ]
    return add_tangents(e, *terms)


def linear_rule(*indices: int) -> JvpRule:
    """The rule of a single-result op linear in each operand of `indices`, whose other operands
    carry no tangent or have a piecewise-constant effect (indices, quantised codes, masks)."""
    return lambda e, op, tangents: [linear_in(e, op, tangents, *indices)]
