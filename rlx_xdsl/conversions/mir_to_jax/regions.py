"""Region ops: `mir.if` as `lax.cond`, `mir.while` as a bounded `lax.scan` or a `lax.while_loop`.

A `mir.while` with `max_iterations = N` is a `lax.scan` of N steps, each running
the body under `lax.cond` only while the condition has held so far: it traces one
body and JAX differentiates it in reverse mode. An unbounded `mir.while` is a
`lax.while_loop`, which JAX evaluates and differentiates in forward mode only
(reverse mode needs a bound: the `max_iterations` property).
`mir.yield` ends every region: `run_block` hands its operands on.
"""

import jax
import jax.numpy as jnp

from rlx_xdsl.conversions.mir_to_jax.registry import JAX_OPS
from rlx_xdsl.dialects.mir import regions


def holds(predicate):
    """A one-element predicate as a scalar bool (nonzero, NaN included, is true)."""
    return jnp.reshape(predicate, ()) != 0


def _if(op: regions.IfOp, pred, *captures, run_block):
    return tuple(
        jax.lax.cond(
            holds(pred),
            lambda cs: run_block(op.then_region.block, cs),
            lambda cs: run_block(op.else_region.block, cs),
            tuple(captures),
        )
    )


def _while(op: regions.WhileOp, *init, run_block):
    def cond(carried):
        return holds(run_block(op.cond_region.block, carried)[0])

    def body(carried):
        return tuple(run_block(op.body_region.block, carried))

    if op.iteration_limit is None:
        return tuple(jax.lax.while_loop(cond, body, tuple(init)))

    def step(state, _):
        carried, running = state
        running = running & cond(carried)
        return (jax.lax.cond(running, body, lambda c: c, carried), running), None

    (carried, _), _ = jax.lax.scan(step, (tuple(init), jnp.asarray(True)), length=op.iteration_limit)
    return carried


JAX_OPS.add(regions.IfOp, _if)
JAX_OPS.add(regions.WhileOp, _while)
JAX_OPS.add(regions.YieldOp, lambda op, *values, **_: tuple(values))
