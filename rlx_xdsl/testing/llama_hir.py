"""The N-layer LLaMA decoder of `rlx_xdsl.testing.llama`, written in HIR: one block op per layer.

`build_llama_hir(n)` takes the same arguments, in the same order and with the
same names, as `build_llama(n)`, and `rlx-lower-hir` (either policy) turns it
into exactly the MIR graph `build_llama(n)` builds, op for op: the tests compare
the two, and the compile-time benchmark lowers it. Each layer is a
`hir.llama_decoder_block` labelled `layers.<i>`; with a vocabulary, the final
norm and LM head are `hir.rms_norm` and a bias-free `hir.linear`.

    python -m rlx_xdsl.testing.llama_hir --layers 2 -o examples/llama_hir.mlir
"""

from __future__ import annotations

from xdsl.dialects.builtin import ModuleOp

from rlx_xdsl.building.builder import GraphBuilder
from rlx_xdsl.testing.llama import (
    DEFAULT_DIMS,
    RMS_EPS,
    generated_text,
    generator_parser,
    write_text,
)


def build_llama_hir(
    n_layers: int,
    *,
    batch: int = DEFAULT_DIMS["batch"],
    seq: int = DEFAULT_DIMS["seq"],
    dim: int = DEFAULT_DIMS["dim"],
    n_heads: int = DEFAULT_DIMS["n_heads"],
    n_kv_heads: int = DEFAULT_DIMS["n_kv_heads"],
    ffn: int = DEFAULT_DIMS["ffn"],
    vocab: int | None = None,
    dtype: str = "f32",
) -> ModuleOp:
    """A module with one function `@llama` of `n_layers` decoder blocks (see `build_llama`)."""
    if dim % n_heads or n_heads % n_kv_heads:
        raise ValueError(f"dim {dim}, n_heads {n_heads} and n_kv_heads {n_kv_heads} do not divide")
    head_dim = dim // n_heads
    kv_dim = n_kv_heads * head_dim
    b = GraphBuilder("llama")
    x = b.input("x", [batch, seq, dim], dtype)
    cos = b.input("cos", [seq, head_dim // 2], dtype)
    sin = b.input("sin", [seq, head_dim // 2], dtype)
    for i in range(n_layers):
        shapes = {
            "attn_norm.gamma": [dim], "attn_norm.beta": [dim],
            "wq": [dim, dim], "wk": [dim, kv_dim], "wv": [dim, kv_dim], "wo": [dim, dim],
            "ffn_norm.gamma": [dim], "ffn_norm.beta": [dim],
            "w_gate": [dim, ffn], "w_up": [dim, ffn], "w_down": [ffn, dim],
        }  # fmt: skip
        weights = [b.param(f"layers.{i}.{name}", shape, dtype) for name, shape in shapes.items()]
        x = b.hir.llama_decoder_block(
            x, *weights, cos, sin,
            num_heads=n_heads, head_dim=head_dim, num_kv_heads=n_kv_heads, eps=RMS_EPS,
            mask_kind="causal", label=f"layers.{i}",
        )  # fmt: skip
    if vocab is not None:
        gamma, beta = b.param("norm.gamma", [dim], dtype), b.param("norm.beta", [dim], dtype)
        normed = b.hir.rms_norm(x, gamma, beta, eps=RMS_EPS, label="norm")
        x = b.hir.linear(normed, b.param("lm_head", [dim, vocab], dtype), label="lm_head")
    b.output(x)
    return b.module()


EXAMPLE_CONFIG = {"batch": 1, "seq": 8, "dim": 32, "n_heads": 4, "n_kv_heads": 2, "ffn": 64}
"""The dimensions of the shipped `examples/llama_hir.mlir` (two layers)."""


def llama_hir_text(n_layers: int, **config) -> str:
    """`build_llama_hir(n_layers, **config)` as .mlir text, headed by the command that makes it."""
    summary = f"A {n_layers}-layer LLaMA-style decoder in HIR: one hir.llama_decoder_block per layer."
    return generated_text(
        build_llama_hir(n_layers, **config), summary, "rlx_xdsl.testing.llama_hir", n_layers, config
    )


def main(argv=None) -> None:
    """Print (or write with -o) the .mlir text of an HIR LLaMA graph."""
    args = vars(generator_parser("Emit an N-layer LLaMA-style HIR graph as .mlir text.").parse_args(argv))
    n_layers, output = args.pop("layers"), args.pop("output")
    write_text(llama_hir_text(n_layers, **args), output)


if __name__ == "__main__":
    main()
