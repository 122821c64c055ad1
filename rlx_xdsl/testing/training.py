"""The LLaMA graph with a softmax-cross-entropy head and the backward kernels its
gradient uses: the workload of `rlx-lower-softmax-cross-entropy` and
`rlx-decompose-backward` in tests and in the compile-time benchmark.

It is a workload, not a gradient (reverse-mode autodiff builds the real one):
next to each forward op that has backward kernels (rms_norm, rope, attention,
silu), the kernels are applied to that op's operands with its own result as the
cotangent, so every kernel sees the shapes and attributes a training graph gives
it. The hidden state is projected to `vocab` logits, one row per token; the
loss and its gradient use fixed labels. Every gradient is a function output.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Operation, SSAValue

from rlx_xdsl.dialects.mir.attention import AttentionOp, RopeOp
from rlx_xdsl.dialects.mir.elementwise import SiluOp
from rlx_xdsl.dialects.mir.norm import RmsNormOp
from rlx_xdsl.ir.emitter import Emitter
from rlx_xdsl.testing.llama import build_llama

Kernels = Callable[[Emitter, Operation], list[SSAValue]]


def _rms_norm(e: Emitter, op: RmsNormOp) -> list[SSAValue]:
    props = {"axis": op.axis.value.data, "eps": op.eps.value.data}
    return [
        e.mir.rms_norm_backward_input(op.x, op.gamma, op.result, **props),
        e.mir.rms_norm_backward_gamma(op.x, op.result, **props),
        e.mir.rms_norm_backward_beta(op.result, axis=props["axis"]),
    ]


def _rope(e: Emitter, op: RopeOp) -> list[SSAValue]:
    return [
        e.mir.rope_backward(
            op.result, op.cos, op.sin, head_dim=op.head_dim.value.data, n_rot=op.n_rot.value.data
        )
    ]


def _attention(e: Emitter, op: AttentionOp) -> list[SSAValue]:
    props = {"num_heads": op.num_heads.value.data, "head_dim": op.head_dim.value.data, "mask_kind": op.kind}
    return [
        e.mir.attention_backward(op.q, op.k, op.v, op.result, wrt=wrt, **props)
        for wrt in ("query", "key", "value")
    ]


def _silu(e: Emitter, op: SiluOp) -> list[SSAValue]:
    return [e.mir.activation_backward(op.input, op.result, kind="silu")]


KERNELS_OF: dict[type[Operation], Kernels] = {
    RmsNormOp: _rms_norm,
    RopeOp: _rope,
    AttentionOp: _attention,
    SiluOp: _silu,
}
"""The backward kernels emitted next to each forward op of the LLaMA graph."""


def build_llama_training(n_layers: int, *, vocab: int = 32, **dims) -> ModuleOp:
    """`build_llama(n_layers, vocab=vocab, **dims)` plus the SCE head and backward kernels.

    Outputs: the logits' per-token loss, the logits' gradient, then every kernel's result.
    """
    module = build_llama(n_layers, vocab=vocab, **dims)
    function = next(op for op in module.ops if isinstance(op, func.FuncOp))
    body = function.body.block
    grads: list[SSAValue] = []
    for op in list(body.ops):
        kernels = KERNELS_OF.get(type(op))
        if kernels is not None:
            grads += kernels(Emitter.before(op.next_op), op)
    ret = body.last_op
    e = Emitter.before(ret)
    (logits,) = ret.operands
    rows = e.mir.reshape(logits, new_shape=[-1, vocab])
    labels = e.mir.constant(np.arange(rows.type.get_shape()[0]) % vocab, "i64")
    loss = e.mir.softmax_cross_entropy_with_logits(rows, labels)
    d_logits = e.mir.softmax_cross_entropy_backward(rows, labels, loss)
    e.insert(func.ReturnOp(loss, d_logits, *grads))
    body.erase_op(ret)
    function.update_function_type()
    return module


def build_llama_loss(n_layers: int, *, vocab: int = 32, **dims) -> ModuleOp:
    """`build_llama(n_layers, vocab=vocab, **dims)` with a scalar loss: the mean softmax
    cross-entropy of the logits against fixed labels. The training workload of `rlx-grad`
    (`rlx-grad{func=llama}` differentiates it with respect to every weight)."""
    module = build_llama(n_layers, vocab=vocab, **dims)
    function = next(op for op in module.ops if isinstance(op, func.FuncOp))
    body = function.body.block
    ret = body.last_op
    e = Emitter.before(ret)
    (logits,) = ret.operands
    rows = e.mir.reshape(logits, new_shape=[-1, vocab])
    labels = e.mir.constant(np.arange(rows.type.get_shape()[0]) % vocab, "i64")
    per_token = e.mir.softmax_cross_entropy_with_logits(rows, labels)
    e.insert(func.ReturnOp(e.mir.reduce(per_token, kind="mean", axes=[0])))
    body.erase_op(ret)
    function.update_function_type()
    return module
