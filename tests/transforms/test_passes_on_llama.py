"""Every pass preserves what the LLaMA benchmark graph computes (interpreter before/after)."""

import numpy as np
import pytest
from xdsl.context import Context
from xdsl.dialects.builtin import TensorType

from rlx_xdsl.context import parse_module
from rlx_xdsl.conversions.mir_to_linalg import ConvertMirToLinalgPass
from rlx_xdsl.dialects.mir.elementwise import ExpOp, TanhOp
from rlx_xdsl.graph import random_inputs
from rlx_xdsl.interpreters import run_function
from rlx_xdsl.shapes import DYNAMIC
from rlx_xdsl.testing.differential import assert_matches
from rlx_xdsl.testing.llama import build_llama, rope_tables
from rlx_xdsl.transforms import get_all_passes
from rlx_xdsl.transforms.dce import DeadCodeEliminationPass
from rlx_xdsl.transforms.specialize import SpecializeShapesPass, set_argument_types
from rlx_xdsl.transforms.unfuse import UnfusePass

CONFIG = {"batch": 2, "seq": 8, "dim": 32, "n_heads": 4, "n_kv_heads": 2, "ffn": 64}


def _inputs(module):
    inputs = random_inputs(module.ops.first, seed=11)
    inputs[1], inputs[2] = rope_tables(CONFIG["seq"], CONFIG["dim"] // CONFIG["n_heads"])
    # Keep weights small so two layers stay in a tame numeric range.
    return [x if i < 3 else (0.2 * x).astype(x.dtype) for i, x in enumerate(inputs)]


@pytest.fixture(scope="module")
def llama():
    module = build_llama(2, **CONFIG)
    inputs = _inputs(module)
    return str(module), inputs, run_function(module, "llama", inputs)


def test_every_pass_is_checked_here():
    """A new pass must add its before/after test on the LLaMA graph to this module."""
    assert set(get_all_passes()) == {"rlx-dce", "rlx-specialize", "rlx-unfuse", "rlx-convert-mir-to-linalg"}


def test_unfuse_leaves_a_graph_of_primitives_unchanged(llama):
    text, inputs, expected = llama
    module = parse_module(text)
    UnfusePass().apply(Context(), module)
    assert str(module) == text


def test_dce_removes_only_dead_ops(llama):
    text, inputs, expected = llama
    module = parse_module(text)
    # Add a dead chain next to the live graph: rlx-dce must delete exactly that.
    block = module.ops.first.body.block
    tanh = TanhOp(block.args[0])
    block.insert_ops_before([tanh, ExpOp(tanh.result)], block.last_op)
    assert str(module) != text
    module.verify()
    DeadCodeEliminationPass().apply(Context(), module)
    assert str(module) == text
    for want, got in zip(expected, run_function(module, "llama", inputs), strict=True):
        np.testing.assert_array_equal(got, want)


def test_specialize_restores_the_static_graph_from_a_dynamic_one(llama):
    text, inputs, expected = llama
    module = parse_module(text)
    f = module.ops.first
    types = [a.type for a in f.args]
    dynamic = list(types)
    for i in range(3):  # x [batch, seq, dim], cos and sin [seq, head_dim/2]
        shape = [DYNAMIC] * (types[i].get_num_dims() - 1) + [types[i].get_shape()[-1]]
        dynamic[i] = TensorType(types[i].element_type, shape)
    set_argument_types([(f, dynamic)])
    module.verify()
    assert "tensor<?x?x32xf32>" in str(module)
    for want, got in zip(expected, run_function(module, "llama", inputs), strict=True):
        np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-6)

    shapes = ("x=2x8x32", "cos=8x4", "sin=8x4")
    SpecializeShapesPass(shapes=shapes).apply(Context(), module)
    module.verify()
    assert str(module) == text
    for want, got in zip(expected, run_function(module, "llama", inputs), strict=True):
        np.testing.assert_array_equal(got, want)


def test_linalg_lowering_computes_the_graph_on_iree(llama):
    """The lowered graph leaves MIR, and IREE computes what the interpreter did."""
    text, inputs, expected = llama
    module = parse_module(text)
    ConvertMirToLinalgPass().apply(Context(), module)
    assert not any(op.name.startswith("mir.") for op in module.walk())
    module.verify()
    (got,) = run_function(parse_module(text), "llama", inputs, backend="iree")
    assert_matches(got, expected[0], approximate=True)
