"""Region ops: `mir.if` as `lax.cond`, `mir.while` as a bounded unrolled loop."""

import jax
import jax.numpy as jnp

from rlx_xdsl.conversions.mir_to_jax.registry import JAX_OPS
from rlx_xdsl.dialects.mir import regions


def _if(op: regions.IfOp, pred, *captures, run_block):
    """`lax.cond` on the one-element predicate (nonzero is true)."""
    return tuple(
        jax.lax.cond(
            jnp.reshape(pred, ()) != 0,
            lambda cs: run_block(op.then_region.block, cs),
            lambda cs: run_block(op.else_region.block, cs),
            tuple(captures),
        )
    )


def _while(op: regions.WhileOp, *init, run_block):
    """At most `max_iterations` steps; once the condition fails the values stay as they are."""
    carried, running = tuple(init), jnp.asarray(True)
    for _ in range(op.iteration_limit):
        (cond,) = run_block(op.cond_region.block, carried)
        running = running & (jnp.reshape(cond, ()) != 0)
        stepped = run_block(op.body_region.block, carried)
        carried = tuple(jnp.where(running, s, c) for s, c in zip(stepped, carried))
    return carried


JAX_OPS.add(regions.IfOp, _if)
JAX_OPS.add(regions.WhileOp, _while)
