"""MIR mixture-of-experts and LoRA ops.

* `mir.lora_matmul` `[x, w, a, b]`: `x @ w + scale · ((x @ a) @ b)`, a linear layer with a
  low-rank adapter (LoRA, Hu et al. 2021, arXiv:2106.09685). `rlx-unfuse` expands it into
  its matmuls, `mul` and `add`; autodiff differentiates that expansion.
* `mir.grouped_matmul` `[x[M, K], w[E, K, N], expert[M]]` → `[M, N]`: row `m` of `x` times
  the weight of expert `expert[m]` (the expert layers of a mixture of experts, Shazeer et
  al. 2017, arXiv:1701.06538). `expert` is an INDEX operand: an expert outside `[0, E)` is
  a run-time error, as for `mir.gather`. E = 0 is valid: with M = 0 rows the result is
  empty; with rows, no expert id is valid (rlx-run will not draw random ones).
* `mir.dequant_grouped_matmul` `[x[M, K], w_q[E, ...], scale[E, ...], zp, expert[M]]`: the same
  with block-quantised expert weights, each expert decoded as `mir.dequant_matmul` decodes
  its `W[K, N]` (`scheme`, `block_size`). Under a GGUF scheme `w_q` is `[E, N, R]` ui8, each
  expert's N rows of R bytes as a GGUF file stores an expert stack (`ffn_gate_exps` …), and
  `scale`, `zp` are unused `[1]` floats.
* `mir.dequant_moe_weights` `[w_q, scale, zp]` → `W[E, K, N]`: the decoded expert weights alone
  (RLX's `DequantMoEWeights`, whose one `packed` operand is here the three of
  `dequant_grouped_matmul`).
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
from xdsl.ir import Attribute, SSAValue
from xdsl.irdl import (
    irdl_op_definition,
    operand_def,
    opt_prop_def,
    prop_def,
    result_def,
    traits_def,
)
from xdsl.traits import Pure

from rlx_xdsl import dtypes
from rlx_xdsl.dialects.base import (
    FUNCTIONAL,
    RlxOperation,
    i64_attr,
    refine_dim,
    require,
    require_index_type,
    require_rank,
    require_same_element_type,
    tensor_type,
)
from rlx_xdsl.dialects.mir.contraction import matmul_type
from rlx_xdsl.dialects.mir.quant import (
    GGUF_BLOCKS,
    BlockQuantOperation,
    QuantScheme,
    QuantSchemeAttr,
    check_quantised_weights,
    require_dtype_of,
    require_shape_of,
)
from rlx_xdsl.dialects.traits import COMPUTE, OperandRoles, Role
from rlx_xdsl.shapes import DYNAMIC, dims_match, fmt_dim, fmt_shape, tensor


@irdl_op_definition
class LoraMatmulOp(RlxOperation):
    """`x @ w + scale · ((x @ a) @ b)` (`LoraMatMul{scale}`).

    Each matmul follows `mir.matmul` (`x[..., M, K]`, `w[K, N]`, `a[K, R]`, `b[R, N]`,
    batch dims broadcast); the base and adapter products must have the same type, and
    the operands share one floating-point element type.
    """

    name = "mir.lora_matmul"
    x = operand_def(TensorType)
    w = operand_def(TensorType)
    a = operand_def(TensorType)
    b = operand_def(TensorType)
    result = result_def(TensorType)
    scale = prop_def(FloatAttr[Float32Type])
    traits = traits_def(Pure(), COMPUTE)
    assembly_format = "$x `,` $w `,` $a `,` $b `scale` `=` $scale " + FUNCTIONAL

    def __init__(self, x: SSAValue, w: SSAValue, a: SSAValue, b: SSAValue, *, scale: float = 1.0):
        super().__init__(operands=[x, w, a, b], properties={"scale": FloatAttr(scale, f32)})

    @property
    def scale_value(self) -> float:
        return self.scale.value.data

    def infer_result_types(self) -> Sequence[Attribute]:
        x = tensor_type(self.x)
        require(dtypes.is_float(x.element_type), self, lambda: f"x must be floating point, got {x.element_type}")
        require_same_element_type(
            self,
            x,
            {"w": tensor_type(self.w), "a": tensor_type(self.a), "b": tensor_type(self.b)},
            "{what} element type {actual} differs from x's {expected}",
        )
        base = matmul_type(self, self.x, self.w, ("x", "w"))
        adapter = matmul_type(self, matmul_type(self, self.x, self.a, ("x", "a")), self.b, ("x @ a", "b"))
        shape, other = base.get_shape(), adapter.get_shape()
        require(
            len(shape) == len(other) and all(dims_match(p, q) for p, q in zip(shape, other)),
            self,
            lambda: f"the adapter product (x @ a) @ b has shape {fmt_shape(other)} but x @ w has {fmt_shape(shape)}",
        )
        shape = [refine_dim(p, q) for p, q in zip(shape, other)]
        return [tensor(base.element_type, shape)]


def check_experts(op: RlxOperation, x: TensorType, expert: TensorType) -> None:
    """`expert[M]` holds index ids, one per row of `x[M, K]`."""
    require_rank(op, expert, 1, "expert")
    require_index_type(op, expert, "expert")
    (m_e,) = expert.get_shape()
    m = x.get_shape()[0]
    require(dims_match(m, m_e), op, lambda: f"x has {fmt_dim(m)} rows but expert has {fmt_dim(m_e)} ids")


@irdl_op_definition
class GroupedMatmulOp(RlxOperation):
    """Row `m` of `x[M, K]` times `w[expert[m]]` of `w[E, K, N]`, giving `[M, N]` (`GroupedMatMul`).

    `expert[M]` holds integer (or RLX's float-encoded) expert ids; an id outside `[0, E)`
    is a run-time error naming the op. x and w share a floating-point element type.
    """

    name = "mir.grouped_matmul"
    x = operand_def(TensorType)
    w = operand_def(TensorType)
    expert = operand_def(TensorType)
    result = result_def(TensorType)
    traits = traits_def(Pure(), COMPUTE, OperandRoles.of(expert=Role.INDEX))
    assembly_format = "$x `,` $w `,` $expert " + FUNCTIONAL

    def __init__(self, x: SSAValue, w: SSAValue, expert: SSAValue):
        super().__init__(operands=[x, w, expert])

    def index_bound(self, operand: SSAValue) -> int | None:
        """Expert ids select one of w's experts."""
        if operand is not self.expert:
            return None
        experts = tensor_type(self.w).get_shape()[0]
        return None if experts == DYNAMIC else experts

    def infer_result_types(self) -> Sequence[Attribute]:
        x, w, expert = tensor_type(self.x), tensor_type(self.w), tensor_type(self.expert)
        require_rank(self, x, 2, "x")
        require_rank(self, w, 3, "w")
        check_experts(self, x, expert)
        require(dtypes.is_float(x.element_type), self, lambda: f"x must be floating point, got {x.element_type}")
        require_same_element_type(self, x, {"w": w}, "{what} element type {actual} differs from x's {expected}")
        m, k = x.get_shape()
        _, k_w, n = w.get_shape()
        (m_e,) = expert.get_shape()
        require(dims_match(k, k_w), self, lambda: f"contraction dims {fmt_dim(k)} and {fmt_dim(k_w)} differ")
        return [tensor(x.element_type, [refine_dim(m, m_e), n])]


class ExpertQuantOperation(BlockQuantOperation):
    """`dequant_matmul`'s schemes with a leading expert dim (methods only)."""

    def check_gguf_experts(self, k: int) -> tuple[int, int]:
        """`w_q [E, N, R]` ui8 of a GGUF scheme, R the bytes of a row of K values (K = DYNAMIC:
        K read from R); `scale` and `zp` unused `[1]` floats. Return (K, N)."""
        scheme = self.quant_scheme()
        values, size = GGUF_BLOCKS[scheme]
        require_dtype_of(self, "w_q", self.w_q, ("ui8",))
        shape = tensor_type(self.w_q).get_shape()
        require(
            len(shape) == 3,
            self,
            lambda: f"w_q must have rank 3 ([E, N, row bytes] under {scheme}), got {fmt_shape(shape)}",
        )
        row = shape[2]
        if k == DYNAMIC:
            require(row != DYNAMIC, self, f"{scheme} needs static row bytes to find K")
            require(
                row % size == 0,
                self,
                lambda: f"w_q rows of {row} bytes are not whole {scheme} blocks of {size} bytes",
            )
            k = row // size * values
        else:
            require(k % values == 0, self, lambda: f"K = {k} is not a multiple of {scheme}'s block of {values} values")
            require_shape_of(
                self, "w_q", self.w_q, (shape[0], shape[1], k // values * size),
                f"N rows of K = {k} values in {k // values} blocks of {size} bytes",
            )  # fmt: skip
        for what, value in (("scale", self.scale), ("zp", self.zp)):
            require_dtype_of(self, what, value, ("f32", "f16", "bf16", "f64"))
            require_shape_of(self, what, value, (1,), f"unused by {scheme}")
        return k, shape[1]


@irdl_op_definition
class DequantGroupedMatmulOp(ExpertQuantOperation):
    """`grouped_matmul(x, W, expert)` with `W[E, K, N]` decoded per expert (`DequantGroupedMatMul`).

    `w_q`, `scale` and `zp` are `mir.dequant_matmul`'s (same schemes, dtypes and block
    layout) with a leading expert dim `E` on `w_q` and `scale` (and on `zp` for
    `int8_block_asym`); a `[1]` zp is shared. Under a GGUF scheme `w_q` is `[E, N, R]` ui8:
    expert e's N rows of K values as GGML blocks (R bytes a row, `W[e]` is their transpose;
    llama.cpp's MoE expert stacks), `scale` and `zp` unused `[1]` floats. The product accumulates in x's
    accumulation dtype and rounds to x's dtype, as `mir.dequant_matmul`.
    """

    name = "mir.dequant_grouped_matmul"
    x = operand_def(TensorType)
    w_q = operand_def(TensorType)
    scale = operand_def(TensorType)
    zp = operand_def(TensorType)
    expert = operand_def(TensorType)
    result = result_def(TensorType)
    scheme = prop_def(QuantSchemeAttr)
    block_size = opt_prop_def(IntegerAttr[I64])
    traits = traits_def(Pure(), COMPUTE, OperandRoles.of(expert=Role.INDEX))
    assembly_format = (
        "$x `,` $w_q `,` $scale `,` $zp `,` $expert `scheme` `=` $scheme (`block_size` `=` $block_size^)? "
        + FUNCTIONAL
    )

    def __init__(
        self,
        x: SSAValue,
        w_q: SSAValue,
        scale: SSAValue,
        zp: SSAValue,
        expert: SSAValue,
        *,
        scheme: str | QuantScheme,
        block_size: int | None = None,
    ):
        super().__init__(
            operands=[x, w_q, scale, zp, expert],
            properties={
                "scheme": QuantSchemeAttr(QuantScheme(scheme)),
                "block_size": None if block_size is None else i64_attr(block_size),
            },
        )

    def infer_result_types(self) -> Sequence[Attribute]:
        x, w = tensor_type(self.x), tensor_type(self.w_q)
        require_rank(self, x, 2, "x")
        require(dtypes.is_float(x.element_type), self, lambda: f"x must be floating point, got {x.element_type}")
        require(w.get_num_dims() >= 1, self, "w_q must have a leading expert dim")
        experts = w.get_shape()[0]
        check_experts(self, x, tensor_type(self.expert))
        m, k = x.get_shape()
        if self.quant_scheme().is_gguf:
            require(k != DYNAMIC, self, f"{self.quant_scheme()} needs a static K to find the rows in w_q's bytes")
            _, n = self.check_gguf_experts(k)
        else:
            n = check_quantised_weights(
                self, self.quant_scheme(), self.block(), k, self.w_q, self.scale, self.zp, experts=(experts,)
            )
        m_e = tensor_type(self.expert).get_shape()[0]
        return [tensor(x.element_type, [refine_dim(m, m_e), n])]


@irdl_op_definition
class DequantMoeWeightsOp(ExpertQuantOperation):
    """The expert weights `W[E, K, N]` that `dequant_grouped_matmul` decodes (`DequantMoEWeights`).

    Operands as `dequant_grouped_matmul`'s `w_q`, `scale` and `zp`; K is the rows of
    `w_q` (twice them for the 4-bit schemes; under a GGUF scheme `w_q [E, N, R]` gives N and K
    from the row bytes R, and the unused `[1]` scale gives the dtype). The result has the scale's float type
    (nvfp4, whose block scales are E4M3 codes: the per-tensor `zp`'s).
    """

    name = "mir.dequant_moe_weights"
    w_q = operand_def(TensorType)
    scale = operand_def(TensorType)
    zp = operand_def(TensorType)
    result = result_def(TensorType)
    scheme = prop_def(QuantSchemeAttr)
    block_size = opt_prop_def(IntegerAttr[I64])
    traits = traits_def(Pure(), COMPUTE)
    assembly_format = "$w_q `,` $scale `,` $zp `scheme` `=` $scheme (`block_size` `=` $block_size^)? " + FUNCTIONAL

    def __init__(
        self,
        w_q: SSAValue,
        scale: SSAValue,
        zp: SSAValue,
        *,
        scheme: str | QuantScheme,
        block_size: int | None = None,
    ):
        super().__init__(
            operands=[w_q, scale, zp],
            properties={
                "scheme": QuantSchemeAttr(QuantScheme(scheme)),
                "block_size": None if block_size is None else i64_attr(block_size),
            },
        )

    def infer_result_types(self) -> Sequence[Attribute]:
        w = tensor_type(self.w_q)
        scheme = self.quant_scheme()
        if scheme.is_gguf:
            k, n = self.check_gguf_experts(DYNAMIC)
            return [tensor(tensor_type(self.scale).element_type, [w.get_shape()[0], k, n])]
        require(w.get_num_dims() == 3, self, lambda: f"w_q must have rank 3 ([E, rows, N]), got {fmt_shape(w.get_shape())}")
        experts, rows, _ = w.get_shape()
        k = rows if rows == DYNAMIC or not scheme.packs_nibbles else 2 * rows
        n = check_quantised_weights(self, scheme, self.block(), k, self.w_q, self.scale, self.zp, experts=(experts,))
        source = self.zp if scheme is QuantScheme.NVFP4_BLOCK else self.scale
        return [tensor(tensor_type(source).element_type, [experts, k, n])]


OPS = [LoraMatmulOp, GroupedMatmulOp, DequantGroupedMatmulOp, DequantMoeWeightsOp]
ATTRIBUTES: list[type] = []
