"""Mixture of experts: an N-layer MoE decoder against the dense decoder of the same active width.

    python benchmarks/moe.py               # 2 layers, 8 experts, top-2, dim 64, ffn 128, seq 16
    python benchmarks/moe.py --layers 4 --repeat 10
    python benchmarks/moe.py --seq 256 --dim 256 --ffn 512   # larger token counts and experts

Each layer is `build_llama`'s attention block (RMSNorm, Q/K/V, RoPE, GQA causal
attention, output projection, residual) followed by an RMSNorm and `hir.moe_swiglu`
(router softmax, top-k experts per token, SwiGLU experts through `mir.grouped_matmul`,
outputs combined by the renormalised router weights) with a residual add: a Mixtral
layer. The dense comparison is `build_llama` with `ffn = top_k * ffn`, the FFN width
each token actually runs through in the MoE layer.

Both graphs run on the numpy interpreter (the MoE block directly as HIR) and on IREE
CPU (`IreeModule`, which lowers HIR with the `fusable` policy, then to linalg).
Times are the median of `--repeat` calls after a warm-up (`execution.py`'s `timed`);
the error column compares IREE with the interpreter. Parameter bytes count every
argument but `x`, `cos` and `sin`. Nothing asserts on timings.
"""

from __future__ import annotations

import argparse
import platform
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).parent))
from execution import log, relative_error, timed  # noqa: E402

from rlx_xdsl.backends import iree as iree_backend  # noqa: E402
from rlx_xdsl.building.builder import GraphBuilder  # noqa: E402
from rlx_xdsl.ir.graph import random_inputs  # noqa: E402
from rlx_xdsl.run import run_function  # noqa: E402
from rlx_xdsl.testing.llama import _LlamaBuilder, build_llama, rope_tables  # noqa: E402

CONFIG = {"batch": 1, "seq": 16, "dim": 64, "n_heads": 4, "n_kv_heads": 2, "ffn": 128}
EXPERTS, TOP_K = 8, 2


class _MoeBuilder(_LlamaBuilder):
    """`build_llama`'s layers with the SwiGLU FFN replaced by `hir.moe_swiglu`."""

    def ffn_block(self, x, prefix: str):
        h = self.rms_norm(x, f"{prefix}.ffn_norm")
        router = self.param(f"{prefix}.router", [self.dim, EXPERTS])
        gate = self.param(f"{prefix}.w_gate", [EXPERTS, self.dim, self.ffn])
        up = self.param(f"{prefix}.w_up", [EXPERTS, self.dim, self.ffn])
        down = self.param(f"{prefix}.w_down", [EXPERTS, self.ffn, self.dim])
        moe = self.b.hir.moe_swiglu(h, router, gate, up, down, num_experts=EXPERTS, top_k=TOP_K, normalize_top_k=True)
        return self.b.add(x, moe)


def build_moe(layers: int, config: dict):
    b = GraphBuilder("llama")
    g = _MoeBuilder(b, dtype="f32", **config)
    x = b.input("x", [config["batch"], config["seq"], config["dim"]], "f32")
    cos = b.input("cos", [config["seq"], g.head_dim // 2], "f32")
    sin = b.input("sin", [config["seq"], g.head_dim // 2], "f32")
    for i in range(layers):
        x = g.layer(x, cos, sin, i)
    b.output(x)
    return b.module()


def inputs_of(module, config: dict) -> list[np.ndarray]:
    """Random inputs; every weight matrix scaled by 1/sqrt(its fan-in) (the second-to-last dim)."""
    inputs = random_inputs(module.ops.first, seed=0)
    inputs[1], inputs[2] = rope_tables(config["seq"], config["dim"] // config["n_heads"])
    return inputs[:3] + [(x / np.sqrt(x.shape[-2])).astype(np.float32) if x.ndim >= 2 else x for x in inputs[3:]]


def measure(name: str, module, config: dict, repeat: int) -> tuple:
    inputs = inputs_of(module, config)
    param_bytes = sum(x.nbytes for x in inputs[3:])
    log(f"{name}: interpreter ...")
    interp_s, (reference,) = timed(lambda: run_function(module, "llama", inputs), repeat)
    log(f"{name}: IREE lowering and compiling ...")
    start = time.perf_counter()
    compiled = iree_backend.IreeModule(module)
    compile_s = time.perf_counter() - start
    iree_s, (got,) = timed(lambda: compiled.run("llama", inputs), repeat)
    return name, param_bytes, interp_s, iree_s, relative_error(got, reference.astype(np.float64)), compile_s


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--layers", type=int, default=2)
    parser.add_argument("--repeat", type=int, default=10)
    for key in ("seq", "dim", "ffn"):
        parser.add_argument(f"--{key}", type=int, default=CONFIG[key])
    args = parser.parse_args(argv)
    config = {**CONFIG, "seq": args.seq, "dim": args.dim, "ffn": args.ffn}
    dense_config = {**config, "ffn": TOP_K * config["ffn"]}
    rows = [
        measure(f"MoE ({EXPERTS} experts, top-{TOP_K}, ffn {config['ffn']})", build_moe(args.layers, config),
                config, args.repeat),
        measure(f"dense SwiGLU (ffn {dense_config['ffn']})", build_llama(args.layers, **dense_config),
                dense_config, args.repeat),
    ]  # fmt: skip
    print(f"# {args.layers} layers, {config}, {EXPERTS} experts, top-{TOP_K}; median of {args.repeat} calls;"
          f" Python {platform.python_version()}, {platform.machine()}\n")  # fmt: skip
    print("| decoder | parameter bytes | vs dense | interpreter (ms) | IREE CPU (ms) | IREE rel. error | compile (s) |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    dense_bytes = rows[1][1]
    for name, size, interp_s, iree_s, error, compile_s in rows:
        print(f"| {name} | {size} | {size / dense_bytes:.2f}x | {interp_s * 1e3:.2f} | {iree_s * 1e3:.2f} | "
              f"{error:.1e} | {compile_s:.2f} |")  # fmt: skip


if __name__ == "__main__":
    main()
