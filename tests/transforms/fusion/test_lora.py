"""`rlx-fuse-lora` on hand-built graphs: what it fuses (bit for bit the chain's values),
what it leaves alone, and that `rlx-unfuse` gives the chain back."""

from collections import Counter

import numpy as np
import pytest
from xdsl.context import Context

from rlx_xdsl.building.builder import GraphBuilder
from rlx_xdsl.dialects.mir.moe import LoraMatmulOp
from rlx_xdsl.run import run_function
from rlx_xdsl.testing.graphgen import inputs_for
from rlx_xdsl.transforms.fusion.lora import FuseLoraPass
from rlx_xdsl.transforms.unfuse import UnfusePass


def lora_graph(dtype="f32", *, adapter_first=False, scale_first=False, scale=0.5, scale_dtype=None, extra=None):
    b = GraphBuilder("f")
    x = b.input("x", [2, 3, 4], dtype)
    w, a, up = b.param("w", [4, 5], dtype), b.param("a", [4, 2], dtype), b.param("b", [2, 5], dtype)
    base = b.matmul(x, w)
    adapter = b.matmul(b.matmul(x, a), up)
    if scale is not None:
        s = b.constant(np.array(scale, np.float64), scale_dtype or dtype)
        adapter = b.mul(s, adapter) if scale_first else b.mul(adapter, s)
    out = b.add(adapter, base) if adapter_first else b.add(base, adapter)
    b.output(out, *([] if extra is None else [extra(b, base, adapter)]))
    return b.module()


def fused_ops(module):
    return [op for op in module.walk() if isinstance(op, LoraMatmulOp)]


def matmuls(module):
    return Counter(op.name for op in module.walk())["mir.matmul"]


def fuse_and_compare(module):
    inputs = inputs_for(module)
    before = run_function(module, "f", inputs)
    FuseLoraPass().apply(Context(), module)
    module.verify()
    after = run_function(module, "f", inputs)
    for want, got in zip(before, after, strict=True):
        assert got.dtype == want.dtype
        np.testing.assert_array_equal(np.asarray(got, np.float64), np.asarray(want, np.float64))
    return inputs, after


@pytest.mark.parametrize("dtype", ["f32", "bf16", "f64"])
@pytest.mark.parametrize("adapter_first", [False, True])
@pytest.mark.parametrize("scale_first", [False, True])
def test_the_chain_becomes_one_lora_matmul_with_the_same_values(dtype, adapter_first, scale_first):
    module = lora_graph(dtype, adapter_first=adapter_first, scale_first=scale_first, scale=0.25)
    fuse_and_compare(module)
    (op,) = fused_ops(module)
    assert op.scale_value == 0.25 and matmuls(module) == 0


def test_without_a_mul_the_scale_is_one():
    module = lora_graph(scale=None)
    fuse_and_compare(module)
    (op,) = fused_ops(module)
    assert op.scale_value == 1.0


@pytest.mark.parametrize(
    ("why", "options"),
    [
        ("f32 cannot hold the f64 scale", {"dtype": "f64", "scale": 0.1}),
        ("the mul promotes bf16 to f32", {"dtype": "bf16", "scale_dtype": "f32"}),
        ("the base product is also returned", {"extra": lambda b, base, adapter: base}),
        ("the scaled adapter is also returned", {"extra": lambda b, base, adapter: adapter}),
    ],
)
def test_near_misses_stay_unfused(why, options):
    module = lora_graph(**options)
    fuse_and_compare(module)
    assert fused_ops(module) == [], why


def test_unfusing_the_fused_op_gives_the_chain_back():
    module = lora_graph()
    inputs, fused = fuse_and_compare(module)
    UnfusePass().apply(Context(), module)
    module.verify()
    assert fused_ops(module) == [] and matmuls(module) == 3
    np.testing.assert_array_equal(run_function(module, "f", inputs)[0], fused[0])
