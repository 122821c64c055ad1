"""VJP rules of the fused-region group: none, `rlx-prepare-ad` unfuses them.

`mir.elementwise_region` and `mir.fused_matmul_epilogue` hold a body of
elementwise ops; the `unfuse` step inlines it (the epilogue after its matmul)
and each inlined op is differentiated by its own rule, as in RLX.
"""
