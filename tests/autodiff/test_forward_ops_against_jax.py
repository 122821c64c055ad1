"""Every op case's `rlx-jvp` against `jax.jvp`, and its `rlx-vmap` against `jax.vmap`, both
of the op's JAX translation (`conversions.mir_to_jax`).

The cases are `testing.op_cases` (tiny shapes, the dtypes they declare). JAX runs the
translation's formulas, written from the ops' semantics and sharing no code with the JVP
or batching rules. Compiling dominates the time, so each case is traced once, as
`jax.vmap` of `jax.jvp` (both references from one computation), and compiled at XLA's
lowest optimisation level; eager JAX (a compile per primitive) is several times slower,
and one jit of all the cases together is no faster than one per case.

* JVP: every case with a float argument and an op that has a real JVP rule (neither
  `zero_tangent` nor `NoJvpRule`) is pushed forward along random tangents of all its
  float arguments that autodiff differentiates (DATA operands: masks, labels, indices
  and predicates carry no tangent, by the operand-role convention of both modes).
  Composite ops without a rule of their own go through `rlx-prepare-ad` first.
* vmap: every case with a float argument is batched over all its float arguments.

Cases and arguments left out are listed below with their reason; a test checks that
every case is either compared or listed, so nothing is skipped silently.
"""

from __future__ import annotations

import functools
import zlib

import numpy as np
import pytest

jax = pytest.importorskip("jax", reason="jax is in the test extra: pip install -e '.[test]'")
import jax.numpy as jnp  # noqa: E402
from xdsl.dialects.builtin import ModuleOp  # noqa: E402
from xdsl.traits import IsTerminator  # noqa: E402

from rlx_xdsl import layers
from rlx_xdsl.autodiff.jvp import build_jvp  # noqa: E402
from rlx_xdsl.autodiff.jvp_registry import JVP_RULES, NoJvpRule, zero_tangent  # noqa: E402
from rlx_xdsl.autodiff.prepare import prepare_for_ad, prepare_rewrites  # noqa: E402
from rlx_xdsl.batching.vmap import build_vmap  # noqa: E402
from rlx_xdsl.conversions.mir_to_jax import jax_function  # noqa: E402
from rlx_xdsl.dialects.traits import operand_roles  # noqa: E402
from rlx_xdsl.ir.graph import find_function
from rlx_xdsl.run import run_function  # noqa: E402
from rlx_xdsl.testing.op_cases import all_cases, case_inputs, cases_module  # noqa: E402

layers.load("vjp"), layers.load("jvp")
CASES = all_cases()
MODULE = cases_module(CASES)
SIZE = 2
"""The batch size of the vmap checks."""

NOT_PUSHED_FORWARD = {
    "fake_quantize": "straight-through estimator by definition (tangent = surrogate); "
    "JAX differentiates the rounding (zero almost everywhere)",
    "fake_quantize_dynamic": "straight-through estimator, as fake_quantize",
    "fake_quantize_ema": "straight-through estimator, as fake_quantize",
    "fake_quantize_lsq": "LSQ's straight-through input mask and gradient-scaled step (Esser et al. "
    "2020), not the derivative of the rounding JAX differentiates",
    "fake_quantize_lsq_per_tensor": "LSQ's surrogate, as fake_quantize_lsq",
    "fake_quantize_fixed_bf16": "straight-through estimator, as fake_quantize",
    "complex_with_real": "rlx-jvp refuses mir.abs on complex values (its rule holds for real values "
    "only, as rlx-grad's); the complex rules that hold are checked by complex_norm_sq_backward and "
    "fft cases above and tests/autodiff/test_jvp_rules_extra.py",
}
"""Cases with a real JVP rule whose tangents are deliberately not JAX's, or that rlx-jvp refuses."""

HELD_FIXED = {
    "sce_dense_neg_inf": ({1}, "targets holding exact zeros: JAX's formula masks a zero target with "
                          "`where` (zero derivative there); the loss is linear in the targets, so "
                          "rlx-jvp gives -logit (+inf at a -inf logit), as rlx-grad's `dt = -x g`; "
                          "tests/autodiff/test_jvp_rules.py checks it against central differences"),
}  # fmt: skip
"""Float DATA arguments held constant in the JVP check of a case, with the reason."""

def _not_x(op, index: int) -> bool:
    return index > 0


CONVENTION_CONSTANT = {
    "mir.dequant_matmul": (_not_x, "quantised weights, scales and zero points get no tangent (the "
                           "reverse rule's convention: only the activations are trained through a "
                           "dequantising matmul)"),
    "mir.dequant_grouped_matmul": (_not_x, "as mir.dequant_matmul"),
    "mir.fake_quantize_backward": (lambda op, index: op.operands[index] is op.state,
                                   "the range state gets no tangent (as in reverse mode)"),
    "mir.fake_quantize_lsq_backward_scale": (lambda op, index: op.operands[index] is not op.dy,
                                             "x and the scale get no tangent: the rounding passes "
                                             "straight through, so the rounding error is constant "
                                             "(JAX differentiates it with the rounding held fixed)"),
}  # fmt: skip
"""Operands that get no tangent by the autodiff convention (`autodiff/jvp_rules/mir/quant.py`,
`moe.py`), by op: the arguments feeding them are held constant."""


def is_float(x) -> bool:
    return jnp.issubdtype(x.dtype if hasattr(x, "dtype") else np.asarray(x).dtype, jnp.inexact)


def _function(case):
    return find_function(MODULE, case.name)


@functools.cache
def _prepared(name: str) -> ModuleOp:
    """The case's function alone, through rlx-prepare-ad when an op needs it (composite ops
    without a JVP rule of their own: fused ops, selective_scan, ...), as rlx-jvp asks."""
    module = ModuleOp([find_function(MODULE, name).clone()])
    if any(JVP_RULES.lookup(op) is None and prepare_rewrites(op) for op in module.walk()):
        prepare_for_ad(module)
    return module


def _has_real_rule(function) -> bool:
    rules = [JVP_RULES.lookup(op) for op in function.walk() if op is not function]
    return any(r is not None and r is not zero_tangent and not isinstance(r, NoJvpRule) for r in rules)


def _no_jvp_rule(function) -> str | None:
    """Why an op of (prepared) `function` cannot be pushed forward."""
    for op in function.walk():
        if isinstance(rule := JVP_RULES.lookup(op), NoJvpRule):
            return f"{op.name}: NoJvpRule ({rule.reason})"
        if rule is None and not op.has_trait(IsTerminator) and op is not function:
            return f"{op.name}: no JVP rule, even after rlx-prepare-ad (gaussian splat halves alone)"
    return None


def _convention_constant(op, index: int) -> bool:
    return op.name in CONVENTION_CONSTANT and CONVENTION_CONSTANT[op.name][0](op, index)


def _tangent_args(case, inputs) -> list[int]:
    """Float arguments used only as DATA operands, less those a convention or HELD_FIXED keeps."""
    args = _function(case).body.block.args
    held = HELD_FIXED.get(case.name, (set(), ""))[0]
    chosen = []
    for index, arg in enumerate(args):
        if not is_float(inputs[index]) or index in held:
            continue
        uses = [(u.operation, u.index) for u in arg.uses]
        if any(not operand_roles(op)[i].is_data for op, i in uses):
            continue
        if any(_convention_constant(op, i) for op, i in uses):
            continue
        chosen.append(index)
    return chosen


def jvp_exclusion(case) -> str | None:
    """Why `case` is not pushed forward (None: it is)."""
    inputs = case_inputs(case, _function(case))
    function = find_function(_prepared(case.name), case.name)
    if not any(is_float(x) for x in inputs):
        return "no float argument (integer/bool-only or a constant/draw without operands)"
    if reason := _no_jvp_rule(function):
        return reason
    if not _has_real_rule(function):
        return "only zero_tangent ops (comparisons, quantize/dequantize, draws, rounding)"
    if case.name in NOT_PUSHED_FORWARD:
        return NOT_PUSHED_FORWARD[case.name]
    if not _tangent_args(case, inputs):
        return "every float argument is a mask/label/index operand or convention-constant"
    return None


BY_NAME = {c.name: c for c in CASES}
JVP_CASES = [c for c in CASES if jvp_exclusion(c) is None]
VMAP_CASES = [c for c in CASES if any(is_float(x) for x in case_inputs(c, _function(c)))]


def _tolerance(case) -> dict:
    """f32 tolerances; f16/bf16 values (rounded once per op) and approximate ops looser."""
    types = str(_function(case).function_type)
    if "bf16" in types or "f16" in types:
        return {"rtol": 3e-2, "atol": 3e-2}
    return {"rtol": 2e-3, "atol": 2e-3} if case.approximate else {"rtol": 1e-4, "atol": 1e-5}


def _tangents(case, inputs, wrt):
    rng = np.random.default_rng(zlib.crc32(case.name.encode()))
    return [rng.standard_normal(np.shape(inputs[i])).astype(np.asarray(inputs[i]).dtype) for i in wrt]


def _batched(case, inputs):
    """`SIZE` examples stacked on the float arguments (example 0 is the case's own inputs)."""
    function = _function(case)
    floats = [i for i, x in enumerate(inputs) if is_float(x)]
    extra = [case_inputs(case, function, seed=s) for s in range(1, SIZE)]
    return floats, [np.stack([inputs[i], *(e[i] for e in extra)]) if i in floats else x for i, x in enumerate(inputs)]


COMPILE = {
    "xla_backend_optimization_level": 0,
    "xla_llvm_disable_expensive_passes": True,
    "xla_cpu_use_fusion_emitters": False,
}
"""XLA's cheapest CPU compile: the references are tiny and compiling dominates (these options
cut the file from 45 s to 16 s on 2 cores; the results are the same)."""


@functools.cache
def _references(name: str):
    """`(inputs, wrt, tangents, floats, batched, outputs, tangents out)` of case `name`: JAX's
    `vmap` over the batched float arguments of its `jvp` along `tangents` (the same for every
    example), traced and compiled once for both checks. Example 0 is the case's own inputs, so
    slice 0 of the tangents out is `jax.jvp` at them, and the outputs are `jax.vmap`'s."""
    case = BY_NAME[name]
    inputs = case_inputs(case, _function(case))
    wrt = _tangent_args(case, inputs) if case in JVP_CASES else []
    tangents = _tangents(case, inputs, wrt)
    floats, batched = _batched(case, inputs)
    f = jax_function(MODULE, name, custom_rule="jvp")

    def per_example(args, tangents):
        if not wrt:
            return tuple(f(*args)), ()

        def moved(*chosen):
            given = dict(zip(wrt, chosen, strict=True))
            return tuple(f(*[given.get(i, a) for i, a in enumerate(args)]))

        outs, tans = jax.jvp(moved, tuple(args[i] for i in wrt), tuple(tangents))
        return outs, tuple(t if is_float(o) else None for o, t in zip(outs, tans))

    axes = ([0 if i in floats else None for i in range(len(inputs))], None)
    reference = jax.jit(jax.vmap(per_example, in_axes=axes))
    args = (list(batched), list(tangents))  # arrays as arguments: jit refuses closed-over batches
    outs, tans = reference.lower(*args).compile(COMPILE)(*args)
    return inputs, wrt, tangents, floats, batched, outs, tans


def _single(case) -> ModuleOp:
    return ModuleOp([_function(case).clone()])


def _close(got, want, tolerance, what):
    got, want = np.asarray(got), np.asarray(want)
    assert got.shape == want.shape, what
    wide = np.complex128 if np.iscomplexobj(want) else np.float64
    np.testing.assert_allclose(got.astype(wide), want.astype(wide), equal_nan=True, err_msg=what, **tolerance)


@pytest.mark.parametrize("case", JVP_CASES, ids=[c.name for c in JVP_CASES])
def test_jvp_matches_jax_jvp(case):
    inputs, wrt, tangents, _, _, batched_outs, batched_tans = _references(case.name)
    want_outs = [o[0] for o in batched_outs]
    want_tans = [None if t is None else t[0] for t in batched_tans]
    module = _prepared(case.name).clone()
    build_jvp(module, case.name, [str(i) for i in wrt])
    module.verify()
    got = run_function(module, f"{case.name}_jvp", [*inputs, *tangents])
    count = len(want_outs)
    assert len(got) == 2 * count
    tolerance = _tolerance(case)
    for k, want in enumerate(want_tans):
        if want is not None:  # a tangent at a NaN/inf value (sqrt of a negative) means nothing
            defined = np.isfinite(np.asarray(want_outs[k]))
            what = f"@{case.name} tangent of result {k}"
            _close(np.asarray(got[count + k])[defined], np.asarray(want)[defined], tolerance, what)


@pytest.mark.parametrize("case", VMAP_CASES, ids=[c.name for c in VMAP_CASES])
def test_vmap_matches_jax_vmap(case):
    _, _, _, floats, batched, want, _ = _references(case.name)
    module = _single(case)
    build_vmap(module, case.name, [str(i) for i in floats], SIZE)
    module.verify()
    got = run_function(module, f"{case.name}_vmap", batched)
    assert len(got) == len(want)
    for k, (g, w) in enumerate(zip(got, want, strict=True)):
        if is_float(w):
            _close(g, w, _tolerance(case), f"@{case.name}_vmap result {k}")
        else:
            np.testing.assert_array_equal(np.asarray(g), np.asarray(w), err_msg=f"@{case.name}_vmap result {k}")


def test_every_case_is_compared_or_excluded_with_a_reason():
    """The lists above are not stale: each names a case that would otherwise be compared,
    and every op case with a real JVP rule is pushed forward or listed."""
    names = {c.name for c in CASES}
    assert set(NOT_PUSHED_FORWARD) <= names and set(HELD_FIXED) <= names
    ops = {op.name for f in MODULE.ops for op in f.walk()}
    assert set(CONVENTION_CONSTANT) <= ops
    for case in CASES:
        if case.name in NOT_PUSHED_FORWARD:
            function = find_function(_prepared(case.name), case.name)
            assert _has_real_rule(function) and _no_jvp_rule(function) is None, case.name
    compared = {c.name for c in JVP_CASES}
    listed = {c.name for c in CASES if jvp_exclusion(c) is not None}
    assert compared | listed == names and not compared & listed
