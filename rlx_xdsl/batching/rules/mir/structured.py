"""Batching rules of the structured ops.

`mir.scan` batches its body: the carries that become batched (from a batched init, or
from a batched bcast or x reaching them) are found by iterating to a fixed point, the
batched xs and saved trajectories keep the scan axis in front (`[length, N, ...]` inside,
`[N, length, ...]` outside). `mir.scan_backward` and `mir.custom_fn` (whose derivative
regions would need batching in step) are mapped over the batch. Mamba's selective scan
and Gated DeltaNet take `[B, ...]` operands: the batch folds into B.
"""

from xdsl.ir import Operation, Region

from rlx_xdsl.batching.emit import folding, map_over_batch, materialize
from rlx_xdsl.batching.regions import batch_region, end_block
from rlx_xdsl.batching.registry import BATCH_RULES, BatchArgs, Results
from rlx_xdsl.batching.rules.mir.indexing import swap_front
from rlx_xdsl.dialects.mir.structured import (
    CustomFnOp,
    GatedDeltaNetOp,
    ScanBackwardOp,
    ScanOp,
    SelectiveScanOp,
)
from rlx_xdsl.ir.emitter import Emitter


@BATCH_RULES.register(ScanOp)
def scan(e: Emitter, op: Operation, args: BatchArgs) -> Results:
    assert isinstance(op, ScanOp)
    carries, bcasts = len(op.init), len(op.bcasts)
    flags = list(args.batched)
    while True:  # a carry is batched once anything batched reaches what it yields
        block, yielded = batch_region(op.body, flags, args.size)
        grown = [f or b for f, (_, b) in zip(flags[:carries], yielded, strict=True)]
        if grown == flags[:carries]:
            break
        flags[:carries] = grown
    end_block(block, yielded, flags[:carries], args.size, op.location)
    values = list(args.values)
    init = [materialize(e, v, args.size) if f and not b else v
            for v, f, b in zip(values[:carries], flags, args.batched, strict=False)]  # fmt: skip
    xs = [swap_front(e, v) if b else v for v, b in zip(values[carries + bcasts :], args.batched[carries + bcasts :])]
    new = ScanOp(
        init,
        Region(block),
        length=op.length.value.data,
        bcasts=values[carries : carries + bcasts],
        xs=xs,
        save_trajectory=op.saves_trajectory,
        num_checkpoints=op.num_checkpoints.value.data if op.num_checkpoints is not None else None,
    )
    e.insert(new)
    results = []
    for result, batched in zip(new.results, flags[:carries], strict=True):
        results.append((swap_front(e, result) if batched and op.saves_trajectory else result, batched))
    return results


for _op in (ScanBackwardOp, CustomFnOp):
    BATCH_RULES.add(_op, map_over_batch)
BATCH_RULES.add(SelectiveScanOp, folding(0, 1, 3, 4))
BATCH_RULES.add(GatedDeltaNetOp, folding(0, 1, 2, 3, 4, 5))
