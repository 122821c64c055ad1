"""numpy semantics of the MIR structured ops: scans, custom functions, state-space recurrences.

Region kernels call `run_region` once per step on the region that is already built:
nothing is parsed or rebuilt inside the loop.

The state-space kernels compute in the op's dtype, rounding every stage as the ops of
their unfolded form (`rlx-unfuse`) do, with half-precision sums accumulated in f32.

Memory of scans is observable: every scan kernel reports, through `observe_scans()`,
how many carries it held at once besides the running one (`peak_saved`) and how many
times it ran a body (`body_runs`). A scan saving `K` checkpoints holds `K` carries; the
backward sweep over a checkpointed trajectory recomputes each segment by bisection,
holding at most `ceil(log2(segment length))` extra carries at a time and running the
forward body `O(length * log(segment length))` times.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass

import numpy as np

from rlx_xdsl.dialects.mir import structured as st
from rlx_xdsl.interpreters.common import (
    KernelError,
    RegionRunner,
    as_result,
    result_dtype,
    widened,
)
from rlx_xdsl.numerics import accumulate_matmul, convert

Carry = tuple[np.ndarray, ...]


# Observing what scans store ------------------------------------------------------------


@dataclass
class ScanRecord:
    """What one execution of a scan kernel held and ran."""

    op: str
    saved: int = 0
    """Carries held right now besides the running one."""
    peak_saved: int = 0
    body_runs: int = 0

    def hold(self, count: int = 1) -> None:
        self.saved += count
        self.peak_saved = max(self.peak_saved, self.saved)

    def release(self, count: int = 1) -> None:
        self.saved -= count


_OBSERVERS: list[list[ScanRecord]] = []


@contextmanager
def observe_scans() -> Iterator[list[ScanRecord]]:
    """Collect a `ScanRecord` for every scan kernel executed inside the block."""
    records: list[ScanRecord] = []
    _OBSERVERS.append(records)
    try:
        yield records
    finally:
        _OBSERVERS.remove(records)


def new_record(op_name: str) -> ScanRecord:
    record = ScanRecord(op_name)
    for records in _OBSERVERS:
        records.append(record)
    return record


# mir.scan ------------------------------------------------------------------------------


def split(values: Sequence[np.ndarray], *sizes: int) -> list[tuple[np.ndarray, ...]]:
    """`values` cut into consecutive groups of the given sizes (the rest is the last group)."""
    groups, start = [], 0
    for size in sizes:
        groups.append(tuple(values[start : start + size]))
        start += size
    groups.append(tuple(values[start:]))
    return groups


def check_rows(op: st.ScanOp | st.ScanBackwardOp, arrays: Sequence[np.ndarray], rows: int, what: str) -> None:
    """`?` leading dims are checked when the values are known: each array has `rows` rows."""
    for index, array in enumerate(arrays):
        if array.shape[0] != rows:
            raise KernelError(f"{what} #{index} has {array.shape[0]} rows at run time, expected {rows}")


def check_carry_shapes(op: st.ScanOp, carry: Carry, init: Carry, t: int) -> None:
    """A body may not resize its carries (their types may have `?` dims)."""
    for index, (now, first) in enumerate(zip(carry, init)):
        if np.shape(now) != np.shape(first):
            raise KernelError(
                f"step {t} changed carry #{index} from shape {list(np.shape(first))} to {list(np.shape(now))}"
            )


def run_scan(op: st.ScanOp, *operands: np.ndarray, run_region: RegionRunner) -> tuple[np.ndarray, ...]:
    init, bcasts, xs = split(operands, len(op.init), len(op.bcasts))
    check_rows(op, xs, op.steps, "xs")
    record = new_record(op.name)
    saved_at = set(op.saved_steps()) if op.saves_trajectory else set()
    rows: list[Carry] = []
    carry = init
    for t in range(op.steps):
        carry = tuple(run_region(op.body, (*carry, *bcasts, *(x[t] for x in xs))))
        record.body_runs += 1
        check_carry_shapes(op, carry, init, t)
        if t in saved_at:
            rows.append(carry)
            record.hold()
    if not op.saves_trajectory:
        return tuple(as_result(op, c, i) for i, c in enumerate(carry))
    return tuple(as_result(op, np.stack(column), i) for i, column in enumerate(zip(*rows)))


# mir.scan_backward ---------------------------------------------------------------------


def reverse_by_bisection(
    start: int,
    stop: int,
    anchor: Carry,
    step: Callable[[int, Carry], Carry],
    visit: Callable[[int, Carry], None],
    record: ScanRecord,
) -> None:
    """Call `visit(t, carry entering t)` for t = stop-1 down to start; `anchor` enters `start`.

    The carry entering the middle step is recomputed from `anchor` and held while the
    upper half is visited, then released; the lower half restarts from `anchor`. So at
    most `ceil(log2(stop - start))` carries are held at once.
    """
    if stop - start == 1:
        visit(start, anchor)
        return
    middle = (start + stop) // 2
    carry = anchor
    for t in range(start, middle):
        carry = step(t, carry)
    record.hold()
    reverse_by_bisection(middle, stop, carry, step, visit, record)
    record.release()
    reverse_by_bisection(start, middle, anchor, step, visit, record)


def run_scan_backward(
    op: st.ScanBackwardOp, *operands: np.ndarray, run_region: RegionRunner
) -> tuple[np.ndarray, ...]:
    n = len(op.init)
    init, trajectory, upstream, xs = split(operands, n, n, n)
    check_rows(op, xs, op.steps, "xs")
    check_rows(op, trajectory, op.trajectory_rows, "trajectory")
    record = new_record(op.name)
    saved_steps = op.saved_steps()
    row_after = {step: row for row, step in enumerate(saved_steps)}
    d_carry: Carry = tuple(np.zeros_like(c) for c in init) if op.saves_trajectory else upstream
    d_xs = [np.empty(x.shape, dtype=x.dtype) for x in xs]

    def slices(t: int) -> Carry:
        return tuple(x[t] for x in xs)

    def step(t: int, carry: Carry) -> Carry:
        record.body_runs += 1
        return tuple(run_region(op.forward, (*carry, *slices(t))))

    def visit(t: int, carry: Carry) -> None:
        nonlocal d_carry
        if op.saves_trajectory and t in row_after:
            d_carry = tuple(d + u[row_after[t]] for d, u in zip(d_carry, upstream))
        grads = run_region(op.vjp, (*carry, *slices(t), *d_carry))
        record.body_runs += 1
        d_carry = tuple(grads[:n])
        for d_x, g in zip(d_xs, grads[n:]):
            d_x[t] = g

    def row(k: int) -> Carry:
        """The carry entering segment `k`: trajectory row `k - 1`, or `init` for k = 0.

        When every step is saved, segment `k` is step `k`."""
        return init if k == 0 else tuple(traj[k - 1] for traj in trajectory)

    if op.recomputes:
        bounds = [0] + [s + 1 for s in saved_steps]
        for k in reversed(range(len(saved_steps))):
            reverse_by_bisection(bounds[k], bounds[k + 1], row(k), step, visit, record)
    else:
        for t in reversed(range(op.steps)):
            visit(t, row(t))
    return tuple(as_result(op, g, i) for i, g in enumerate((*d_carry, *d_xs)))


# mir.custom_fn -------------------------------------------------------------------------


def run_custom_fn(op: st.CustomFnOp, *inputs: np.ndarray, run_region: RegionRunner) -> tuple[np.ndarray, ...]:
    """Executing a custom function runs its forward body; vjp/jvp are for autodiff."""
    return tuple(run_region(op.forward, inputs))


# State-space recurrences ---------------------------------------------------------------


def run_selective_scan(op: st.SelectiveScanOp, x, delta, a, b, c) -> tuple[np.ndarray]:
    dt = result_dtype(op)
    batch, seq, hidden = x.shape
    state = np.zeros((batch, hidden, a.shape[1]), dt)
    y = np.empty((batch, seq, hidden), dt)
    with np.errstate(all="ignore"):
        for t in range(seq):
            d_t = delta[:, t, :, None]
            state = np.exp(d_t * a) * state + (d_t * x[:, t, :, None]) * b[:, t, None, :]
            y[:, t, :] = widened(c[:, t, None, :] * state).sum(axis=-1)
    return (y,)


def run_gated_delta_net(op: st.GatedDeltaNetOp, q, k, v, g, beta, state=None) -> tuple[np.ndarray, ...]:
    dt = result_dtype(op)
    batch, seq, heads, size = q.shape
    memory = np.zeros((batch, heads, size, size), dt) if state is None else state
    scale = np.asarray(st.inverse_sqrt(size), dt)
    out = np.empty(q.shape, dt)

    def matmul(lhs: np.ndarray, rhs: np.ndarray) -> np.ndarray:
        return convert(accumulate_matmul(lhs, rhs), dt)

    with np.errstate(all="ignore"):
        for t in range(seq):
            q_t, k_t, v_t = (m[:, t, :, None, :] for m in (q, k, v))  # rows [B, H, 1, N]
            memory = memory * np.exp(g[:, t, :, None, None])
            d = (v_t - matmul(k_t, memory)) * beta[:, t, :, None, None]
            memory = memory + matmul(np.swapaxes(k_t, -1, -2), d)
            out[:, t] = (matmul(q_t, memory) * scale)[:, :, 0, :]
    return (out,) if state is None else (out, memory)


KERNELS = {
    st.ScanOp: run_scan,
    st.ScanBackwardOp: run_scan_backward,
    st.CustomFnOp: run_custom_fn,
    st.SelectiveScanOp: run_selective_scan,
    st.GatedDeltaNetOp: run_gated_delta_net,
}
