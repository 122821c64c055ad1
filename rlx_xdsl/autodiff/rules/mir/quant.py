"""VJP rules of the quantisation ops.

quantize and dequantize: RLX passes the gradient straight through both. Here an
integer value carries no gradient (`rlx-grad`), so across the i8/ui8 value between
them there is nothing to pass: both register `no_gradient`. Training through
quantisation uses `mir.fake_quantize`, whose value stays floating point
(`docs/quantization.md`, `docs/deviations.md`).
"""

from __future__ import annotations

from rlx_xdsl.autodiff.registry import VJP_RULES, no_gradient
from rlx_xdsl.dialects.mir.quant import DequantizeOp, QuantizeOp

VJP_RULES.register(QuantizeOp)(no_gradient)
VJP_RULES.register(DequantizeOp)(no_gradient)
