"""RLX's fusion passes (and the lowerings its pipeline runs first), as pattern rewrites.

One module per pass or family of passes; each pass is a frozen-dataclass
`ModulePass` applying small `RewritePattern`s (`apply_patterns`). Fused ops
are located at a `FusedLoc` of the ops they replace, so diagnostics and the
fusion report (`report.py`) can name every source line. `pipeline.py`
assembles RLX's per-target pass lists (`rlx-fusion-pipeline`).
"""
