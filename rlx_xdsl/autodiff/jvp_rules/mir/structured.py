"""JVP rules of the structured group: `mir.scan` and `mir.custom_fn`.

* `mir.scan` becomes one scan over `(carry, tangent carry)`: its body is the
  scan body pushed forward (`jvp_region`), the tangents of the bcasts and xs
  passed as further bcasts and xs. A carry has a tangent when its initial value
  has one or the body gives it one from another tangent (found by iterating to
  a fixed point); the rebuilt scan replaces the original (`Rebuilt`). A
  trajectory of tangents comes out beside the trajectory of carries.
* `mir.custom_fn` with a jvp body: the body is inlined with `[x..., y..., tx...]`
  bound to the op's inputs, results and the inputs' tangents (zeros for a zero
  one). Without one, its forward body is pushed forward and inlined.
* `selective_scan` and `gated_delta_net` go through their `rlx-unfuse` expansion
  (`rlx-prepare-ad`'s unfuse step), as in reverse mode.
"""

from __future__ import annotations

from collections.abc import Sequence

from xdsl.ir import Region, SSAValue

from rlx_xdsl.autodiff.emit import zeros_like
from rlx_xdsl.autodiff.jvp_registry import JVP_RULES, OutTangents, Rebuilt, Tangents
from rlx_xdsl.dialects.mir.structured import CustomFnOp, ScanOp
from rlx_xdsl.ir.emitter import Emitter
from rlx_xdsl.transforms.inlining import inline_block


def loop_body(
    body: Region, carried: Sequence[bool], others: Sequence[bool], groups: Sequence[int]
) -> tuple[Region, list[bool]]:
    """A loop body pushed forward: which carries have tangents, at the fixed point.

    `carried` are the carries with a tangent on entry, `others` the other
    arguments' (bcasts, xs); every carry with a tangent yields one.
    """
    from rlx_xdsl.autodiff.jvp import jvp_region

    active = list(carried)
    while True:
        region, present = jvp_region(body, [*active, *others], groups, required=active)
        if present == active:
            return region, active
        active = [a or p for a, p in zip(active, present)]


def pick(values: Sequence[SSAValue], which: Sequence[bool]) -> list[SSAValue]:
    return [v for v, keep in zip(values, which) if keep]


def spread(values: Sequence[SSAValue], which: Sequence[bool]) -> list[SSAValue | None]:
    """`values` placed at the True entries of `which`, None elsewhere."""
    it = iter(values)
    return [next(it) if keep else None for keep in which]


def initial_tangents(e: Emitter, init: Sequence[SSAValue], tangents: Tangents, active: Sequence[bool]):
    """The tangents entering a loop: given, or zeros for a carry that only the body makes active."""
    return [t if t is not None else zeros_like(e, v) for v, t, a in zip(init, tangents, active) if a]


@JVP_RULES.register(ScanOp)
def scan(e: Emitter, op: ScanOp, tangents: Tangents) -> Rebuilt:
    n_c, n_b, n_x = len(op.init), len(op.bcasts), len(op.xs)
    t_init, t_b, t_x = tangents[:n_c], tangents[n_c : n_c + n_b], tangents[n_c + n_b :]
    others = [t is not None for t in (*t_b, *t_x)]
    body, active = loop_body(op.body, [t is not None for t in t_init], others, [n_c, n_b, n_x])
    rebuilt = ScanOp(
        [*op.init, *initial_tangents(e, op.init, t_init, active)],
        body,
        length=op.steps,
        bcasts=[*op.bcasts, *(t for t in t_b if t is not None)],
        xs=[*op.xs, *(t for t in t_x if t is not None)],
        save_trajectory=op.saves_trajectory,
        num_checkpoints=op.checkpoints,
    )
    e.insert(rebuilt)
    outputs = list(rebuilt.outputs)
    return Rebuilt(outputs[:n_c], spread(outputs[n_c:], active))


@JVP_RULES.register(CustomFnOp)
def custom_fn(e: Emitter, op: CustomFnOp, tangents: Tangents) -> OutTangents:
    if op.jvp is not None:
        tx = [t if t is not None else zeros_like(e, x) for x, t in zip(op.inputs, tangents)]
        return inline_block(e, op.jvp.block, [*op.inputs, *op.outputs, *tx])
    from rlx_xdsl.autodiff.jvp import jvp_region

    active = [t is not None for t in tangents]
    forward, present = jvp_region(op.forward, active, [len(active)])
    values = inline_block(e, forward.block, [*op.inputs, *(t for t in tangents if t is not None)])
    return spread(values[len(op.outputs) :], present)
