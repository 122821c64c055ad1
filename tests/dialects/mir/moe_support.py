"""What the expert-op tests (`test_moe.py`, `test_moe_gguf.py`) share: the token-loop
oracle and the in-place expansion of one op by its unfuse rule."""

import numpy as np

from rlx_xdsl.emitter import Emitter


def token_loop(x, w, expert):
    """The oracle: one token at a time."""
    out = np.zeros((x.shape[0], w.shape[2]))
    for m in range(x.shape[0]):
        out[m] = x[m] @ w[int(expert[m])]
    return out


def expand_in_place(module, op_type, expand) -> set[str]:
    """Replace `module`'s one `op_type` op by what `expand` (its unfuse rule) emits before
    it; verify; return the names of the ops now in the module."""
    (op,) = [op for op in module.walk() if isinstance(op, op_type)]
    (value,) = expand(Emitter.before(op), op)
    op.result.replace_all_uses_with(value)
    op.detach()
    op.erase()
    module.verify()
    return {o.name for o in module.walk()}
