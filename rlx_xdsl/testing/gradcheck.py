"""Gradient checks by central differences, run through the reference interpreter.

A gradient `g` of `y = f(x, ...)` with respect to `x`, contracted with a
cotangent `c` (a vector-Jacobian product), must match the central difference

    (L(x + eps e_i) - L(x - eps e_i)) / (2 eps),    L = sum(c * f(x, ...))

for every element `i` of `x`. In float64 with `eps = 1e-6` the difference is
accurate to about 1e-9 relative, so a relative tolerance of 1e-5 separates a
right gradient from a wrong one.

At a point where `f` has no derivative (a max pool window whose maximum is
tied), the per-element difference measures no gradient at all; a directional
derivative along a direction that keeps the tie (moving the tied cells
together) is still defined, and `check_directional` compares `<g, d>` with it.

    forward = mir_function("conv", [x, w], kernel_size=[3, 3])   # float64 arrays
    check_vjp(grad_x, forward, [x, w], wrt=0, cotangent=dy)

`forward` can be any `f(*arrays) -> array`; `mir_function` builds it from one
MIR op (or a whole module with `module_function`), verified once and run by the
interpreter on every call. Autodiff's tests check whole graphs the same way.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np
from xdsl.dialects.builtin import ModuleOp

from rlx_xdsl import dtypes
from rlx_xdsl.building.builder import GraphBuilder
from rlx_xdsl.run import run_function

Function = Callable[..., np.ndarray]

EPS = 1e-6
RTOL = 1e-5
ATOL = 1e-7


def module_function(module: ModuleOp, name: str | None = None, output: int = 0) -> Function:
    """`f(*arrays)`: run `module`'s function `name` on the interpreter, return output `output`."""
    module.verify()
    return lambda *arrays: run_function(module, name, arrays)[output]


def mir_function(op_name: str, inputs: Sequence[np.ndarray], output: int = 0, **properties) -> Function:
    """`f(*arrays)` computing `mir.<op_name>(arrays, **properties)` for arrays shaped like `inputs`.

    `None` in `inputs` is passed to the op as an absent optional operand.
    """
    b = GraphBuilder("f")
    args = [
        None
        if x is None
        else b.input(f"in{i}", np.shape(x), dtypes.dtype_of_numpy(np.asarray(x).dtype).element_type)
        for i, x in enumerate(inputs)
    ]
    result = getattr(b.mir, op_name)(*args, **properties)
    b.output(*(result if isinstance(result, tuple) else (result,)))
    run = module_function(b.module(), "f", output)
    return lambda *arrays: run(*(a for a in arrays if a is not None))


def _loss(f: Function, args: Sequence[np.ndarray], cotangent: np.ndarray) -> float:
    return float(np.sum(cotangent * f(*args), dtype=np.float64))


def _moved(x: np.ndarray, step: np.ndarray, like: np.ndarray) -> np.ndarray:
    """`x + step` in the argument's own dtype (the interpreter checks argument types at run time)."""
    return (x + step).astype(np.asarray(like).dtype, copy=False)


def numerical_vjp(
    f: Function, args: Sequence[np.ndarray], wrt: int, cotangent: np.ndarray, eps: float = EPS
) -> np.ndarray:
    """`d/d args[wrt] sum(cotangent * f(*args))`, one central difference per element."""
    args = list(args)
    original = args[wrt]
    x = np.asarray(original, np.float64)
    grad = np.zeros_like(x)
    for index in np.ndindex(x.shape):
        step = np.zeros_like(x)
        step[index] = eps
        args[wrt] = _moved(x, step, original)
        up = _loss(f, args, cotangent)
        args[wrt] = _moved(x, -step, original)
        down = _loss(f, args, cotangent)
        grad[index] = (up - down) / (2 * eps)
    return grad


def numerical_directional(
    f: Function,
    args: Sequence[np.ndarray],
    wrt: int,
    direction: np.ndarray,
    cotangent: np.ndarray,
    eps: float = EPS,
) -> float:
    """`d/dt sum(cotangent * f(..., args[wrt] + t direction, ...))` at t = 0."""
    args = list(args)
    original = args[wrt]
    x = np.asarray(original, np.float64)
    args[wrt] = _moved(x, eps * direction, original)
    up = _loss(f, args, cotangent)
    args[wrt] = _moved(x, -eps * direction, original)
    down = _loss(f, args, cotangent)
    return (up - down) / (2 * eps)


def check_vjp(
    grad: np.ndarray,
    f: Function,
    args: Sequence[np.ndarray],
    wrt: int,
    cotangent: np.ndarray,
    *,
    eps: float = EPS,
    rtol: float = RTOL,
    atol: float = ATOL,
) -> np.ndarray:
    """Assert that `grad` is the VJP of `f` w.r.t. `args[wrt]` with `cotangent`; return the numeric one."""
    numeric = numerical_vjp(f, args, wrt, cotangent, eps)
    assert np.shape(grad) == numeric.shape, (
        f"gradient shape {np.shape(grad)} != argument shape {numeric.shape}"
    )
    np.testing.assert_allclose(grad, numeric, rtol=rtol, atol=atol)
    return numeric


def check_directional(
    grad: np.ndarray,
    f: Function,
    args: Sequence[np.ndarray],
    wrt: int,
    cotangent: np.ndarray,
    directions: Sequence[np.ndarray],
    *,
    eps: float = EPS,
    rtol: float = RTOL,
    atol: float = ATOL,
) -> None:
    """Assert `<grad, d> = d/dt L(args[wrt] + t d)` for each direction `d`."""
    for direction in directions:
        numeric = numerical_directional(f, args, wrt, direction, cotangent, eps)
        np.testing.assert_allclose(np.sum(grad * direction), numeric, rtol=rtol, atol=atol)


# Whole functions through rlx-grad -------------------------------------------------------


def check_gradients(
    module: ModuleOp,
    name: str,
    inputs: Sequence[np.ndarray],
    wrt: Sequence[int],
    *,
    cotangent: np.ndarray | None = None,
    mode: str = "strict",
    seed: int = 0,
    eps: float = EPS,
    rtol: float = RTOL,
    atol: float = ATOL,
) -> list[np.ndarray]:
    """Differentiate `@name` with `rlx-grad`, run `@name_grad`, and check it.

    The gradient function must return `@name`'s own outputs first (loss, then
    aux), and for each argument index in `wrt` the VJP of the loss with
    `cotangent` (default: random), which is compared with central differences
    of `@name`. Returns the gradients.
    """
    from rlx_xdsl.autodiff.grad import Mode, build_gradient

    forward = module_function(module, name)
    outputs = run_function(module, name, inputs)
    if cotangent is None:
        rng = np.random.default_rng(seed)
        cotangent = rng.standard_normal(np.shape(outputs[0])).astype(np.asarray(outputs[0]).dtype)
    build_gradient(module, name, [str(i) for i in wrt], Mode(mode))
    module.verify()
    results = run_function(module, f"{name}_grad", [*inputs, cotangent])
    assert len(results) == len(outputs) + len(wrt), "expected [loss, aux..., gradients...]"
    for result, output in zip(results, outputs):
        np.testing.assert_array_equal(result, output)
    gradients = results[len(outputs) :]
    for index, gradient in zip(wrt, gradients):
        check_vjp(gradient, forward, inputs, index, cotangent, eps=eps, rtol=rtol, atol=atol)
    return gradients


def one_sided_derivatives(
    f: Function,
    args: Sequence[np.ndarray],
    wrt: int,
    direction: np.ndarray,
    cotangent: np.ndarray,
    eps: float = EPS,
) -> tuple[float, float]:
    """The right and left derivatives of `sum(cotangent * f)` along `direction` at `args`.

    Where they differ `f` has a kink or a jump there (relu at 0, a tie, a value
    crossing an integer boundary before a cast), and no gradient can match the
    central difference: random-graph checks skip such points.
    """
    args = list(args)
    original = args[wrt]
    x = np.asarray(original, np.float64)
    at = _loss(f, args, cotangent)
    args[wrt] = _moved(x, eps * direction, original)
    right = (_loss(f, args, cotangent) - at) / eps
    args[wrt] = _moved(x, -eps * direction, original)
    left = (at - _loss(f, args, cotangent)) / eps
    return right, left
