"""Hand-written idioms in the exported graph that are one MIR op (or one HIR block).

Found before the translation walk, each match is emitted at its final node as the
op a hand-written graph would have, so fusion and the fusion report see it:

* RMSNorm, `x * rsqrt(mean(x**2, -1, keepdim=True) + eps) * w` (Zhang and Sennrich,
  "Root Mean Square Layer Normalization", 2019; the LLaMA reference code and Hugging
  Face's `LlamaRMSNorm`), the three factors in any order and grouping, or
  `x / sqrt(mean(x**2, -1, keepdim=True) + eps) * w`, six ATen nodes -> `mir.rms_norm`.
* RoPE as Hugging Face writes it (`apply_rotary_pos_emb`, Su et al., "RoFormer", 2021):
  `x * cos + cat(-x[..., h:], x[..., :h]) * sin` -> `mir.rope` (NeoX pairing) on the
  first halves of cos and sin. Only where cos and sin provably repeat their first half
  (each built from `cat((f, f), -1)` through per-element ops), as `mir.rope` reads one
  angle per pair.
* SwiGLU (Shazeer, "GLU Variants Improve Transformer", 2020), `silu(x @ Wg^T) * (x @ Wu^T)`
  with each `nn.Linear` as `view(mm(view(x), permute(W)))` -> the two projections as
  `mir.matmul`s on x (up first), `mir.silu`, `mir.mul`: the form
  `rlx-fuse-swiglu-dual-matmul` fuses into `mir.fused_swiglu`.

With `hir=True` the idioms become HIR blocks instead: the SwiGLU with its down
projection `hir.swiglu`, an RMSNorm of a sum `hir.residual_rms_norm` (the sum is still
computed where something else reads it), other RMSNorms `hir.rms_norm`, RoPE `hir.rope`.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

import numpy as np
import torch

aten = torch.ops.aten

Node = torch.fx.Node


def _is(node, *targets) -> bool:
    return isinstance(node, Node) and node.op == "call_function" and node.target in targets


def _other(node: Node, pick) -> tuple | None:
    """For a binary `node`, `(a, b)` with `pick(a)` true and `b` the other operand."""
    lhs, rhs = node.args[:2]
    if pick(lhs):
        return lhs, rhs
    if pick(rhs):
        return rhs, lhs
    return None


def _meta(node):
    return node.meta.get("val") if isinstance(node, Node) else None


def _users(node: Node) -> set[Node]:
    """`node`'s users, less the dtype assertions the translation drops."""
    return {u for u in node.users if not _is(u, aten._assert_tensor_metadata.default)}


def _private(inner: Iterable[Node], final: Node) -> bool:
    """Whether only the idiom itself reads its inner nodes (so none is needed outside)."""
    inner = set(inner)
    return all(_users(node) <= inner | {final} for node in inner)


def _float_tensors(*nodes) -> bool:
    values = [_meta(n) for n in nodes]
    return all(isinstance(v, torch.Tensor) for v in values) and len({v.dtype for v in values}) == 1 and (
        values[0].dtype.is_floating_point
    )


# RMSNorm ------------------------------------------------------------------------------


@dataclass(frozen=True)
class RmsNormIdiom:
    """`final` computes `rms_norm(x, weight, eps)` over the last dim."""

    final: Node
    x: Node
    weight: Node
    eps: float
    inner: tuple[Node, ...]  # the matched nodes before the final multiply

    def emit(self, t, hir: bool):
        dtype = t.dtype(self.x)
        beta = t.constant(np.zeros(t.shape(self.weight)), dtype)
        weight = t.value(self.weight)
        if not hir:
            return t.e.mir.rms_norm(t.value(self.x), weight, beta, axis=-1, eps=self.eps)
        if _is(self.x, aten.add.Tensor) and not self.x.kwargs and _float_tensors(*self.x.args[:2], self.x):
            lhs, rhs = self.x.args[:2]
            if t.shape(lhs) == t.shape(rhs) == t.shape(self.x):
                return t.e.hir.residual_rms_norm(t.value(lhs), t.value(rhs), weight, beta, eps=self.eps)
        return t.e.hir.rms_norm(t.value(self.x), weight, beta, eps=self.eps)


def _square_of(node) -> Node | None:
    """`x` when `node` is `x ** 2` or `x * x`."""
    if _is(node, aten.pow.Tensor_Scalar) and node.args[1] == 2:
        return node.args[0]
    if _is(node, aten.mul.Tensor) and node.args[0] is node.args[1]:
        return node.args[0]
    return None


def _binary(node, *targets) -> bool:
    return _is(node, *targets) and len(node.args) == 2 and not node.kwargs


def _products(final: Node) -> Iterable[tuple[Node, list[tuple[Node, bool]]]]:
    """`final` as a product of three factors through `final` and one `mul`/`div` under it
    (`a * (b * c)`, `(a / b) * c`, `(a * b) / c` ...): each `(that inner node, factors)`,
    a factor being `(node, in the numerator)`."""

    def split(node: Node, up: bool) -> list[tuple[Node, bool]]:
        lhs, rhs = node.args
        return [(lhs, up), (rhs, up if _is(node, aten.mul.Tensor) else not up)]

    if not _binary(final, aten.mul.Tensor, aten.div.Tensor):
        return
    outer = split(final, True)
    for index, (node, up) in enumerate(outer):
        if _binary(node, aten.mul.Tensor, aten.div.Tensor):
            yield node, [outer[1 - index], *split(node, up)]


def match_rms_norm(final: Node) -> RmsNormIdiom | None:
    """The idiom ending at `final`, or None.

    `x`, `w` and `rsqrt(mean(x**2) + eps)` multiplied in any order and grouping
    (`x * rsqrt(...) * w`, `w * x * rsqrt(...)`, `w * (x * rsqrt(...))` ...), or
    `x / sqrt(mean(x**2) + eps)` times `w` (`x / sqrt(...) * w`, `w * x / sqrt(...)` ...).
    """
    for scaled, factors in _products(final):
        for index, (norm, up) in enumerate(factors):
            if not (up and _is(norm, aten.rsqrt.default) or not up and _is(norm, aten.sqrt.default)):
                continue
            others = [node for i, (node, up) in enumerate(factors) if i != index and up]
            idiom = _rms_norm_of(final, norm, others, scaled) if len(others) == 2 else None
            if idiom is not None:
                return idiom
    return None


def _rms_norm_of(final: Node, norm: Node, others: list[Node], scaled: Node) -> RmsNormIdiom | None:
    """The idiom when `norm` is `(r)sqrt(mean(x**2, -1) + eps)` of one of `others` (x; the other is w)."""
    add = norm.args[0]
    if not _is(add, aten.add.Tensor) or len(add.kwargs) or len(add.args) != 2:
        return None
    pair = _other(add, lambda n: _is(n, aten.mean.dim))
    if pair is None or not isinstance(pair[1], float):
        return None
    mean, eps = pair
    square = mean.args[0]
    x = _square_of(square)
    if x not in others or not _keeps_last_dim_mean(mean, x):
        return None
    (weight,) = [node for node in others if node is not x] or [x]
    inner = (square, mean, add, norm, scaled)
    if not _private(inner, final) or not _same_float_types(x, weight, final):
        return None
    return RmsNormIdiom(final, x, weight, eps, inner)


def _keeps_last_dim_mean(mean: Node, x: Node) -> bool:
    dims = list(mean.args[1]) if len(mean.args) > 1 else []
    keep = mean.args[2] if len(mean.args) > 2 else mean.kwargs.get("keepdim", False)
    rank = _meta(x).dim()
    return keep is True and len(dims) == 1 and dims[0] % rank == rank - 1 and not mean.kwargs.get("dtype")


def _same_float_types(x, weight, final) -> bool:
    """`weight` is a tensor of x's last (static) dim, all three of one float dtype."""
    xv, wv, ov = _meta(x), _meta(weight), _meta(final)
    if not _float_tensors(x, weight, final):
        return False
    last = xv.shape[-1]
    return isinstance(last, int) and tuple(wv.shape) == (last,) and tuple(ov.shape) == tuple(xv.shape)


# RoPE ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class RopeIdiom:
    """`final` rotates `x[..., S, D]` by angles whose cos and sin repeat their first half."""

    final: Node
    x: Node
    cos: Node
    sin: Node
    inner: tuple[Node, ...]

    def emit(self, t, hir: bool):
        head_dim = t.shape(self.x)[-1]
        cos, sin = (self._first_half(t, n, head_dim) for n in (self.cos, self.sin))
        if hir:
            return t.e.hir.rope(t.value(self.x), cos, sin, head_dim=head_dim)
        return t.e.mir.rope(t.value(self.x), cos, sin, head_dim=head_dim, n_rot=head_dim)

    @staticmethod
    def _first_half(t, node: Node, head_dim: int):
        return t.e.mir.narrow(t.value(node), axis=t.rank(node) - 1, start=0, len=head_dim // 2)


_LAST_DIM_UNARY = (
    aten.cos.default, aten.sin.default, aten.neg.default, aten._to_copy.default,
    aten.clone.default, aten.alias.default,
)  # fmt: skip


def _repeats_its_first_half(node, depth: int = 0) -> bool:
    """Whether `node[..., :D/2] == node[..., D/2:]` by construction: per-element ops (and
    unsqueezes of other dims) over a `cat((f, f), -1)`."""
    if depth > 8 or not isinstance(node, Node):
        return False
    if _is(node, aten.cat.default):
        parts, dim = node.args[0], node.args[1] if len(node.args) > 1 else 0
        return len(parts) == 2 and parts[0] is parts[1] and dim % _meta(node).dim() == _meta(node).dim() - 1
    if _is(node, *_LAST_DIM_UNARY):
        return _repeats_its_first_half(node.args[0], depth + 1)
    if _is(node, aten.mul.Tensor, aten.div.Tensor) and isinstance(node.args[1], int | float):
        return _repeats_its_first_half(node.args[0], depth + 1)
    if _is(node, aten.unsqueeze.default) and node.args[1] % _meta(node).dim() != _meta(node).dim() - 1:
        return _repeats_its_first_half(node.args[0], depth + 1)
    return False


def _slice_of_last(node, x: Node) -> tuple[int, int] | None:
    """`(start, end)` when `node` is `x[..., start:end]` with step 1 (end clipped to the dim)."""
    if not _is(node, aten.slice.Tensor) or node.args[0] is not x:
        return None
    rank, width = _meta(x).dim(), _meta(x).shape[-1]
    args = list(node.args) + [None] * (5 - len(node.args))
    dim, start, end, step = args[1:5]
    if (dim or 0) % rank != rank - 1 or (step or 1) != 1 or not isinstance(width, int):
        return None
    return start or 0, width if end is None else min(end, width)


def match_rope(final: Node) -> RopeIdiom | None:
    """`x * cos + rotate_half(x) * sin` ending at `final`, either order of each operation."""
    if not _is(final, aten.add.Tensor) or final.kwargs or len(final.args) != 2:
        return None
    for direct, rotated in (final.args, final.args[::-1]):
        if not (_is(direct, aten.mul.Tensor) and _is(rotated, aten.mul.Tensor)):
            continue
        turned = _other(rotated, lambda n: _is(n, aten.cat.default))
        if turned is None:
            continue
        cat, sin = turned
        found = _rotate_half_of(cat)
        if found is None:
            continue
        x, parts = found
        pair = _other(direct, lambda n, x=x: n is x)
        if pair is None:
            continue
        cos = pair[1]
        inner = (direct, rotated, cat, *parts)
        if not (_private(inner, final) and _float_tensors(x, cos, sin, final)):
            continue
        if tuple(_meta(final).shape) != tuple(_meta(x).shape):
            continue
        if all(_repeats_its_first_half(n) for n in (cos, sin)):
            return RopeIdiom(final, x, cos, sin, inner)
    return None


def _rotate_half_of(cat: Node) -> tuple[Node, tuple[Node, ...]] | None:
    """`(x, inner nodes)` when `cat` is `cat((-x[..., h:], x[..., :h]), -1)` over an even width."""
    parts = cat.args[0]
    dim = cat.args[1] if len(cat.args) > 1 else 0
    if len(parts) != 2 or not _is(parts[0], aten.neg.default):
        return None
    neg, low = parts
    high = neg.args[0]
    if not _is(high, aten.slice.Tensor):
        return None
    x = high.args[0]
    rank, width = _meta(x).dim(), _meta(x).shape[-1]
    if dim % rank != rank - 1 or not isinstance(width, int) or width % 2:
        return None
    half = width // 2
    if _slice_of_last(high, x) != (half, width) or _slice_of_last(low, x) != (0, half):
        return None
    return x, (neg, high, low)


# SwiGLU -------------------------------------------------------------------------------


@dataclass(frozen=True)
class Linear:
    """`nn.Linear` without bias as exported: `x @ weight^T`, through 2-D views for x of rank > 2."""

    x: Node
    weight: Node
    nodes: tuple[Node, ...]


def match_linear(node) -> Linear | None:
    out = node
    if _is(node, aten.view.default, aten._unsafe_view.default):
        node = node.args[0]
    if not _is(node, aten.mm.default):
        return None
    lhs, transposed = node.args[:2]
    if not (_is(transposed, aten.permute.default) and list(transposed.args[1]) == [1, 0]):
        return None
    nodes = [transposed, node] + ([out] if out is not node else [])
    x = lhs
    if _is(lhs, aten.view.default, aten._unsafe_view.default):
        x = lhs.args[0]
        nodes.append(lhs)
    xv, ov = _meta(x), _meta(out)
    if not isinstance(xv, torch.Tensor) or xv.shape[-1] != _meta(lhs).shape[-1]:
        return None  # the view must flatten x's leading dims only
    if out is not node and tuple(ov.shape[:-1]) != tuple(xv.shape[:-1]):
        return None
    if out is node and x is not lhs:
        return None
    return Linear(x, transposed.args[0], tuple(nodes))


@dataclass(frozen=True)
class SwigluIdiom:
    """`final` is `silu(gate(x)) * up(x)`, or with `down` that projection of it (HIR only)."""

    final: Node
    x: Node
    up: Node  # the weights, [F, K] as nn.Linear stores them
    gate: Node
    down: Node | None
    inner: tuple[Node, ...]

    def emit(self, t, hir: bool):
        x = t.value(self.x)
        up, gate = (t.e.mir.transpose(t.value(w), perm=[1, 0]) for w in (self.up, self.gate))
        if hir:
            down = t.e.mir.transpose(t.value(self.down), perm=[1, 0])
            return t.e.hir.swiglu(x, up, gate, down)
        up = t.e.mir.matmul(x, up)  # up first: the order rlx-fuse-swiglu-dual-matmul fuses
        return t.e.mir.mul(t.e.mir.silu(t.e.mir.matmul(x, gate)), up)


def match_swiglu(final: Node, with_down: bool) -> SwigluIdiom | None:
    down = None
    product = final
    if with_down:
        down = match_linear(final)
        if down is None:
            return None
        product = down.x
    if not _is(product, aten.mul.Tensor) or len(product.args) != 2:
        return None
    pair = _other(product, lambda n: _is(n, aten.silu.default))
    if pair is None:
        return None
    silu, up_out = pair
    gate, up = match_linear(silu.args[0]), match_linear(up_out)
    if gate is None or up is None or gate.x is not up.x:
        return None
    weights = [up.weight, gate.weight] + ([down.weight] if down else [])
    if not _float_tensors(up.x, *weights, final) or _meta(up.weight).shape != _meta(gate.weight).shape:
        return None
    inner = (silu, *gate.nodes, *up.nodes) + ((product, *down.nodes) if down else ())
    inner = tuple(n for n in dict.fromkeys(inner) if n is not final)
    if not _private(inner, final):
        return None
    return SwigluIdiom(final, up.x, up.weight, gate.weight, down.weight if down else None, inner)


def find_idioms(graph: torch.fx.Graph, hir: bool = False) -> dict[Node, object]:
    """Every idiom of `graph` by its final node; no node belongs to two (larger first)."""
    matchers = [
        lambda n: match_swiglu(n, with_down=hir),
        match_rope,
        match_rms_norm,
    ]
    found: dict[Node, object] = {}
    claimed: set[Node] = set()
    for match in matchers:
        for node in graph.nodes:
            idiom = match(node)
            if idiom is None:
                continue
            nodes = {idiom.final, *idiom.inner}
            if nodes & claimed:
                continue
            claimed |= nodes
            found[node] = idiom
    return found
