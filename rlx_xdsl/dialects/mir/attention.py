"""MIR attention and rotary position embedding: `mir.attention`, `mir.rope`.

Both work on the `[B, H, S, D]` head layout RLX's lowering produces. Attention
supports grouped-query attention (fewer KV heads than query heads), RLX's five
mask kinds, a score scale and a logit soft-cap; rope rotates the first `n_rot`
dims of each head with NeoX pairing.
"""

from __future__ import annotations

from collections.abc import Sequence

from xdsl.dialects.builtin import (
    I64,
    Float32Type,
    FloatAttr,
    IntegerAttr,
    TensorType,
    f32,
)
from xdsl.dialects.utils import EnumAttribute
from xdsl.ir import Attribute, SpacedOpaqueSyntaxAttribute, SSAValue
from xdsl.irdl import (
    irdl_attr_definition,
    irdl_op_definition,
    operand_def,
    opt_operand_def,
    opt_prop_def,
    prop_def,
    result_def,
    traits_def,
)
from xdsl.traits import Pure
from xdsl.utils.str_enum import StrEnum

from rlx_xdsl.dialects.base import (
    FUNCTIONAL,
    RlxOperation,
    i64_attr,
    require,
    require_float,
    require_min_rank,
    require_positive,
    require_rank,
    require_same_element_type,
    tensor_type,
)
from rlx_xdsl.dialects.traits import COMPUTE, DATA_MOVEMENT, OperandRoles, Role
from rlx_xdsl.shapes import DYNAMIC, broadcasts_to, dims_match, fmt_shape, tensor


class MaskKind(StrEnum):
    """RLX's `MaskKind`; the sliding window's width is the op's `window` property."""

    NONE = "none"
    CAUSAL = "causal"
    SLIDING_WINDOW = "sliding_window"
    CUSTOM = "custom"
    BIAS = "bias"


MASK_OPERAND_KINDS = (MaskKind.CUSTOM, MaskKind.BIAS)
"""The mask kinds that read a mask operand."""


@irdl_attr_definition
class MaskKindAttr(EnumAttribute[MaskKind], SpacedOpaqueSyntaxAttribute):
    """The mask of `mir.attention`: `#mir<mask_kind causal>`, or bare `causal` in the op."""

    name = "mir.mask_kind"


def _opt_f32(value: float | None) -> FloatAttr | None:
    return None if value is None else FloatAttr(value, f32)


class HeadOperation(RlxOperation):
    """What attention and rope share: both map heads of `head_dim` elements to new heads."""

    def check_attributes(self) -> None:
        require_positive(self, head_dim=self.head_dim.value.data)


class AttentionOperation(HeadOperation):
    """The checks attention and its backward share: heads, GQA grouping, masks, soft-cap.

    Each op declares its own `q`, `k`, `v`, optional `mask` and attention properties;
    these methods only read them.
    """

    @property
    def kind(self) -> MaskKind:
        return self.mask_kind.data

    def scale(self) -> float:
        """The score scale: `score_scale`, else `1 / sqrt(head_dim)`."""
        if self.score_scale is not None:
            return self.score_scale.value.data
        return self.head_dim.value.data**-0.5

    def check_attributes(self) -> None:
        require_positive(self, num_heads=self.num_heads.value.data)
        super().check_attributes()
        sliding = self.kind == MaskKind.SLIDING_WINDOW
        require(
            (self.window is not None) == sliding,
            self,
            "window must be set exactly when mask_kind is sliding_window",
        )
        if self.window is not None:
            require_positive(self, window=self.window.value.data)
        if self.attn_logit_softcap is not None:
            cap = self.attn_logit_softcap.value.data
            require(cap > 0, self, lambda: f"attn_logit_softcap must be > 0, got {cap}")

    def check_heads(self, q: TensorType, k: TensorType, v: TensorType) -> None:
        """q has `num_heads` heads of `head_dim`; k and v agree and group evenly."""
        num_heads, head_dim = self.num_heads.value.data, self.head_dim.value.data
        batch, heads, _, dim = q.get_shape()
        require(dims_match(heads, num_heads), self, lambda: f"q has {heads} heads but num_heads is {num_heads}")
        require(dims_match(dim, head_dim), self, lambda: f"q head dim {dim} differs from head_dim {head_dim}")
        require(
            all(dims_match(a, b) for a, b in zip(k.get_shape(), v.get_shape())),
            self,
            lambda: f"k shape {fmt_shape(k.get_shape())} differs from v shape {fmt_shape(v.get_shape())}",
        )
        kv_batch, kv_heads, _, kv_dim = k.get_shape()
        require(dims_match(kv_batch, batch), self, lambda: f"k/v batch {kv_batch} differs from q batch {batch}")
        require(
            dims_match(kv_dim, head_dim), self, lambda: f"k/v head dim {kv_dim} differs from head_dim {head_dim}"
        )
        if kv_heads != DYNAMIC:
            require(
                num_heads % kv_heads == 0,
                self,
                lambda: f"num_heads {num_heads} is not a multiple of the {kv_heads} k/v heads",
            )

    def check_mask(self, q: TensorType, k: TensorType) -> None:
        """The mask operand is present for custom/bias masks only, with their shapes."""
        needs_mask = self.kind in MASK_OPERAND_KINDS
        require(
            (self.mask is not None) == needs_mask,
            self,
            lambda: f"mask_kind {self.kind} {'requires a' if needs_mask else 'takes no'} mask operand",
        )
        if self.mask is None:
            return
        m = tensor_type(self.mask)
        batch, _, sq, _ = q.get_shape()
        sk = k.get_shape()[2]
        if self.kind == MaskKind.CUSTOM:
            require(
                m.get_num_dims() == 2 and all(map(dims_match, m.get_shape(), (batch, sk))),
                self,
                lambda: f"custom mask shape {fmt_shape(m.get_shape())} must be [batch, keys] = "
                f"{fmt_shape((batch, sk))}",
            )
            return
        require_float(self, m, "bias mask")
        scores = (batch, self.num_heads.value.data, sq, sk)
        require(
            broadcasts_to(m.get_shape(), scores),
            self,
            lambda: f"bias mask shape {fmt_shape(m.get_shape())} does not broadcast to the scores "
            f"shape {fmt_shape(scores)}",
        )

    def check_operands(self) -> TensorType:
        """q, k, v are rank-4 float heads of one dtype, grouped evenly, with a fitting mask.

        Returns q's type.
        """
        q, k, v = (tensor_type(x) for x in (self.q, self.k, self.v))
        for what, t in (("q", q), ("k", k), ("v", v)):
            require_rank(self, t, 4, what)
        require_float(self, q, "q")
        require_same_element_type(self, q, {"k": k, "v": v})
        self.check_heads(q, k, v)
        self.check_mask(q, k)
        return q


@irdl_op_definition
class AttentionOp(AttentionOperation):
    """Scaled dot-product attention: `softmax(mask(softcap(q k^T * scale))) v`.

    q is `[B, H, Sq, D]`, k and v are `[B, Hkv, Sk, D]` with `H % Hkv == 0`; query
    head `h` reads KV head `h // (H / Hkv)` (grouped-query attention).

    * `scale` is `score_scale` when given, else `1 / sqrt(head_dim)`.
    * `attn_logit_softcap = c` maps each scaled score `s` to `c * tanh(s / c)`
      (Gemma), before any mask.
    * Query `i` sits at key position `p = i + Sk - Sq` (the last query aligns with
      the last key, so a KV cache longer than the query block works). `causal`
      keeps keys `j <= p`; `sliding_window` with `window = w` keeps the `w` most
      recent keys, `p - w < j <= p` (the query's own position included).
    * `custom`: the mask is `[B, Sk]`; key `j` of batch `b` is attended where
      `mask[b, j] >= 0.5` (0/1 or i1 masks; NaN masks the key), for every head and query.
    * `bias`: the float mask broadcasts to `[B, H, Sq, Sk]` and is added to the
      (softcapped) scores; `-inf` masks a key.
    * A row whose keys are all masked yields zeros, not NaN.

    f16/bf16 compute scores and softmax in f32 (as fused attention kernels do),
    round the probabilities to the op's dtype, and accumulate `probs @ v` in f32.
    With `?` dims, run-time shapes get the verifier's checks (head width, GQA
    grouping, mask shape) before anything is computed.
    """

    name = "mir.attention"
    q = operand_def(TensorType)
    k = operand_def(TensorType)
    v = operand_def(TensorType)
    mask = opt_operand_def(TensorType)
    result = result_def(TensorType)
    num_heads = prop_def(IntegerAttr[I64])
    head_dim = prop_def(IntegerAttr[I64])
    mask_kind = prop_def(MaskKindAttr)
    window = opt_prop_def(IntegerAttr[I64])
    score_scale = opt_prop_def(FloatAttr[Float32Type])
    attn_logit_softcap = opt_prop_def(FloatAttr[Float32Type])
    traits = traits_def(Pure(), COMPUTE, OperandRoles.of(mask=Role.MASK))
    assembly_format = (
        "$q `,` $k `,` $v (`,` $mask^)? `num_heads` `=` $num_heads `head_dim` `=` $head_dim "
        "`mask_kind` `=` $mask_kind (`window` `=` $window^)? "
        "(`score_scale` `=` $score_scale^)? (`attn_logit_softcap` `=` $attn_logit_softcap^)? "
        + FUNCTIONAL
    )

    def __init__(
        self,
        q: SSAValue,
        k: SSAValue,
        v: SSAValue,
        mask: SSAValue | None = None,
        *,
        num_heads: int,
        head_dim: int,
        mask_kind: str | MaskKind = MaskKind.NONE,
        window: int | None = None,
        score_scale: float | None = None,
        attn_logit_softcap: float | None = None,
    ):
        super().__init__(
            operands=[q, k, v, mask],
            properties={
                "num_heads": i64_attr(num_heads),
                "head_dim": i64_attr(head_dim),
                "mask_kind": MaskKindAttr(MaskKind(mask_kind)),
                "window": None if window is None else i64_attr(window),
                "score_scale": _opt_f32(score_scale),
                "attn_logit_softcap": _opt_f32(attn_logit_softcap),
            },
        )

    def infer_result_types(self) -> Sequence[Attribute]:
        q = self.check_operands()
        batch, _, sq, _ = q.get_shape()
        return [tensor(q.element_type, (batch, self.num_heads.value.data, sq, self.head_dim.value.data))]


class RopeOperation(HeadOperation):
    """The checks rope and its backward share; `rotated` names the operand that is rotated."""

    def check_attributes(self) -> None:
        super().check_attributes()
        head_dim, n_rot = self.head_dim.value.data, self.n_rot.value.data
        require(
            0 < n_rot <= head_dim and n_rot % 2 == 0,
            self,
            lambda: f"n_rot must be even and in (0, head_dim = {head_dim}], got {n_rot}",
        )

    def check_rotated(self, rotated: SSAValue, what: str) -> TensorType:
        """`rotated` holds heads of `head_dim`; cos and sin share its dtype and broadcast to its
        `[..., S, n_rot / 2]` table. Returns its type with the last dim refined to `head_dim`."""
        x, cos, sin = (tensor_type(v) for v in (rotated, self.cos, self.sin))
        require_min_rank(self, x, 2, what)
        require_float(self, x, what)
        require_same_element_type(self, x, {"cos": cos, "sin": sin})
        head_dim = self.head_dim.value.data
        last = x.get_shape()[-1]
        require(dims_match(last, head_dim), self, lambda: f"{what} last dim {last} differs from head_dim {head_dim}")
        table = (*x.get_shape()[:-1], self.n_rot.value.data // 2)
        for name, t in (("cos", cos), ("sin", sin)):
            require(
                broadcasts_to(t.get_shape(), table),
                self,
                lambda: f"{name} shape {fmt_shape(t.get_shape())} does not broadcast to {fmt_shape(table)}",
            )
        return tensor(x.element_type, (*x.get_shape()[:-1], head_dim))


@irdl_op_definition
class RopeOp(RopeOperation):
    """Rotary position embedding with NeoX pairing (`Rope{head_dim, n_rot}`).

    With `h = n_rot / 2`, dims `i < h` pair with `i + h`:
    `out[i] = x[i] cos - x[i+h] sin`, `out[i+h] = x[i+h] cos + x[i] sin`;
    dims from `n_rot` to `head_dim` are copied. cos and sin broadcast to `[..., S, h]`.
    f16/bf16 compute in f32 and round once.
    """

    name = "mir.rope"
    x = operand_def(TensorType)
    cos = operand_def(TensorType)
    sin = operand_def(TensorType)
    result = result_def(TensorType)
    head_dim = prop_def(IntegerAttr[I64])
    n_rot = prop_def(IntegerAttr[I64])
    traits = traits_def(Pure(), DATA_MOVEMENT)
    assembly_format = (
        "$x `,` $cos `,` $sin `head_dim` `=` $head_dim `n_rot` `=` $n_rot " + FUNCTIONAL
    )

    def __init__(self, x: SSAValue, cos: SSAValue, sin: SSAValue, *, head_dim: int, n_rot: int):
        super().__init__(
            operands=[x, cos, sin],
            properties={"head_dim": i64_attr(head_dim), "n_rot": i64_attr(n_rot)},
        )

    def infer_result_types(self) -> Sequence[Attribute]:
        return [self.check_rotated(self.x, "x")]


OPS = [AttentionOp, RopeOp]
ATTRIBUTES = [MaskKindAttr]
