"""MIR random numbers and sampling: rng_uniform, rng_normal, sample.

All three are counter-based: their bits come from Philox-4x64-10 (Salmon et al.,
"Parallel random numbers: as easy as 1, 2, 3", SC 2011) keyed by `seed`, so an
element's value depends only on the seed, the optional i64 `offset` operand and
the element's position, never on evaluation order. Element (or row) `i` of a
result with `n` elements (rows) uses the Philox block whose counter is
`offset * n + i` (64-bit, wrapping), with key `(seed, 0)`. That block is
`numpy.random.Philox(key=seed, counter=c - 1).random_raw(4)` (numpy increments
its counter before each block).

Float conversion: a 64-bit word `w` gives `u = (w >> 11) * 2^-53`, uniform on
`[0, 1)`, as numpy's `random()`.

* `rng_uniform`: `low + (high - low) * u(word 0)`, in f64, rounded once to the
  result dtype (so f32/f16 results may round up to `high`).
* `rng_normal`: Box–Muller on words 0 and 1,
  `z = sqrt(-2 ln(1 - u(word 0))) * cos(2 pi u(word 1))`, then `mean + std * z`,
  in f64, rounded once.
* `sample`: row `b`'s draw is `u(word 0)` of counter `offset * B + b`.

The offset is a rank-0 i64 tensor so that a training loop can pass its step
number (fresh dropout masks each step, reproducible from the seed).
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from xdsl.dialects.builtin import I64, Float64Type, FloatAttr, IntegerAttr, TensorType, f64, i64
from xdsl.ir import Attribute, SSAValue
from xdsl.irdl import irdl_op_definition, operand_def, opt_operand_def, prop_def, result_def, traits_def
from xdsl.traits import Pure

from rlx_xdsl.dialects.base import FUNCTIONAL, RlxOperation, i64_attr, require, require_float, tensor_type
from rlx_xdsl.dialects.traits import COMPUTE, REDUCTION, Sampling
from rlx_xdsl.shapes import fmt_shape, is_static, tensor


def f64_attr(value: float) -> FloatAttr:
    return FloatAttr(float(value), f64)


class RandomOperation(RlxOperation):
    """Checks shared by the Philox ops: the seed and the optional offset operand."""

    def check_offset(self) -> None:
        if self.offset is None:
            return
        t = tensor_type(self.offset)
        require(
            t.get_num_dims() == 0 and t.element_type == i64,
            self,
            lambda: f"offset must be a rank-0 tensor<i64>, got {t}",
        )


class RngOperation(RandomOperation):
    """rng_uniform and rng_normal: the result type is the op's own specification."""

    def infer_result_types(self) -> Sequence[Attribute]:
        self.check_offset()
        t = tensor_type(self.result)
        require_float(self, t, "result")
        require(
            is_static(t.get_shape()),
            self,
            lambda: f"result shape {fmt_shape(t.get_shape())} must be static "
            "(no operand gives the size of a `?` dim)",
        )
        return [t]

    def check_parameters(self, first: str, second: str) -> tuple[float, float]:
        a, b = getattr(self, first).value.data, getattr(self, second).value.data
        for what, v in ((first, a), (second, b)):
            require(math.isfinite(v), self, lambda: f"{what} must be finite, got {v}")
        return a, b


RNG_FORMAT = "(`offset` $offset^)? `seed` `=` $seed "


@irdl_op_definition
class RngUniformOp(RngOperation):
    """Uniform numbers on `[low, high)` from Philox-4x64-10 (`RngUniform{seed, low, high}`).

    Element i uses counter `offset * size + i`: `low + (high - low) * ((w0 >> 11) * 2^-53)`
    in f64, rounded once to the result dtype (see the group's docs for the bits).
    """

    name = "mir.rng_uniform"
    offset = opt_operand_def(TensorType)
    result = result_def(TensorType)
    seed = prop_def(IntegerAttr[I64])
    low = prop_def(FloatAttr[Float64Type])
    high = prop_def(FloatAttr[Float64Type])
    traits = traits_def(Pure(), COMPUTE)
    assembly_format = RNG_FORMAT + "`low` `=` $low `high` `=` $high " + FUNCTIONAL

    def __init__(
        self,
        result_type: TensorType,
        offset: SSAValue | None = None,
        *,
        seed: int,
        low: float = 0.0,
        high: float = 1.0,
    ):
        super().__init__(
            operands=[offset],
            properties={"seed": i64_attr(seed), "low": f64_attr(low), "high": f64_attr(high)},
            result_types=[result_type],
        )

    def check_attributes(self) -> None:
        low, high = self.check_parameters("low", "high")
        require(low < high, self, lambda: f"low ({low}) must be less than high ({high})")


@irdl_op_definition
class RngNormalOp(RngOperation):
    """Normal numbers `mean + std * z` from Philox-4x64-10 (`RngNormal{seed, mean, std}`).

    `z` is Box–Muller's cosine branch on words 0 and 1 of element i's block
    (counter `offset * size + i`), computed in f64 and rounded once.
    """

    name = "mir.rng_normal"
    offset = opt_operand_def(TensorType)
    result = result_def(TensorType)
    seed = prop_def(IntegerAttr[I64])
    mean = prop_def(FloatAttr[Float64Type])
    std = prop_def(FloatAttr[Float64Type])
    traits = traits_def(Pure(), COMPUTE)
    assembly_format = RNG_FORMAT + "`mean` `=` $mean `std` `=` $std " + FUNCTIONAL

    def __init__(
        self,
        result_type: TensorType,
        offset: SSAValue | None = None,
        *,
        seed: int,
        mean: float = 0.0,
        std: float = 1.0,
    ):
        super().__init__(
            operands=[offset],
            properties={"seed": i64_attr(seed), "mean": f64_attr(mean), "std": f64_attr(std)},
            result_types=[result_type],
        )

    def check_attributes(self) -> None:
        _, std = self.check_parameters("mean", "std")
        require(std >= 0, self, lambda: f"std must be non-negative, got {std}")


@irdl_op_definition
class SampleOp(RandomOperation):
    """One token id per row of `logits[B, V]` (`Sample{top_k, top_p, temperature, seed}`).

    Per row, in f64: divide by `temperature`; keep the `top_k` largest logits
    (`0`: all; ties keep the lower index); softmax over the kept ones; keep the
    smallest set of most probable ids whose mass reaches `top_p` (an id is kept
    when the mass of the ids ranked before it is below `top_p`; `1`: all);
    renormalise; then return the first id, in index order, whose cumulative
    probability exceeds `u`, row b's Philox draw (counter `offset * B + b`).
    With `temperature = 0` it is greedy: the first index of the largest logit.

    A row holding `+inf` is the softmax's limit: its `+inf` ids share the mass equally
    (greedy: the first). A row with a NaN, or all `-inf`, has no distribution: the
    interpreter raises a located run-time error (as `torch.multinomial`); the backends
    (linalg lowering, JAX) return id `-1` for it.
    """

    name = "mir.sample"
    logits = operand_def(TensorType)
    offset = opt_operand_def(TensorType)
    result = result_def(TensorType)
    top_k = prop_def(IntegerAttr[I64])
    top_p = prop_def(FloatAttr[Float64Type])
    temperature = prop_def(FloatAttr[Float64Type])
    seed = prop_def(IntegerAttr[I64])
    traits = traits_def(Pure(), REDUCTION, Sampling())
    assembly_format = (
        "$logits (`offset` $offset^)? `top_k` `=` $top_k `top_p` `=` $top_p "
        "`temperature` `=` $temperature `seed` `=` $seed " + FUNCTIONAL
    )

    def __init__(
        self,
        logits: SSAValue,
        offset: SSAValue | None = None,
        *,
        seed: int,
        temperature: float = 1.0,
        top_k: int = 0,
        top_p: float = 1.0,
    ):
        super().__init__(
            operands=[logits, offset],
            properties={
                "top_k": i64_attr(top_k),
                "top_p": f64_attr(top_p),
                "temperature": f64_attr(temperature),
                "seed": i64_attr(seed),
            },
        )

    def check_attributes(self) -> None:
        k, p, t = self.top_k.value.data, self.top_p.value.data, self.temperature.value.data
        require(k >= 0, self, lambda: f"top_k must be non-negative (0: no top-k), got {k}")
        require(0 < p <= 1, self, lambda: f"top_p must be in (0, 1], got {p}")
        require(math.isfinite(t) and t >= 0, self, lambda: f"temperature must be finite and non-negative, got {t}")

    def infer_result_types(self) -> Sequence[Attribute]:
        self.check_offset()
        t = tensor_type(self.logits)
        require_float(self, t, "logits")
        require(t.get_num_dims() == 2, self, lambda: f"logits must have rank 2 ([B, V]), got {fmt_shape(t.get_shape())}")
        batch, vocab = t.get_shape()
        k = self.top_k.value.data
        require(vocab < 0 or k <= vocab, self, lambda: f"top_k = {k} exceeds the vocabulary size {vocab}")
        return [tensor(i64, [batch])]


OPS = [RngUniformOp, RngNormalOp, SampleOp]
ATTRIBUTES: list[type] = []
