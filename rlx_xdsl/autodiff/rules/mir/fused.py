"""VJP rules of the fused group: none, on purpose.

Every fused op (`fused_matmul_bias_act`, `fused_swiglu`,
`fused_residual_rms_norm`, `fused_residual_layer_norm`, `fused_attention_block`,
`fused_transformer_layer`) is the chain of primitives its `rlx-unfuse` rule
expands it into; the `unfuse` step of `rlx-prepare-ad` does that, and the
primitives' rules differentiate it (RLX's `prepare_graph_for_ad` unfuses
everything). One expansion serves the interpreter, the linalg lowering and
autodiff, so a fused op cannot drift from its gradient. A fused op that
registers a rule here would be kept whole instead.

A residual norm keeping its sum (second result) unfuses to the adds and the
norm with the last add as that result, so the sum's cotangent joins the one
flowing back through the norm at that add, as for any value with two uses.
"""
