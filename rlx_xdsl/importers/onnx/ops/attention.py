"""Attention (opset 23) -> `mir.attention`.

Both apply a softcap to the scaled scores before any mask and give zeros for a fully
masked row. ONNX's causal query `i` sees keys `j <= i + past length` (the keys cached in
`past_key`); `mir.attention`'s `causal` sees `j <= i + Sk - Sq`. They agree when the
current K is as long as Q; otherwise the causal frontier becomes an explicit bias.
3-D inputs `[B, S, H * D]` are split into heads (`q_num_heads`, `kv_num_heads`) and the
output is merged back; `past_key` / `past_value` are concatenated in front of K and V,
which are also the `present_*` outputs.
"""

from __future__ import annotations

import numpy as np

from rlx_xdsl.importers.onnx.table import FOLLOWED_SINCE, rule
from rlx_xdsl.importers.onnx.types import dtype_name
from rlx_xdsl.shapes import DYNAMIC


def _heads_with_past(t, q_in):
    """Q, K and V as `[B, heads, S, D]`, the past key and value (inputs 4 and 5) in front of
    K and V along the sequence, and the past length."""
    q = _heads(t, q_in, t.attr("q_num_heads"), "Query")
    k = _heads(t, t.value(1), t.attr("kv_num_heads"), "Key")
    v = _heads(t, t.value(2), t.attr("kv_num_heads"), "Value")
    past = t.shape(t.value(4))[2] if t.input(4) is not None else 0
    if t.input(4) is not None:
        k = t.e.mir.concat(t.value(4), k, axis=2)
    if t.input(5) is not None:
        v = t.e.mir.concat(t.value(5), v, axis=2)
    return q, k, v, past

def _heads(t, x, heads: int | None, what: str):
    """`[B, S, H * D]` -> `[B, H, S, D]`; 4-D inputs are already in heads."""
    if t.rank(x) == 4:
        return x
    if heads is None:
        raise t.fail(f"a 3-D {what} needs the {what[0].lower()}_num_heads attribute")
    b, s, width = t.shape(x)
    shape = [-1 if d == DYNAMIC else d for d in (b, s)] + [heads, width // heads]
    if shape.count(-1) > 1:
        raise t.fail("3-D attention inputs with several dynamic dims are not supported")
    return t.e.mir.transpose(t.e.mir.reshape(x, new_shape=shape), perm=[0, 2, 1, 3])


FOLLOWED_SINCE["Attention"] = frozenset({"nonpad_kv_seqlen", "left_window_size", "right_window_size"})


@rule("Attention")
def attention(t, node):
    q_in = t.value(0)
    wants_scores = len(node.output) > 3 and bool(node.output[3])
    windowed = t.attr("left_window_size", -1) >= 0 or t.attr("right_window_size", -1) >= 0
    if wants_scores or windowed or t.input(6) is not None or _value_width(t) != _query_width(t):
        return _primitives(t, node, q_in, wants_scores)
    q, k, v, past = _heads_with_past(t, q_in)
    _, heads, sq, head_dim = t.shape(q)
    sk = t.shape(k)[2]
    dtype = t.dtype(q)
    bias = None
    if t.input(3) is not None:
        mask = t.value(3)
        if t.dtype(mask) == "i1":
            bias = t.e.mir.where(mask, t.constant(0, dtype), t.constant(float("-inf"), dtype))
        else:
            bias = t.e.mir.cast(mask, dtype) if t.dtype(mask) != dtype else mask
    kind = "none"
    if t.attr("is_causal", 0):
        if bias is None and DYNAMIC not in (sq, sk, past) and sk - sq == past:
            kind = "causal"
        elif DYNAMIC in (sq, sk, past):
            raise t.fail("a causal mask over dynamic lengths is not supported here")
        else:  # the frontier as a bias, added to the mask's
            i, j = np.indices((sq, sk))
            causal = t.constant(np.where(j <= i + past, 0.0, -np.inf), dtype)
            bias = causal if bias is None else t.e.mir.add(bias, causal)
    if bias is not None:
        kind = "bias"
    softcap = t.attr("softcap", 0.0)
    out = t.e.mir.attention(
        q,
        k,
        v,
        bias,
        num_heads=heads,
        head_dim=head_dim,
        mask_kind=kind,
        score_scale=t.attr("scale"),
        attn_logit_softcap=softcap if softcap else None,
    )
    if t.rank(q_in) == 3:
        b, s, _ = t.shape(q_in)
        merged = [-1 if d == DYNAMIC else d for d in (b, s)] + [heads * head_dim]
        out = t.e.mir.reshape(t.e.mir.transpose(out, perm=[0, 2, 1, 3]), new_shape=merged)
    present = (k, v) if t.input(4) is not None else (None, None)
    return [out, *present]


def _query_width(t) -> int:
    q = t.value(0)
    return t.shape(q)[3] if t.rank(q) == 4 else t.shape(q)[2] // t.attr("q_num_heads", 1)


def _value_width(t) -> int:
    v = t.value(2)
    return t.shape(v)[3] if t.rank(v) == 4 else t.shape(v)[2] // t.attr("kv_num_heads", 1)


def _primitives(t, node, q_in, wants_scores: bool):
    """What `mir.attention` does not express (the `qk_matmul_output` output, a value head
    width other than the query's, a sliding window, `nonpad_kv_seqlen`), step by step as
    ONNX's reference (`onnx.reference.ops.op_attention`): `Q * sqrt(scale) @ (K * sqrt(scale))^T`,
    softcap, plus the additive bias (mask padded to the keys with -inf, causal and window
    frontiers offset by the past length or by `nonpad_kv_seqlen - Sq`, padded keys -inf),
    softmax (in `softmax_precision`), rows whose bias is all -inf zeroed, `@ V`. GQA repeats
    each K/V head in place. `qk_matmul_output_mode` 0/1: the softcapped scores, 2: with the
    bias, 3: the probabilities. Static shapes only."""
    e = t.e.mir
    q, k, v, past = _heads_with_past(t, q_in)
    present = (k, v) if t.input(4) is not None else (None, None)
    batch, heads, sq, head_dim = t.shape(q)
    kv_heads, sk = t.shape(k)[1], t.shape(k)[2]
    if DYNAMIC in (*t.shape(q), *t.shape(k), *t.shape(v)):
        raise t.fail("this Attention (scores output, value width, window or nonpad_kv_seqlen) needs static shapes")
    dtype = t.dtype(q)
    scale = t.attr("scale")
    root = t.constant(np.sqrt(1 / np.sqrt(head_dim) if scale is None else scale), dtype)
    if kv_heads != heads:  # GQA: [h0, h0, h1, h1, ...]
        k, v = (_repeat_heads(t, x, heads // kv_heads) for x in (k, v))
    scores = e.matmul(e.mul(q, root), e.transpose(e.mul(k, root), perm=[0, 1, 3, 2]))
    softcap = t.attr("softcap", 0.0)
    if softcap:
        cap = t.constant(softcap, dtype)
        scores = e.mul(e.tanh(e.div(scores, cap)), cap)
    bias = _bias(t, dtype, batch, sq, sk, past)
    with_bias = scores if bias is None else e.add(scores, bias)
    mode = t.attr("qk_matmul_output_mode", 0)
    exposed = with_bias if mode == 2 else scores
    precision = t.attr("softmax_precision")
    soft_dtype = dtype_name(precision) if precision is not None else dtype
    probs = e.softmax(with_bias if soft_dtype == dtype else e.cast(with_bias, soft_dtype), axis=-1)
    if bias is not None:
        none_left = e.compare(e.reduce(bias, kind="max", axes=[-1], keep_dim=True),
                              t.constant(float("-inf"), dtype), "eq")  # fmt: skip
        probs = e.where(none_left, t.constant(0, soft_dtype), probs)
    if soft_dtype != dtype:
        probs = e.cast(probs, dtype)
    if mode == 3:
        exposed = probs
    out = e.matmul(probs, v)
    if t.rank(q_in) == 3:
        out = e.reshape(e.transpose(out, perm=[0, 2, 1, 3]), new_shape=[batch, sq, heads * t.shape(v)[3]])
    return [out, *present, exposed if wants_scores else None]


def _repeat_heads(t, x, times: int):
    b, h, s, d = t.shape(x)
    wide = t.e.mir.expand(t.e.mir.reshape(x, new_shape=[b, h, 1, s, d]), target_shape=[b, h, times, s, d])
    return t.e.mir.reshape(wide, new_shape=[b, h * times, s, d])


def _bias(t, dtype: str, batch: int, sq: int, sk: int, past: int):
    """The additive bias (None when nothing masks): the mask, the causal and window frontiers,
    the keys past `nonpad_kv_seqlen`; `[.., Sq, Sk]` broadcasting as the reference's."""
    e = t.e.mir
    neg, zero = t.constant(float("-inf"), dtype), t.constant(0, dtype)
    bias = None
    if t.input(3) is not None:
        mask = t.value(3)
        short = sk - t.shape(mask)[-1]
        if short > 0:  # keys beyond the mask are masked
            fill = t.constant(np.zeros([*t.shape(mask)[:-1], short]), "i1") if t.dtype(mask) == "i1" else None
            fill = fill if fill is not None else e.expand(neg, target_shape=[*t.shape(mask)[:-1], short])
            mask = e.concat(mask, fill, axis=t.rank(mask) - 1)
        bias = e.where(mask, zero, neg) if t.dtype(mask) == "i1" else mask
        bias = bias if t.dtype(bias) == dtype else e.cast(bias, dtype)
    i, j = np.indices((sq, sk))
    nonpad = None
    if t.input(6) is not None:  # per-batch offset nonpad[b] - Sq: distances as i64 at run time
        nonpad = e.reshape(t.value(6, "i64"), new_shape=[batch, 1, 1, 1])
    offset_diff = i - j + (-sq if nonpad is not None else past)  # + nonpad[b] where given

    def allowed(limit: np.ndarray, predicate: str):
        """`i + offset - j` against `limit` (per batch when nonpad_kv_seqlen is given)."""
        if nonpad is None:
            return t.constant({"le": offset_diff <= limit, "ge": offset_diff >= limit}[predicate], "i1")
        return e.compare(e.add(t.constant(offset_diff[None, None], "i64"), nonpad), t.constant(limit, "i64"), predicate)

    frontiers = []
    if t.attr("is_causal", 0):
        frontiers.append(allowed(np.array(0), "ge"))
    left, right = t.attr("left_window_size", -1), t.attr("right_window_size", -1)
    if left >= 0:
        frontiers.append(allowed(np.array(left), "le"))
    if right >= 0:
        frontiers.append(allowed(np.array(-right), "ge"))
    for ok in frontiers:
        term = e.where(ok, zero, neg)
        bias = term if bias is None else e.add(bias, term)
    if nonpad is not None:
        keys = t.constant(np.arange(sk).reshape(1, 1, 1, sk), "i64")
        term = e.where(e.compare(keys, nonpad, "lt"), zero, neg)
        bias = term if bias is None else e.add(bias, term)
    return bias


@rule("RotaryEmbedding")
def rotary_embedding(t, node):
    """RotaryEmbedding (opset 23) as ONNX's reference: the first `rotary_embedding_dim` of each
    head (all by default) rotated as pairs `(x1, x2)` (the two halves, or even and odd
    elements when `interleaved`) by `cos`/`sin` (the caches, gathered at `position_ids` when
    given), `[x1 cos - x2 sin, x1 sin + x2 cos]`; the rest passes through. Inputs `[B, H, S, D]`
    or `[B, S, H * D]` (`num_heads`), static shapes."""
    e = t.e.mir
    x_in = t.value(0)
    shape = t.shape(x_in)
    if DYNAMIC in shape:
        raise t.fail("RotaryEmbedding of a tensor with dynamic dims is not supported")
    if len(shape) == 4:
        x = e.transpose(x_in, perm=[0, 2, 1, 3])
    else:
        heads = t.attr("num_heads")
        if not heads:
            raise t.fail("a 3-D input needs the num_heads attribute")
        x = e.reshape(x_in, new_shape=[shape[0], shape[1], heads, shape[2] // heads])
    b, s, h, d = t.shape(x)
    rot = t.attr("rotary_embedding_dim", 0) or d
    half = rot // 2
    cos, sin = t.value(1), t.value(2)
    if t.input(3) is not None:
        ids = t.value(3)
        cos, sin = e.gather(cos, ids, axis=0), e.gather(sin, ids, axis=0)
    cos, sin = (e.reshape(c, new_shape=[b, s, 1, half]) for c in (cos, sin))
    rotated = e.narrow(x, axis=3, start=0, len=rot) if rot < d else x
    if t.attr("interleaved", 0):
        x1 = e.gather(rotated, t.constant(np.arange(0, rot, 2), "i64"), axis=3)
        x2 = e.gather(rotated, t.constant(np.arange(1, rot, 2), "i64"), axis=3)
    else:
        x1, x2 = e.narrow(rotated, axis=3, start=0, len=half), e.narrow(rotated, axis=3, start=half, len=half)
    real = e.sub(e.mul(cos, x1), e.mul(sin, x2))
    imag = e.add(e.mul(sin, x1), e.mul(cos, x2))
    if t.attr("interleaved", 0):
        pairs = [e.reshape(v, new_shape=[b, s, h, half, 1]) for v in (real, imag)]
        out = e.reshape(e.concat(*pairs, axis=4), new_shape=[b, s, h, rot])
    else:
        out = e.concat(real, imag, axis=3)
    if rot < d:
        out = e.concat(out, e.narrow(x, axis=3, start=rot, len=d - rot), axis=3)
    if len(shape) == 4:
        return e.transpose(out, perm=[0, 2, 1, 3])
    return e.reshape(out, new_shape=shape)
