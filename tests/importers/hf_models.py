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


# Breadth: one cheap check each (`test_model_zoo.py`), text models with a dynamic batch and sequence.

_ENCODER = {
    "hidden_size": 32,
    "num_hidden_layers": 1,
    "num_attention_heads": 4,
    "intermediate_size": 64,
    "vocab_size": VOCAB,
    "max_position_embeddings": 32,
    "attn_implementation": "sdpa",
}
_NO_GQA = {k: v for k, v in _DECODER.items() if k != "num_key_value_heads"}


def mixtral():
    """Four experts, two per token, the default (sort-based, `grouped_mm`) expert routing."""
    config = T.MixtralConfig(**_DECODER, num_local_experts=4, num_experts_per_tok=2)
    return Tensors(T.MixtralForCausalLM(config), use_cache=False), _ids()


def qwen3():
    return Tensors(T.Qwen3ForCausalLM(T.Qwen3Config(**_DECODER, head_dim=8)), use_cache=False), _ids()


def phi3():
    return Tensors(T.Phi3ForCausalLM(T.Phi3Config(**_DECODER, pad_token_id=0, eos_token_id=0)), use_cache=False), _ids()


def gpt_neox():
    return Tensors(T.GPTNeoXForCausalLM(T.GPTNeoXConfig(**_NO_GQA)), use_cache=False), _ids()





def opt():
    config = T.OPTConfig(
        hidden_size=32, num_hidden_layers=1, num_attention_heads=4, ffn_dim=64, vocab_size=VOCAB,
        max_position_embeddings=32, word_embed_proj_dim=32, attn_implementation="sdpa",
    )  # fmt: skip
    return Tensors(T.OPTForCausalLM(config), use_cache=False), _ids()


def t5_encoder():
    """The encoder alone: a learned relative position bias added to the scores."""
    config = T.T5Config(d_model=32, d_kv=8, d_ff=64, num_layers=1, num_heads=4, vocab_size=VOCAB)
    return Tensors(T.T5EncoderModel(config)), _ids()


def distilbert():
    config = T.DistilBertConfig(
        dim=32, n_layers=1, n_heads=4, hidden_dim=64, vocab_size=VOCAB, max_position_embeddings=32,
        attn_implementation="sdpa",
    )  # fmt: skip
    return Tensors(T.DistilBertModel(config)), _ids()


def roberta():
    """Positions count from `pad_token_id + 1`, from a cumulative sum over the non-padding ids."""
    config = T.RobertaConfig(**_ENCODER | {"max_position_embeddings": 40}, pad_token_id=1)
    return Tensors(T.RobertaModel(config, add_pooling_layer=False)), _ids()


def albert():
    """Factorised embeddings (16 wide, projected to 32)."""
    return Tensors(T.AlbertModel(T.AlbertConfig(**_ENCODER, embedding_size=16), add_pooling_layer=False)), _ids()


def electra():
    return Tensors(T.ElectraModel(T.ElectraConfig(**_ENCODER, embedding_size=16))), _ids()


def clip_text():
    config = T.CLIPTextConfig(**_ENCODER, bos_token_id=0, eos_token_id=1, pad_token_id=1)
    return Tensors(T.CLIPTextModel(config)), _ids()


def _image() -> torch.Tensor:
    return torch.randn(2, 3, 8, 8)


def clip_vision():
    config = T.CLIPVisionConfig(
        hidden_size=32, intermediate_size=64, num_hidden_layers=1, num_attention_heads=4, image_size=8,
        patch_size=4, attn_implementation="sdpa",
    )  # fmt: skip
    return Tensors(T.CLIPVisionModel(config)), _image()


def deit():
    """A class and a distillation token before the patches."""
    config = T.DeiTConfig(
        hidden_size=32, num_hidden_layers=1, num_attention_heads=4, intermediate_size=64, image_size=8,
        patch_size=4, attn_implementation="sdpa",
    )  # fmt: skip
    return Tensors(T.DeiTModel(config, add_pooling_layer=False)), _image()


def swin():
    """Two stages of 4 x 4 windows (the second shifted) over a 16 x 16 image, patch merging between."""
    config = T.SwinConfig(
        image_size=16, patch_size=2, embed_dim=16, depths=[1, 1], num_heads=[2, 2], window_size=4,
        attn_implementation="sdpa",
    )  # fmt: skip
    return Tensors(T.SwinModel(config, add_pooling_layer=False)), torch.randn(2, 3, 16, 16)


def segformer():
    """Two stages of overlapping patch embeddings and reduced-sequence attention."""
    config = T.SegformerConfig(
        num_encoder_blocks=2, depths=[1, 1], sr_ratios=[2, 1], hidden_sizes=[8, 16], patch_sizes=[3, 3],
        strides=[2, 2], num_attention_heads=[1, 2], mlp_ratios=[2, 2], attn_implementation="sdpa",
    )  # fmt: skip
    return Tensors(T.SegformerModel(config)), torch.randn(2, 3, 16, 16)


def wav2vec2():
    """200 audio samples through a two-layer convolutional feature extractor, the
    weight-normed positional convolution and one layer."""
    config = T.Wav2Vec2Config(
        hidden_size=32, num_hidden_layers=1, num_attention_heads=4, intermediate_size=64, conv_dim=(16, 16),
        conv_stride=(5, 2), conv_kernel=(10, 3), num_conv_pos_embeddings=4, num_conv_pos_embedding_groups=2,
        attn_implementation="sdpa",
    )  # fmt: skip
    return Tensors(T.Wav2Vec2Model(config)), torch.randn(2, 200)


BREADTH = {
    f.__name__: f
    for f in (
        mixtral, qwen3, phi3, gpt_neox, opt, t5_encoder, distilbert, roberta, albert,
        electra, clip_text, clip_vision, deit, swin, segformer, wav2vec2,
    )
}  # fmt: skip
