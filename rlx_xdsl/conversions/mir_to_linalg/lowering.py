"""The MIR -> upstream MLIR conversion: the `LOWERINGS` registry, what a rule gets, and the pass.

Each MIR op group registers one rule per op class, in its module of this package:

    @LOWERINGS.register(SoftmaxOp)
    def lower_softmax(lw: Lowering, op: SoftmaxOp) -> Sequence[SSAValue]:
        ...   # emit linalg/tensor/arith ops with `lw`, return the values replacing op's results

A rule reads the op's MIR types through `lw` (`lw.operand_dtype(0)`, ...): they
are recorded before anything is rewritten, because the lowered values of
unsigned tensors have signless types and no longer say how to compute on them.
The pattern casts each returned value to the op's declared type (`tensor.cast`
where only static-ness differs), so rules may return more static types.

An RLX op without a rule, or a rule refusing an op (a dtype it cannot handle),
is a located error at that op; the module is then left untouched.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import func
from xdsl.dialects.builtin import (
    ArrayAttr,
    DictionaryAttr,
    FunctionType,
    ModuleOp,
    TensorType,
)
from xdsl.ir import Attribute, Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import PatternRewriter, RewritePattern
from xdsl.rewriter import Rewriter
from xdsl.traits import IsTerminator

from rlx_xdsl import dtypes, layers
from rlx_xdsl.conversions.mir_to_linalg.scalars import UnsupportedDType, storage_type
from rlx_xdsl.conversions.mir_to_linalg.tensors import Tensors
from rlx_xdsl.dialects.base import RlxOperation
from rlx_xdsl.dtypes import DType
from rlx_xdsl.ir.diagnostics import OpError
from rlx_xdsl.ir.emitter import Emitter
from rlx_xdsl.registry import MissingEntry, OpRegistry
from rlx_xdsl.transforms.statistics import Statistic

LOWERED = Statistic("num-lowered", "Number of RLX ops lowered to upstream dialects")
from rlx_xdsl.transforms.pipeline import KeepsPlansValid
from rlx_xdsl.transforms.rewriting import apply_patterns


class LoweringError(Exception):
    """A rule cannot lower this instance of its op; the message says why."""


@dataclass(frozen=True)
class OpTypes:
    """An op's operand and result types as they were in MIR."""

    operands: tuple[Attribute, ...]
    results: tuple[Attribute, ...]

    @staticmethod
    def of(op: Operation) -> OpTypes:
        return OpTypes(tuple(v.type for v in op.operands), tuple(r.type for r in op.results))


class Lowering(Tensors):
    """What a rule works with: tensor-level emission before the op, and the op's MIR types."""

    def __init__(self, op: Operation, rewriter: PatternRewriter, types: OpTypes):
        super().__init__(Emitter.replacing(op, rewriter))
        self.op = op
        self.rewriter = rewriter
        self.types = types

    def operand_dtype(self, index: int) -> DType:
        return _dtype(self.types.operands[index])

    def result_dtype(self, index: int = 0) -> DType:
        return _dtype(self.types.results[index])


Rule = Callable[[Lowering, Operation], Sequence[SSAValue]]

LOWERINGS: OpRegistry[Rule] = OpRegistry("lowering")
"""How each MIR op becomes upstream ops, keyed by op class."""


UNLOWERABLE: OpRegistry[str] = OpRegistry("no-lowering reason")
"""Ops with no upstream form, keyed by op class: why. Their `LOWERINGS` entry (`no_lowering`)
is a located error saying so; the IREE case list leaves them out."""


def no_lowering(*op_classes: type[Operation], reason: str) -> None:
    """Register, for each op class, a rule that raises `no lowering to linalg: <reason>`."""

    def rule(lw: Lowering, op: Operation) -> Sequence[SSAValue]:
        raise LoweringError(f"no lowering to linalg: {reason}")

    for op_class in op_classes:
        LOWERINGS.add(op_class, rule)
        UNLOWERABLE.add(op_class, reason)


Expansion = Callable[[Emitter, Operation], SSAValue | Sequence[SSAValue]]
"""An `rlx-unfuse` or `rlx-decompose-backward` rule: emits primitive MIR replacing an op."""


def by_expansion(expand: Expansion) -> Rule:
    """The rule lowering a composite op through its expansion into primitive MIR ops,
    which the same walk then lowers."""

    def rule(lw: Lowering, op: Operation) -> Sequence[SSAValue]:
        values = expand(lw.e, op)
        return [values] if isinstance(values, SSAValue) else list(values)

    return rule


def _dtype(t: Attribute) -> DType:
    assert isinstance(t, TensorType), f"MIR values are tensors, got {t}"
    return dtypes.dtype_of(t.element_type)


def converted_type(t: Attribute) -> Attribute:
    """A MIR type as the lowered IR spells it (unsigned element types become signless)."""
    if isinstance(t, TensorType) and dtypes.is_supported(t.element_type):
        dt = dtypes.dtype_of(t.element_type)
        if dt.kind == "uint":
            return TensorType(storage_type(dt), t.get_shape())
    return t


# The rewrite --------------------------------------------------------------------------


class LowerRegisteredOp(RewritePattern):
    """Replace any op that has a lowering rule by what its rule emits."""

    def __init__(self, types: dict[Operation, OpTypes]):
        self.types = types

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> None:
        rule = LOWERINGS.lookup(op)
        if rule is None:
            return
        # MIR ops that an expansion emitted during the walk are typed as they are now.
        types = self.types.get(op) or OpTypes.of(op)
        lw = Lowering(op, rewriter, types)
        try:
            values = rule(lw, op)
        except (LoweringError, UnsupportedDType) as e:
            raise OpError(op, f"cannot lower '{op.name}': {e}") from e
        declared = [converted_type(t) for t in types.results]
        lw.e.replace(op, *(lw.cast_to(v, t) for v, t in zip(values, declared, strict=True)))


def needs_lowering(op: Operation) -> bool:
    """RLX ops must be lowered; terminators are rewritten by their parent's rule."""
    return isinstance(op, RlxOperation) and not op.has_trait(IsTerminator)


def check_lowerable(root: Operation) -> None:
    """Raise a located `no lowering for 'mir.X'` error at the first RLX op without a rule,
    or on a dtype only the interpreter computes."""
    for op in root.walk():
        if needs_lowering(op):
            narrow = dtypes.interpreter_only_value(op)
            if narrow is not None:
                raise OpError(op, f"cannot lower '{op.name}': {narrow} has no linalg lowering (interpreter only)")
            try:
                LOWERINGS[op]
            except MissingEntry as e:
                raise OpError(op, str(e)) from None


PLAN_ATTRIBUTE_PREFIX = "lir."
"""Memory-plan placements (`lir.slot`, `lir.phase`): meaningless once IREE allocates."""


def _without_plan(attrs: dict[str, Attribute]) -> dict[str, Attribute]:
    return {k: v for k, v in attrs.items() if not k.startswith(PLAN_ATTRIBUTE_PREFIX)}


def _retype_signatures(module: ModuleOp) -> None:
    """Give functions and block arguments the lowered (signless) types, and drop
    memory-plan attributes."""
    for op in module.walk():
        op.attributes = _without_plan(op.attributes)
        if isinstance(op, func.FuncOp):
            for which in ("arg_attrs", "res_attrs"):
                attrs = getattr(op, which)
                if attrs is not None:
                    cleaned = [DictionaryAttr(_without_plan(dict(d.data))) for d in attrs.data]
                    # No attributes left: none at all, as the parser reads `-> tensor<...>`.
                    kept = any(d.data for d in cleaned)
                    setattr(op, which, ArrayAttr(cleaned) if kept else None)
        for region in op.regions:
            for block in region.blocks:
                for arg in block.args:
                    new = converted_type(arg.type)
                    if new != arg.type:
                        Rewriter.replace_value_with_new_type(arg, new)
        if isinstance(op, func.FuncOp):
            ft = op.function_type
            op.function_type = FunctionType.from_lists(
                [converted_type(t) for t in ft.inputs], [converted_type(t) for t in ft.outputs]
            )


def lower_module(module: ModuleOp) -> None:
    """Lower every RLX op of `module` in place; on error, `module` is left unchanged."""
    layers.load("linalg")
    check_lowerable(module)
    work = module.clone()
    types = {op: OpTypes.of(op) for op in work.walk() if needs_lowering(op)}
    _retype_signatures(work)
    apply_patterns(work, LowerRegisteredOp(types), recursive=True)
    LOWERED.add(len(types))
    old = module.body.block
    module.body.detach_block(old)
    old.erase(safe_erase=False)
    work.body.move_blocks(module.body)


@dataclass(frozen=True)
class ConvertMirToLinalgPass(KeepsPlansValid, ModulePass):
    """Lower MIR to func/arith/math/tensor/linalg/scf (upstream MLIR that IREE compiles).

    Named linalg ops where they exist (matmul, conv, fill, transpose), `linalg.generic`
    otherwise; `mir.if`/`mir.while` become `scf.if`/`scf.while`. An op without a
    lowering is a located error and the module is left unchanged.
    """

    name = "rlx-convert-mir-to-linalg"
    STATISTICS = (LOWERED,)

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        lower_module(op)
