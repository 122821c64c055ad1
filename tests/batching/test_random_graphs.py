"""Random graphs (`testing.graphgen`) batched by `rlx-vmap` over some of their arguments: each either
matches its examples run one by one, or is refused with a diagnostic located at an op."""

from __future__ import annotations

import numpy as np
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from rlx_xdsl.ir.diagnostics import OpError
from rlx_xdsl.ir.graph import find_function
from rlx_xdsl.testing.graphgen import graphs, inputs_for
from rlx_xdsl.testing.vmap_check import check_vmap

PROPERTY = settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def second_example(inputs: list[np.ndarray], rng: np.random.Generator) -> list[np.ndarray]:
    """Another example of the same shapes: floats moved a little, integers (ids in range) kept."""
    return [
        (x + rng.standard_normal(x.shape) * 0.1).astype(x.dtype) if np.issubdtype(x.dtype, np.floating) else x
        for x in inputs
    ]


@PROPERTY
@given(module=graphs(max_ops=8), seed=st.integers(0, 2**16), data=st.data())
def test_random_graphs_batch_like_their_examples(module, seed, data):
    """A random non-empty set of arguments is batched (the others shared)."""
    function = find_function(module, "main")
    count = len(function.body.block.args)
    batched = sorted(data.draw(st.sets(st.integers(0, count - 1), min_size=1), label="batched"))
    first = inputs_for(module, seed)
    examples = [first, second_example(first, np.random.default_rng(seed))]
    low = any(str(a.type.element_type) in ("f16", "bf16") for a in function.body.block.args)
    tolerance = {"rtol": 3e-2, "atol": 3e-2} if low else {"rtol": 1e-4, "atol": 1e-5}
    try:
        check_vmap(module, "main", examples, batched, **tolerance)
    except OpError as error:  # a located refusal: the op cannot be batched in this instance
        assert error.op.parent_op() is not None and "'rlx-vmap'" in error.message
        event(f"refused: {error.message.split(':')[0]}")
        return
    event("batched")
