"""Prepare then rasterize becomes one render (RLX's `fuse_decomposed_gaussian_splat`).

A rasterize whose rows come straight from a prepare of the same image size is exactly the
render of prepare's operands: radius_scale is prepare's (only the projection reads it), the
tile and compositing properties are rasterize's (only the rasteriser reads them), and
rasterize reads nothing of its meta. `rlx-prepare-ad` runs this step, since only the render
has a gradient rule; a prepare left without users is erased.
"""

from __future__ import annotations

from xdsl.pattern_rewriter import (
    PatternRewriter,
    RewritePattern,
    op_type_rewrite_pattern,
)

from rlx_xdsl.dialects.mir.splat import GaussianSplatPrepareOp, GaussianSplatRasterizeOp
from rlx_xdsl.ir.emitter import Emitter


class FuseDecomposedGaussianSplat(RewritePattern):
    @op_type_rewrite_pattern
    def match_and_rewrite(
        self, op: GaussianSplatRasterizeOp, rewriter: PatternRewriter
    ) -> None:
        prepare = op.prepared.owner
        if not isinstance(prepare, GaussianSplatPrepareOp):
            return
        if (prepare.prop("width"), prepare.prop("height")) != (
            op.prop("width"),
            op.prop("height"),
        ):
            return
        e = Emitter.replacing(op, rewriter)
        options = {**op.props(), "radius_scale": prepare.prop("radius_scale")}
        e.replace(op, e.mir.gaussian_splat_render(*prepare.operands, **options))
        if not prepare.result.uses:
            rewriter.erase(prepare)
