"""Automatic mixed precision: `rlx-amp` and its policies.

* `policy.py`: what a policy is (a choice per op), RLX's class policies;
* `presets.py`: PyTorch autocast's per-op lists (`torch-cuda`, `torch-cpu`);
* `rewrite.py`: the pattern rewrite that inserts the casts;
* `mixed_precision.py`: the pass and its options.

From Python: `AutoMixedPrecisionPass(policy="auto-mixed").apply(ctx, module)`.
"""

from rlx_xdsl.transforms.amp.mixed_precision import AutoMixedPrecisionPass

__all__ = ["AutoMixedPrecisionPass"]
