"""What the expert-op tests (`test_moe.py`, `test_moe_gguf.py`) share: the token-loop
oracle and the in-place expansion of one op by its unfuse rule."""

import numpy as np

from rlx_xdsl.ir.emitter import Emitter
from rlx_xdsl.run import run_function


def token_loop(x, w, expert):
    """The oracle: one token at a time."""
    out = np.zeros((x.shape[0], w.shape[2]))
    for m in range(x.shape[0]):
        out[m] = x[m] @ w[int(expert[m])]
    return out


def before_and_after_expansion(module, inputs, op_type, expand):
    """`@f`'s result on `inputs`, and again after `module`'s one `op_type` op is replaced
    by what `expand` (its unfuse rule) emits before it; and the names of the ops left."""
    (whole,) = run_function(module, "f", inputs)
    (op,) = [op for op in module.walk() if isinstance(op, op_type)]
    (value,) = expand(Emitter.before(op), op)
    op.result.replace_all_uses_with(value)
    op.detach()
    op.erase()
    module.verify()
    (expanded,) = run_function(module, "f", inputs)
    return whole, expanded, {o.name for o in module.walk()}
