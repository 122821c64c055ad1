"""Hugging Face `transformers` models from tiny random configs (nothing downloaded),
each wrapped to take one tensor and return one tensor, as `torch.export` wants.

Attention is `attn_implementation="sdpa"`: the mask `transformers` builds (a boolean
`[B, 1, S, S]`, causal or sliding-window, from `arange`/`cumsum`/indexing) and the
`scaled_dot_product_attention` call both import as they come out of `torch.export`.
"""

from __future__ import annotations

import torch
import transformers as T
from torch import nn

VOCAB, SEQ = 64, 8
_DECODER = dict(
    hidden_size=32,
    num_hidden_layers=1,
    num_attention_heads=4,
    num_key_value_heads=2,
    intermediate_size=64,
    vocab_size=VOCAB,
    max_position_embeddings=32,
    attn_implementation="sdpa",
)


class Tensors(nn.Module):
    """`model(x)`'s logits (or last hidden state) alone, without a KV cache; a text model
    also takes a padding `attention_mask` (1 attends, 0 is padding)."""

    def __init__(self, model: nn.Module, **call_kwargs):
        super().__init__()
        self.m = model
        self.call_kwargs = call_kwargs

    def forward(self, x, attention_mask=None):
        masks = {} if attention_mask is None else {"attention_mask": attention_mask}
        out = self.m(x, **self.call_kwargs, **masks)
        return out.logits if getattr(out, "logits", None) is not None else out.last_hidden_state


def _ids() -> torch.Tensor:
    return torch.randint(0, VOCAB, (2, SEQ))


def llama():
    return Tensors(T.LlamaForCausalLM(T.LlamaConfig(**_DECODER)), use_cache=False), _ids()


def mistral():
    """Sliding window 4 over 8 tokens: the mask is not plain causal."""
    return Tensors(T.MistralForCausalLM(T.MistralConfig(**_DECODER, sliding_window=4)), use_cache=False), _ids()


def qwen2():
    return Tensors(T.Qwen2ForCausalLM(T.Qwen2Config(**_DECODER)), use_cache=False), _ids()


def gpt2():
    config = T.GPT2Config(
        n_embd=32, n_layer=1, n_head=4, vocab_size=VOCAB, n_positions=32, bos_token_id=0, eos_token_id=0,
        attn_implementation="sdpa",
    )  # fmt: skip
    return Tensors(T.GPT2LMHeadModel(config), use_cache=False), _ids()


def bert():
    config = T.BertConfig(
        hidden_size=32, num_hidden_layers=1, num_attention_heads=4, intermediate_size=64, vocab_size=VOCAB,
        max_position_embeddings=32, attn_implementation="sdpa",
    )  # fmt: skip
    return Tensors(T.BertModel(config, add_pooling_layer=False)), _ids()


def vit():
    config = T.ViTConfig(
        hidden_size=32, num_hidden_layers=1, num_attention_heads=4, intermediate_size=64, image_size=8,
        patch_size=4, num_channels=3, attn_implementation="sdpa",
    )  # fmt: skip
    return Tensors(T.ViTModel(config, add_pooling_layer=False)), torch.randn(2, 3, 8, 8)


def whisper_encoder():
    """The encoder alone: two 1-D convolutions over 8 mel bins, then one layer."""
    config = T.WhisperConfig(
        d_model=32, encoder_layers=1, decoder_layers=1, encoder_attention_heads=4, decoder_attention_heads=4,
        encoder_ffn_dim=64, decoder_ffn_dim=64, num_mel_bins=8, max_source_positions=4, vocab_size=VOCAB,
        pad_token_id=1, bos_token_id=1, eos_token_id=2, decoder_start_token_id=1, attn_implementation="sdpa",
    )  # fmt: skip
    return Tensors(T.WhisperModel(config).encoder), torch.randn(2, 8, 8)


MODELS = {f.__name__: f for f in (llama, mistral, qwen2, gpt2, bert, vit, whisper_encoder)}
