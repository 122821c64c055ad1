"""VJP rules of the structured group: `mir.scan` and `mir.custom_fn`.

* `mir.scan` (after `rlx-prepare-ad`: no bcasts, trajectory saved) becomes one
  `mir.scan_backward` whose vjp body is the scan body differentiated by the VJP
  engine (`vjp_region`), with the forward body attached when the trajectory
  holds only checkpoints. It returns every `d_init` and `d_xs` at once (RLX
  emits a `ScanBackward` plus one `ScanBackwardXs` per xs, each repeating the
  whole sweep).
* `mir.custom_fn` with a vjp body: the body is inlined into the gradient with
  `[x..., y..., dy...]` bound to the op's inputs, its recomputed results and
  their cotangents (zeros for a result nobody differentiates). Without a vjp
  body the `inline-custom-fn` step has inlined the forward body already.
* `selective_scan` and `gated_delta_net` are differentiated through their
  `rlx-unfuse` expansion (the `unfuse` step of `rlx-prepare-ad`).
"""

from __future__ import annotations

from rlx_xdsl.autodiff.emit import zeros_like
from rlx_xdsl.autodiff.regions import vjp_region
from rlx_xdsl.autodiff.registry import VJP_RULES, Cotangents, Gradients, Unsupported
from rlx_xdsl.dialects.mir.structured import CustomFnOp, ScanBackwardOp, ScanOp
from rlx_xdsl.ir.emitter import Emitter
from rlx_xdsl.transforms.inlining import inline_block

PENDING = {
    ScanBackwardOp: "second-order autodiff through a scan (a follow-up of issue 14 §4)",
}
"""Ops that have neither a rule nor a rewrite yet, and the issue that adds them."""

_PREPARE = "run rlx-prepare-ad first"


@VJP_RULES.register(ScanOp)
def scan(e: Emitter, op: ScanOp, cotangents: Cotangents) -> Gradients:
    """`mir.scan_backward` over the saved trajectory: `[d_init..., d_xs...]`."""
    if op.bcasts:
        raise Unsupported(f"its bcasts must become xs ({_PREPARE}: its materialize-scan-bcasts step)")
    if not op.saves_trajectory:
        raise Unsupported(f"the backward sweep needs its trajectory ({_PREPARE}: its convert-scans-for-ad step)")
    upstream = [zeros_like(e, r) if c is None else c for c, r in zip(cotangents, op.outputs)]
    sweep = ScanBackwardOp(
        list(op.init),
        list(op.outputs),
        upstream,
        vjp_region(op.body),
        length=op.steps,
        xs=list(op.xs),
        save_trajectory=True,
        num_checkpoints=op.checkpoints,
        forward=op.body.clone() if op.recomputes else None,
    )
    e.insert(sweep)
    return list(sweep.gradients)


@VJP_RULES.register(CustomFnOp)
def custom_fn(e: Emitter, op: CustomFnOp, cotangents: Cotangents) -> Gradients:
    """The vjp body, inlined: `dx... = vjp(x..., y..., dy...)`."""
    if op.vjp is None:
        raise Unsupported(f"it has no vjp body ({_PREPARE}: its inline-custom-fn step inlines the forward body)")
    dys = [zeros_like(e, y) if c is None else c for c, y in zip(cotangents, op.outputs)]
    return inline_block(e, op.vjp.block, [*op.inputs, *op.outputs, *dys])
