"""VJP rules of the fused group: none, on purpose.

A fused op (`fused_matmul_bias_act`, `fused_swiglu`, `fused_residual_rms_norm`)
is the chain of primitives its `rlx-unfuse` rule expands it into; the `unfuse`
step of `rlx-prepare-ad` does that, and the primitives' rules differentiate it
(RLX's `unfuse_fused_for_autodiff`). A fused op that registers a rule here
would be kept whole instead.
"""
