"""JVP rules of the random group: zero tangents, as their reverse rules give no gradient.

rng_uniform and rng_normal read only an integer offset; `sample` draws an integer id,
piecewise constant in the logits.
"""

from __future__ import annotations

from rlx_xdsl.autodiff.jvp_registry import JVP_RULES, zero_tangent
from rlx_xdsl.dialects.mir.random import RngNormalOp, RngUniformOp, SampleOp

JVP_RULES.register(RngUniformOp, RngNormalOp, SampleOp)(zero_tangent)
