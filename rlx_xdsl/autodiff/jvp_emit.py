"""Building blocks of JVP rules for ops that are (multi)linear in some operands.

Many ops, backward kernels above all, are linear in some operands: a backward
kernel is linear in its cotangent `dy`, a convolution in each of x and w. The
tangent of such an op along a linear operand is the op itself applied to that
operand's tangent (`replay`), so no new formula is needed:

    d bwd(x, dy)[tx, tdy] = bwd(x, tdy) + (∂bwd/∂x) tx

The second term, where the op is not linear, either has a closed form in the
rule or comes from pushing the tangents through primitives the op expands into
(`through_expansion`, e.g. a backward kernel's `rlx-decompose-backward` rule):
that reuses the primitives' JVP rules, so a kernel and its second derivative
cannot drift apart.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence

from xdsl.ir import Operation, SSAValue
from xdsl.dialects.builtin import LocationAttr

from rlx_xdsl.autodiff.emit import add_tangents, zeros_like
from rlx_xdsl.autodiff.jvp_registry import JVP_RULES, JvpRule, OutTangents, Rebuilt, Tangents
from rlx_xdsl.autodiff.registry import Unsupported
from rlx_xdsl.dialects.traits import data_operands
from rlx_xdsl.emitter import Emitter


def replay(e: Emitter, op: Operation, replacements: dict[int, SSAValue]) -> Sequence[SSAValue]:
    """A copy of `op` (same properties and result types) with operands replaced by index."""
    copy = op.clone()
    copy.operands = [replacements.get(i, value) for i, value in enumerate(op.operands)]
    e.insert(copy)
    return copy.results


def linear_in(e: Emitter, op: Operation, tangents: Tangents, *indices: int) -> SSAValue | None:
    """The tangent of a single-result `op` along operands it is linear in, each separately
    (`op(.., t_i, ..)` summed over the operands `indices` that have a tangent)."""
    return add_tangents(e, *(replay(e, op, {i: tangents[i]})[0] for i in indices if tangents[i] is not None))


def linear_rule(*indices: int) -> JvpRule:
    """The rule of a single-result op linear in each operand of `indices` (by index), whose
    other operands carry no tangent (indices, quantised codes, piecewise-constant masks)."""
    return lambda e, op, tangents: [linear_in(e, op, tangents, *indices)]


def jointly_linear_in(e: Emitter, op: Operation, tangents: Tangents, *indices: int) -> SSAValue | None:
    """The tangent of a single-result `op` linear in the operands `indices` taken together
    (`op(.., t_i, .., t_j, ..)`, a missing tangent among them replaced by zeros)."""
    if all(tangents[i] is None for i in indices):
        return None
    return replay(e, op, {i: tangents[i] or zeros_like(e, op.operands[i]) for i in indices})[0]


class _Recording(Emitter):
    """An emitter that remembers the ops it inserts, in order."""

    def __init__(self, e: Emitter, ops: list[Operation]):
        super().__init__(e.builder, e.location)
        self._insertion_point = e._insertion_point
        self.ops = ops

    def _derived(self, location: LocationAttr) -> Emitter:
        derived = _Recording(self, self.ops)
        derived.location = location
        return derived

    def insert(self, op: Operation) -> Operation:
        self.ops.append(op)
        return super().insert(op)


Expansion = Callable[[Emitter, Operation], SSAValue | Sequence[SSAValue]]
"""Emits ops computing `op`'s results from its operands; returns the result value(s)."""


def through_expansion(e: Emitter, op: Operation, tangents: Tangents, expand: Expansion) -> OutTangents:
    """The tangents of `op`'s results, pushed through the ops `expand` emits for it.

    The expansion recomputes `op`'s results from its operands (primitives with
    JVP rules of their own); each emitted op in turn gets its operands' tangents
    and its rule emits its results' tangents. Ops whose operands all have zero
    tangents are skipped, so passing None for an operand leaves its term out.
    """
    emitted: list[Operation] = []
    results = expand(_Recording(e, emitted), op)
    results = [results] if isinstance(results, SSAValue) else list(results)
    known: dict[SSAValue, SSAValue] = {}
    for value, tangent in zip(op.operands, tangents):
        if tangent is not None:
            known[value] = tangent
    for inner in emitted:
        data = set(data_operands(inner))
        inner_tangents = [known.get(value) if i in data else None for i, value in enumerate(inner.operands)]
        if all(t is None for t in inner_tangents):
            continue
        rule = JVP_RULES.lookup(inner)
        if rule is None:
            raise Unsupported(f"the expansion of '{op.name}' uses '{inner.name}', which has no JVP rule")
        out = rule(e, inner, inner_tangents)
        if isinstance(out, Rebuilt):
            raise Unsupported(f"the expansion of '{op.name}' uses the region op '{inner.name}'")
        for result, tangent in zip(inner.results, out):
            if tangent is not None:
                known[result] = tangent
    return [known.get(value) for value in results]
