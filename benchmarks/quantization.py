"""Weight-only quantisation of the LLaMA graph: parameter bytes and output error per scheme.

For the N-layer LLaMA graph (`rlx_xdsl.testing.llama.build_llama`), every scheme of
`rlx-quantize-weights`: the bytes of all parameters after quantisation against f32,
and the error of the output against the f32 graph (interpreter, fixed random inputs
and weights). Prints a Markdown table (see README.md).

    python benchmarks/quantization.py            # 2 layers
    python benchmarks/quantization.py --layers 4
"""

from __future__ import annotations

import argparse

import numpy as np
from xdsl.context import Context

from rlx_xdsl.formats.quantpack import pack
from rlx_xdsl.ir.graph import argument_names, random_inputs
from rlx_xdsl.run import run_function
from rlx_xdsl.testing.llama import build_llama, rope_tables
from rlx_xdsl.transforms.quant.quantize_weights import QuantizeWeightsPass

CONFIG = {"batch": 1, "seq": 16, "dim": 256, "n_heads": 4, "n_kv_heads": 2, "ffn": 512}
"""dim and ffn multiples of 256: the GGUF K-quants' super-block runs along K."""
SCHEMES = [("int8_block", 32), ("int8_block_asym", 32), ("int4_block", 32), ("fp8_e4m3", None),
           ("fp8_e5m2", None), ("nvfp4_block", None), ("gguf_q8_0", None), ("gguf_q4_0", None),
           ("gguf_q8_k", None), ("gguf_q6_k", None), ("gguf_q5_k", None), ("gguf_q4_k", None),
           ("gguf_q3_k", None), ("gguf_q2_k", None)]  # fmt: skip


def workload(layers: int):
    module = build_llama(layers, **CONFIG)
    function = module.ops.first
    inputs = random_inputs(function, seed=7)
    inputs[1], inputs[2] = rope_tables(CONFIG["seq"], CONFIG["dim"] // CONFIG["n_heads"])
    inputs = [x if i < 3 else (0.2 * x).astype(x.dtype) for i, x in enumerate(inputs)]
    return module, argument_names(function), inputs


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--layers", type=int, default=2)
    args = parser.parse_args(argv)
    module, names, inputs = workload(args.layers)
    (reference,) = run_function(module, "llama", inputs)
    f32_bytes = sum(x.nbytes for x in inputs[3:])
    print(f"LLaMA, {args.layers} layers, {CONFIG}; parameters: {f32_bytes} bytes in f32\n")
    print("| scheme | block | parameter bytes | vs f32 | max abs error | relative RMS error |")
    print("|---|---|---|---|---|---|")
    for scheme, block in SCHEMES:
        quantised, _, _ = workload(args.layers)
        QuantizeWeightsPass(scheme=scheme, block_size=block).apply(Context(), quantised)
        feeds = inputs[:3]
        for name, x in zip(names[3:], inputs[3:]):
            feeds += pack(x, scheme, block).values() if x.ndim == 2 else [x]
        (out,) = run_function(quantised, "llama", feeds)
        size = sum(x.nbytes for x in feeds[3:])
        rms = np.sqrt(np.mean((out - reference) ** 2) / np.mean(reference**2))
        print(f"| `{scheme}` | {block or '-'} | {size} | {size / f32_bytes:.3f} | "
              f"{np.abs(out - reference).max():.2e} | {rms:.2e} |")  # fmt: skip


if __name__ == "__main__":
    main()
