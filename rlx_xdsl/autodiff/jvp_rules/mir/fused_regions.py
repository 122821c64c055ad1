"""JVP rules of the fused-region group: none, `rlx-prepare-ad` unfuses them.

`mir.elementwise_region` and `mir.fused_matmul_epilogue` are inlined by the
unfuse step; each inlined op is pushed forward by its own rule.
"""
