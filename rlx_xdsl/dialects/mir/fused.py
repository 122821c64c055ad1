"""MIR fused ops: one kernel standing for a chain of primitive ops.

Fusion passes create them (and HIR lowers some blocks straight to them);
`rlx-unfuse` expands each back into its primitive chain, so a fused op always
means exactly what that chain computes. Their types follow the same rules as
the chain's ops: a fused op never promotes, broadcasts or casts anything its
chain would not.

* `mir.fused_matmul_bias_act`: `act(x @ w + bias)` (`FusedMatMulBiasAct`);
* `mir.fused_swiglu`: `silu(gate) * up` of the two halves of the last axis (`FusedSwiGLU`);
* `mir.fused_residual_rms_norm`, `mir.fused_residual_layer_norm`: `norm(x + residual (+ bias))`
  (`FusedResidualRmsNorm`, `FusedResidualLN`), keeping the norm's `axis`, which RLX drops, and
  optionally returning the sum too (a second result, as vLLM's `fused_add_rms_norm` does);
* `mir.fused_attention_block`: qkv projection, head split, rope, attention, output
  projection (`FusedAttentionBlock`);
* `mir.fused_transformer_layer`: a BERT post-norm encoder layer (`FusedTransformerLayer`).

The two block ops are defined by their primitive chain (`attention_block_chain`,
`transformer_layer_chain`): type inference builds the chain on the operand types
and reports the first rule it breaks, and `rlx-unfuse` emits the same chain.
"""

from __future__ import annotations

from collections.abc import Sequence

from xdsl.dialects.builtin import (
    I64,
    Float32Type,
    FloatAttr,
    IntegerAttr,
    TensorType,
    TypeAttribute,
    UnitAttr,
    f32,
)
from xdsl.ir import Attribute, Block, SSAValue
from xdsl.irdl import (
    AttrSizedOperandSegments,
    irdl_op_definition,
    operand_def,
    opt_operand_def,
    opt_prop_def,
    opt_result_def,
    prop_def,
    result_def,
    traits_def,
)
from xdsl.irdl.declarative_assembly_format import TypeDirective, irdl_custom_directive
from xdsl.traits import Pure
from xdsl.utils.exceptions import VerifyException

from rlx_xdsl import dtypes
from rlx_xdsl.dialects.base import (
    FUNCTIONAL,
    FUNCTIONAL_SEGMENTED,
    RlxOperation,
    SegmentedSignature,
    SignatureDirective,
    i64_attr,
    require,
    require_float,
    require_min_rank,
    require_same_element_type,
    signature_format,
    tensor_type,
)
from rlx_xdsl.dialects.mir.attention import AttentionOp, MaskKind, MaskKindAttr, RopeOp
from rlx_xdsl.dialects.mir.attrs import Activation, ActivationAttr
from rlx_xdsl.dialects.mir.contraction import MatmulOp, matmul_type
from rlx_xdsl.dialects.mir.elementwise import AddOp, activation_op
from rlx_xdsl.dialects.mir.norm import AxisNormOperation, LayerNormOp
from rlx_xdsl.dialects.mir.shape import NarrowOp, ReshapeOp, TransposeOp
from rlx_xdsl.dialects.traits import (
    COMPUTE,
    DATA_MOVEMENT,
    ELEMENTWISE,
    REDUCTION,
    OperandRoles,
    Role,
)
from rlx_xdsl.ir.emitter import Emitter
from rlx_xdsl.shapes import DYNAMIC, broadcast_shapes, broadcasts_to, fmt_shape, tensor


def _element_type(dtype: str | Attribute) -> Attribute:
    """An element type given by RLX dtype name ("bf16") or as the type itself."""
    return dtypes.dtype_named(dtype).element_type if isinstance(dtype, str) else dtype


def _activation_attr(kind: Activation | str | None) -> ActivationAttr | None:
    return None if kind is None else ActivationAttr(Activation(kind))


@irdl_op_definition
class FusedMatmulBiasActOp(RlxOperation):
    """`act(x @ w + bias)`, or `x @ w + bias` without an activation (`FusedMatMulBiasAct`).

    The matmul follows `mir.matmul` (batch dims broadcast); `bias` broadcasts
    NumPy-style to the matmul result without enlarging it and has its element
    type. Any activation may be fused (the fusion pass folds only
    gelu and silu, as RLX; HIR's `Linear` keeps whichever it has).
    """

    name = "mir.fused_matmul_bias_act"
    x = operand_def(TensorType)
    w = operand_def(TensorType)
    bias = operand_def(TensorType)
    result = result_def(TensorType)
    activation = opt_prop_def(ActivationAttr)
    traits = traits_def(Pure(), COMPUTE)
    assembly_format = "$x `,` $w `,` $bias (`activation` `=` $activation^)? " + FUNCTIONAL

    def __init__(
        self, x: SSAValue, w: SSAValue, bias: SSAValue, *, activation: Activation | str | None = None
    ):
        super().__init__(operands=[x, w, bias], properties={"activation": _activation_attr(activation)})

    @property
    def kind(self) -> Activation | None:
        """The fused activation, or None."""
        return None if self.activation is None else self.activation.data

    def infer_result_types(self) -> Sequence[Attribute]:
        product = matmul_type(self, self.x, self.w, ("x", "w"))
        bias = tensor_type(self.bias)
        require_same_element_type(
            self, product, {"bias": bias}, "{what} element type {actual} differs from the matmul's {expected}"
        )
        require(
            broadcasts_to(bias.get_shape(), product.get_shape()),
            self,
            lambda: f"bias shape {fmt_shape(bias.get_shape())} does not broadcast to the matmul result shape "
            f"{fmt_shape(product.get_shape())}",
        )
        if self.kind is not None and activation_op(self.kind).FLOAT_ONLY and not dtypes.is_float(product.element_type):
            require_float(self, product, f"the result of activation {self.kind}")  # fails: the message is needed
        return [product]


@irdl_op_definition
class FusedSwigluOp(RlxOperation):
    """`silu(gate) * up` over the two halves of the last axis, `[..., 2N] -> [..., N]` (`FusedSwiGLU`).

    `up` is the low half and `gate` the high half, unless `gate_first`. With
    `cast_to` the product is then converted to that element type (as
    `mir.cast`); the result type carries it too.
    """

    name = "mir.fused_swiglu"
    x = operand_def(TensorType)
    result = result_def(TensorType)
    gate_first = opt_prop_def(UnitAttr)
    cast_to = opt_prop_def(TypeAttribute)
    traits = traits_def(Pure(), ELEMENTWISE)
    assembly_format = "$x (`gate_first` $gate_first^)? (`cast_to` `=` $cast_to^)? " + FUNCTIONAL

    def __init__(self, x: SSAValue, *, gate_first: bool = False, cast_to: str | Attribute | None = None):
        super().__init__(
            operands=[x],
            properties={
                "gate_first": UnitAttr() if gate_first else None,
                "cast_to": None if cast_to is None else _element_type(cast_to),
            },
        )

    @property
    def is_gate_first(self) -> bool:
        return self.gate_first is not None

    def infer_result_types(self) -> Sequence[Attribute]:
        x = tensor_type(self.x)
        require_float(self, x)
        require_min_rank(self, x, 1, "operand")
        *lead, width = x.get_shape()
        require(
            width == DYNAMIC or width % 2 == 0,
            self,
            lambda: f"last dim {width} does not split into equal up and gate halves",
        )
        target = x.element_type if self.cast_to is None else self.cast_to
        require(dtypes.is_supported(target), self, lambda: f"cannot cast to unsupported element type {target}")
        return [tensor(target, [*lead, width if width == DYNAMIC else width // 2])]


class FusedResidualNormOperation(AxisNormOperation):
    """What the fused residual norms share: they normalise `x + residual (+ bias)`.

    The sum follows the `mir.add` chain it replaces, except that its operands
    must share one element type (a fused op hides no promotion); gamma and beta
    then follow the norm's rule against the sum. The optional second result
    `sum` is that sum itself, for a graph that also uses it (a pre-norm
    transformer's residual stream: `h = x + r` feeds the norm and the next
    residual add); its type is the sum's.
    """

    def __init__(
        self,
        x: SSAValue,
        residual: SSAValue,
        gamma: SSAValue,
        beta: SSAValue,
        bias: SSAValue | None = None,
        *,
        axis: int = -1,
        eps: float,
        keep_sum: bool = False,
    ):
        """`keep_sum` gives the op its second result, the sum."""
        RlxOperation.__init__(
            self,
            operands=[x, residual, bias, gamma, beta],
            properties={"axis": i64_attr(axis), "eps": FloatAttr(eps, f32)},
            result_types=[x.type, x.type if keep_sum else None],  # placeholders, inferred below
        )
        self.refresh_result_types()

    @property
    def keeps_sum(self) -> bool:
        """The op also returns `x + residual (+ bias)`."""
        return self.sum is not None

    def summands(self) -> dict[str, SSAValue]:
        """The values added before normalising, by operand name."""
        values = {"x": self.x, "residual": self.residual}
        if self.bias is not None:
            values["bias"] = self.bias
        return values

    def normalized_input_type(self) -> TensorType:
        types = {what: tensor_type(v) for what, v in self.summands().items()}
        x = types.pop("x")
        require_same_element_type(self, x, types, "{what} element type {actual} differs from x's {expected}")
        shape = broadcast_shapes(x.get_shape(), *(t.get_shape() for t in types.values()))
        return tensor(x.element_type, shape)

    def infer_result_types(self) -> Sequence[Attribute]:
        """The normalised sum, then (with the second result) the sum: both of the sum's type."""
        (normed,) = super().infer_result_types()
        return [normed, normed] if self.keeps_sum else [normed]


SEGMENTED_NORM_FORMAT = (
    "$x `,` $residual `,` (`bias` $bias^ `,`)? $gamma `,` $beta `axis` `=` $axis `eps` `=` $eps "
    + FUNCTIONAL_SEGMENTED
)
"""`%x, %residual, bias %b, %gamma, %beta axis = -1 eps = ... : (...) -> type` (operands in
RLX's order); with the sum as a second result the signature ends `-> (type, type)`."""


@irdl_op_definition
class FusedResidualRmsNormOp(FusedResidualNormOperation):
    """`rms_norm(x + residual (+ bias), gamma, beta, axis, eps)` (`FusedResidualRmsNorm`).

    Operands in RLX's order `[x, residual, (bias), gamma, beta]`; the optional
    bias is written `bias %b`. Unlike RLX the norm's `axis` is kept, and an
    optional second result returns the sum (`%n, %h = ... -> (type, type)`).
    """

    name = "mir.fused_residual_rms_norm"
    x = operand_def(TensorType)
    residual = operand_def(TensorType)
    bias = opt_operand_def(TensorType)
    gamma = operand_def(TensorType)
    beta = operand_def(TensorType)
    result = result_def(TensorType)
    sum = opt_result_def(TensorType)
    axis = prop_def(IntegerAttr[I64])
    eps = prop_def(FloatAttr[Float32Type])
    traits = traits_def(Pure(), REDUCTION)
    irdl_options = (AttrSizedOperandSegments(as_property=True),)
    custom_directives = (SegmentedSignature,)
    assembly_format = SEGMENTED_NORM_FORMAT

    def __init__(
        self,
        x: SSAValue,
        residual: SSAValue,
        gamma: SSAValue,
        beta: SSAValue,
        bias: SSAValue | None = None,
        *,
        axis: int = -1,
        eps: float = 1e-6,
        keep_sum: bool = False,
    ):
        """As `mir.rms_norm`, with RLX's default eps."""
        super().__init__(x, residual, gamma, beta, bias, axis=axis, eps=eps, keep_sum=keep_sum)


@irdl_op_definition
class FusedResidualLayerNormOp(FusedResidualNormOperation):
    """`layer_norm(x + residual (+ bias), gamma, beta, axis, eps)` (`FusedResidualLN`).

    Operands in RLX's order `[x, residual, (bias), gamma, beta]`; the optional
    bias is written `bias %b`. Unlike RLX the norm's `axis` is kept, and an
    optional second result returns the sum (`%n, %h = ... -> (type, type)`).
    """

    name = "mir.fused_residual_layer_norm"
    x = operand_def(TensorType)
    residual = operand_def(TensorType)
    bias = opt_operand_def(TensorType)
    gamma = operand_def(TensorType)
    beta = operand_def(TensorType)
    result = result_def(TensorType)
    sum = opt_result_def(TensorType)
    axis = prop_def(IntegerAttr[I64])
    eps = prop_def(FloatAttr[Float32Type])
    traits = traits_def(Pure(), REDUCTION)
    irdl_options = (AttrSizedOperandSegments(as_property=True),)
    custom_directives = (SegmentedSignature,)
    assembly_format = SEGMENTED_NORM_FORMAT

    def __init__(
        self,
        x: SSAValue,
        residual: SSAValue,
        gamma: SSAValue,
        beta: SSAValue,
        bias: SSAValue | None = None,
        *,
        axis: int = -1,
        eps: float = 1e-5,
        keep_sum: bool = False,
    ):
        """As `mir.layer_norm`, with its default eps."""
        super().__init__(x, residual, gamma, beta, bias, axis=axis, eps=eps, keep_sum=keep_sum)


# Ops defined by their primitive chain ----------------------------------------------------


_CHAIN_TYPES: dict[tuple, list[Attribute]] = {}
"""Inferred chain types by (op class, operand types, properties): every layer of a model
has the same block, so its chain is built once, not once per layer and per verification."""


def chain_types(op: RlxOperation, chain) -> list[Attribute]:
    """The result types of `chain(emitter, op, **operands)` built on the op's operand types.

    The chain's ops infer their own types; the first rule one of them breaks is
    reported as the fused op's error, naming the primitive (`'mir.fused_attention_block'
    rope: ...`). Results are memoised (`_CHAIN_TYPES`); errors are not.
    """
    names = [name for name, _ in type(op).get_irdl_definition().operands]
    key = (
        type(op),
        tuple(None if getattr(op, n) is None else getattr(op, n).type for n in names),
        tuple(sorted((k, v) for k, v in op.properties.items() if k != "operandSegmentSizes")),
    )
    cached = _CHAIN_TYPES.get(key)
    if cached is None:
        cached = _build_chain_types(op, chain)
        if len(_CHAIN_TYPES) > 1024:
            _CHAIN_TYPES.clear()
        _CHAIN_TYPES[key] = cached
    return cached


def _build_chain_types(op: RlxOperation, chain) -> list[Attribute]:
    present = [v for v in op.operands]
    block = Block(arg_types=[v.type for v in present])
    stand_in = dict(zip(present, block.args))
    values = {}
    for name, _ in type(op).get_irdl_definition().operands:
        value = getattr(op, name)
        values[name] = None if value is None else stand_in[value]
    try:
        results = chain(Emitter.at_end(block), op, **values)
    except ChainNotWritable:
        return op.types_without_heads()
    except VerifyException as e:
        message = str(e.args[0]) if e.args else str(e)
        if message.startswith(f"'{op.name}' "):
            raise
        if message.startswith("'mir."):
            inner, _, rest = message[len("'mir.") :].partition("' ")
            message = f"{inner}: {rest}"
        raise VerifyException(f"'{op.name}' {message}") from e
    return [v.type for v in results]


def _f32_or_none(value: float | None) -> FloatAttr | None:
    return None if value is None else FloatAttr(value, f32)


def _int_or_none(value: int | None) -> IntegerAttr | None:
    return None if value is None else i64_attr(value)


class AttentionPropertiesMixin:
    """The attention properties the block ops share with `mir.attention`, read the same way
    (the attention kernel runs on the block op itself)."""

    @property
    def kind(self) -> MaskKind:
        return self.mask_kind.data

    def scale(self) -> float:
        """The score scale: `score_scale`, else `1 / sqrt(head_dim)`."""
        if self.score_scale is not None:
            return self.score_scale.value.data
        return self.head_dim.value.data**-0.5

    def attention_properties(self) -> dict:
        """The keyword arguments of `AttentionOp` this op stands for."""
        return {
            "num_heads": self.num_heads.value.data,
            "head_dim": self.head_dim.value.data,
            "mask_kind": self.kind,
            "window": None if self.window is None else self.window.value.data,
            "score_scale": None if self.score_scale is None else self.score_scale.value.data,
            "attn_logit_softcap": None
            if self.attn_logit_softcap is None
            else self.attn_logit_softcap.value.data,
        }


class ChainNotWritable(Exception):
    """The op's chain cannot be written for these types: its head reshapes would need
    both batch and seq as `-1`. Type inference then applies the rules that do not need
    the reshapes (`projection_types`); unfusing waits for `rlx-specialize`."""


def _token_dims(e: Emitter, op: RlxOperation, hidden: SSAValue) -> tuple[int, int]:
    """`(batch, seq)` of `hidden[B, S, E]` as reshape entries (a dynamic one becomes -1)."""
    shape = tensor_type(hidden).get_shape()
    require(len(shape) == 3, op, f"hidden must have rank 3 ([batch, seq, embed]), got {fmt_shape(shape)}")
    batch, seq = shape[0], shape[1]
    if batch == seq == DYNAMIC:
        raise ChainNotWritable(
            f"'{op.name}' cannot be expanded while batch and seq are both dynamic (a reshape infers "
            "one -1): bind them with rlx-specialize first"
        )
    return (-1 if batch == DYNAMIC else batch), (-1 if seq == DYNAMIC else seq)


def projection_types(op: RlxOperation, hidden: TensorType, weights: Sequence[tuple[str, SSAValue, SSAValue | None]]) -> TensorType:
    """`hidden` through consecutive projections `(name, w, bias)` with `mir.matmul`'s and the
    bias add's rules: the type rules of a block that need no head reshape."""
    value = hidden
    for name, w, bias in weights:
        value = matmul_type(op, value, w, ("the " + name + " input", name))
        if bias is not None:
            shape = broadcast_shapes(value.get_shape(), tensor_type(bias).get_shape())
            value = tensor(dtypes.promote(value.element_type, tensor_type(bias).element_type), shape)
    return value


def _split_heads(e: Emitter, x: SSAValue, dims: tuple[int, int], heads: int, head_dim: int) -> SSAValue:
    """`[B, S, heads*D] -> [B, heads, S, D]`."""
    x = e.emit(ReshapeOp(x, new_shape=[*dims, heads, head_dim]))
    return e.emit(TransposeOp(x, perm=[0, 2, 1, 3]))


def _merge_heads(e: Emitter, x: SSAValue, dims: tuple[int, int], width: int) -> SSAValue:
    """`[B, H, S, D] -> [B, S, H*D]`."""
    x = e.emit(TransposeOp(x, perm=[0, 2, 1, 3]))
    return e.emit(ReshapeOp(x, new_shape=[*dims, width]))


def _linear(e: Emitter, x: SSAValue, w: SSAValue, bias: SSAValue | None) -> SSAValue:
    value = e.emit(MatmulOp(x, w))
    return value if bias is None else e.emit(AddOp(value, bias))


def attention_block_chain(
    e: Emitter,
    op: FusedAttentionBlockOp,
    *,
    hidden: SSAValue,
    qkv_w: SSAValue,
    out_w: SSAValue,
    mask: SSAValue | None = None,
    qkv_bias: SSAValue | None = None,
    out_bias: SSAValue | None = None,
    cos: SSAValue | None = None,
    sin: SSAValue | None = None,
) -> list[SSAValue]:
    """The primitive chain of `mir.fused_attention_block`, emitted with `e`.

    `qkv = hidden @ qkv_w (+ qkv_bias)`; q, k, v are three `narrow`s of its last
    axis (`H*D`, `Hkv*D`, `Hkv*D` wide), each split into heads (`reshape`,
    `transpose` to `[B, heads, S, D]`); q and k go through `rope` when cos/sin
    are given; `mir.attention` (grouped-query when `Hkv < H`); heads merged back
    and projected: `@ out_w (+ out_bias)`.
    """
    heads, kv_heads, head_dim = op.num_heads.value.data, op.kv_heads(), op.head_dim.value.data
    dims = _token_dims(e, op, hidden)
    qkv = _linear(e, hidden, qkv_w, qkv_bias)
    width = tensor_type(qkv).get_shape()[-1]
    expected = (heads + 2 * kv_heads) * head_dim
    require(
        width == DYNAMIC or width == expected,
        op,
        f"qkv projection width {width} differs from (num_heads + 2 * num_kv_heads) * head_dim = {expected}",
    )
    starts = (0, heads * head_dim, (heads + kv_heads) * head_dim)
    counts = (heads, kv_heads, kv_heads)
    q, k, v = (
        _split_heads(e, e.emit(NarrowOp(qkv, axis=-1, start=start, len=n * head_dim)), dims, n, head_dim)
        for start, n in zip(starts, counts)
    )
    if cos is not None and sin is not None:
        n_rot = op.n_rot.value.data if op.n_rot is not None else head_dim
        q = e.emit(RopeOp(q, cos, sin, head_dim=head_dim, n_rot=n_rot))
        k = e.emit(RopeOp(k, cos, sin, head_dim=head_dim, n_rot=n_rot))
    attended = e.emit(AttentionOp(q, k, v, mask, **op.attention_properties()))
    return [_linear(e, _merge_heads(e, attended, dims, heads * head_dim), out_w, out_bias)]


@irdl_custom_directive
class AttentionBlockSignature(SignatureDirective):
    """The `(types) -> type` tail of `mir.fused_attention_block` (five optional operands)."""

    hidden: TypeDirective
    qkv_w: TypeDirective
    out_w: TypeDirective
    mask: TypeDirective
    qkv_bias: TypeDirective
    out_bias: TypeDirective
    cos: TypeDirective
    sin: TypeDirective
    result: TypeDirective


@irdl_custom_directive
class TransformerLayerSignature(SignatureDirective):
    """The `(types) -> type` tail of `mir.fused_transformer_layer` (five optional operands)."""

    hidden: TypeDirective
    qkv_w: TypeDirective
    out_w: TypeDirective
    ln1_gamma: TypeDirective
    ln1_beta: TypeDirective
    up_w: TypeDirective
    down_w: TypeDirective
    ln2_gamma: TypeDirective
    ln2_beta: TypeDirective
    mask: TypeDirective
    qkv_bias: TypeDirective
    out_bias: TypeDirective
    up_bias: TypeDirective
    down_bias: TypeDirective
    result: TypeDirective


HEADS_FORMAT = "`num_heads` `=` $num_heads `head_dim` `=` $head_dim "
MASK_FORMAT = (
    "`mask_kind` `=` $mask_kind (`window` `=` $window^)? "
    "(`score_scale` `=` $score_scale^)? (`attn_logit_softcap` `=` $attn_logit_softcap^)? "
)


@irdl_op_definition
class FusedAttentionBlockOp(AttentionPropertiesMixin, RlxOperation):
    """Self-attention with its projections, `hidden[B, S, E] -> [B, S, E']` (`FusedAttentionBlock`).

    Stands for `attention_block_chain`: a qkv projection (optional bias), three
    narrows into q, k, v heads, rope on q and k (when `rope(%cos, %sin)` is
    given, rotating `n_rot` dims, default `head_dim`), `mir.attention` with the
    op's mask properties, and the output projection (optional bias). Unlike
    RLX's op (a custom mask always, `has_bias`/`has_rope` flags) the mask
    follows `mir.attention` (any mask kind, `mask %m` for custom/bias), the
    optional operands say what is present, and `num_kv_heads < num_heads` gives
    grouped-query attention.
    """

    name = "mir.fused_attention_block"
    hidden = operand_def(TensorType)
    qkv_w = operand_def(TensorType)
    out_w = operand_def(TensorType)
    mask = opt_operand_def(TensorType)
    qkv_bias = opt_operand_def(TensorType)
    out_bias = opt_operand_def(TensorType)
    cos = opt_operand_def(TensorType)
    sin = opt_operand_def(TensorType)
    result = result_def(TensorType)
    num_heads = prop_def(IntegerAttr[I64])
    num_kv_heads = prop_def(IntegerAttr[I64])
    head_dim = prop_def(IntegerAttr[I64])
    mask_kind = prop_def(MaskKindAttr)
    window = opt_prop_def(IntegerAttr[I64])
    score_scale = opt_prop_def(FloatAttr[Float32Type])
    attn_logit_softcap = opt_prop_def(FloatAttr[Float32Type])
    n_rot = opt_prop_def(IntegerAttr[I64])
    traits = traits_def(Pure(), DATA_MOVEMENT, OperandRoles.of(mask=Role.MASK))
    irdl_options = (AttrSizedOperandSegments(as_property=True),)
    custom_directives = (AttentionBlockSignature,)
    assembly_format = (
        "$hidden `,` $qkv_w `,` $out_w (`mask` $mask^)? (`qkv_bias` $qkv_bias^)? (`out_bias` $out_bias^)? "
        "(`rope` `(` $cos^ `,` $sin `)`)? "
        + HEADS_FORMAT
        + "`num_kv_heads` `=` $num_kv_heads "
        + MASK_FORMAT
        + "(`n_rot` `=` $n_rot^)? "
        + signature_format(
            AttentionBlockSignature, ["hidden", "qkv_w", "out_w", "mask", "qkv_bias", "out_bias", "cos", "sin"]
        )
    )

    def __init__(
        self,
        hidden: SSAValue,
        qkv_w: SSAValue,
        out_w: SSAValue,
        mask: SSAValue | None = None,
        qkv_bias: SSAValue | None = None,
        out_bias: SSAValue | None = None,
        cos: SSAValue | None = None,
        sin: SSAValue | None = None,
        *,
        num_heads: int,
        head_dim: int,
        num_kv_heads: int | None = None,
        mask_kind: str | MaskKind = MaskKind.NONE,
        window: int | None = None,
        score_scale: float | None = None,
        attn_logit_softcap: float | None = None,
        n_rot: int | None = None,
    ):
        super().__init__(
            operands=[hidden, qkv_w, out_w, mask, qkv_bias, out_bias, cos, sin],
            properties={
                "num_heads": i64_attr(num_heads),
                "num_kv_heads": i64_attr(num_heads if num_kv_heads is None else num_kv_heads),
                "head_dim": i64_attr(head_dim),
                "mask_kind": MaskKindAttr(MaskKind(mask_kind)),
                "window": _int_or_none(window),
                "score_scale": _f32_or_none(score_scale),
                "attn_logit_softcap": _f32_or_none(attn_logit_softcap),
                "n_rot": _int_or_none(n_rot),
            },
        )

    @property
    def has_rope(self) -> bool:
        return self.cos is not None

    def kv_heads(self) -> int:
        return self.num_kv_heads.value.data

    def check_attributes(self) -> None:
        heads, kv_heads = self.num_heads.value.data, self.num_kv_heads.value.data
        require(kv_heads >= 1, self, f"num_kv_heads must be >= 1, got {kv_heads}")
        require(heads % kv_heads == 0, self, f"num_heads {heads} is not a multiple of num_kv_heads {kv_heads}")
        require((self.cos is None) == (self.sin is None), self, "cos and sin must be given together")
        require(
            self.n_rot is None or self.has_rope, self, "n_rot is only meaningful with rope(%cos, %sin)"
        )

    def types_without_heads(self) -> list[Attribute]:
        """With batch and seq both `?`: the projections' rules (widths, dtypes, biases)."""
        heads, head_dim = self.num_heads.value.data, self.head_dim.value.data
        qkv = projection_types(self, tensor_type(self.hidden), [("qkv_w", self.qkv_w, self.qkv_bias)])
        expected = (heads + 2 * self.kv_heads()) * head_dim
        width = qkv.get_shape()[-1]
        require(
            width == DYNAMIC or width == expected,
            self,
            f"qkv projection width {width} differs from (num_heads + 2 * num_kv_heads) * head_dim = {expected}",
        )
        merged = tensor(qkv.element_type, [*qkv.get_shape()[:-1], heads * head_dim])
        return [projection_types(self, merged, [("out_w", self.out_w, self.out_bias)])]

    def infer_result_types(self) -> Sequence[Attribute]:
        return chain_types(self, attention_block_chain)


def transformer_layer_chain(
    e: Emitter,
    op: FusedTransformerLayerOp,
    *,
    hidden: SSAValue,
    qkv_w: SSAValue,
    out_w: SSAValue,
    ln1_gamma: SSAValue,
    ln1_beta: SSAValue,
    up_w: SSAValue,
    down_w: SSAValue,
    ln2_gamma: SSAValue,
    ln2_beta: SSAValue,
    mask: SSAValue | None = None,
    qkv_bias: SSAValue | None = None,
    out_bias: SSAValue | None = None,
    up_bias: SSAValue | None = None,
    down_bias: SSAValue | None = None,
) -> list[SSAValue]:
    """The primitive chain of `mir.fused_transformer_layer` (a BERT post-norm layer), emitted with `e`.

    `h = layer_norm(hidden + attention_block(hidden), ln1)`, then
    `layer_norm(h + act(h @ up_w (+ up_bias)) @ down_w (+ down_bias), ln2)`;
    both norms over the last axis.
    """
    (attended,) = attention_block_chain(
        e, op, hidden=hidden, qkv_w=qkv_w, out_w=out_w, mask=mask, qkv_bias=qkv_bias, out_bias=out_bias
    )
    h = e.emit(LayerNormOp(e.emit(AddOp(hidden, attended)), ln1_gamma, ln1_beta, eps=op.eps1.value.data))
    up = e.emit(activation_op(op.activation.data)(_linear(e, h, up_w, up_bias)))
    down = _linear(e, up, down_w, down_bias)
    return [e.emit(LayerNormOp(e.emit(AddOp(h, down)), ln2_gamma, ln2_beta, eps=op.eps2.value.data))]


@irdl_op_definition
class FusedTransformerLayerOp(AttentionPropertiesMixin, RlxOperation):
    """A BERT post-norm encoder layer, `hidden[B, S, E] -> [B, S, E]` (`FusedTransformerLayer`).

    Stands for `transformer_layer_chain`: the attention block (no rope,
    `num_kv_heads = num_heads`), residual add and layer norm (`eps1`), a
    two-matmul FFN with `activation` in between, residual add and layer norm
    (`eps2`). Each of the four projections takes an optional bias
    (`qkv_bias %b` ...); RLX's `has_bias` is all four, and its
    `intermediate_size` is `up_w`'s width.
    """

    name = "mir.fused_transformer_layer"
    hidden = operand_def(TensorType)
    qkv_w = operand_def(TensorType)
    out_w = operand_def(TensorType)
    ln1_gamma = operand_def(TensorType)
    ln1_beta = operand_def(TensorType)
    up_w = operand_def(TensorType)
    down_w = operand_def(TensorType)
    ln2_gamma = operand_def(TensorType)
    ln2_beta = operand_def(TensorType)
    mask = opt_operand_def(TensorType)
    qkv_bias = opt_operand_def(TensorType)
    out_bias = opt_operand_def(TensorType)
    up_bias = opt_operand_def(TensorType)
    down_bias = opt_operand_def(TensorType)
    result = result_def(TensorType)
    num_heads = prop_def(IntegerAttr[I64])
    head_dim = prop_def(IntegerAttr[I64])
    mask_kind = prop_def(MaskKindAttr)
    window = opt_prop_def(IntegerAttr[I64])
    score_scale = opt_prop_def(FloatAttr[Float32Type])
    attn_logit_softcap = opt_prop_def(FloatAttr[Float32Type])
    activation = prop_def(ActivationAttr)
    eps1 = prop_def(FloatAttr[Float32Type])
    eps2 = prop_def(FloatAttr[Float32Type])
    traits = traits_def(Pure(), COMPUTE, OperandRoles.of(mask=Role.MASK))
    irdl_options = (AttrSizedOperandSegments(as_property=True),)
    custom_directives = (TransformerLayerSignature,)
    assembly_format = (
        "$hidden `,` $qkv_w `,` $out_w `,` $ln1_gamma `,` $ln1_beta `,` $up_w `,` $down_w `,` "
        "$ln2_gamma `,` $ln2_beta (`mask` $mask^)? (`qkv_bias` $qkv_bias^)? (`out_bias` $out_bias^)? "
        "(`up_bias` $up_bias^)? (`down_bias` $down_bias^)? "
        + HEADS_FORMAT
        + MASK_FORMAT
        + "`activation` `=` $activation `eps1` `=` $eps1 `eps2` `=` $eps2 "
        + signature_format(
            TransformerLayerSignature,
            [
                "hidden", "qkv_w", "out_w", "ln1_gamma", "ln1_beta", "up_w", "down_w", "ln2_gamma",
                "ln2_beta", "mask", "qkv_bias", "out_bias", "up_bias", "down_bias",
            ],  # fmt: skip
        )
    )

    def __init__(
        self,
        hidden: SSAValue,
        qkv_w: SSAValue,
        out_w: SSAValue,
        ln1_gamma: SSAValue,
        ln1_beta: SSAValue,
        up_w: SSAValue,
        down_w: SSAValue,
        ln2_gamma: SSAValue,
        ln2_beta: SSAValue,
        mask: SSAValue | None = None,
        qkv_bias: SSAValue | None = None,
        out_bias: SSAValue | None = None,
        up_bias: SSAValue | None = None,
        down_bias: SSAValue | None = None,
        *,
        num_heads: int,
        head_dim: int,
        activation: Activation | str = Activation.GELU,
        eps1: float = 1e-12,
        eps2: float = 1e-12,
        mask_kind: str | MaskKind = MaskKind.NONE,
        window: int | None = None,
        score_scale: float | None = None,
        attn_logit_softcap: float | None = None,
    ):
        """BERT's defaults: gelu and eps 1e-12."""
        super().__init__(
            operands=[
                hidden, qkv_w, out_w, ln1_gamma, ln1_beta, up_w, down_w, ln2_gamma, ln2_beta,
                mask, qkv_bias, out_bias, up_bias, down_bias,
            ],  # fmt: skip
            properties={
                "num_heads": i64_attr(num_heads),
                "head_dim": i64_attr(head_dim),
                "mask_kind": MaskKindAttr(MaskKind(mask_kind)),
                "window": _int_or_none(window),
                "score_scale": _f32_or_none(score_scale),
                "attn_logit_softcap": _f32_or_none(attn_logit_softcap),
                "activation": ActivationAttr(Activation(activation)),
                "eps1": FloatAttr(eps1, f32),
                "eps2": FloatAttr(eps2, f32),
            },
        )

    def kv_heads(self) -> int:
        """A BERT layer has as many key/value heads as query heads."""
        return self.num_heads.value.data

    def check_attributes(self) -> None:
        for what in ("eps1", "eps2"):
            eps = getattr(self, what).value.data
            require(eps > 0, self, f"{what} must be positive, got {eps}")

    def types_without_heads(self) -> list[Attribute]:
        """With batch and seq both `?`: the projections' rules; both norms keep the sums' type."""
        (attended,) = FusedAttentionBlockOp.types_without_heads(self)
        hidden = tensor_type(self.hidden)
        ffn = [("up_w", self.up_w, self.up_bias), ("down_w", self.down_w, self.down_bias)]
        out = projection_types(self, tensor(attended.element_type, hidden.get_shape()), ffn)
        return [tensor(out.element_type, broadcast_shapes(hidden.get_shape(), attended.get_shape(), out.get_shape()))]

    def infer_result_types(self) -> Sequence[Attribute]:
        return chain_types(self, transformer_layer_chain)


OPS = [
    FusedMatmulBiasActOp,
    FusedSwigluOp,
    FusedResidualRmsNormOp,
    FusedResidualLayerNormOp,
    FusedAttentionBlockOp,
    FusedTransformerLayerOp,
]
ATTRIBUTES: list[type] = []
