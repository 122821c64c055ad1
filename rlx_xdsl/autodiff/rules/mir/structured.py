"""VJP rules of the structured group (none yet).

`selective_scan` and `gated_delta_net` are differentiated through their
`rlx-unfuse` expansion (the `unfuse` step of `rlx-prepare-ad`). The autodiff
of scans and custom functions is a follow-up (issue 14 §4: `convert-scans`,
`inline-custom-fn` and their rules); until then `rlx-grad` reports "no VJP
rule" for them when they lie on a gradient path.
"""

from rlx_xdsl.dialects.mir.structured import CustomFnOp, ScanBackwardOp, ScanOp

PENDING = {
    ScanOp: "issue 14 §4 (autodiff of structured ops)",
    ScanBackwardOp: "issue 14 §4 (autodiff of structured ops)",
    CustomFnOp: "issue 14 §4 (autodiff of structured ops)",
}
"""Ops that have neither a rule nor a rewrite yet, and the issue that adds them."""
