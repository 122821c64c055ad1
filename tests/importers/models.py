"""Small PyTorch models for the importer tests, in plain torch (no model libraries)."""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn


class MLP(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(6, 12)
        self.fc2 = nn.Linear(12, 4)
        self.register_buffer("scale", torch.rand(4) + 0.5)

    def forward(self, x):
        return F.softmax(self.fc2(F.gelu(self.fc1(x))), dim=-1) * self.scale


class ConvNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.c1 = nn.Conv2d(3, 4, 3, padding=1)
        self.bn = nn.BatchNorm2d(4)
        self.c2 = nn.Conv2d(4, 6, 3, stride=2, groups=2)
        self.fc = nn.Linear(6, 5)

    def forward(self, x):
        x = F.max_pool2d(F.relu(self.bn(self.c1(x))), 2)
        x = F.avg_pool2d(torch.tanh(self.c2(x)), 1)
        x = F.adaptive_avg_pool2d(x, 1).flatten(1)
        return self.fc(x)


class RMSNorm(nn.Module):
    def __init__(self, dim: int, eps: float = 1e-6):
        super().__init__()
        self.weight = nn.Parameter(torch.rand(dim) + 0.5)
        self.eps = eps

    def forward(self, x):
        return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps) * self.weight


def rotate_half(x):
    half = x.shape[-1] // 2
    return torch.cat((-x[..., half:], x[..., :half]), dim=-1)


class LlamaBlock(nn.Module):
    """One pre-norm decoder layer: RMSNorm, RoPE, grouped-query causal SDPA, SwiGLU."""

    def __init__(self, dim: int = 16, heads: int = 4, kv_heads: int = 2, hidden: int = 32, max_len: int = 32):
        super().__init__()
        self.heads, self.kv_heads, self.head_dim = heads, kv_heads, dim // heads
        self.attn_norm, self.ffn_norm = RMSNorm(dim), RMSNorm(dim)
        self.wq = nn.Linear(dim, heads * self.head_dim, bias=False)
        self.wk = nn.Linear(dim, kv_heads * self.head_dim, bias=False)
        self.wv = nn.Linear(dim, kv_heads * self.head_dim, bias=False)
        self.wo = nn.Linear(dim, dim, bias=False)
        self.gate = nn.Linear(dim, hidden, bias=False)
        self.up = nn.Linear(dim, hidden, bias=False)
        self.down = nn.Linear(hidden, dim, bias=False)
        inv_freq = 1.0 / (10000 ** (torch.arange(0, self.head_dim, 2).float() / self.head_dim))
        angles = torch.outer(torch.arange(max_len).float(), inv_freq)
        angles = torch.cat((angles, angles), dim=-1)
        self.register_buffer("cos", angles.cos(), persistent=False)
        self.register_buffer("sin", angles.sin(), persistent=False)

    def forward(self, x):
        b, s, d = x.shape
        y = self.attn_norm(x)
        q = self.wq(y).view(b, s, self.heads, self.head_dim).transpose(1, 2)
        k = self.wk(y).view(b, s, self.kv_heads, self.head_dim).transpose(1, 2)
        v = self.wv(y).view(b, s, self.kv_heads, self.head_dim).transpose(1, 2)
        cos, sin = self.cos[:s], self.sin[:s]
        q = q * cos + rotate_half(q) * sin
        k = k * cos + rotate_half(k) * sin
        gqa = self.kv_heads != self.heads
        a = F.scaled_dot_product_attention(q, k, v, is_causal=True, enable_gqa=gqa)
        x = x + self.wo(a.transpose(1, 2).reshape(b, s, d))
        y = self.ffn_norm(x)
        return x + self.down(F.silu(self.gate(y)) * self.up(y))


class Zoo(nn.Module):
    """Many ATen families in one export: each output checks a few rules."""

    def __init__(self):
        super().__init__()
        self.norm = nn.LayerNorm(8)
        self.group = nn.GroupNorm(2, 4)
        self.table = nn.Embedding(10, 8)
        self.rms = nn.RMSNorm(8, eps=1e-5)

    def forward(self, x, ids, img):
        a = torch.clamp(x, -0.5, 0.5) + F.leaky_relu(x, 0.1) - F.hardtanh(x) / 2
        b = torch.where(x > 0, x.exp(), -x.abs().sqrt()) * F.gelu(x, approximate="tanh")
        c = F.log_softmax(x, dim=0) + x.var(dim=-1, keepdim=True) + x.amax(dim=0) - x.sum()
        d = self.norm(x) + self.table(ids).mean(dim=0) + self.rms(x)
        e = torch.cat(torch.split(x, [3, 5], dim=-1)[::-1], dim=-1)[1:, 2:7].sigmoid()
        f = self.group(img).permute(0, 2, 3, 1).reshape(-1, 4)
        g = (x.unsqueeze(0).expand(2, -1, -1).sum(0) * 0.5).pow(2).reciprocal().min(torch.ones_like(x))
        return a, b, c, d, e, f, g, x.index_select(1, ids[:3])


class Zoo2(nn.Module):
    """Ops without a MIR op of their own (built from shared sequences), top-k, padding."""

    def forward(self, x, img):
        a = torch.round(x * 2) + torch.floor(x) - torch.ceil(x) + torch.trunc(x * 3) + torch.sign(x)
        b = torch.expm1(x.abs()) + torch.log1p(x.abs())
        values, indices = torch.topk(x, 2, dim=0, largest=False)
        c = values.sum() + torch.cumsum(x, dim=1)
        big, where = x.max(dim=1)
        d = F.pad(img, (1, 2, -1, 1), value=0.5).sum(dim=(2, 3)) + F.adaptive_avg_pool2d(img, (2, 2)).mean()
        return a, b, c, indices, big, where, x.argmax(), x.argmin(dim=0, keepdim=True), d


class Blend(nn.Module):
    """Two inputs of different shapes and an optional third, for the tool's input names."""

    def forward(self, x, y, mask=None):
        return x * 2.0 + y if mask is None else (x + y) * mask


def blend() -> Blend:
    return Blend()


def mlp() -> MLP:
    """A factory, as `rlx-import-torch tests.importers.models:mlp` takes one."""
    torch.manual_seed(0)
    return MLP()


class SwigluFfn(nn.Module):
    """RMSNorm of a residual sum, then a SwiGLU feed-forward, as a decoder layer's second half."""

    def __init__(self, dim: int = 8, hidden: int = 12):
        super().__init__()
        self.norm = RMSNorm(dim)
        self.gate, self.up = nn.Linear(dim, hidden, bias=False), nn.Linear(dim, hidden, bias=False)
        self.down = nn.Linear(hidden, dim, bias=False)

    def forward(self, x, residual):
        h = x + residual
        n = self.norm(h)
        return h + self.down(F.silu(self.gate(n)) * self.up(n))


def swiglu_ffn() -> SwigluFfn:
    torch.manual_seed(0)
    return SwigluFfn()
