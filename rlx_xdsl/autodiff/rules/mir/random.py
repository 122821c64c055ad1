"""VJP rules of the random group: no gradient flows through random numbers or sampling.

rng_uniform/rng_normal have only an integer offset operand; `sample` picks an
integer id, piecewise constant in the logits (as RLX's autodiff: no gradient).
"""

from __future__ import annotations

from rlx_xdsl.autodiff.registry import VJP_RULES, no_gradient
from rlx_xdsl.dialects.mir.random import RngNormalOp, RngUniformOp, SampleOp

VJP_RULES.register(RngUniformOp, RngNormalOp, SampleOp)(no_gradient)
