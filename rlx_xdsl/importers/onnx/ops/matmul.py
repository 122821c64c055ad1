"""MatMul and Gemm."""

from __future__ import annotations

from rlx_xdsl.importers.onnx.table import rule


@rule("MatMul")
def matmul(t, node):
    a, b = t.value(0), t.value(1)
    if t.rank(a) < 2 or t.rank(b) < 2:
        raise t.fail("MatMul of a 1-D operand is not supported")
    return t.e.mir.matmul(a, b)


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
