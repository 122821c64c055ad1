"""Hand-written idioms in the exported graph that are one MIR op.

A plain-torch RMSNorm, `x * rsqrt(mean(x**2, -1, keepdim=True) + eps) * w` (the
LLaMA reference code's, see Zhang and Sennrich, "Root Mean Square Layer
Normalization", 2019), decomposes to six ATen nodes. Found here before the
translation walk, it becomes one `mir.rms_norm`, as `F.rms_norm` does, so fusion
sees the norm a hand-written graph would have.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

aten = torch.ops.aten


@dataclass(frozen=True)
class RmsNormIdiom:
    """One match: the final multiply computes `rms_norm(x, weight, eps)` over the last dim."""

    x: torch.fx.Node
    weight: torch.fx.Node
    eps: float
    inner: tuple[torch.fx.Node, ...]  # the matched nodes before the final multiply


def _is(node, target) -> bool:
    return isinstance(node, torch.fx.Node) and node.op == "call_function" and node.target is target


def _other(node: torch.fx.Node, pick) -> tuple | None:
    """For a binary `node`, `(a, b)` with `pick(a)` true and `b` the other operand."""
    lhs, rhs = node.args[:2]
    if pick(lhs):
        return lhs, rhs
    if pick(rhs):
        return rhs, lhs
    return None


def _meta(node):
    return node.meta.get("val") if isinstance(node, torch.fx.Node) else None


def _square_of(node) -> torch.fx.Node | None:
    """`x` when `node` is `x ** 2` or `x * x`."""
    if _is(node, aten.pow.Tensor_Scalar) and node.args[1] == 2:
        return node.args[0]
    if _is(node, aten.mul.Tensor) and node.args[0] is node.args[1]:
        return node.args[0]
    return None


def match_rms_norm(final: torch.fx.Node) -> RmsNormIdiom | None:
    """The idiom ending at `final` (`(x * rsqrt(...)) * w`, either operand order), or None."""
    if not _is(final, aten.mul.Tensor):
        return None
    pair = _other(final, lambda n: _is(n, aten.mul.Tensor))
    if pair is None:
        return None
    scaled, weight = pair
    pair = _other(scaled, lambda n: _is(n, aten.rsqrt.default))
    if pair is None:
        return None
    rsqrt, x = pair
    add = rsqrt.args[0]
    if not _is(add, aten.add.Tensor) or len(add.kwargs) or len(add.args) != 2:
        return None
    pair = _other(add, lambda n: _is(n, aten.mean.dim))
    if pair is None or not isinstance(pair[1], float):
        return None
    mean, eps = pair
    square = mean.args[0]
    if _square_of(square) is not x or not _keeps_last_dim_mean(mean, x):
        return None
    inner = (square, mean, add, rsqrt, scaled)
    if any(len(node.users) != 1 for node in inner) or not _same_float_types(x, weight, final):
        return None
    return RmsNormIdiom(x, weight, eps, inner)


def _keeps_last_dim_mean(mean: torch.fx.Node, x: torch.fx.Node) -> bool:
    dims = list(mean.args[1]) if len(mean.args) > 1 else []
    keep = mean.args[2] if len(mean.args) > 2 else mean.kwargs.get("keepdim", False)
    rank = _meta(x).dim()
    return keep is True and len(dims) == 1 and dims[0] % rank == rank - 1 and not mean.kwargs.get("dtype")


def _same_float_types(x, weight, final) -> bool:
    """`weight` is a tensor of x's last (static) dim, all three of one float dtype."""
    xv, wv, ov = _meta(x), _meta(weight), _meta(final)
    if not all(isinstance(v, torch.Tensor) for v in (xv, wv, ov)):
        return False
    last = xv.shape[-1]
    return (
        isinstance(last, int)
        and tuple(wv.shape) == (last,)
        and xv.dtype == wv.dtype == ov.dtype
        and xv.dtype.is_floating_point
        and tuple(ov.shape) == tuple(xv.shape)
    )


def find_rms_norms(graph: torch.fx.Graph) -> dict[torch.fx.Node, RmsNormIdiom]:
    """Every RMSNorm idiom of `graph`, by its final multiply."""
    return {node: m for node in graph.nodes if (m := match_rms_norm(node)) is not None}
