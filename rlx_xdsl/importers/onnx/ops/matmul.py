"""MatMul, Gemm and Einsum."""

from __future__ import annotations

import numpy as np

from rlx_xdsl.importers.onnx.table import rule
from rlx_xdsl.shapes import DYNAMIC


@rule("MatMul")
def matmul(t, node):
    """`numpy.matmul`: a 1-D `a` is a row `[1, n]`, a 1-D `b` a column `[n, 1]`, their axis
    dropped from the result."""
    a, b = t.value(0), t.value(1)
    if t.rank(a) == 0 or t.rank(b) == 0:
        raise t.fail("MatMul of a 0-D operand is not defined")
    row, column = t.rank(a) == 1, t.rank(b) == 1
    if row:
        a = t.e.mir.reshape(a, new_shape=[1, -1])
    if column:
        b = t.e.mir.reshape(b, new_shape=[-1, 1])
    out = t.e.mir.matmul(a, b)
    if row or column:
        shape = t.shape(out)
        kept = shape[:-2] + ([] if row else [shape[-2]]) + ([] if column else [shape[-1]])
        if kept.count(DYNAMIC) > 1:
            raise t.fail("MatMul of a 1-D operand with several dynamic dims is not supported")
        out = t.e.mir.reshape(out, new_shape=[-1 if d == DYNAMIC else d for d in kept])
    return out


@rule("Gemm")
def gemm(t, node):
    """`alpha * A' B' + beta * C`, with A' and B' transposed as the attributes say."""
    a, b = t.value(0), t.value(1)
    if t.attr("transA", 0):
        a = t.e.mir.transpose(a, perm=[1, 0])
    if t.attr("transB", 0):
        b = t.e.mir.transpose(b, perm=[1, 0])
    out = t.e.mir.matmul(a, b)
    dtype = t.dtype(out)
    alpha, beta = t.attr("alpha", 1.0), t.attr("beta", 1.0)
    if alpha != 1.0:
        out = t.e.mir.mul(out, t.constant(alpha, dtype))
    if t.input(2) is not None:
        c = t.value(2)
        if beta != 1.0:
            c = t.e.mir.mul(c, t.constant(beta, dtype))
        out = t.e.mir.add(out, c)
    return out


@rule("Einsum")
def einsum(t, node):
    """`numpy.einsum` (explicit or implicit output, `...`, a letter repeated in one operand is
    its diagonal): each operand's axes permuted to one order of all letters, size-1 axes for
    the letters it lacks, the broadcast product, summed over the letters not in the output.
    Static shapes only. The sums run in another order than numpy's, and the product is
    materialised (it is the size of all letters' dims together)."""
    equation = t.attr("equation")
    equation = (equation.decode() if isinstance(equation, bytes) else equation).replace(" ", "")
    lhs, arrow, out = equation.partition("->")
    terms = lhs.split(",")
    values = [t.value(i) for i in range(len(terms))]
    if any(DYNAMIC in t.shape(v) for v in values):
        raise t.fail("Einsum of tensors with dynamic dims is not supported")
    spans = [t.rank(v) - (len(term) - 3) for term, v in zip(terms, values) if "..." in term]
    broadcast = "".join(chr(ord("A") + i) for i in range(max(spans, default=0)))
    terms = [term.replace("...", broadcast[len(broadcast) - (t.rank(v) - (len(term) - 3)) :]) for term, v in zip(terms, values)]
    if not arrow:
        counts = "".join(terms)
        out = broadcast + "".join(sorted(c for c in set(counts) if counts.count(c) == 1 and c.islower()))
    out = out.replace("...", broadcast)
    order = list(dict.fromkeys(out + "".join(terms)))
    product = None
    for term, v in zip(terms, values):
        v, term = _diagonals(t, v, term)
        present = sorted(term, key=order.index)
        v = t.e.mir.transpose(v, perm=[term.index(c) for c in present]) if list(term) != present else v
        sizes = dict(zip(present, t.shape(v)))
        v = t.e.mir.reshape(v, new_shape=[sizes.get(c, 1) for c in order])
        product = v if product is None else t.e.mir.mul(product, v)
    summed = [i for i, c in enumerate(order) if c not in out]
    if summed:
        product = t.e.mir.reduce(product, kind="sum", axes=summed, keep_dim=False)
    return product


def _diagonals(t, v, term: str):
    """`v` with each letter repeated in `term` reduced to its diagonal (the letter last)."""
    while len(set(term)) != len(term):
        c = next(c for c in term if term.count(c) > 1)
        first, second = term.index(c), term.index(c, term.index(c) + 1)
        rest = [i for i in range(len(term)) if i not in (first, second)]
        shape = t.shape(v)
        n = shape[first]
        v = t.e.mir.transpose(v, perm=[*rest, first, second])
        v = t.e.mir.reshape(v, new_shape=[*(shape[i] for i in rest), n * n])
        v = t.e.mir.gather(v, t.constant(np.arange(n) * (n + 1), "i64"), axis=len(rest))
        term = "".join(term[i] for i in rest) + c
    return v, term
