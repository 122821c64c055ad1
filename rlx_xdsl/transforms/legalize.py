"""`rlx-legalize{target supported}`: rewrite the ops a backend lacks into ops it has
(RLX's `rewrite_for_backend` / `legalize_for_backend`).

While some MIR op is outside the supported set, every rule the project has for it is
tried (unfuse rules of fused ops, backward-kernel decompositions, the
softmax-cross-entropy lowering, `mir.if` inlining and bounded `mir.while` unrolling,
`dot_general` as matmul, the logical-kernel lowerings: group_norm,
resize_nearest_2x, layer_norm_2d, conv_transpose_2d, and softmax, layer_norm and
rms_norm, rope, attention and conv as matmul, reduce, elementwise and shape ops, grouped_matmul as
gather and matmul), one walk per round, at most
`MAX_ROUNDS` rounds; the rules' outputs are legalized in later rounds. What is
still unsupported then is an error at the first such op, listing them all.

`supported` (full op names) overrides the target's set. The one target declared
here is `primitive`: matmul, the elementwise ops, reduce and the shape ops.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Operation
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import PatternRewriter, RewritePattern
from xdsl.traits import IsTerminator

from rlx_xdsl.diagnostics import OpError
from rlx_xdsl.dialects.mir import contraction, elementwise, reduction, shape
from rlx_xdsl.transforms.rewriting import apply_patterns
from rlx_xdsl.transforms.statistics import pattern_statistic

MAX_ROUNDS = 16

PRIMITIVE = frozenset(
    op.name for op in (*elementwise.OPS, *shape.OPS, contraction.MatmulOp, reduction.ReduceOp)
)
"""The minimal primitive set: matmul, elementwise, reduce, shape ops."""

TARGETS: dict[str, frozenset[str]] = {"primitive": PRIMITIVE}


def rules() -> list[RewritePattern]:
    """Every rewrite the project has that replaces an op by simpler MIR."""
    from rlx_xdsl.transforms import decompose_backward, unfuse
    from rlx_xdsl.transforms.fusion.control_flow import InlineIf, UnrollWhile
    from rlx_xdsl.transforms.fusion.dot_general import LowerDotGeneral
    from rlx_xdsl.transforms.lower_logical_kernels import (
        LowerConvTranspose2d,
        LowerGroupNorm,
        LowerLayerNorm2d,
        LowerResizeNearest2x,
    )
    from rlx_xdsl.transforms.lower_sce import LowerDenseLoss, LowerIndexedLoss, LowerLossBackward
    from rlx_xdsl.transforms.primitive_rules import (
        AttentionAsPrimitives,
        ConvAsPrimitives,
        GroupedMatmulAsPrimitives,
        LayerNormAsPrimitives,
        RopeAsPrimitives,
        RmsNormAsPrimitives,
        SoftmaxAsPrimitives,
    )

    unfuse.load_rules()
    decompose_backward.load_rules()
    return [
        unfuse.UnfuseRegistered(),
        decompose_backward.DecomposeRegistered(frozenset()),
        LowerIndexedLoss(), LowerDenseLoss(), LowerLossBackward(),
        InlineIf(), UnrollWhile(), LowerDotGeneral(),
        LowerGroupNorm(), LowerResizeNearest2x(), LowerLayerNorm2d(), LowerConvTranspose2d(),
        SoftmaxAsPrimitives(), LayerNormAsPrimitives(), RmsNormAsPrimitives(),
        RopeAsPrimitives(), AttentionAsPrimitives(), ConvAsPrimitives(), GroupedMatmulAsPrimitives(),
    ]  # fmt: skip


def is_unsupported(op: Operation, supported: frozenset[str]) -> bool:
    """A MIR op outside `supported` (terminators go with their region op)."""
    return op.name.startswith("mir.") and op.name not in supported and not op.has_trait(IsTerminator)


class RewriteUnsupported(RewritePattern):
    """Apply the first rule that rewrites an unsupported op."""

    def __init__(self, supported: frozenset[str]):
        self.supported = supported
        self.rules = rules()

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> None:
        if not is_unsupported(op, self.supported):
            return
        for rule in self.rules:
            rule.match_and_rewrite(op, rewriter)
            if rewriter.has_done_action:
                return


def rewrite_unsupported(module: ModuleOp, supported: frozenset[str]) -> tuple[int, list[Operation]]:
    """Rewrite until everything is supported or nothing changes (at most `MAX_ROUNDS`
    rounds); the rounds that changed the IR and the ops still unsupported."""
    pattern = RewriteUnsupported(supported)
    rounds = 0
    while rounds < MAX_ROUNDS and any(is_unsupported(op, supported) for op in module.walk()):
        if not apply_patterns(module, pattern):
            break
        rounds += 1
    return rounds, [op for op in module.walk() if is_unsupported(op, supported)]


def legalize(module: ModuleOp, supported: frozenset[str]) -> int:
    """`rewrite_unsupported`, failing at the first op left unsupported; the rounds."""
    rounds, left = rewrite_unsupported(module, supported)
    if left:
        kinds = sorted({op.name for op in left})
        raise OpError(
            left[0],
            f"'{left[0].name}' is not supported by the target and no rule rewrites it into "
            f"supported ops; still unsupported after {rounds} round(s): {', '.join(kinds)}",
        )
    return rounds


@dataclass(frozen=True)
class LegalizePass(ModulePass):
    """Rewrite ops a backend does not support into ones it does (RLX's rewrite_for_backend)."""

    name = "rlx-legalize"

    STATISTICS = (pattern_statistic(RewriteUnsupported),)

    target: str = field(default="primitive", metadata={"syntax": "|".join(TARGETS), "example": "primitive"})
    supported: tuple[str, ...] = field(
        default=(), metadata={"syntax": "OP_NAME,...", "example": "mir.matmul"}
    )

    def __post_init__(self) -> None:
        """Bad options are usage errors, before any IR is read."""
        if self.target not in TARGETS:
            raise ValueError(f"target={self.target}: '{self.target}' is not one of {', '.join(TARGETS)}")
        from rlx_xdsl.context import make_context

        ctx = make_context()
        unknown = [name for name in self.supported if ctx.get_optional_op(name) is None]
        if unknown:
            raise ValueError(f"supported={','.join(unknown)}: no such op")

    def supported_ops(self, ctx: Context) -> frozenset[str]:
        return frozenset(self.supported) if self.supported else TARGETS[self.target]

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        legalize(op, self.supported_ops(ctx))
