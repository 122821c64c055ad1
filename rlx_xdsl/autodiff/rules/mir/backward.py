"""VJP rules of the backward group: `stop_gradient` blocks the gradient.

The backward kernels themselves have no rules: `rlx-prepare-ad` decomposes
them into primitives (`rlx-decompose-backward`), so a gradient of a gradient
differentiates those.
"""

from __future__ import annotations

from rlx_xdsl.autodiff.registry import VJP_RULES, no_gradient
from rlx_xdsl.dialects.mir.backward import StopGradientOp

VJP_RULES.register(StopGradientOp)(no_gradient)
