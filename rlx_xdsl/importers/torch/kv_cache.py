"""Generation with a static KV cache: a Hugging Face LLaMA-family causal LM as the two
steps ExecuTorch exports (prefill and decode), imported and run greedily.

`StaticCacheLM(model, max_len)` is the model with its cache as buffers (`key_cache_{i}`,
`value_cache_{i}`, `[B, Hkv, max_len, D]`) that each call updates in place with
`index_copy_` at `cache_position`, as `transformers`' `StaticCache` does. `torch.export`
lists them in `buffers_to_mutate`, so the import (`import_program`) takes them as
arguments and returns their new values after the logits (`program_state`):

    @forward(<weights: rlx.param>, key_cache_0, value_cache_0, ..., input_ids [B, T] i64,
             cache_position [T] i64) -> (logits [B, T, V], key_cache_0, value_cache_0, ...)

`generate` exports it twice (`export_steps`; prefill: the prompt's `T`; decode: `T = 1`),
imports both and (`greedy`) picks each next token as `model.generate(..., do_sample=False)` does: the first
largest logit of the last position.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import torch
from torch.export.graph_signature import InputKind

from rlx_xdsl.importers.torch import export, import_program, program_state, program_weights


class StaticCacheLM(torch.nn.Module):
    """`model` (a `LlamaForCausalLM` or a causal LM of the same layout) with a static KV
    cache of `max_len` positions as mutated buffers: `forward(input_ids [B, T],
    cache_position [T])` writes the keys and values of positions `cache_position` and
    returns the logits `[B, T, V]`, attending to the cached positions `<=` each one."""

    def __init__(self, model: Any, max_len: int, batch: int = 1):
        super().__init__()
        self.model, self.max_len = model, max_len
        config = model.config
        head_dim = getattr(config, "head_dim", None) or config.hidden_size // config.num_attention_heads
        shape = (batch, config.num_key_value_heads, max_len, head_dim)
        for i in range(config.num_hidden_layers):
            self.register_buffer(f"key_cache_{i}", torch.zeros(shape, dtype=model.dtype), persistent=False)
            self.register_buffer(f"value_cache_{i}", torch.zeros(shape, dtype=model.dtype), persistent=False)

    def forward(self, input_ids: torch.Tensor, cache_position: torch.Tensor) -> torch.Tensor:
        from transformers.models.llama.modeling_llama import apply_rotary_pos_emb

        inner = self.model.model
        batch, length = input_ids.shape
        h = inner.embed_tokens(input_ids)
        cos, sin = inner.rotary_emb(h, cache_position.unsqueeze(0))
        mask = torch.arange(self.max_len) <= cache_position.unsqueeze(1)  # [T, max_len]
        for i, layer in enumerate(inner.layers):
            attn = layer.self_attn
            x = layer.input_layernorm(h)
            heads = (batch, length, -1, attn.head_dim)
            q = attn.q_proj(x).view(heads).transpose(1, 2)
            k = attn.k_proj(x).view(heads).transpose(1, 2)
            v = attn.v_proj(x).view(heads).transpose(1, 2)
            q, k = apply_rotary_pos_emb(q, k, cos, sin)
            keys, values = getattr(self, f"key_cache_{i}"), getattr(self, f"value_cache_{i}")
            keys.index_copy_(2, cache_position, k)
            values.index_copy_(2, cache_position, v)
            a = torch.nn.functional.scaled_dot_product_attention(
                q, keys, values, attn_mask=mask, scale=attn.scaling, enable_gqa=True
            )
            h = h + attn.o_proj(a.transpose(1, 2).reshape(batch, length, -1))
            h = h + layer.mlp(layer.post_attention_layernorm(h))
        return self.model.lm_head(inner.norm(h))


class Step:
    """One imported step (`export` + `import_program` of `StaticCacheLM` at the example
    inputs' shapes); `runner(backend)` is it compiled once for `backend` (interpreter, xla
    or iree): `run(input_ids, cache_position, state) -> (logits, new state)`, `state` the
    caches by name (`program_state`)."""

    def __init__(self, lm: StaticCacheLM, input_ids: torch.Tensor, cache_position: torch.Tensor):
        program = export(lm, (input_ids, cache_position))
        self.module = import_program(program)
        self.state = program_state(program)
        weights = program_weights(program)
        self.slots: list[tuple[str, Any]] = []  # each argument: ("weight"/"state"/"input", its key)
        for spec in program.graph_signature.input_specs:
            if spec.kind == InputKind.USER_INPUT:
                self.slots.append(("input", spec.arg.name))
            elif spec.target in self.state:
                self.slots.append(("state", spec.target))
            elif spec.target in weights:
                self.slots.append(("weight", weights[spec.target]))

    def runner(self, backend: str) -> Callable[[np.ndarray, np.ndarray, dict], tuple[np.ndarray, dict]]:
        compiled = _compiled(self.module, backend)

        def run(input_ids: np.ndarray, cache_position: np.ndarray, state: dict) -> tuple[np.ndarray, dict]:
            inputs = {"input_ids": input_ids, "cache_position": cache_position}
            args = [key if kind == "weight" else (state if kind == "state" else inputs)[key] for kind, key in self.slots]
            logits, *caches = compiled(args)
            return logits, dict(zip(state, caches, strict=True))

        return run


def _compiled(module: Any, backend: str) -> Callable[[Sequence[np.ndarray]], list[np.ndarray]]:
    """`module`'s `@forward` compiled once for `backend`: numpy arguments in, results out."""
    if backend == "xla":
        from rlx_xdsl.backends.xla.module import XlaModule

        compiled = XlaModule(module, "cpu", "forward")
        return lambda args: [np.asarray(r) for r in compiled(*args)]
    if backend == "iree":
        from rlx_xdsl.backends.iree import IreeModule

        compiled = IreeModule(module, "cpu")
        return lambda args: compiled.run("forward", args)
    if backend != "interpreter":
        raise ValueError(f"unknown backend '{backend}' (known: interpreter, iree, xla)")
    from rlx_xdsl.run import run_function

    return lambda args: run_function(module, "forward", args)


def export_steps(model: Any, prompt: torch.Tensor, new_tokens: int) -> tuple[Step, Step]:
    """The prefill step (`prompt`'s length) and the decode step (one token) of `model`
    with a cache of `prompt`'s length + `new_tokens` positions."""
    length = prompt.shape[1]
    lm = StaticCacheLM(model, max_len=length + new_tokens, batch=prompt.shape[0])
    return Step(lm, prompt, torch.arange(length)), Step(lm, prompt[:, :1], torch.tensor([length]))


def greedy(steps: tuple[Step, Step], prompt: torch.Tensor, new_tokens: int, backend: str = "interpreter") -> list[int]:
    """`new_tokens` token ids after `prompt` (`[1, P]`), each the first largest logit of
    the last position, from `export_steps`' steps run on `backend`."""
    prefill, decode = (step.runner(backend) for step in steps)
    length = prompt.shape[1]
    logits, state = prefill(prompt.numpy(), np.arange(length), steps[0].state)
    tokens = [int(np.argmax(logits[0, -1]))]
    for position in range(length, length + new_tokens - 1):
        logits, state = decode(np.array([[tokens[-1]]]), np.array([position]), state)
        tokens.append(int(np.argmax(logits[0, -1])))
    return tokens


def generate(model: Any, prompt: torch.Tensor, new_tokens: int, backend: str = "interpreter") -> list[int]:
    """Greedy generation of `new_tokens` after `prompt` (`[1, P]` token ids) through the
    imported prefill and decode steps on `backend`: the new token ids."""
    return greedy(export_steps(model, prompt, new_tokens), prompt, new_tokens, backend)
