"""`GraphBuilder` helpers for the structured MIR ops: scans and custom functions.

Region bodies are Python functions `fn(rb, *block_args)` returning the value(s) to
yield, as for `GraphBuilder.if_`/`while_`; each body's arguments are the region
signature its op documents:

    h = b.scan_with_xs(h0, [xs], lambda rb, h, x: rb.tanh(rb.add(rb.matmul(h, w), x)), length=8)

The names follow RLX's builder (`scan`, `scan_with_xs`, `scan_with_bcasts_and_xs`,
`scan_trajectory`, `scan_checkpointed`, `custom_fn`, `custom_fn_multi`); the
state-space ops need no helper: `b.selective_scan(x, delta, a, b_, c)` and
`b.gated_delta_net(q, k, v, g, beta, state)` build them directly.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from xdsl.ir import SSAValue

from rlx_xdsl.dialects.mir.regions import yielded_types
from rlx_xdsl.dialects.mir.structured import (
    CustomFnOp,
    ScanBackwardOp,
    ScanOp,
    custom_fn_region_types,
    scan_body_types,
    step_type,
)
from rlx_xdsl.ir.emitter import Emitted

Body = Callable[..., Any]
"""`fn(rb, *block_args)` returning the value or values its region yields."""


def _values(v: SSAValue | Sequence[SSAValue]) -> list[SSAValue]:
    return [v] if isinstance(v, SSAValue) else list(v)


def _hints(values: Sequence[SSAValue], prefix: str = "") -> list[str | None]:
    """Block-argument names from the values they stand for (`prefix` marks cotangents etc.)."""
    return [prefix + v.name_hint if v.name_hint else None for v in values]


def _numbered(prefix: str, count: int) -> list[str]:
    return [f"{prefix}{i}" for i in range(count)]


class StructuredBuilder:
    """Scan and custom-function helpers, mixed into `GraphBuilder` (which provides
    `_region`, building one region from a body function, and `emit`)."""

    # Scans ---------------------------------------------------------------------------

    def scan(
        self,
        init: SSAValue | Sequence[SSAValue],
        body: Body,
        length: int,
        *,
        bcasts: Sequence[SSAValue] = (),
        xs: Sequence[SSAValue] = (),
        save_trajectory: bool = False,
        num_checkpoints: int | None = None,
    ) -> Emitted:
        """`mir.scan`: `carry = body(rb, *carry, *bcasts, *x_t)` for `length` steps.

        `init` is one carry or a sequence of them; the result is the final carry (or
        its trajectory with `save_trajectory`), a tuple when there are several.
        """
        carry = _values(init)
        types = scan_body_types([v.type for v in carry], [v.type for v in bcasts], [v.type for v in xs])
        region = self._region(types, body, _hints([*carry, *bcasts, *xs]))
        op = ScanOp(
            carry,
            region,
            length=length,
            bcasts=bcasts,
            xs=xs,
            save_trajectory=save_trajectory,
            num_checkpoints=num_checkpoints,
        )
        return self.emit(op)

    def scan_with_xs(self, init, xs: Sequence[SSAValue], body: Body, length: int) -> Emitted:
        """A scan reading `xs[i][t]` at step `t`: `body(rb, *carry, *x_t)`."""
        return self.scan(init, body, length, xs=xs)

    def scan_with_bcasts_and_xs(
        self, init, bcasts: Sequence[SSAValue], xs: Sequence[SSAValue], body: Body, length: int
    ) -> Emitted:
        """A scan with loop-invariant operands too: `body(rb, *carry, *bcasts, *x_t)`."""
        return self.scan(init, body, length, bcasts=bcasts, xs=xs)

    def scan_trajectory(self, init, body: Body, length: int, **options) -> Emitted:
        """A scan returning every carry: `[length, *carry]`, row `t` after step `t`."""
        return self.scan(init, body, length, save_trajectory=True, **options)

    def scan_checkpointed(self, init, body: Body, length: int, num_checkpoints: int, **options) -> Emitted:
        """A scan whose autodiff keeps `num_checkpoints` carries (1..=length) and recomputes the rest."""
        return self.scan(init, body, length, num_checkpoints=num_checkpoints, **options)

    def scan_backward(
        self,
        init: SSAValue | Sequence[SSAValue],
        trajectory: SSAValue | Sequence[SSAValue],
        upstream: SSAValue | Sequence[SSAValue],
        vjp: Body,
        length: int,
        *,
        xs: Sequence[SSAValue] = (),
        save_trajectory: bool = False,
        num_checkpoints: int | None = None,
        forward: Body | None = None,
    ) -> Emitted:
        """`mir.scan_backward`: `vjp(rb, *carry, *x_t, *d_next)` yields `(*d_carry, *d_x_t)`;
        `forward(rb, *carry, *x_t)` recomputes carries between checkpoints.

        Returns `(*d_init, *d_xs)` (a single value for one carry and no xs).
        """
        carry = _values(init)
        carry_types = [v.type for v in carry]
        steps = [step_type(x.type) for x in xs]
        vjp_hints = [*_hints(carry), *_hints(xs), *_hints(carry, "d_")]
        vjp_region = self._region([*carry_types, *steps, *carry_types], vjp, vjp_hints)
        forward_region = (
            None if forward is None else self._region([*carry_types, *steps], forward, _hints([*carry, *xs]))
        )
        op = ScanBackwardOp(
            carry,
            _values(trajectory),
            _values(upstream),
            vjp_region,
            length=length,
            xs=xs,
            save_trajectory=save_trajectory,
            num_checkpoints=num_checkpoints,
            forward=forward_region,
        )
        return self.emit(op)

    # Custom functions --------------------------------------------------------------------

    def custom_fn(
        self,
        inputs: Sequence[SSAValue],
        forward: Body,
        vjp: Body | None = None,
        jvp: Body | None = None,
    ) -> Emitted:
        """`mir.custom_fn`: `forward(rb, *x)`; `vjp(rb, *x, *y, *dy)` -> dx...; `jvp(rb, *x, *y, *tx)` -> ty...

        Returns the single result, or a tuple of them.
        """
        in_types = [v.type for v in inputs]
        forward_region = self._region(custom_fn_region_types("forward", in_types, []), forward, _hints(inputs))
        out_types = yielded_types(forward_region)
        ys = _numbered("y", len(out_types))
        hints = {
            "vjp": [*_hints(inputs), *ys, *_numbered("dy", len(out_types))],
            "jvp": [*_hints(inputs), *ys, *_hints(inputs, "t_")],
        }
        regions = {}
        for name, fn in (("vjp", vjp), ("jvp", jvp)):
            if fn is not None:
                types = custom_fn_region_types(name, in_types, out_types)
                regions[name] = self._region(types, fn, hints[name])
        return self.emit(CustomFnOp(inputs, forward_region, **regions))

    def custom_fn_multi(
        self,
        inputs: Sequence[SSAValue],
        forward: Body,
        vjp: Body | None = None,
        jvp: Body | None = None,
    ) -> tuple[SSAValue, ...]:
        """`custom_fn` always returning a tuple of results (RLX's multi-output helper).

        RLX packs the outputs into one flat f32 tensor and narrows them back out; here
        the op simply has several results, of any dtype and shape.
        """
        result = self.custom_fn(inputs, forward, vjp, jvp)
        return result if isinstance(result, tuple) else (result,)
