"""`build_llama_decode`'s step against the same step written in PyTorch and JAX (f32, tiny sizes)."""

from __future__ import annotations

import numpy as np
import pytest

from rlx_xdsl.run import run_function
from rlx_xdsl.testing.llama_decode import (
    build_llama_decode,
    cache_names,
    decode_bytes,
    decode_inputs,
    jax_decode,
    torch_decode,
)
from rlx_xdsl.testing.llama_reference import LlamaConfig, init_params

CONFIG = LlamaConfig(2, batch=1, seq=8, dim=16, n_heads=4, n_kv_heads=2, ffn=24, vocab=11)
POS = 5


@pytest.fixture(scope="module")
def ours():
    module = build_llama_decode(CONFIG)
    module.verify()
    params, inputs = init_params(CONFIG), decode_inputs(CONFIG, POS)
    names = ["x", "cos", "sin", "pos", *cache_names(CONFIG), *params]
    return params, inputs, run_function(module, "decode", [(inputs | params)[n] for n in names])


def test_the_step_matches_pytorch_with_a_static_cache(ours):
    torch = pytest.importorskip("torch")
    params, inputs, (token, *caches) = ours
    t_params = {k: torch.from_numpy(v) for k, v in params.items()}
    t_inputs = {k: torch.from_numpy(np.array(v)) for k, v in inputs.items()}
    expected = torch_decode(t_params, t_inputs, CONFIG)
    assert token.dtype == np.int32 and token.shape == (1, 1)
    np.testing.assert_array_equal(token, expected.numpy())
    for name, cache in zip(cache_names(CONFIG), caches, strict=True):  # updated in place by torch
        np.testing.assert_allclose(cache, t_inputs[name].numpy(), rtol=1e-5, atol=1e-6)
    assert np.abs(caches[0][:, :, POS]).max() > 0 and not caches[0][:, :, POS + 1 :].any()


def test_the_step_matches_jax(ours):
    pytest.importorskip("jax")
    params, inputs, (token, *caches) = ours
    expected, expected_caches = jax_decode(params, inputs, CONFIG)
    np.testing.assert_array_equal(token, np.asarray(expected))
    for name, cache in zip(cache_names(CONFIG), caches, strict=True):
        np.testing.assert_allclose(cache, np.asarray(expected_caches[name]), rtol=1e-5, atol=1e-6)


def test_each_layer_writes_one_position_of_its_caches_with_a_dynamic_update_slice():
    """The new key and value go in with `mir.dynamic_update_slice` at `pos` (a write of
    `[B, Hkv, 1, D]`, done in place under donation), not a select over the whole cache."""
    module = build_llama_decode(CONFIG)
    writes = [op for op in module.walk() if op.name == "mir.dynamic_update_slice"]
    assert len(writes) == 2 * CONFIG.layers
    assert all(op.update.type.get_shape() == (1, 2, 1, 4) for op in writes)
    pos = next(a for a in module.body.block.first_op.body.block.args if a.name_hint == "pos")
    assert all(list(op.start_indices)[2] is pos for op in writes)
    selects = [op for op in module.walk() if op.name == "mir.where"]
    assert all(op.results[0].type.get_shape() != (1, 2, CONFIG.seq, 4) for op in selects)


def test_the_bytes_a_step_reads():
    """Every weight once, and keys and values at positions 0..pos of every layer (f32: 4 bytes)."""
    weights = 2 * (2 * 16 + 16 * 16 * 2 + 16 * 8 * 2 + 2 * 16 + 16 * 24 * 3) + 2 * 16 + 16 * 11
    assert decode_bytes(CONFIG, POS) == 4 * (weights + 2 * 2 * 2 * (POS + 1) * 4)
