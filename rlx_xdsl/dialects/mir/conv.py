"""MIR 2-D sliding-window ops on NCHW tensors: `mir.conv` and `mir.pool`.

Both slide a `kernel_size` window over H and W with per-axis `stride` and
symmetric zero `padding`; conv also dilates the window and splits channels into
`groups`. The shared window arithmetic lives in `WindowOperation`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import ClassVar

from xdsl.dialects.builtin import I64, IntegerAttr, TensorType
from xdsl.ir import Attribute, SSAValue
from xdsl.irdl import irdl_op_definition, operand_def, prop_def, result_def, traits_def
from xdsl.traits import Pure

from rlx_xdsl.dialects.base import (
    FUNCTIONAL,
    I64_ARRAY,
    RlxOperation,
    i64_array,
    i64_attr,
    require,
    require_float,
    require_positive,
    require_rank,
    require_same_element_type,
    tensor_type,
)
from rlx_xdsl.dialects.mir.attrs import ReduceKind, ReduceKindAttr
from rlx_xdsl.dialects.traits import COMPUTE, DATA_MOVEMENT
from rlx_xdsl.shapes import DYNAMIC, dims_match, fmt_shape, tensor

Pair = tuple[int, int]


class WindowOperation(RlxOperation):
    """Shared checks of ops sliding a 2-D window (`kernel_size`, `stride`, `padding`)
    over an NCHW tensor.

    Each op declares its own operands and properties, and lists its int-list
    properties in `PAIR_MINIMUMS` (name -> least allowed value); every such list
    must hold exactly one value for H and one for W.
    """

    PAIR_MINIMUMS: ClassVar[dict[str, int]] = {"kernel_size": 1, "stride": 1, "padding": 0}

    @staticmethod
    def window_properties(
        kernel_size: Sequence[int], stride: Sequence[int], padding: Sequence[int]
    ) -> dict[str, Attribute]:
        """The window properties, for the subclass constructors."""
        return {
            "kernel_size": i64_array(kernel_size),
            "stride": i64_array(stride),
            "padding": i64_array(padding),
        }

    def pair(self, name: str) -> tuple[int, ...]:
        """The values of list property `name` (two, once `check_attributes` passed)."""
        return tuple(getattr(self, name).get_values())

    def dilation_pair(self) -> tuple[int, ...]:
        return (1, 1)

    def check_attributes(self) -> None:
        for name, least in self.PAIR_MINIMUMS.items():
            values = self.pair(name)
            require(len(values) == 2, self, lambda: f"{name} must have 2 values (H, W), got {len(values)}")
            require(
                min(values) >= least, self, lambda: f"{name} values must be >= {least}, got {list(values)}"
            )

    def spatial_output(self, x: TensorType) -> Pair:
        """Output H and W: `(size + 2 pad - dilation (kernel - 1) - 1) // stride + 1`.

        A `?` input dim gives a `?` output dim; a static input too small for the
        (dilated) kernel is rejected, since it would produce an empty output.
        """
        out = []
        windows = zip(
            ("height", "width"),
            x.get_shape()[2:],
            self.pair("kernel_size"),
            self.pair("stride"),
            self.pair("padding"),
            self.dilation_pair(),
        )
        for axis, size, kernel, stride, pad, dilation in windows:
            if size == DYNAMIC:
                out.append(DYNAMIC)
                continue
            extent = dilation * (kernel - 1) + 1
            require(
                size + 2 * pad >= extent,
                self,
                lambda: f"input {axis} {size} with padding {pad} is smaller than the kernel extent {extent}",
            )
            out.append((size + 2 * pad - extent) // stride + 1)
        return out[0], out[1]


CONV_PROPS = (
    "`kernel_size` `=` $kernel_size `stride` `=` $stride `padding` `=` $padding "
    "`dilation` `=` $dilation `groups` `=` $groups "
)
"""A convolution's window in assembly (`mir.conv` and its gradients)."""

POOL_PROPS = "`kind` `=` $kind `kernel_size` `=` $kernel_size `stride` `=` $stride `padding` `=` $padding "
"""A pooling window in assembly (`mir.pool` and its gradient)."""


class ConvOperation(WindowOperation):
    """The checks conv and its two backward ops share: the window with dilation, and groups.

    Each op declares its own operands and window properties (`dilation` and
    `groups` included); these methods only read them.
    """

    PAIR_MINIMUMS: ClassVar[dict[str, int]] = {**WindowOperation.PAIR_MINIMUMS, "dilation": 1}

    @staticmethod
    def conv_properties(
        kernel_size: Sequence[int],
        stride: Sequence[int],
        padding: Sequence[int],
        dilation: Sequence[int],
        groups: int,
    ) -> dict[str, Attribute]:
        """The window, dilation and groups properties, for the subclass constructors."""
        return {
            **WindowOperation.window_properties(kernel_size, stride, padding),
            "dilation": i64_array(dilation),
            "groups": i64_attr(groups),
        }

    def dilation_pair(self) -> tuple[int, ...]:
        return self.pair("dilation")

    def check_attributes(self) -> None:
        super().check_attributes()
        require_positive(self, groups=self.groups.value.data)

    def check_channels(self, x: TensorType, w: TensorType) -> None:
        """Both channel counts split into `groups`; w holds one group's input channels."""
        groups = self.groups.value.data
        cin, cout, w_cin = x.get_shape()[1], w.get_shape()[0], w.get_shape()[1]
        for what, channels in (("input", cin), ("output", cout)):
            require(
                channels == DYNAMIC or channels % groups == 0,
                self,
                lambda: f"{what} channels {channels} are not divisible by groups {groups}",
            )
        if cin != DYNAMIC:
            require(
                dims_match(w_cin, cin // groups),
                self,
                lambda: f"w has {w_cin} input channels per group, expected {cin} / {groups} = {cin // groups}",
            )

    def check_kernel(self, w: TensorType) -> None:
        """The weight's spatial dims are the kernel size."""
        kernel = self.pair("kernel_size")
        require(
            all(map(dims_match, w.get_shape()[2:], kernel)),
            self,
            lambda: f"w spatial dims {fmt_shape(w.get_shape()[2:])} differ from kernel_size {list(kernel)}",
        )


@irdl_op_definition
class ConvOp(ConvOperation):
    """2-D convolution (`Conv{kernel_size, stride, padding, dilation, groups}`).

    x is `[N, Cin, H, W]` and w is `[Cout, Cin / groups, kh, kw]`; output channel
    `o` reads the input channels of group `o // (Cout / groups)`. Bias is a separate add.
    The output size per axis rounds down (windows that would run past the padded
    input are dropped): `floor((H + 2 padding - dilation (kernel - 1) - 1) / stride) + 1`.
    Padding is zeros; f16/bf16 products accumulate in f32 and round once.
    """

    name = "mir.conv"
    x = operand_def(TensorType)
    w = operand_def(TensorType)
    result = result_def(TensorType)
    kernel_size = prop_def(I64_ARRAY)
    stride = prop_def(I64_ARRAY)
    padding = prop_def(I64_ARRAY)
    dilation = prop_def(I64_ARRAY)
    groups = prop_def(IntegerAttr[I64])
    traits = traits_def(Pure(), COMPUTE)
    assembly_format = "$x `,` $w " + CONV_PROPS + FUNCTIONAL

    def __init__(
        self,
        x: SSAValue,
        w: SSAValue,
        *,
        kernel_size: Sequence[int],
        stride: Sequence[int] = (1, 1),
        padding: Sequence[int] = (0, 0),
        dilation: Sequence[int] = (1, 1),
        groups: int = 1,
    ):
        super().__init__(
            operands=[x, w],
            properties=self.conv_properties(kernel_size, stride, padding, dilation, groups),
        )

    def infer_result_types(self) -> Sequence[Attribute]:
        x, w = tensor_type(self.x), tensor_type(self.w)
        require_rank(self, x, 4, "x")
        require_rank(self, w, 4, "w")
        require_float(self, x, "x")
        require_same_element_type(self, x, {"w": w})
        self.check_channels(x, w)
        self.check_kernel(w)
        batch, cout = x.get_shape()[0], w.get_shape()[0]
        return [tensor(x.element_type, (batch, cout, *self.spatial_output(x)))]


POOL_KINDS = (ReduceKind.MAX, ReduceKind.MEAN)


class PoolOperation(WindowOperation):
    """The checks pooling and its backward share: the kind, padding and the pooled shape."""

    def check_attributes(self) -> None:
        kind = self.kind.data
        require(kind in POOL_KINDS, self, lambda: f"kind must be max or mean, got {kind}")
        super().check_attributes()
        for pad, kernel in zip(self.pair("padding"), self.pair("kernel_size")):
            require(
                pad < kernel,
                self,
                lambda: f"padding {pad} must be smaller than the kernel size {kernel} "
                "so that every window covers an input cell",
            )

    def pooled_type(self) -> TensorType:
        """The type of pooling operand `x` (rank 4; float for mean pooling)."""
        x = tensor_type(self.x)
        require_rank(self, x, 4, "x")
        if self.kind.data == ReduceKind.MEAN:
            require_float(self, x, "x of mean pooling")
        batch, channels = x.get_shape()[:2]
        return tensor(x.element_type, (batch, channels, *self.spatial_output(x)))


@irdl_op_definition
class PoolOp(PoolOperation):
    """2-D max or mean pooling (`Pool{kind, kernel_size, stride, padding}`).

    `kind` is `max` or `mean`; the other reduction kinds (`sum`, `min`, `prod`) are
    rejected by the verifier. Padded cells never contribute: max ignores them and mean
    divides by the number of real cells in the window (ONNX `count_include_pad = 0`;
    f16/bf16 sums accumulate in f32). The output size per axis rounds down:
    `floor((H + 2 padding - kernel) / stride) + 1` (no ceil mode). Max propagates NaN.
    """

    name = "mir.pool"
    x = operand_def(TensorType)
    result = result_def(TensorType)
    kind = prop_def(ReduceKindAttr)
    kernel_size = prop_def(I64_ARRAY)
    stride = prop_def(I64_ARRAY)
    padding = prop_def(I64_ARRAY)
    traits = traits_def(Pure(), DATA_MOVEMENT)
    assembly_format = "$x " + POOL_PROPS + FUNCTIONAL

    def __init__(
        self,
        x: SSAValue,
        *,
        kind: str | ReduceKind = ReduceKind.MAX,
        kernel_size: Sequence[int],
        stride: Sequence[int] | None = None,
        padding: Sequence[int] = (0, 0),
    ):
        """`stride` defaults to `kernel_size` (non-overlapping windows)."""
        super().__init__(
            operands=[x],
            properties={
                "kind": ReduceKindAttr(ReduceKind(kind)),
                **self.window_properties(kernel_size, kernel_size if stride is None else stride, padding),
            },
        )

    def infer_result_types(self) -> Sequence[Attribute]:
        return [self.pooled_type()]


OPS = [ConvOp, PoolOp]
ATTRIBUTES: list[type] = []
