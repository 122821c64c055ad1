"""JVP rules of the Gaussian-splatting ops: none, each with its reason.

The render's only derivative in MIR is its reverse sweep, `render_backward`, which gives
`J^T g` for one image cotangent `g`. A forward tangent `J t` from it would take one reverse
sweep per image element (`(J t)[p] = <J^T e_p, t>`: `3 * height * width` renders' worth of
work), and no other op expresses the rasteriser's forward derivative (the tangent of each
alpha, carried front to back through the transmittance). render_backward's own tangent is the
rasteriser's second derivative, which nothing computes (its reverse rule, `no_gradient`, also
stops there); a zero tangent would make `rlx-hvp` return a silently wrong Hessian-vector
product, so it is refused instead. prepare and rasterize have no rule in either mode:
`rlx-prepare-ad`'s `fuse-decomposed-gaussian-splat` step makes the pair one render, and
`rlx-jvp` names that step for a half it meets.
"""

from __future__ import annotations

from rlx_xdsl.autodiff.jvp_registry import JVP_RULES, NoJvpRule
from rlx_xdsl.dialects.mir.splat import GaussianSplatRenderBackwardOp, GaussianSplatRenderOp

JVP_RULES.add(
    GaussianSplatRenderOp,
    NoJvpRule(
        "forward mode through the Gaussian rasteriser is not implemented: its derivative exists only as "
        "the reverse sweep mir.gaussian_splat_render_backward (use rlx-grad)"
    ),
)
JVP_RULES.add(
    GaussianSplatRenderBackwardOp,
    NoJvpRule("the second derivative of the Gaussian rasteriser is not implemented (no Hessian-vector products through it)"),
)
