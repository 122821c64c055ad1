"""An N-layer LLaMA-style decoder as a MIR graph: the benchmark and example workload.

The layer follows the primitive chain RLX expands its `LlamaDecoderBlock` into:

    h   = x + wo · attention(rope(q), rope(repeat_kv(k)), repeat_kv(v))   q,k,v = rms_norm(x) · wq,wk,wv
    out = h + w_down · (silu(g) * u)                                      g,u   = rms_norm(h) · w_gate,w_up

Grouped-query attention repeats each of the `n_kv_heads` key/value heads
`n_heads // n_kv_heads` times with `narrow` + `concat` along the head axis (as
RLX's `repeat_kv` does), so `mir.attention` always sees as many kv heads as
query heads. Weights are graph parameters named like `layers.0.wq`; the
activations `x` ([batch, seq, dim]) and the RoPE tables `cos`/`sin`
([seq, head_dim/2], see `rope_tables`) are graph inputs.
"""

from __future__ import annotations

import argparse
import inspect

import numpy as np
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import SSAValue

from rlx_xdsl.building.builder import GraphBuilder

RMS_EPS = 1e-6
ROPE_THETA = 10000.0

LAYER_OP_COUNTS_MHA = {
    "rms_norm": 2,
    "matmul": 7,
    "reshape": 4,
    "transpose": 4,
    "rope": 2,
    "attention": 1,
    "add": 2,
    "silu": 1,
    "mul": 1,
}
"""MIR ops of one layer when every query head has its own kv head (no repeat_kv)."""


def layer_op_counts(n_heads: int, n_kv_heads: int) -> dict[str, int]:
    """The MIR op histogram of one decoder layer.

    With grouped-query attention, k and v each need one `narrow` per kv head
    and one `concat`.
    """
    counts = dict(LAYER_OP_COUNTS_MHA)
    if n_kv_heads != n_heads:
        counts["narrow"] = 2 * n_kv_heads
        counts["concat"] = 2
    return counts


def rope_tables(seq: int, head_dim: int, theta: float = ROPE_THETA, dtype=np.float32):
    """The standard RoPE `cos`/`sin` tables, each [seq, head_dim/2].

    Row `s`, column `i` holds the angle `s * theta^(-2i/head_dim)`.
    """
    inv_freq = theta ** (-np.arange(0, head_dim, 2, dtype=np.float64) / head_dim)
    angles = np.outer(np.arange(seq, dtype=np.float64), inv_freq)
    return np.cos(angles).astype(dtype), np.sin(angles).astype(dtype)


class _LlamaBuilder:
    """Holds the dimensions while emitting the layers into one GraphBuilder."""

    def __init__(self, b: GraphBuilder, *, batch, seq, dim, n_heads, n_kv_heads, ffn, dtype):
        if dim % n_heads:
            raise ValueError(f"dim {dim} is not a multiple of n_heads {n_heads}")
        if n_heads % n_kv_heads:
            raise ValueError(f"n_heads {n_heads} is not a multiple of n_kv_heads {n_kv_heads}")
        self.b = b
        self.batch, self.seq, self.dim, self.ffn, self.dtype = batch, seq, dim, ffn, dtype
        self.n_heads, self.n_kv_heads = n_heads, n_kv_heads
        self.head_dim = dim // n_heads
        if self.head_dim % 2:
            raise ValueError(f"head_dim {self.head_dim} must be even for RoPE")

    def param(self, name: str, shape) -> SSAValue:
        return self.b.param(name, shape, self.dtype)

    def rms_norm(self, x: SSAValue, prefix: str) -> SSAValue:
        gamma = self.param(f"{prefix}.gamma", [self.dim])
        beta = self.param(f"{prefix}.beta", [self.dim])
        return self.b.rms_norm(x, gamma, beta, axis=-1, eps=RMS_EPS)

    def split_heads(self, x: SSAValue, heads: int) -> SSAValue:
        """[B, S, heads*D] -> [B, heads, S, D]."""
        x = self.b.reshape(x, new_shape=[self.batch, self.seq, heads, self.head_dim])
        return self.b.transpose(x, perm=[0, 2, 1, 3])

    def merge_heads(self, x: SSAValue) -> SSAValue:
        """[B, H, S, D] -> [B, S, H*D]."""
        x = self.b.transpose(x, perm=[0, 2, 1, 3])
        return self.b.reshape(x, new_shape=[self.batch, self.seq, self.n_heads * self.head_dim])

    def repeat_kv(self, x: SSAValue) -> SSAValue:
        """[B, Hkv, S, D] -> [B, H, S, D]: kv head j serves query heads j*rep ... j*rep+rep-1."""
        rep = self.n_heads // self.n_kv_heads
        if rep == 1:
            return x
        heads = [self.b.narrow(x, axis=1, start=j, len=1) for j in range(self.n_kv_heads)]
        return self.b.concat(*[h for h in heads for _ in range(rep)], axis=1)

    def attention_block(self, x, cos, sin, prefix: str) -> SSAValue:
        kv_dim = self.n_kv_heads * self.head_dim
        h = self.rms_norm(x, f"{prefix}.attn_norm")
        q = self.b.matmul(h, self.param(f"{prefix}.wq", [self.dim, self.dim]))
        k = self.b.matmul(h, self.param(f"{prefix}.wk", [self.dim, kv_dim]))
        v = self.b.matmul(h, self.param(f"{prefix}.wv", [self.dim, kv_dim]))
        rope = {"head_dim": self.head_dim, "n_rot": self.head_dim}
        q = self.b.rope(self.split_heads(q, self.n_heads), cos, sin, **rope)
        k = self.b.rope(self.split_heads(k, self.n_kv_heads), cos, sin, **rope)
        v = self.split_heads(v, self.n_kv_heads)
        a = self.b.attention(
            q, self.repeat_kv(k), self.repeat_kv(v),
            num_heads=self.n_heads, head_dim=self.head_dim, mask_kind="causal",
        )  # fmt: skip
        out = self.b.matmul(self.merge_heads(a), self.param(f"{prefix}.wo", [self.dim, self.dim]))
        return self.b.add(x, out)

    def ffn_block(self, x, prefix: str) -> SSAValue:
        h = self.rms_norm(x, f"{prefix}.ffn_norm")
        gate = self.b.matmul(h, self.param(f"{prefix}.w_gate", [self.dim, self.ffn]))
        up = self.b.matmul(h, self.param(f"{prefix}.w_up", [self.dim, self.ffn]))
        swiglu = self.b.mul(self.b.silu(gate), up)
        down = self.b.matmul(swiglu, self.param(f"{prefix}.w_down", [self.ffn, self.dim]))
        return self.b.add(x, down)

    def layer(self, x, cos, sin, index: int) -> SSAValue:
        prefix = f"layers.{index}"
        return self.ffn_block(self.attention_block(x, cos, sin, prefix), prefix)


def build_llama(
    n_layers: int,
    *,
    batch: int = 1,
    seq: int = 16,
    dim: int = 64,
    n_heads: int = 4,
    n_kv_heads: int = 2,
    ffn: int = 128,
    vocab: int | None = None,
    dtype: str = "f32",
) -> ModuleOp:
    """A module with one function `@llama`: `n_layers` decoder layers.

    Arguments, in order: inputs `x` [batch, seq, dim], `cos` and `sin`
    [seq, head_dim/2]; then each layer's parameters `layers.<i>.{attn_norm.gamma,
    attn_norm.beta, wq, wk, wv, wo, ffn_norm.gamma, ffn_norm.beta, w_gate, w_up,
    w_down}` in creation order. The output is the final hidden state, or, when
    `vocab` is given, the logits [batch, seq, vocab] after a final `norm` and
    the `lm_head` projection.
    """
    b = GraphBuilder("llama")
    g = _LlamaBuilder(
        b, batch=batch, seq=seq, dim=dim, n_heads=n_heads, n_kv_heads=n_kv_heads, ffn=ffn, dtype=dtype
    )
    x = b.input("x", [batch, seq, dim], dtype)
    cos = b.input("cos", [seq, g.head_dim // 2], dtype)
    sin = b.input("sin", [seq, g.head_dim // 2], dtype)
    for i in range(n_layers):
        x = g.layer(x, cos, sin, i)
    if vocab is not None:
        x = b.matmul(g.rms_norm(x, "norm"), g.param("lm_head", [dim, vocab]))
    b.output(x)
    return b.module()


DEFAULT_DIMS = {
    name: p.default
    for name, p in inspect.signature(build_llama).parameters.items()
    if isinstance(p.default, int)
}
"""The integer dimensions of `build_llama` with their defaults (the command line's options)."""

EXAMPLE_CONFIG = {"batch": 1, "seq": 8, "dim": 32, "n_heads": 4, "n_kv_heads": 2, "ffn": 64}
"""The dimensions of the shipped `examples/llama_block.mlir` (one layer)."""


def generated_text(module: ModuleOp, summary: str, generator: str, n_layers: int, config: dict) -> str:
    """`module` as .mlir text, headed by `summary` and the command (`python -m generator`) that makes it."""
    flags = " ".join(f"--{key.replace('_', '-')} {value}" for key, value in config.items())
    header = f"// {summary}\n// Generated by: python -m {generator} --layers {n_layers} {flags}\n"
    return header + str(module) + "\n"


def llama_text(n_layers: int, **config) -> str:
    """`build_llama(n_layers, **config)` as .mlir text, headed by the command that makes it."""
    summary = f"A {n_layers}-layer LLaMA-style decoder (RMSNorm, GQA attention with RoPE, SwiGLU FFN)."
    return generated_text(
        build_llama(n_layers, **config), summary, "rlx_xdsl.testing.llama", n_layers, config
    )


def generator_parser(description: str) -> argparse.ArgumentParser:
    """The command line of a graph generator: `--layers`, one option per dimension, `-o`."""
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--layers", type=int, default=1)
    for key, default in DEFAULT_DIMS.items():
        parser.add_argument(f"--{key.replace('_', '-')}", dest=key, type=int, default=default)
    parser.add_argument("-o", "--output", help="write here instead of stdout")
    return parser


def write_text(text: str, output: str | None) -> None:
    """Print `text`, or write it to the file `output`."""
    if output is None:
        print(text, end="")
    else:
        with open(output, "w") as f:
            f.write(text)


def main(argv=None) -> None:
    """Print (or write with -o) the .mlir text of a LLaMA graph."""
    parser = generator_parser("Emit an N-layer LLaMA-style MIR graph as .mlir text.")
    parser.add_argument("--vocab", type=int, default=None)
    parser.add_argument("--dtype", default="f32")
    args = vars(parser.parse_args(argv))
    n_layers, output = args.pop("layers"), args.pop("output")
    # Only non-default extras go into the generated file's command line.
    args = {k: v for k, v in args.items() if k in DEFAULT_DIMS or v not in (None, "f32")}
    write_text(llama_text(n_layers, **args), output)


if __name__ == "__main__":
    main()
