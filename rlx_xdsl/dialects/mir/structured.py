"""MIR structured ops: scans, user functions with their own derivatives, state-space recurrences.

* `mir.scan`: a bounded loop over `length` steps (JAX's `lax.scan`, RLX's `Scan`): carried
  values, loop-invariant "bcast" operands, and per-step slices of `xs`; the result is the
  final carry or the trajectory of carries, optionally only at `num_checkpoints` steps.
* `mir.scan_backward`: the reverse sweep of a scan (RLX's `ScanBackward` and every
  `ScanBackwardXs` in one op): a vjp body applied from the last step to the first, and,
  when the trajectory holds only checkpoints, the forward body to recompute the rest.
* `mir.custom_fn`: a forward body with optional vjp and jvp bodies (JAX's `custom_vjp` /
  `custom_jvp`, RLX's `CustomFn`); any number of results.
* `mir.selective_scan` (Mamba) and `mir.gated_delta_net` (Qwen3-Next linear attention): the
  recurrences as single ops, which `rlx-unfuse` unfolds in time.

Region ops follow `mir.while`: their regions are `IsolatedFromAbove`, end with `mir.yield`,
and state their block argument types (`RegionSignatureInterface`) so that `rlx-specialize`
can retype them. Each region's argument order is part of the op's definition (see
`REGION_SIGNATURES`) and is checked by the verifier: it replaces the named `Input`s
(`primal_output`, `d_output`, `tangent_i`) through which RLX's sub-graphs find their values.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import ClassVar

from xdsl.dialects.builtin import I64, IntegerAttr, TensorType, UnitAttr
from xdsl.ir import Attribute, Region, SSAValue
from xdsl.irdl import (
    AttrSizedOperandSegments,
    AttrSizedRegionSegments,
    irdl_op_definition,
    operand_def,
    opt_operand_def,
    opt_prop_def,
    opt_region_def,
    opt_result_def,
    prop_def,
    region_def,
    result_def,
    traits_def,
    var_operand_def,
    var_result_def,
)
from xdsl.traits import (
    IsolatedFromAbove,
    Pure,
    RecursivelySpeculatable,
    RecursiveMemoryEffect,
)

from rlx_xdsl.dialects.base import (
    FUNCTIONAL,
    RlxOperation,
    i64_attr,
    require,
    require_float,
    require_positive,
    require_rank,
    require_same_element_type,
    tensor_type,
    types_compatible,
)
from rlx_xdsl.dialects.mir.reduction import unit_flag
from rlx_xdsl.dialects.mir.regions import fmt_types, region_yield, yielded_types
from rlx_xdsl.dialects.traits import COMPUTE, REDUCTION, RegionSignatureInterface
from rlx_xdsl.shapes import DYNAMIC, dims_match, fmt_dim, tensor


def checkpoint_steps(length: int, count: int) -> list[int]:
    """The steps after which a trajectory of `count` rows saves the carry (0-based).

    Row `k` holds the carry after step `ceil((k + 1) * length / count) - 1`: the rows
    split the loop into `count` nearly equal segments and the last row is the final
    carry. With `count == length` every step is saved.
    """
    return [((k + 1) * length + count - 1) // count - 1 for k in range(count)]


def step_type(xs_type: Attribute) -> TensorType:
    """The per-step slice of a stacked `[length, ...]` operand: its type without dim 0."""
    t = tensor_type(xs_type)
    return tensor(t.element_type, t.get_shape()[1:])


def stacked_type(rows: int, t: Attribute) -> TensorType:
    """`[rows, *t]`: a trajectory of values of type `t`."""
    carry = tensor_type(t)
    return tensor(carry.element_type, [rows, *carry.get_shape()])


def check_region_signature(op: RlxOperation, region: Region, what: str, names: str) -> None:
    """The entry-block argument types of `region` must be those the op states for it."""
    assert isinstance(op, RegionSignatureInterface)
    actual = tuple(region.block.arg_types)
    expected = tuple(op.region_arg_types(region))
    require(
        actual == expected,
        op,
        lambda: f"{what} region argument types {fmt_types(actual)} do not match the expected "
        f"{names} types {fmt_types(expected)}",
    )


def check_yield(op: RlxOperation, region: Region, what: str, expected: Sequence[Attribute], names: str) -> None:
    """`region` must yield exactly the types `expected`."""
    yielded = tuple(v.type for v in region_yield(op, region, what).values)
    require(
        yielded == tuple(expected),
        op,
        lambda: f"{what} region yields {fmt_types(yielded)} but the {names} types are {fmt_types(expected)}",
    )


def check_stacked(op: RlxOperation, values: Sequence[SSAValue], length: int, what: str) -> None:
    """Each of `values` stacks `length` steps along dim 0."""
    for index, value in enumerate(values):
        t = tensor_type(value)
        require(t.get_num_dims() >= 1, op, lambda: f"{what} #{index} must have rank >= 1, got a rank-0 tensor")
        lead = t.get_shape()[0]
        require(
            dims_match(lead, length),
            op,
            lambda: f"{what} #{index} has leading dim {fmt_dim(lead)} but length is {length}",
        )


class ScanProperties:
    """Reading `length`, `save_trajectory` and `num_checkpoints` (methods only: each op
    declares the properties itself)."""

    @property
    def steps(self) -> int:
        return self.length.value.data

    @property
    def saves_trajectory(self) -> bool:
        return self.save_trajectory is not None

    @property
    def checkpoints(self) -> int | None:
        return None if self.num_checkpoints is None else self.num_checkpoints.value.data

    @property
    def trajectory_rows(self) -> int:
        """Rows of a saved trajectory: `num_checkpoints`, or one per step."""
        return self.checkpoints if self.checkpoints is not None else self.steps

    def saved_steps(self) -> list[int]:
        """The steps whose resulting carry is a trajectory row (`checkpoint_steps`)."""
        return checkpoint_steps(self.steps, self.trajectory_rows)

    @property
    def recomputes(self) -> bool:
        """Whether a trajectory skips steps, which the backward sweep must recompute."""
        return self.trajectory_rows < self.steps

    def check_scan_properties(self) -> None:
        assert isinstance(self, RlxOperation)
        require_positive(self, length=self.steps)
        k = self.checkpoints
        if k is not None:
            require(1 <= k <= self.steps, self, lambda: f"num_checkpoints must be in 1..={self.steps}, got {k}")


def scan_property_dict(length: int, save_trajectory: bool, num_checkpoints: int | None) -> dict:
    return {
        "length": i64_attr(length),
        "save_trajectory": unit_flag(save_trajectory),
        "num_checkpoints": None if num_checkpoints is None else i64_attr(num_checkpoints),
    }


def scan_body_types(
    carry: Sequence[Attribute], bcasts: Sequence[Attribute], xs: Sequence[Attribute]
) -> list[Attribute]:
    """A scan body's block arguments: `[carry..., bcast..., x_t...]`."""
    return [*carry, *bcasts, *(step_type(x) for x in xs)]


@irdl_op_definition
class ScanOp(RlxOperation, ScanProperties, RegionSignatureInterface):
    """A loop of `length` steps: `carry = body(carry, bcasts, xs[t])` (`Scan`).

    Operands: the initial carries (one or more; RLX's single carry is the case of one),
    `bcasts` (the same value at every step) and `xs` (each `[length, ...]`; step `t`
    sees `xs[t]`). The body receives `[carry..., bcast..., x_t...]` and yields the next
    carries. The results are the final carries or, with `save_trajectory`, each carry's
    trajectory `[length, *carry]`, whose row `t` is the carry after step `t`.

    `num_checkpoints = K` (1..=length) marks the scan for checkpointed autodiff: with
    `save_trajectory` only `K` rows are kept, `[K, *carry]`, row `k` being the carry after
    step `ceil((k + 1) * length / K) - 1` (the last row is the final carry); the backward
    sweep recomputes the steps in between. Without `save_trajectory` it changes nothing
    in the forward computation.
    """

    name = "mir.scan"
    init = var_operand_def(TensorType)
    bcasts = var_operand_def(TensorType)
    xs = var_operand_def(TensorType)
    outputs = var_result_def(TensorType)
    length = prop_def(IntegerAttr[I64])
    save_trajectory = opt_prop_def(UnitAttr)
    num_checkpoints = opt_prop_def(IntegerAttr[I64])
    body = region_def("single_block")
    irdl_options = (AttrSizedOperandSegments(as_property=True),)
    traits = traits_def(RecursiveMemoryEffect(), RecursivelySpeculatable(), IsolatedFromAbove(), COMPUTE)
    assembly_format = (
        "`init` `(` $init `:` type($init) `)` (`bcasts` `(` $bcasts^ `:` type($bcasts) `)`)? "
        "(`xs` `(` $xs^ `:` type($xs) `)`)? `length` `=` $length (`save_trajectory` $save_trajectory^)? "
        "(`num_checkpoints` `=` $num_checkpoints^)? attr-dict `->` type($outputs) $body"
    )

    REGION_SIGNATURES: ClassVar[dict[str, str]] = {
        "body": "(carry..., bcast..., x_t...) -> (carry...)",
    }

    def __init__(
        self,
        init: Sequence[SSAValue],
        body: Region,
        *,
        length: int,
        bcasts: Sequence[SSAValue] = (),
        xs: Sequence[SSAValue] = (),
        save_trajectory: bool = False,
        num_checkpoints: int | None = None,
    ):
        super().__init__(
            operands=[init, bcasts, xs],
            properties=scan_property_dict(length, save_trajectory, num_checkpoints),
            regions=[body],
            result_types=[[v.type for v in init]],
        )
        self.refresh_result_types()  # runs the region checks now, not only at verify time

    def region_arg_types(self, region: Region) -> Sequence[Attribute]:
        return scan_body_types(
            [v.type for v in self.init], [v.type for v in self.bcasts], [v.type for v in self.xs]
        )

    def check_attributes(self) -> None:
        self.check_scan_properties()

    def infer_result_types(self) -> Sequence[Attribute]:
        carry = [tensor_type(v) for v in self.init]
        require(len(carry) >= 1, self, "must carry at least one value")
        check_stacked(self, self.xs, self.steps, "xs")
        check_region_signature(self, self.body, "body", "(carry, bcast, x_t)")
        check_yield(self, self.body, "body", carry, "carry")
        if not self.saves_trajectory:
            return carry
        return [stacked_type(self.trajectory_rows, t) for t in carry]


@irdl_op_definition
class ScanBackwardOp(RlxOperation, ScanProperties, RegionSignatureInterface):
    """The reverse sweep of a `mir.scan`: the gradients of its initial carries and of its xs.

    Operands: the scan's initial carries, each carry's trajectory (`[length, *carry]`, or
    `[K, *carry]` with `num_checkpoints = K`, saved at the steps `mir.scan` documents), the
    upstream gradient of each result (carry-shaped, or trajectory-shaped with
    `save_trajectory`: the forward scan returned its trajectory), and the scan's xs.
    Bcasts are not operands: autodiff turns them into xs first.

    The `vjp` body maps `[carry..., x_t..., d_next...]` (the carries entering step `t`, the
    step's slices, the gradient of the carries the step yields) to `[d_carry..., d_x_t...]`.
    The sweep runs it from step `length - 1` to 0, adding upstream rows to `d_next` at the
    steps they were saved. With `num_checkpoints < length` the carries between checkpoints
    are recomputed with the `forward` body (the scan's body without bcasts, required exactly
    then). Results: `[d_init..., d_xs...]`, one per carry then one per xs (RLX has one
    `ScanBackward` node plus a `ScanBackwardXs` node per xs, each repeating the sweep).
    """

    name = "mir.scan_backward"
    init = var_operand_def(TensorType)
    trajectory = var_operand_def(TensorType)
    upstream = var_operand_def(TensorType)
    xs = var_operand_def(TensorType)
    gradients = var_result_def(TensorType)
    length = prop_def(IntegerAttr[I64])
    save_trajectory = opt_prop_def(UnitAttr)
    num_checkpoints = opt_prop_def(IntegerAttr[I64])
    vjp = region_def("single_block")
    forward = opt_region_def("single_block")
    irdl_options = (AttrSizedOperandSegments(as_property=True),)
    traits = traits_def(RecursiveMemoryEffect(), RecursivelySpeculatable(), IsolatedFromAbove(), COMPUTE)
    assembly_format = (
        "`init` `(` $init `:` type($init) `)` `trajectory` `(` $trajectory `:` type($trajectory) `)` "
        "`upstream` `(` $upstream `:` type($upstream) `)` (`xs` `(` $xs^ `:` type($xs) `)`)? "
        "`length` `=` $length (`save_trajectory` $save_trajectory^)? "
        "(`num_checkpoints` `=` $num_checkpoints^)? attr-dict `->` type($gradients) "
        "`vjp` $vjp (`forward` $forward^)?"
    )

    REGION_SIGNATURES: ClassVar[dict[str, str]] = {
        "vjp": "(carry..., x_t..., d_next...) -> (d_carry..., d_x_t...)",
        "forward": "(carry..., x_t...) -> (carry...)",
    }

    def __init__(
        self,
        init: Sequence[SSAValue],
        trajectory: Sequence[SSAValue],
        upstream: Sequence[SSAValue],
        vjp: Region,
        *,
        length: int,
        xs: Sequence[SSAValue] = (),
        save_trajectory: bool = False,
        num_checkpoints: int | None = None,
        forward: Region | None = None,
    ):
        super().__init__(
            operands=[init, trajectory, upstream, xs],
            properties=scan_property_dict(length, save_trajectory, num_checkpoints),
            regions=[vjp, forward],
            result_types=[[v.type for v in (*init, *xs)]],
        )
        self.refresh_result_types()

    @property
    def carry_types(self) -> list[Attribute]:
        return [v.type for v in self.init]

    def region_arg_types(self, region: Region) -> Sequence[Attribute]:
        steps = [step_type(x.type) for x in self.xs]
        if region is self.vjp:
            return [*self.carry_types, *steps, *self.carry_types]
        return [*self.carry_types, *steps]

    def check_attributes(self) -> None:
        self.check_scan_properties()

    def infer_result_types(self) -> Sequence[Attribute]:
        carry = [tensor_type(v) for v in self.init]
        n = len(carry)
        require(n >= 1, self, "must have at least one carry")
        for what, values in (("trajectory", self.trajectory), ("upstream", self.upstream)):
            require(len(values) == n, self, lambda: f"expected one {what} per carry ({n}), got {len(values)}")
        for index, (c, traj, up) in enumerate(zip(carry, self.trajectory, self.upstream)):
            rows = stacked_type(self.trajectory_rows, c)
            require(
                types_compatible(traj.type, rows),
                self,
                lambda: f"trajectory #{index} must be {rows}, got {traj.type}",
            )
            want = rows if self.saves_trajectory else c
            require(types_compatible(up.type, want), self, lambda: f"upstream #{index} must be {want}, got {up.type}")
        check_stacked(self, self.xs, self.steps, "xs")
        check_region_signature(self, self.vjp, "vjp", "(carry, x_t, d_next)")
        steps = [step_type(x.type) for x in self.xs]
        check_yield(self, self.vjp, "vjp", [*carry, *steps], "(d_carry, d_x_t)")
        has_forward = self.forward is not None
        if self.recomputes:
            require(
                has_forward,
                self,
                lambda: f"needs a forward region to recompute the steps between its {self.trajectory_rows} "
                "checkpoints",
            )
            check_region_signature(self, self.forward, "forward", "(carry, x_t)")
            check_yield(self, self.forward, "forward", carry, "carry")
        else:
            require(
                not has_forward,
                self,
                "has a forward region but its trajectory saves every step (nothing to recompute)",
            )
        return [*carry, *(tensor_type(x) for x in self.xs)]


def custom_fn_region_types(
    region: str, inputs: Sequence[Attribute], outputs: Sequence[Attribute]
) -> list[Attribute]:
    """The block arguments of a `mir.custom_fn` region (`"forward"`, `"vjp"` or `"jvp"`)."""
    if region == "forward":
        return [*inputs]
    if region == "vjp":
        return [*inputs, *outputs, *outputs]
    return [*inputs, *outputs, *inputs]


@irdl_op_definition
class CustomFnOp(RlxOperation, RegionSignatureInterface):
    """A function body with its own derivative rules (`CustomFn`; JAX's `custom_vjp`/`custom_jvp`).

    The `forward` body receives the inputs and yields the results (any number of
    them). The optional `vjp` body receives `[x..., y..., dy...]` (inputs, the forward's
    results, their cotangents) and yields one gradient per input, of the input's type.
    The optional `jvp` body receives `[x..., y..., tx...]` (inputs, results, one tangent
    per input) and yields one tangent per result. Executing the op runs `forward`;
    autodiff uses `vjp`/`jvp` instead of differentiating `forward`.
    """

    name = "mir.custom_fn"
    inputs = var_operand_def(TensorType)
    outputs = var_result_def(TensorType)
    forward = region_def("single_block")
    vjp = opt_region_def("single_block")
    jvp = opt_region_def("single_block")
    irdl_options = (AttrSizedRegionSegments(as_property=True),)
    traits = traits_def(RecursiveMemoryEffect(), RecursivelySpeculatable(), IsolatedFromAbove(), COMPUTE)
    assembly_format = (
        "` ` `(` $inputs `)` attr-dict `:` functional-type(operands, results) "
        "$forward (`vjp` $vjp^)? (`jvp` $jvp^)?"
    )

    REGION_SIGNATURES: ClassVar[dict[str, str]] = {
        "forward": "(x...) -> (y...)",
        "vjp": "(x..., y..., dy...) -> (dx...)",
        "jvp": "(x..., y..., tx...) -> (ty...)",
    }

    def __init__(
        self,
        inputs: Sequence[SSAValue],
        forward: Region,
        vjp: Region | None = None,
        jvp: Region | None = None,
    ):
        super().__init__(
            operands=[inputs],
            regions=[forward, vjp, jvp],
            result_types=[yielded_types(forward)],
        )
        self.refresh_result_types()

    def region_name(self, region: Region) -> str:
        return "forward" if region is self.forward else "vjp" if region is self.vjp else "jvp"

    def region_arg_types(self, region: Region) -> Sequence[Attribute]:
        inputs = [v.type for v in self.inputs]
        return custom_fn_region_types(self.region_name(region), inputs, yielded_types(self.forward))

    def infer_result_types(self) -> Sequence[Attribute]:
        inputs = [tensor_type(v) for v in self.inputs]
        check_region_signature(self, self.forward, "forward", "input")
        outputs = tuple(v.type for v in region_yield(self, self.forward, "forward").values)
        require(len(outputs) >= 1, self, "forward region must yield at least one value")
        if self.vjp is not None:
            check_region_signature(self, self.vjp, "vjp", "(x, y, dy)")
            check_yield(self, self.vjp, "vjp", inputs, "input")
        if self.jvp is not None:
            check_region_signature(self, self.jvp, "jvp", "(x, y, tx)")
            check_yield(self, self.jvp, "jvp", outputs, "result")
        return outputs


# State-space recurrences ---------------------------------------------------------------


def unify_dim(op: RlxOperation, label: str, sources: Sequence[tuple[str, int]]) -> int:
    """The one size a dim named `label` has in every operand (`?` when none knows it)."""
    known, first = DYNAMIC, ""
    for what, dim in sources:
        if dim == DYNAMIC:
            continue
        if known == DYNAMIC:
            known, first = dim, what
        else:
            require(dim == known, op, lambda: f"dim {label} differs: {first} has {known} but {what} has {dim}")
    return known


def float_operands(op: RlxOperation, named: dict[str, SSAValue], ranks: dict[str, int]) -> dict[str, tuple[int, ...]]:
    """Check each operand's rank, float dtype and dtype agreement; return the shapes by name."""
    types = {name: tensor_type(v) for name, v in named.items()}
    first_name, first = next(iter(types.items()))
    require_float(op, first, first_name)
    for name, t in types.items():
        require_rank(op, t, ranks[name], name)
    require_same_element_type(
        op, first, {n: t for n, t in types.items() if n != first_name},
        f"{{what}} must have element type {{expected}} (as {first_name}), got {{actual}}",
    )  # fmt: skip
    return {name: tuple(t.get_shape()) for name, t in types.items()}


@irdl_op_definition
class SelectiveScanOp(RlxOperation):
    """Mamba's selective scan `y = SSM(x, delta, a, b, c)` (`SelectiveScan{state_size}`).

    Shapes: `x`, `delta` `[B, S, H]`; `a` `[H, N]`; `b`, `c` `[B, S, N]`, with
    `N = state_size`. With a state `h[B, H, N]` starting at zero, for each step `t`:

        h = exp(delta[:, t, :, None] * a) * h + (delta[:, t, :, None] * x[:, t, :, None]) * b[:, t, None, :]
        y[:, t, :] = sum over N of c[:, t, None, :] * h

    The result `y` is `[B, S, H]`. Each stage rounds to the op's dtype (half-precision
    sums accumulate in f32), as the ops of the `rlx-unfuse` expansion do.
    """

    name = "mir.selective_scan"
    x = operand_def(TensorType)
    delta = operand_def(TensorType)
    a = operand_def(TensorType)
    b = operand_def(TensorType)
    c = operand_def(TensorType)
    state_size = prop_def(IntegerAttr[I64])
    result = result_def(TensorType)
    traits = traits_def(Pure(), REDUCTION)
    assembly_format = "$x `,` $delta `,` $a `,` $b `,` $c `state_size` `=` $state_size " + FUNCTIONAL

    def __init__(
        self, x: SSAValue, delta: SSAValue, a: SSAValue, b: SSAValue, c: SSAValue, *, state_size: int | None = None
    ):
        if state_size is None:
            state_size = tensor_type(a).get_shape()[-1]
        super().__init__(operands=[x, delta, a, b, c], properties={"state_size": i64_attr(state_size)})

    def check_attributes(self) -> None:
        require_positive(self, state_size=self.state_size.value.data)

    def infer_result_types(self) -> Sequence[Attribute]:
        named = {"x": self.x, "delta": self.delta, "a": self.a, "b": self.b, "c": self.c}
        s = float_operands(self, named, {"x": 3, "delta": 3, "a": 2, "b": 3, "c": 3})
        batch = unify_dim(self, "B", [(n, s[n][0]) for n in ("x", "delta", "b", "c")])
        seq = unify_dim(self, "S", [(n, s[n][1]) for n in ("x", "delta", "b", "c")])
        hidden = unify_dim(self, "H", [("x", s["x"][2]), ("delta", s["delta"][2]), ("a", s["a"][0])])
        n_sources = [("state_size", self.state_size.value.data), ("a", s["a"][1])]
        unify_dim(self, "N", n_sources + [("b", s["b"][2]), ("c", s["c"][2])])
        return [tensor(tensor_type(self.x).element_type, [batch, seq, hidden])]


@irdl_op_definition
class GatedDeltaNetOp(RlxOperation):
    """Gated DeltaNet linear attention (`GatedDeltaNet{state_size, carry_state}`).

    Shapes: `q`, `k`, `v` `[B, S, H, N]`; `g` (log-gate), `beta` `[B, S, H]`; `N = state_size`.
    Per head, a state matrix `M[N, N]` starts at zero, or at the optional `state`
    `[B, H, N, N]`. For each step `t` (`k_t`, `v_t`, `q_t` rows of length N):

        M = M * exp(g_t)
        d = (v_t - k_t @ M) * beta_t
        M = M + outer(k_t, d)
        o_t = (q_t @ M) / sqrt(N)

    Results: `o` `[B, S, H, N]`, and with `state` the final state `[B, H, N, N]` (RLX
    overwrites the state input in place). Each stage rounds to the op's dtype, as the
    ops of the `rlx-unfuse` expansion do.
    """

    name = "mir.gated_delta_net"
    q = operand_def(TensorType)
    k = operand_def(TensorType)
    v = operand_def(TensorType)
    g = operand_def(TensorType)
    beta = operand_def(TensorType)
    state = opt_operand_def(TensorType)
    state_size = prop_def(IntegerAttr[I64])
    output = result_def(TensorType)
    final_state = opt_result_def(TensorType)
    traits = traits_def(Pure(), REDUCTION)
    assembly_format = (
        "$q `,` $k `,` $v `,` $g `,` $beta (`state` $state^)? `state_size` `=` $state_size " + FUNCTIONAL
    )

    def __init__(
        self,
        q: SSAValue,
        k: SSAValue,
        v: SSAValue,
        g: SSAValue,
        beta: SSAValue,
        state: SSAValue | None = None,
        *,
        state_size: int | None = None,
    ):
        if state_size is None:
            state_size = tensor_type(q).get_shape()[-1]
        super().__init__(
            operands=[q, k, v, g, beta, state],
            properties={"state_size": i64_attr(state_size)},
            result_types=[q.type, None if state is None else q.type],
        )
        self.refresh_result_types()

    def check_attributes(self) -> None:
        require_positive(self, state_size=self.state_size.value.data)

    def infer_result_types(self) -> Sequence[Attribute]:
        named = {"q": self.q, "k": self.k, "v": self.v, "g": self.g, "beta": self.beta}
        ranks = {"q": 4, "k": 4, "v": 4, "g": 3, "beta": 3, "state": 4}
        if self.state is not None:
            named["state"] = self.state
        s = float_operands(self, named, ranks)
        rows = ("q", "k", "v", "g", "beta")
        batch = unify_dim(self, "B", [(n, s[n][0]) for n in named])
        seq = unify_dim(self, "S", [(n, s[n][1]) for n in rows])
        heads_from = [(n, s[n][2]) for n in rows] + ([("state", s["state"][1])] if "state" in s else [])
        heads = unify_dim(self, "H", heads_from)
        n_from = [("state_size", self.state_size.value.data)] + [(n, s[n][3]) for n in ("q", "k", "v")]
        if "state" in s:
            n_from += [("state", s["state"][2]), ("state", s["state"][3])]
        size = unify_dim(self, "N", n_from)
        dtype = tensor_type(self.q).element_type
        results = [tensor(dtype, [batch, seq, heads, size])]
        if self.state is not None:
            results.append(tensor(dtype, [batch, heads, size, size]))
        return results


def inverse_sqrt(n: int) -> float:
    """The query scale of `mir.gated_delta_net`: `1 / sqrt(N)`."""
    return 1.0 / math.sqrt(n)


OPS = [ScanOp, ScanBackwardOp, CustomFnOp, SelectiveScanOp, GatedDeltaNetOp]
ATTRIBUTES: list[type] = []
