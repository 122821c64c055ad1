"""Greedy generation from a small random-weight LLaMA through imported prefill and decode steps.

    python examples/generate.py [--backend interpreter|xla|iree] [--tokens 16]

The model (`transformers`' `LlamaForCausalLM`, a tiny random config, nothing downloaded)
with a static KV cache as mutated buffers (`rlx_xdsl.importers.torch.kv_cache`, as
ExecuTorch exports LLMs) is exported twice, prefill (the prompt) and decode (one token),
and both imported: each step takes the caches as arguments and returns their new values
after the logits. The tokens are compared with `model.generate(..., do_sample=False)`'s;
the exit status is 1 when they differ.
"""

from __future__ import annotations

import argparse
import sys

import rlx_xdsl.importers.torch  # noqa: F401  (before `transformers`: see importers/torch/vision.py)


def tiny_llama(seed: int = 0):
    """A random-weight 2-layer LLaMA with grouped-query attention (4 heads, 2 KV heads)."""
    import torch
    from transformers import LlamaConfig, LlamaForCausalLM

    torch.manual_seed(seed)
    config = LlamaConfig(
        vocab_size=96, hidden_size=32, intermediate_size=64, num_hidden_layers=2,
        num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=64,
        eos_token_id=None,  # no early stop: all the tokens asked for
    )  # fmt: skip
    return LlamaForCausalLM(config).eval().requires_grad_(False)


def main(argv=None) -> int:
    import torch

    from rlx_xdsl.importers.torch.kv_cache import generate

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--backend", choices=["interpreter", "xla", "iree"], default="interpreter")
    parser.add_argument("--tokens", type=int, default=16)
    args = parser.parse_args(argv)

    model = tiny_llama()
    prompt = torch.tensor([[1, 17, 42, 5, 63]])
    tokens = generate(model, prompt, args.tokens, args.backend)
    expected = model.generate(prompt, max_new_tokens=args.tokens, do_sample=False)[0, prompt.shape[1] :].tolist()
    print(f"tokens ({args.backend}): {tokens}")
    print(f"transformers generate: {expected}")
    print(f"identical to transformers generate: {tokens == expected}")
    return 0 if tokens == expected else 1


if __name__ == "__main__":
    sys.exit(main())
