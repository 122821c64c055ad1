"""`testing.identities`: every wrapper kind verifies, computes nothing and redirects the users."""

import numpy as np
import pytest

from rlx_xdsl.building.builder import GraphBuilder
from rlx_xdsl.run import run_function
from rlx_xdsl.testing.graphgen import inputs_for
from rlx_xdsl.testing.identities import ARITHMETIC, WRAPPERS, kinds_for, wrap

DTYPES = ("f32", "bf16", "i32", "ui8", "i1")
SHAPES = ((), (3,), (2, 1, 3))


def kinds_for_input(dtype: str, shape: tuple[int, ...]) -> list[str]:
    """The wrapper kinds for a graph input of this dtype and shape."""
    return kinds_for(GraphBuilder("probe").input("x", shape, dtype))


@pytest.mark.parametrize("shape", SHAPES, ids=str)
@pytest.mark.parametrize("dtype", DTYPES)
def test_every_applicable_kind_keeps_the_outputs(dtype, shape):
    for seed, kind in enumerate(kinds_for_input(dtype, shape)):
        b = GraphBuilder("f")
        x = b.input("x", shape, dtype)
        user = b.reshape(x, new_shape=[-1])
        b.output(user, x)
        module = b.module()
        inputs = inputs_for(module)
        expected = run_function(module, None, inputs)

        wrapped = wrap(x, kind, np.random.default_rng(seed))
        module.verify()
        assert wrapped is not x
        assert {use.operation for use in x.uses}.isdisjoint({user.owner, module.ops.first.body.block.last_op})
        for want, got in zip(expected, run_function(module, None, inputs), strict=True):
            assert got.dtype == want.dtype
            np.testing.assert_array_equal(got, want)


def test_kinds_follow_dtype_and_rank():
    assert set(kinds_for_input("f32", (2,))) == set(WRAPPERS)
    assert not set(ARITHMETIC) & set(kinds_for_input("i1", (2,)))
    assert "concat_one" not in kinds_for_input("f32", ())
