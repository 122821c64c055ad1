"""The rewrite behind `rlx-amp`: casts at precision boundaries, result types re-inferred.

One forward walk over every function (and region body), so each op is reached
after the producers of its operands. An op is treated one of three ways:

* **retyped** (an RLX op the policy gives a float type T, or `promote`): every
  floating-point DATA operand (f32, f16, bf16) not already in T is replaced by a
  cast of it to T, then the op re-infers its result types;
* **kept** (`keep`, terminators such as `func.return` and `mir.yield`, ops with
  regions, ops of other frameworks whose types cannot be re-inferred, ops on
  f64 data, and ops computing values that end up as indices, labels,
  predicates or masks): every operand whose type the pass changed is cast back
  to its original type, so the op and its results keep their types. Function
  results are cast back this way, and region bodies are rewritten like
  functions of their own;
* an explicit **`mir.cast`** keeps its result type (it says what the program
  wants); one that the retyping of its operand turned into an identity is
  dropped.

Casts come from one `CastCache` (one cast per value and type, placed right
after the value's definition, existing casts reused), so every consumer shares
them. Integer and i1 values never change: only f32/f16/bf16 operands are cast,
and only DATA operands (never indices, labels, predicates or masks, whatever
their dtype). Values that flow into such an operand are computed as written
(`pinned_ops`): an index computed in f32 stays exact.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

from xdsl.dialects.builtin import ComplexType, ModuleOp, TensorType
from xdsl.ir import Attribute, Operation, SSAValue
from xdsl.pattern_rewriter import (
    PatternRewriter,
    RewritePattern,
)
from xdsl.traits import IsTerminator
from xdsl.utils.exceptions import VerifyException

from rlx_xdsl import dtypes, layers
from rlx_xdsl.dialects.base import RlxOperation
from rlx_xdsl.dialects.mir.elementwise import CastOp
from rlx_xdsl.dialects.traits import data_operands, operand_roles
from rlx_xdsl.ir.diagnostics import OpError
from rlx_xdsl.shapes import shape_of, tensor
from rlx_xdsl.transforms.amp.policy import FLOATS, KEEP, PROMOTE, Policy
from rlx_xdsl.transforms.fold_casts import (
    CastCache,
    existing_cast,
    move_after_definition,
)
from rlx_xdsl.transforms.rewriting import apply_patterns

AMP_FLOATS = frozenset(dtypes.dtype_named(name).element_type for name in FLOATS)


def amp_float(value: SSAValue) -> Attribute | None:
    """`value`'s element type if AMP may change it (f32, f16, bf16), else None."""
    t = value.type
    if isinstance(t, TensorType) and t.element_type in AMP_FLOATS:
        return t.element_type
    return None


def with_declared_shape(declared: Attribute, inferred: Attribute) -> Attribute:
    """`inferred`'s element type on `declared`'s shape: AMP changes dtypes, never declared shapes."""
    if isinstance(declared, TensorType) and isinstance(inferred, TensorType):
        return tensor(inferred.element_type, shape_of(declared))
    return inferred


def _is_complex_tensor(value: SSAValue) -> bool:
    t = value.type
    return isinstance(t, TensorType) and isinstance(t.element_type, ComplexType)


def _is_float_tensor(value: SSAValue) -> bool:
    t = value.type
    return isinstance(t, TensorType) and dtypes.is_float(t.element_type)


def _is_complex_tensor(value: SSAValue) -> bool:
    t = value.type
    return isinstance(t, TensorType) and dtypes.dtype_of(t.element_type).kind == "complex"


# Which ops must compute as written --------------------------------------------------


def pinned_ops(root: Operation) -> set[Operation]:
    """The ops whose float results flow into an operand that is not DATA.

    Such values are positions, class ids, conditions or masks: an index 257 in
    bf16 reads 256. These ops (and everything nested in them) keep their types.
    The search follows float values only: an integer is exact at any precision.
    """
    pending: list[SSAValue] = [
        operand
        for op in root.walk()
        for operand, role in zip(op.operands, operand_roles(op))
        if not role.is_data and _is_float_tensor(operand)
    ]
    pinned: set[Operation] = set()
    while pending:
        owner = pending.pop().owner
        if not isinstance(owner, Operation) or owner in pinned:
            continue
        for op in owner.walk():  # the op and every op in its regions
            pinned.add(op)
            pending.extend(v for v in op.operands if _is_float_tensor(v))
    return pinned


# The shared state of the walk -------------------------------------------------------


@dataclass
class AmpRewrite:
    """What the patterns share: the policy, the casts made so far and the types ops were written with."""

    policy: Policy
    pinned: set[Operation]
    written: dict[Operation, tuple[Attribute, ...]]
    """The operand types of every op before the pass: what an op that keeps its types gets back."""
    casts: CastCache = field(default_factory=CastCache)
    _targets: dict[Operation, Attribute | None] = field(default_factory=dict)

    @staticmethod
    def of(module: ModuleOp, policy: Policy) -> AmpRewrite:
        written = {op: tuple(v.type for v in op.operands) for op in module.walk()}
        return AmpRewrite(policy, pinned_ops(module), written)

    def target(self, op: Operation) -> Attribute | None:
        """The float type `op` computes in, or None when it keeps its types (asked once per op)."""
        if op not in self._targets:
            self._targets[op] = self._choose_target(op)
        return self._targets[op]

    def _choose_target(self, op: Operation) -> Attribute | None:
        if (
            not isinstance(op, RlxOperation)
            or isinstance(op, CastOp)
            or op.regions
            or op.has_trait(IsTerminator)
            or op in self.pinned
        ):
            return None
        data = [op.operands[i] for i in data_operands(op)]
        if any(_is_float_tensor(v) and amp_float(v) is None for v in data):
            return None  # f64 data: the program asked for it
        if any(map(_is_complex_tensor, (*op.operands, *op.results))):
            return None  # complex<f32> has no low-precision twin: its real parts stay with it
        choice = self.policy.choice(op)
        if choice == KEEP:
            return None
        if choice == PROMOTE:
            floats = [t for t in map(amp_float, data) if t is not None]
            return dtypes.promote_all(*floats) if floats else None
        return dtypes.dtype_named(choice).element_type

    def retype_results(self, op: RlxOperation, rewriter: PatternRewriter, target: Attribute) -> None:
        """Give `op`'s results the element types it infers from its new operands, on their declared shapes.

        Inference may know more of a shape than the program declared (`add` of a
        `3` and a `?` is `3`); a value whose type says `?` keeps saying it, so
        its users (a `func.return`, a region op, another framework's op) still
        see the type they were written with.
        """
        try:
            inferred = op.inferred_types()
        except VerifyException as error:
            raise OpError(
                op, f"rlx-amp cannot compute '{op.name}' in {target}: {error}"
            ) from error
        for result, inferred_type in zip(op.results, inferred, strict=True):
            new_type = with_declared_shape(result.type, inferred_type)
            if result.type != new_type:
                rewriter.replace_value_with_new_type(result, new_type)


# The patterns -------------------------------------------------------------------------


@dataclass
class RetypeToPolicy(RewritePattern):
    """Cast the op's float DATA operands to the policy's type; re-infer its results."""

    amp: AmpRewrite

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> None:
        target = self.amp.target(op)
        if target is None:
            return
        assert isinstance(op, RlxOperation)
        changed = False
        for index in data_operands(op):
            operand = op.operands[index]
            current = amp_float(operand)
            if current is not None and current != target:
                op.operands[index] = self.amp.casts.cast(operand, target, rewriter)
                changed = True
        if changed:
            rewriter.notify_op_modified(op)
        self.amp.retype_results(op, rewriter, target)


@dataclass
class KeepSignature(RewritePattern):
    """An op that keeps its types gets back the original type of every operand the pass changed."""

    amp: AmpRewrite

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> None:
        if isinstance(op, CastOp) or self.amp.target(op) is not None:
            return
        changed = False
        for index, (operand, before) in enumerate(zip(op.operands, self.amp.written[op], strict=True)):
            if operand.type != before:
                assert isinstance(before, TensorType)
                op.operands[index] = self.amp.casts.cast(operand, before.element_type, rewriter)
                changed = True
        if changed:
            rewriter.notify_op_modified(op)


@dataclass
class ExplicitCast(RewritePattern):
    """A program's own cast keeps its result type; drop it if its retyped operand has that type now.

    Its users that are casts then cast the operand itself: one of them may be
    a cast the cache already made of that value, which it then replaces.
    """

    amp: AmpRewrite

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> None:
        if not (isinstance(op, CastOp) and op.is_plain):
            return
        if op.input.type == self.amp.written[op][0] or op.input.type != op.result.type:
            return  # its operand was not retyped, or the cast still converts
        source = op.input
        casts_of_result = [use.operation for use in op.result.uses if isinstance(use.operation, CastOp)]
        rewriter.replace(op, (), [source])
        self._merge_with_cached(source, casts_of_result, rewriter)

    def _merge_with_cached(
        self, source: SSAValue, users: Iterable[Operation], rewriter: PatternRewriter
    ) -> None:
        for user in users:
            assert isinstance(user, CastOp)
            if not user.is_plain:
                continue
            to = user.result.type
            assert isinstance(to, TensorType)
            other = existing_cast(source, to, besides=user)
            if other is not None:
                move_after_definition(other, rewriter)
                rewriter.replace(user, (), [other.result])


def refuse_hir_blocks(module: ModuleOp) -> None:
    """An OpError at the first op `rlx-lower-hir` would expand: AMP chooses per MIR op.

    A block (`hir.llama_decoder_block`) holds ops the policy puts in different
    precisions (matmuls low, norms f32): one choice for the whole block would
    give another program than the same policy after lowering.
    """
    from rlx_xdsl.conversions.hir_to_mir import LOWERINGS

    layers.load("hir-lowerings")
    for op in module.walk():
        if LOWERINGS.lookup(op) is not None:
            raise OpError(
                op,
                f"'rlx-amp' chooses a precision per MIR op, and '{op.name}' is an HIR block "
                "(its ops may need different precisions): run rlx-lower-hir first "
                "(-p 'rlx-lower-hir,rlx-amp{...}')",
            )


def auto_mixed_precision(module: ModuleOp, policy: Policy) -> int:
    """Rewrite every function of `module` under `policy`; return the number of casts inserted."""
    refuse_hir_blocks(module)
    amp = AmpRewrite.of(module, policy)
    patterns = [ExplicitCast(amp), RetypeToPolicy(amp), KeepSignature(amp)]
    apply_patterns(module, *patterns)
    return amp.casts.created
