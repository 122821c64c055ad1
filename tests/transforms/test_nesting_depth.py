"""Passes over nested regions do work linear in the nesting depth.

`nested_if(d)` (`mir.if`s nested d deep, each `then` branch holding the next)
is run through each pass at depths d, 2d and 4d, counting the ops it creates
(built or copied: every op goes through `Operation.__init__`). Work linear in
depth grows by the same amount per level; a pass that pushes a region forward
twice per level (`rlx-jvp` did: 2^d) or copies every inner level again at each
level (`rlx-lower-control-flow`, `rlx-prepare-ad` did: d^2) grows faster. No
wall clock.
"""

from __future__ import annotations

import pytest
from xdsl.ir import Operation

from rlx_xdsl.context import make_context, parse_module
from rlx_xdsl.testing.nested import NESTED_PASSES, nested_if
from rlx_xdsl.transforms import get_all_passes
from rlx_xdsl.transforms.pipeline import parse_pipeline


def ops_created(pipeline: str, depth: int, monkeypatch: pytest.MonkeyPatch) -> int:
    """How many ops running `pipeline` on `nested_if(depth)` creates."""
    module = parse_module(nested_if(depth))
    passes = parse_pipeline(pipeline, get_all_passes()).passes
    count = 0
    init = Operation.__init__

    def counting_init(self, *args, **kwargs):
        nonlocal count
        count += 1
        init(self, *args, **kwargs)

    with monkeypatch.context() as patch:
        patch.setattr(Operation, "__init__", counting_init)
        for pass_ in passes:
            pass_.apply(make_context(), module)
    module.verify()
    return count


@pytest.mark.parametrize("pipeline", NESTED_PASSES)
def test_work_is_linear_in_if_nesting_depth(pipeline, monkeypatch):
    d = 4
    counts = [ops_created(pipeline, depth, monkeypatch) for depth in (d, 2 * d, 4 * d)]
    first, second = counts[1] - counts[0], counts[2] - counts[1]  # the work of d, then of 2d, more levels
    assert second <= 2 * first + 2, f"{pipeline}: ops created at depth {d}, {2 * d}, {4 * d}: {counts}"
