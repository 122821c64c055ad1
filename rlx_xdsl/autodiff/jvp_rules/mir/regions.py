"""JVP rules of `mir.if` and `mir.while`: each rebuilt over (value, tangent) pairs.

Reverse mode removes these regions first (`rlx-prepare-ad` inlines `if` and
unrolls a bounded `while`); forward mode keeps them, because tangents flow in
the same direction as the values:

* `mir.if` takes the captures' tangents as further captures; both branches are
  pushed forward once each (`jvp_region`, moved into the rebuilt `if`, not
  copied) and yield the tangents that either branch gives (the other's yield is
  padded with zeros for them), so nested `if`s cost time linear in their depth;
* `mir.while` carries `(carried, tangent carried)`: its body is pushed forward
  to a fixed point of which carries have tangents (as a scan's), its condition
  receives the tangents and ignores them; an unbounded loop needs no unrolling.
"""

from __future__ import annotations

from xdsl.ir import Region

from rlx_xdsl.autodiff.jvp_registry import JVP_RULES, Rebuilt, Tangents
from rlx_xdsl.autodiff.jvp_rules.mir.structured import initial_tangents, loop_body, pick, spread
from rlx_xdsl.dialects.mir.regions import IfOp, WhileOp
from rlx_xdsl.ir.emitter import Emitter


@JVP_RULES.register(IfOp)
def if_(e: Emitter, op: IfOp, tangents: Tangents) -> Rebuilt:
    from rlx_xdsl.autodiff.jvp import jvp_region, require_tangents

    t_caps = tangents[1:]
    active = [t is not None for t in t_caps]
    groups = [len(active)]
    then_region, then_present = jvp_region(op.then_region, active, groups, take=True)
    else_region, else_present = jvp_region(op.else_region, active, groups, take=True)
    wanted = [a or b for a, b in zip(then_present, else_present)]
    require_tangents(then_region, then_present, wanted)
    require_tangents(else_region, else_present, wanted)
    rebuilt = IfOp(op.pred, [*op.captures, *pick(t_caps, active)], then_region, else_region)
    e.insert(rebuilt)
    n = len(op.outputs)
    outputs = list(rebuilt.outputs)
    return Rebuilt(outputs[:n], spread(outputs[n:], wanted))


def _cond_with_tangents(cond: Region, active: list[bool]) -> Region:
    """The condition taking `(carried..., tangents of the active ones...)`, ignoring the tangents."""
    region = cond.clone()
    block = region.block
    for arg, is_active in zip(list(block.args), active):
        if is_active:
            block.insert_arg(arg.type, len(block.args))
    return region


@JVP_RULES.register(WhileOp)
def while_(e: Emitter, op: WhileOp, tangents: Tangents) -> Rebuilt:
    n = len(op.init)
    body, active = loop_body(op.body_region, [t is not None for t in tangents], [], [n])
    rebuilt = WhileOp(
        [*op.init, *initial_tangents(e, op.init, tangents, active)],
        _cond_with_tangents(op.cond_region, active),
        body,
        max_iterations=op.iteration_limit,
    )
    e.insert(rebuilt)
    outputs = list(rebuilt.outputs)
    return Rebuilt(outputs[:n], spread(outputs[n:], active))
