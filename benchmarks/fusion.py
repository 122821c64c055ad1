"""Fusion benchmark: kernels and bytes moved before and after each target's fusion pipeline.

    python benchmarks/fusion.py                   # kernel table (fast)
    python benchmarks/fusion.py --compile-time    # also: CPU pipeline vs stock xdsl-opt, 32 layers

Workloads:

* a SwiGLU + residual + RMSNorm block: `out = rms_norm(x + W2(silu(W1 x + b1) * (W3 x)))`,
  x 8x64, hidden 128;
* the real residual pattern of a pre-norm layer, whose sum has two users:
  `h = x + r; out = h + W2(silu(W1 n) * (W3 n))` with `n = rms_norm(h)`, x and r 8x64,
  hidden 128;
* one LLaMA decoder layer (`build_llama(1)` with the benchmark dims);
* a U-Net decoder block, upsample -> conv -> norm -> activation with an upsampled 1x1
  shortcut (`rlx_xdsl.testing.vision_graphs.unet_decoder_block`: a transform region and a
  region prologue where the target keeps them);
* the pre-processing of a batch of 4 image slices (`batch_preprocess`: two
  `mir.batch_elementwise_region`s where the target keeps them), and of 4 half-resolution
  slices upsampled first (`batch_preprocess_upsampled`: one batch region whose prologue
  reads each slice upsampled).

For each, the graph before fusion and after `rlx-fusion-pipeline{target=T}`:
*kernels* (ops of the function body other than constants, views, and ops
whose operands are only parameters and constants; a region op counts once)
and *bytes moved* (the sum of operand and result bytes over the kernels),
from `rlx_xdsl.transforms.fusion.metrics`. Every fused graph is run through
the interpreter and compared with the unfused one (max abs difference).

`--compile-time` times `rlx-fusion-pipeline{target=cpu}` in-process on the
32-layer LLaMA graph (best of --repeat, on freshly parsed modules) and compares
it with stock `xdsl-opt FILE -o /dev/null` (parse + verify + print, start-up
included; the start-up alone is measured on an empty module).

Nothing here asserts on timings; the numbers are for reading (see README.md).
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

import numpy as np
from xdsl.dialects.builtin import ModuleOp

from rlx_xdsl.building.builder import GraphBuilder
from rlx_xdsl.context import make_context, parse_module
from rlx_xdsl.ir.graph import find_function, random_inputs
from rlx_xdsl.run import run_function
from rlx_xdsl.testing.llama import DEFAULT_DIMS, build_llama, rope_tables
from rlx_xdsl.testing.vision_graphs import (
    batch_preprocess,
    batch_preprocess_upsampled,
    unet_decoder_block,
)
from rlx_xdsl.transforms.fusion.metrics import kernel_stats
from rlx_xdsl.transforms.fusion.pipeline import FusionPipelinePass

sys.path.insert(0, str(Path(__file__).parent))
from compile_time import best_time, print_module, time_stock, xdsl_opt

TARGETS = ("cpu", "metal", "cuda", "tpu", "best")

ANCHORS = """\
# Other compilers on the same SwiGLU + residual + RMSNorm block (recorded when this benchmark was set up, not re-run here):
#   PyTorch Inductor (CPU)   3 library GEMMs + 2 fused kernels = 5 kernels
#   PyTorch Inductor (CUDA)  3 cuBLAS mm + 2 Triton kernels    = 5 launches
#   TVM Relax FuseOps        4 PrimFuncs
#   IREE 3.13                4 dispatches (3 matmuls + 1 reduction)
#   MLIR linalg elementwise  12 -> 4 linalg.generic (matmuls, transposes, fills stay named ops)
#   XLA CPU                  9 fusions; 146,372 bytes accessed (cost_analysis)"""


def swiglu_block() -> ModuleOp:
    """The SwiGLU + residual + RMSNorm block: x 8x64, hidden 128."""
    b = GraphBuilder("block")
    x = b.input("x", [8, 64])
    w1, b1, w3 = b.param("w1", [64, 128]), b.param("b1", [128]), b.param("w3", [64, 128])
    w2, g, beta = b.param("w2", [128, 64]), b.param("g", [64]), b.param("beta", [64])
    h = b.mul(b.silu(b.add(b.matmul(x, w1), b1)), b.matmul(x, w3))
    b.output(b.rms_norm(b.add(x, b.matmul(h, w2)), g, beta, eps=1e-6))
    return b.module()


def residual_ffn_block() -> ModuleOp:
    """A pre-norm FFN block: the residual sum feeds the norm and the output add."""
    b = GraphBuilder("residual_block")
    x, r = b.input("x", [8, 64]), b.input("r", [8, 64])
    w1, w3, w2 = b.param("w1", [64, 128]), b.param("w3", [64, 128]), b.param("w2", [128, 64])
    g, beta = b.param("g", [64]), b.param("beta", [64])
    h = b.add(x, r)
    n = b.rms_norm(h, g, beta, eps=1e-6)
    ffn = b.matmul(b.mul(b.silu(b.matmul(n, w1)), b.matmul(n, w3)), w2)
    b.output(b.add(h, ffn))
    return b.module()


def llama_layer() -> ModuleOp:
    return build_llama(1, **DEFAULT_DIMS)


def inputs_of(module: ModuleOp) -> list[np.ndarray]:
    """Random inputs; small weights and real RoPE tables for the LLaMA layer."""
    inputs = random_inputs(find_function(module), seed=3)
    if find_function(module).sym_name.data == "llama":
        seq, head_dim = DEFAULT_DIMS["seq"], DEFAULT_DIMS["dim"] // DEFAULT_DIMS["n_heads"]
        inputs[1], inputs[2] = rope_tables(seq, head_dim)
        inputs = [x if i < 3 else (0.2 * x).astype(x.dtype) for i, x in enumerate(inputs)]
    return inputs


def kernel_table(workloads) -> list[str]:
    header = f"{'workload':<26} {'graph':<14} {'kernels':>7} {'bytes moved':>12} {'vs unfused':>10}"
    lines = [f"{header} {'max |diff|':>10}"]
    for title, build in workloads:
        base = build()
        inputs = inputs_of(base)
        expected = run_function(base, None, inputs)
        before = kernel_stats(base)
        lines.append(f"{title:<26} {'unfused':<14} {before.kernels:>7} {before.bytes_moved:>12,} {'':>10} {'':>10}")
        for target in TARGETS:
            module = build()
            FusionPipelinePass(target=target).apply(make_context(), module)
            module.verify()
            got = run_function(module, None, inputs)
            diff = max(float(np.max(np.abs(a.astype(np.float64) - b))) for a, b in zip(got, expected))
            stats = kernel_stats(module)
            ratio = stats.bytes_moved / before.bytes_moved
            row = f"{'':<26} {'target=' + target:<14} {stats.kernels:>7} {stats.bytes_moved:>12,}"
            lines.append(f"{row} {ratio:>10.2f} {diff:>10.1e}")
    return lines


def compile_time(layers: int, repeat: int) -> list[str]:
    """The CPU pipeline in-process vs stock xdsl-opt parse + print, on the same file."""
    with tempfile.TemporaryDirectory(prefix="rlx-fusion-bench-") as tmp:
        path = Path(tmp) / f"llama_{layers}.mlir"
        path.write_text(print_module(build_llama(layers, **DEFAULT_DIMS)))
        text = path.read_text()
        ctx = make_context()
        pipeline = FusionPipelinePass(target="cpu")
        ours = best_time(lambda m: pipeline.apply(ctx, m), repeat, setup=lambda: parse_module(text, str(path)))
        parse = best_time(lambda: parse_module(text, str(path)), repeat)
        lines = [
            f"# rlx-fusion-pipeline{{target=cpu}} on build_llama({layers}) ({DEFAULT_DIMS}), best of {repeat}",
            f"pipeline (in-process, parsed module)   {ours:8.4f} s",
            f"our parse of the same file             {parse:8.4f} s",
        ]
        if xdsl_opt() is None:
            return [*lines, "stock xdsl-opt: not found"]
        empty = Path(tmp) / "empty.mlir"
        empty.write_text("builtin.module {}\n")
        startup = time_stock(str(empty), repeat)
        stock = time_stock(str(path), repeat)
        return [
            *lines,
            f"stock xdsl-opt FILE -o /dev/null        {stock:8.4f} s (start-up {startup:.4f} s)",
            f"pipeline / stock                        {ours / stock:8.2f}",
            f"pipeline / (stock - start-up)           {ours / (stock - startup):8.2f}",
        ]


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description="Kernels and bytes moved before/after fusion; optional compile time.")
    parser.add_argument(
        "--compile-time", action="store_true", help="also time the CPU pipeline on a large LLaMA graph"
    )
    parser.add_argument("--layers", type=int, default=32, help="LLaMA layers for --compile-time (default 32)")
    parser.add_argument("--repeat", type=int, default=5, help="runs per timing; the best is reported (default 5)")
    args = parser.parse_args(argv)
    lines = kernel_table(
        [
            ("SwiGLU+residual+RMSNorm", swiglu_block),
            ("residual (2 users)+FFN", residual_ffn_block),
            ("LLaMA decoder layer", llama_layer),
            ("U-Net decoder block", unet_decoder_block),
            ("4-slice batch preprocess", batch_preprocess),
            ("4 upsampled slices", batch_preprocess_upsampled),
        ]
    )
    lines += ["", ANCHORS]
    if args.compile_time:
        lines += ["", *compile_time(args.layers, args.repeat)]
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main())
