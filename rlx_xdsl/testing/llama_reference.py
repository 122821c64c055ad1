"""`build_llama`'s function written by hand in PyTorch and in JAX: the baselines of
`benchmarks/gpu.py`, independent of the MIR graph and of its JAX translation.

Both are functional (`params` is a dict named as `build_llama` names its parameters) and
follow the graph's semantics:

* `rms_norm(x) = x * rsqrt(mean(x^2) + eps) * gamma + beta` over the last axis (computed
  in f32 for half-precision inputs, as the interpreter accumulates halves);
* RoPE rotates the two halves of each head (`[a, b] -> [a cos - b sin, b cos + a sin]`,
  `cos`/`sin` are [seq, head_dim/2]);
* causal attention with scale `1/sqrt(head_dim)`; kv head `j` serves query heads
  `j*rep ... j*rep+rep-1` (`repeat_interleave`, what `repeat_kv` builds with narrow + concat);
* SwiGLU FFN, residual adds; with `vocab`, a final `norm` and `lm_head`;
* the loss of `build_llama_loss`: mean softmax cross-entropy of the logits' rows against
  labels `row % vocab`.

The frameworks' own fast kernels are used where they exist (PyTorch's
`scaled_dot_product_attention`, `jax.nn.dot_product_attention`), as a user would write it.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from rlx_xdsl.testing.llama import RMS_EPS, build_llama, rope_tables

LAYER_PARAMS = (
    "attn_norm.gamma", "attn_norm.beta", "wq", "wk", "wv", "wo",
    "ffn_norm.gamma", "ffn_norm.beta", "w_gate", "w_up", "w_down",
)  # fmt: skip
"""One layer's parameters, in `build_llama`'s order."""


@dataclass(frozen=True)
class LlamaConfig:
    """The dimensions `build_llama` takes, as one value."""

    layers: int
    batch: int = 1
    seq: int = 16
    dim: int = 64
    n_heads: int = 4
    n_kv_heads: int = 2
    ffn: int = 128
    vocab: int | None = None
    dtype: str = "f32"

    @property
    def head_dim(self) -> int:
        return self.dim // self.n_heads

    def dims(self) -> dict:
        return {k: getattr(self, k) for k in ("batch", "seq", "dim", "n_heads", "n_kv_heads", "ffn")}

    def module(self, *, dtype: str | None = None, loss: bool = False):
        """The MIR graph (`build_llama`, or `build_llama_loss` with `loss`) in `dtype`."""
        if loss:
            from rlx_xdsl.testing.training import build_llama_loss

            return build_llama_loss(self.layers, vocab=self.vocab, dtype=dtype or self.dtype, **self.dims())
        return build_llama(self.layers, vocab=self.vocab, dtype=dtype or self.dtype, **self.dims())

    def param_shapes(self) -> dict[str, tuple[int, ...]]:
        d, kv, f = self.dim, self.n_kv_heads * self.head_dim, self.ffn
        layer = {
            "attn_norm.gamma": (d,), "attn_norm.beta": (d,), "wq": (d, d), "wk": (d, kv), "wv": (d, kv),
            "wo": (d, d), "ffn_norm.gamma": (d,), "ffn_norm.beta": (d,), "w_gate": (d, f), "w_up": (d, f),
            "w_down": (f, d),
        }  # fmt: skip
        shapes = {f"layers.{i}.{k}": layer[k] for i in range(self.layers) for k in LAYER_PARAMS}
        if self.vocab is not None:
            shapes |= {"norm.gamma": (d,), "norm.beta": (d,), "lm_head": (d, self.vocab)}
        return shapes


def init_params(config: LlamaConfig, seed: int = 0) -> dict[str, np.ndarray]:
    """f32 weights: matrices ~ N(0, 1/fan_in), norm gains near 1, biases near 0."""
    rng = np.random.default_rng(seed)
    params = {}
    for name, shape in config.param_shapes().items():
        if len(shape) == 2:
            w = rng.standard_normal(shape, dtype=np.float32)
            w *= np.float32(1 / np.sqrt(shape[0]))
        else:
            w = np.float32(0.05) * rng.standard_normal(shape, dtype=np.float32)
            if name.endswith("gamma"):
                w += np.float32(1)
        params[name] = w
    return params


def init_inputs(config: LlamaConfig, seed: int = 1) -> dict[str, np.ndarray]:
    """f32 activations `x` ~ N(0, 1) and the RoPE tables."""
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((config.batch, config.seq, config.dim), dtype=np.float32)
    cos, sin = rope_tables(config.seq, config.head_dim)
    return {"x": x, "cos": cos, "sin": sin}


def labels(config: LlamaConfig) -> np.ndarray:
    """The fixed labels of `build_llama_loss`: row `r` of the logits has label `r % vocab`."""
    return np.arange(config.batch * config.seq) % config.vocab


def _decoder(params, x, config: LlamaConfig, rms_norm, heads, rope, attention, silu):
    """`build_llama`'s layers (and head with `vocab`), written once for both frameworks:
    each passes its own norm, head split, rope, attention (back to `[B, S, dim]`) and silu."""
    for i in range(config.layers):
        p = f"layers.{i}"
        h = rms_norm(x, f"{p}.attn_norm")
        q = rope(heads(h @ params[f"{p}.wq"], config.n_heads))
        k = rope(heads(h @ params[f"{p}.wk"], config.n_kv_heads))
        v = heads(h @ params[f"{p}.wv"], config.n_kv_heads)
        x = x + attention(q, k, v) @ params[f"{p}.wo"]
        h = rms_norm(x, f"{p}.ffn_norm")
        x = x + (silu(h @ params[f"{p}.w_gate"]) * (h @ params[f"{p}.w_up"])) @ params[f"{p}.w_down"]
    if config.vocab is not None:
        x = rms_norm(x, "norm") @ params["lm_head"]
    return x


# PyTorch ---------------------------------------------------------------------------


def torch_llama(params, x, cos, sin, config: LlamaConfig):
    """The hidden state (or logits with `vocab`) of `build_llama`, in PyTorch."""
    import torch
    import torch.nn.functional as F

    def rms_norm(h, prefix):
        wide = h.float()
        normed = (wide * torch.rsqrt(wide.pow(2).mean(-1, keepdim=True) + RMS_EPS)).to(h.dtype)
        return normed * params[f"{prefix}.gamma"] + params[f"{prefix}.beta"]

    def heads(h, n):
        return h.view(config.batch, config.seq, n, config.head_dim).transpose(1, 2)

    def rope(h):
        half = config.head_dim // 2
        a, b = h[..., :half], h[..., half:]
        return torch.cat([a * cos - b * sin, b * cos + a * sin], dim=-1)

    rep = config.n_heads // config.n_kv_heads

    def attention(q, k, v):
        if rep > 1:
            k, v = k.repeat_interleave(rep, dim=1), v.repeat_interleave(rep, dim=1)
        a = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        return a.transpose(1, 2).reshape(config.batch, config.seq, config.dim)

    return _decoder(params, x, config, rms_norm, heads, rope, attention, F.silu)


def torch_loss(params, x, cos, sin, target, config: LlamaConfig):
    """`build_llama_loss`'s mean cross-entropy, in PyTorch (`target` from `labels`)."""
    import torch.nn.functional as F

    logits = torch_llama(params, x, cos, sin, config)
    return F.cross_entropy(logits.reshape(-1, config.vocab).float(), target)


# JAX -------------------------------------------------------------------------------


def jax_llama(params, x, cos, sin, config: LlamaConfig, attention_implementation: str | None = None):
    """The hidden state (or logits with `vocab`) of `build_llama`, in JAX; `attention_implementation`
    is `jax.nn.dot_product_attention`'s `implementation` (None: XLA's choice, "cudnn": cuDNN's)."""
    import jax
    import jax.numpy as jnp

    def rms_norm(h, prefix):
        wide = h.astype(jnp.float32)
        normed = (wide * jax.lax.rsqrt(jnp.mean(wide * wide, axis=-1, keepdims=True) + RMS_EPS)).astype(h.dtype)
        return normed * params[f"{prefix}.gamma"] + params[f"{prefix}.beta"]

    def heads(h, n):  # [B, S, n, D]: the layout jax.nn.dot_product_attention takes
        return h.reshape(config.batch, config.seq, n, config.head_dim)

    def rope(h):  # cos, sin [S, D/2] against [B, S, n, D]
        half = config.head_dim // 2
        a, b = h[..., :half], h[..., half:]
        c, s = cos[:, None, :], sin[:, None, :]
        return jnp.concatenate([a * c - b * s, b * c + a * s], axis=-1)

    def attention(q, k, v):
        # groups query heads by kv head
        a = jax.nn.dot_product_attention(q, k, v, is_causal=True, implementation=attention_implementation)
        return a.reshape(config.batch, config.seq, config.dim)

    return _decoder(params, x, config, rms_norm, heads, rope, attention, jax.nn.silu)


def jax_loss(params, x, cos, sin, target, config: LlamaConfig):
    """`build_llama_loss`'s mean cross-entropy, in JAX (`target` from `labels`)."""
    import jax
    import jax.numpy as jnp

    logits = jax_llama(params, x, cos, sin, config).reshape(-1, config.vocab).astype(jnp.float32)
    picked = jnp.take_along_axis(jax.nn.log_softmax(logits), target[:, None], axis=-1)
    return -jnp.mean(picked)
