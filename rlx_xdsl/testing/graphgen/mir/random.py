"""Recipes of the random MIR ops: rng_uniform, rng_normal, sample (sometimes with an offset)."""

from __future__ import annotations

from xdsl.dialects.builtin import TensorType

from rlx_xdsl.building.builder import element_type as as_element_type
from rlx_xdsl.dialects.mir.random import RngNormalOp, RngUniformOp, SampleOp
from rlx_xdsl.registry import OpClass
from rlx_xdsl.testing.graphgen.recipes import RECIPES
from rlx_xdsl.testing.graphgen.state import GraphState
from rlx_xdsl.testing.graphgen.values import floats_of_rank


def _offset(s: GraphState) -> list:
    """No offset operand, or a rank-0 i64 one."""
    return [s.operand((), "i64")] if s.flag() else []


@RECIPES.register(RngUniformOp, RngNormalOp)
def rng(s: GraphState, op: OpClass) -> None:
    """Numbers of a new static shape and float dtype; the parameters are small and valid."""
    result = TensorType(as_element_type(s.choice(("f32", "f16", "bf16", "f64"))), list(s.shape(0)))
    first = float(s.integer(-2, 1))
    second = float(s.integer(1, 3)) if op is RngNormalOp else first + s.integer(1, 3)
    names = ("mean", "std") if op is RngNormalOp else ("low", "high")
    s.emit(op, result, *_offset(s), seed=s.integer(-5, 5), **dict(zip(names, (first, second))))


@RECIPES.register(SampleOp)
def sample(s: GraphState, op: OpClass) -> None:
    """Ids from rank-2 logits; greedy (temperature 0) sometimes."""
    logits = s.pick(floats_of_rank(2)) or s.operand(s.shape(2, 2))
    vocab = logits.type.get_shape()[1]
    s.emit(
        op,
        logits,
        *_offset(s),
        seed=s.integer(0, 9),
        temperature=s.choice((0.0, 0.5, 1.0)),
        top_k=s.integer(0, vocab),
        top_p=s.choice((0.5, 0.9, 1.0)),
    )
