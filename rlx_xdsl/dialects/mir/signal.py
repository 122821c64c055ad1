"""MIR complex-value and signal ops: conjugate, complex_norm_sq (+backward), fft, log_mel (+backward).

Complex values are `complex<f32>` tensors. `mir.fft` also reads RLX's real
layout: a floating-point tensor whose last axis holds `2N` reals, `N` complex
numbers interleaved as `(re, im)` pairs, so graphs written for RLX keep working.

Gradients follow JAX's convention for complex values: a cotangent is pulled back
by the transpose of the derivative, not its conjugate transpose (see
`docs/deviations.md`). `complex_norm_sq_backward` is defined accordingly.
"""

from __future__ import annotations

from collections.abc import Sequence

from xdsl.dialects.builtin import ComplexType, Float32Type, FloatAttr, TensorType, UnitAttr, f32
from xdsl.dialects.utils import EnumAttribute
from xdsl.ir import Attribute, SpacedOpaqueSyntaxAttribute, SSAValue
from xdsl.irdl import (
    irdl_attr_definition,
    irdl_op_definition,
    operand_def,
    opt_prop_def,
    prop_def,
    result_def,
    traits_def,
)
from xdsl.traits import Pure
from xdsl.utils.str_enum import StrEnum

from rlx_xdsl import dtypes
from rlx_xdsl.dialects.base import (
    FUNCTIONAL,
    RlxOperation,
    require,
    require_float,
    require_min_rank,
    require_rank,
    require_same_element_type,
    tensor_type,
)
from rlx_xdsl.dialects.mir.reduction import unit_flag
from rlx_xdsl.dialects.traits import COMPUTE, ELEMENTWISE
from rlx_xdsl.shapes import DYNAMIC, dims_match, fmt_shape


def is_complex(t: TensorType) -> bool:
    return isinstance(t.element_type, ComplexType)


def require_complex(op: RlxOperation, t: TensorType, what: str = "operand") -> None:
    require(
        is_complex(t) and dtypes.is_supported(t.element_type),
        op,
        lambda: f"{what} must have element type complex<f32>, got {t.element_type}",
    )


class FftNorm(StrEnum):
    """Which direction carries the `1/N` scale (numpy.fft's `norm=`)."""

    BACKWARD = "backward"
    FORWARD = "forward"
    ORTHO = "ortho"


@irdl_attr_definition
class FftNormAttr(EnumAttribute[FftNorm], SpacedOpaqueSyntaxAttribute):
    """The normalisation of `mir.fft`: `#mir<fft_norm ortho>`, or bare `ortho` in the op."""

    name = "mir.fft_norm"


class ComplexElementwiseOperation(RlxOperation):
    """An elementwise op of one complex<f32> tensor (the declaration both share)."""

    input = operand_def(TensorType)
    result = result_def(TensorType)
    traits = traits_def(Pure(), ELEMENTWISE)
    assembly_format = "$input " + FUNCTIONAL

    def __init__(self, z: SSAValue):
        super().__init__(operands=[z])

    def complex_input(self) -> TensorType:
        z = tensor_type(self.input)
        require_complex(self, z)
        return z


@irdl_op_definition
class ConjugateOp(ComplexElementwiseOperation):
    """`conj(z)` elementwise on complex<f32> (`Conjugate`)."""

    name = "mir.conjugate"

    def infer_result_types(self) -> Sequence[Attribute]:
        return [self.complex_input()]


@irdl_op_definition
class ComplexNormSqOp(ComplexElementwiseOperation):
    """`|z|² = re² + im²` elementwise: complex<f32> to f32 (`ComplexNormSq`)."""

    name = "mir.complex_norm_sq"

    def infer_result_types(self) -> Sequence[Attribute]:
        return [TensorType(f32, self.complex_input().get_shape())]


@irdl_op_definition
class ComplexNormSqBackwardOp(RlxOperation):
    """dz of `complex_norm_sq` (`ComplexNormSqBackward`): `2 * g * conj(z)`, complex<f32>.

    `g` is the real f32 cotangent of `|z|²`, shaped like `z`. The conjugate is
    JAX's convention (`jax.vjp` of `abs(z)**2`); RLX returns `2 * g * z`.
    """

    name = "mir.complex_norm_sq_backward"
    z = operand_def(TensorType)
    g = operand_def(TensorType)
    result = result_def(TensorType)
    traits = traits_def(Pure(), ELEMENTWISE)
    assembly_format = "$z `,` $g " + FUNCTIONAL

    def __init__(self, z: SSAValue, g: SSAValue):
        super().__init__(operands=[z, g])

    def infer_result_types(self) -> Sequence[Attribute]:
        z, g = tensor_type(self.z), tensor_type(self.g)
        require_complex(self, z, "z")
        require(g.element_type == f32, self, lambda: f"g must have element type f32, got {g.element_type}")
        zs, gs = z.get_shape(), g.get_shape()
        require(
            len(zs) == len(gs) and all(map(dims_match, zs, gs)),
            self,
            lambda: f"g shape {fmt_shape(gs)} differs from z shape {fmt_shape(zs)}",
        )
        return [z]


@irdl_op_definition
class FftOp(RlxOperation):
    """The discrete Fourier transform over the last axis (`Fft{inverse, norm}`).

    As `numpy.fft.fft` (`ifft` when `inverse`) with the same `norm`. On
    complex<f32> the last axis holds `N` values; on a floating-point tensor it
    holds `2N` reals, `N` complex numbers interleaved `(re, im)` (RLX's real
    layout), and the result has the same layout. The result has the operand's type.
    """

    name = "mir.fft"
    input = operand_def(TensorType)
    result = result_def(TensorType)
    inverse = opt_prop_def(UnitAttr)
    norm = prop_def(FftNormAttr)
    traits = traits_def(Pure(), COMPUTE)
    assembly_format = "$input (`inverse` $inverse^)? `norm` `=` $norm " + FUNCTIONAL

    def __init__(self, x: SSAValue, *, inverse: bool = False, norm: str | FftNorm = FftNorm.BACKWARD):
        super().__init__(
            operands=[x],
            properties={"inverse": unit_flag(inverse), "norm": FftNormAttr(FftNorm(norm))},
        )

    @property
    def is_inverse(self) -> bool:
        return self.inverse is not None

    @property
    def norm_kind(self) -> FftNorm:
        return self.norm.data

    def infer_result_types(self) -> Sequence[Attribute]:
        x = tensor_type(self.input)
        shape = x.get_shape()
        require(len(shape) >= 1, self, "operand must have rank >= 1 (the transform axis), got a scalar")
        if not is_complex(x):
            require(
                dtypes.is_float(x.element_type),
                self,
                lambda: f"operand must be complex<f32> or floating point (interleaved real layout), "
                f"got {x.element_type}",
            )
            last = shape[-1]
            require(
                last == DYNAMIC or last % 2 == 0,
                self,
                lambda: f"the real layout needs an even last dim (N interleaved complex numbers), got {last}",
            )
        return [x]


SPECTRUM_DTYPE = "{what} element type {actual} differs from the spectrum's {expected}"


class LogMelOperation(RlxOperation):
    """What log_mel and its backward share: the `eps` check and the `[..., F] @ [F, M]` shapes."""

    def check_attributes(self) -> None:
        eps = self.eps.value.data
        require(eps > 0, self, lambda: f"eps must be positive, got {eps}")

    def mel_shape(self) -> list[int]:
        """`spectrum[..., F] @ filters[F, M]`'s shape `[..., M]` (after checking both)."""
        spectrum, filters = tensor_type(self.spectrum), tensor_type(self.filters)
        require_float(self, spectrum, "spectrum")
        require_same_element_type(self, spectrum, {"filters": filters}, SPECTRUM_DTYPE)
        require_min_rank(self, spectrum, 1, "spectrum")
        require_rank(self, filters, 2, "filters")
        bins, (f_bins, mels) = spectrum.get_shape()[-1], filters.get_shape()
        require(
            dims_match(bins, f_bins),
            self,
            lambda: f"spectrum has {bins} frequency bins but the filters have {f_bins}",
        )
        return [*spectrum.get_shape()[:-1], mels]


@irdl_op_definition
class LogMelOp(LogMelOperation):
    """`log10(max(spectrum @ filters, eps))` (`LogMel`): Whisper's log-mel step.

    `spectrum[..., F]` holds power spectra (frames by frequency bins) and
    `filters[F, M]` a mel filterbank; values below `eps` (Whisper: 1e-10) are clamped
    before the base-10 log. Whisper's later steps (the 8-decade floor, `(x + 4) / 4`)
    are ordinary MIR ops. Its precision class is compute (RLX's fallback).
    """

    name = "mir.log_mel"
    spectrum = operand_def(TensorType)
    filters = operand_def(TensorType)
    result = result_def(TensorType)
    eps = prop_def(FloatAttr[Float32Type])
    traits = traits_def(Pure(), COMPUTE)
    assembly_format = "$spectrum `,` $filters `eps` `=` $eps " + FUNCTIONAL

    def __init__(self, spectrum: SSAValue, filters: SSAValue, *, eps: float = 1e-10):
        super().__init__(operands=[spectrum, filters], properties={"eps": FloatAttr(eps, f32)})

    def infer_result_types(self) -> Sequence[Attribute]:
        return [TensorType(tensor_type(self.spectrum).element_type, self.mel_shape())]


@irdl_op_definition
class LogMelBackwardOp(LogMelOperation):
    """d spectrum of `log_mel` (`LogMelBackward`): `(g * [m >= eps] / (m ln 10)) @ filters^T`
    with `m = spectrum @ filters`; the clamped entries pass no gradient."""

    name = "mir.log_mel_backward"
    spectrum = operand_def(TensorType)
    filters = operand_def(TensorType)
    dy = operand_def(TensorType)
    result = result_def(TensorType)
    eps = prop_def(FloatAttr[Float32Type])
    traits = traits_def(Pure(), COMPUTE)
    assembly_format = "$spectrum `,` $filters `,` $dy `eps` `=` $eps " + FUNCTIONAL

    def __init__(self, spectrum: SSAValue, filters: SSAValue, dy: SSAValue, *, eps: float = 1e-10):
        super().__init__(operands=[spectrum, filters, dy], properties={"eps": FloatAttr(eps, f32)})

    def infer_result_types(self) -> Sequence[Attribute]:
        mel = self.mel_shape()
        spectrum, dy = tensor_type(self.spectrum), tensor_type(self.dy)
        require_same_element_type(self, spectrum, {"dy": dy}, SPECTRUM_DTYPE)
        shape = dy.get_shape()
        require(
            len(shape) == len(mel) and all(map(dims_match, shape, mel)),
            self,
            lambda: f"dy shape {fmt_shape(shape)} differs from the log-mel shape {fmt_shape(mel)}",
        )
        return [spectrum]


OPS = [ConjugateOp, ComplexNormSqOp, ComplexNormSqBackwardOp, FftOp, LogMelOp, LogMelBackwardOp]
ATTRIBUTES: list[type] = [FftNormAttr]
