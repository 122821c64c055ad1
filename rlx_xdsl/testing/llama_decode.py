"""One greedy decode step of `build_llama`'s model with a static KV cache: the MIR graph,
and the same step written by hand in PyTorch and JAX (the baselines of `benchmarks/gpu.py`).

`build_llama_decode(config)` is `@decode`, for a `LlamaConfig` with `vocab` whose `seq`
is the cache length `S` (the static cache, as PyTorch's `StaticCache`):

    @decode(x [B, 1, dim], cos [1, D/2], sin [1, D/2], pos [] i32,
            k_cache.0 [B, Hkv, S, D], v_cache.0 [B, Hkv, S, D], ..., <build_llama's weights>)
        -> (next [B, 1] i32, k_cache.0, v_cache.0, ...)

`x` is the embedding of the last token, `cos`/`sin` the RoPE row of its position `pos`.
Each layer writes its new key and value at `pos` (`mir.dynamic_update_slice`, which XLA
does in place when the cache arguments are donated) and attends to the keys at positions `<= pos` (a `custom` mask over
the cache, grouped-query attention reading the `Hkv` cached heads directly). `next` is the
greedy token: the first index of the largest logit. Layer by layer the arithmetic is
`build_llama`'s (`rlx_xdsl/testing/llama.py`), so `torch_decode`/`jax_decode` follow
`llama_reference.py`'s forward.
"""

from __future__ import annotations

import numpy as np
from xdsl.dialects.builtin import ModuleOp, i32

from rlx_xdsl.building.builder import GraphBuilder
from rlx_xdsl.testing.llama import _LlamaBuilder, rope_tables
from rlx_xdsl.testing.llama_reference import RMS_EPS, LlamaConfig


def cache_names(config: LlamaConfig) -> list[str]:
    """`k_cache.0, v_cache.0, k_cache.1, ...`: the cache arguments and results, in order."""
    return [f"{kv}_cache.{i}" for i in range(config.layers) for kv in ("k", "v")]


def cache_shape(config: LlamaConfig) -> tuple[int, int, int, int]:
    return (config.batch, config.n_kv_heads, config.seq, config.head_dim)


def build_llama_decode(config: LlamaConfig) -> ModuleOp:
    """`@decode` (see the module docstring); `config.seq` is the cache length."""
    if config.vocab is None:
        raise ValueError("a decode step needs a vocab (the logits it picks the next token from)")
    b = GraphBuilder("decode")
    batch, seq, dt = config.batch, 1, config.dtype
    g = _LlamaBuilder(b, batch=batch, seq=seq, dim=config.dim, n_heads=config.n_heads,
                      n_kv_heads=config.n_kv_heads, ffn=config.ffn, dtype=dt)  # fmt: skip
    x = b.input("x", [batch, 1, config.dim], dt)
    cos = b.input("cos", [1, g.head_dim // 2], dt)
    sin = b.input("sin", [1, g.head_dim // 2], dt)
    pos = b.input("pos", [], i32)
    caches = [b.input(name, cache_shape(config), dt) for name in cache_names(config)]
    positions = b.iota([config.seq], i32, dimension=0)
    zero = b.constant(0, i32)
    keep = b.reshape(b.cast(b.compare(positions, pos, "le"), dt), new_shape=[1, config.seq])
    rope = {"head_dim": g.head_dim, "n_rot": g.head_dim}
    updated = []
    for i in range(config.layers):
        prefix = f"layers.{i}"
        kv_dim = config.n_kv_heads * g.head_dim
        h = g.rms_norm(x, f"{prefix}.attn_norm")
        q = b.rope(g.split_heads(b.matmul(h, g.param(f"{prefix}.wq", [config.dim, config.dim])), config.n_heads), cos, sin, **rope)
        k = b.rope(g.split_heads(b.matmul(h, g.param(f"{prefix}.wk", [config.dim, kv_dim])), config.n_kv_heads), cos, sin, **rope)
        v = g.split_heads(b.matmul(h, g.param(f"{prefix}.wv", [config.dim, kv_dim])), config.n_kv_heads)
        k_cache = b.dynamic_update_slice(caches[2 * i], k, zero, zero, pos, zero)
        v_cache = b.dynamic_update_slice(caches[2 * i + 1], v, zero, zero, pos, zero)
        updated += [k_cache, v_cache]
        a = b.attention(q, k_cache, v_cache, keep, num_heads=config.n_heads, head_dim=g.head_dim, mask_kind="custom")
        x = b.add(x, b.matmul(g.merge_heads(a), g.param(f"{prefix}.wo", [config.dim, config.dim])))
        x = g.ffn_block(x, prefix)
    logits = b.matmul(g.rms_norm(x, "norm"), g.param("lm_head", [config.dim, config.vocab]))  # [B, 1, V]
    largest = b.reduce(logits, kind="max", axes=[2], keep_dim=True)
    ids = b.iota([batch, 1, config.vocab], i32, dimension=2)
    candidates = b.where(b.compare(logits, largest, "eq"), ids, b.constant(config.vocab, i32))
    b.output(b.reduce(candidates, kind="min", axes=[2]), *updated)
    return b.module()


def decode_inputs(config: LlamaConfig, pos: int, seed: int = 1) -> dict[str, np.ndarray]:
    """f32 inputs of one step at `pos`: a random `x`, the RoPE row, caches random below `pos`."""
    rng = np.random.default_rng(seed)
    cos, sin = rope_tables(config.seq, config.head_dim)
    inputs = {
        "x": rng.standard_normal((config.batch, 1, config.dim), dtype=np.float32),
        "cos": cos[pos : pos + 1], "sin": sin[pos : pos + 1], "pos": np.array(pos, np.int32),
    }  # fmt: skip
    for name in cache_names(config):
        cache = rng.standard_normal(cache_shape(config), dtype=np.float32)
        cache[:, :, pos:] = 0
        inputs[name] = cache
    return inputs


def decode_bytes(config: LlamaConfig, pos: int) -> int:
    """What one step must read: every weight and the cached keys and values up to `pos`."""
    size = 2 if config.dtype == "bf16" else 4
    weights = sum(int(np.prod(s)) for s in config.param_shapes().values())
    cache = 2 * config.layers * config.batch * config.n_kv_heads * (pos + 1) * config.head_dim
    return (weights + cache) * size


def torch_decode(params, inputs, config: LlamaConfig):
    """One step in PyTorch on a static cache updated in place (`index_copy_`); returns `next`."""
    import torch
    import torch.nn.functional as F

    B, D, half = config.batch, config.head_dim, config.head_dim // 2
    x, cos, sin, pos = inputs["x"], inputs["cos"], inputs["sin"], inputs["pos"]
    at = pos.reshape(1).long()
    keep = (torch.arange(config.seq, device=x.device) <= pos).reshape(1, 1, 1, config.seq)

    def norm(h, prefix):
        wide = h.float()
        normed = (wide * torch.rsqrt(wide.pow(2).mean(-1, keepdim=True) + RMS_EPS)).to(h.dtype)
        return normed * params[f"{prefix}.gamma"] + params[f"{prefix}.beta"]

    def heads(h, n):
        return h.view(B, 1, n, D).transpose(1, 2)

    def rope(h):
        a, b = h[..., :half], h[..., half:]
        return torch.cat([a * cos - b * sin, b * cos + a * sin], dim=-1)

    for i in range(config.layers):
        p = f"layers.{i}"
        h = norm(x, f"{p}.attn_norm")
        q = rope(heads(h @ params[f"{p}.wq"], config.n_heads))
        k = rope(heads(h @ params[f"{p}.wk"], config.n_kv_heads))
        v = heads(h @ params[f"{p}.wv"], config.n_kv_heads)
        k_cache, v_cache = inputs[f"k_cache.{i}"], inputs[f"v_cache.{i}"]
        k_cache.index_copy_(2, at, k)
        v_cache.index_copy_(2, at, v)
        a = F.scaled_dot_product_attention(q, k_cache, v_cache, attn_mask=keep, enable_gqa=True)
        x = x + a.transpose(1, 2).reshape(B, 1, config.dim) @ params[f"{p}.wo"]
        h = norm(x, f"{p}.ffn_norm")
        x = x + (F.silu(h @ params[f"{p}.w_gate"]) * (h @ params[f"{p}.w_up"])) @ params[f"{p}.w_down"]
    logits = norm(x, "norm") @ params["lm_head"]
    return logits.argmax(-1).to(torch.int32)


def jax_decode(params, inputs, config: LlamaConfig):
    """One step in JAX (`dynamic_update_slice` into the caches); returns `(next, caches)`."""
    import jax
    import jax.numpy as jnp

    B, D, half = config.batch, config.head_dim, config.head_dim // 2
    x, cos, sin, pos = inputs["x"], inputs["cos"], inputs["sin"], inputs["pos"]
    keep = (jnp.arange(config.seq) <= pos).reshape(1, 1, 1, config.seq)

    def norm(h, prefix):
        wide = h.astype(jnp.float32)
        normed = (wide * jax.lax.rsqrt(jnp.mean(wide * wide, -1, keepdims=True) + RMS_EPS)).astype(h.dtype)
        return normed * params[f"{prefix}.gamma"] + params[f"{prefix}.beta"]

    def rope(h):  # [B, 1, n, D]
        a, b = h[..., :half], h[..., half:]
        return jnp.concatenate([a * cos - b * sin, b * cos + a * sin], axis=-1)

    zero = jnp.zeros_like(pos)  # the update's start indices share pos's dtype (i64 under jax_enable_x64)
    caches = {}
    for i in range(config.layers):
        p = f"layers.{i}"
        h = norm(x, f"{p}.attn_norm")
        q = rope((h @ params[f"{p}.wq"]).reshape(B, 1, config.n_heads, D))
        k = rope((h @ params[f"{p}.wk"]).reshape(B, 1, config.n_kv_heads, D))
        v = (h @ params[f"{p}.wv"]).reshape(B, 1, config.n_kv_heads, D)
        for name, new in ((f"k_cache.{i}", k), (f"v_cache.{i}", v)):  # caches are [B, Hkv, S, D]
            caches[name] = jax.lax.dynamic_update_slice(inputs[name], new.transpose(0, 2, 1, 3), (zero, zero, pos, zero))
        kt, vt = (caches[f"{kv}_cache.{i}"].transpose(0, 2, 1, 3) for kv in ("k", "v"))
        a = jax.nn.dot_product_attention(q, kt, vt, mask=keep)
        x = x + a.reshape(B, 1, config.dim) @ params[f"{p}.wo"]
        h = norm(x, f"{p}.ffn_norm")
        x = x + (jax.nn.silu(h @ params[f"{p}.w_gate"]) * (h @ params[f"{p}.w_up"])) @ params[f"{p}.w_down"]
    logits = norm(x, "norm") @ params["lm_head"]
    return jnp.argmax(logits, -1).astype(jnp.int32), caches
