"""Hypothesis profiles.

`ci` (the default) derandomizes every property test: each run checks the same examples, so
a red run is reproducible and a green one does not hide a failure that the next run might
draw. `explore` draws fresh examples, for hunting bugs locally:
`pytest --hypothesis-profile=explore tests/autodiff` (add `--hypothesis-seed=N` to replay one).
"""

from hypothesis import settings
from hypothesis.vendor.pretty import for_type_by_name

from rlx_xdsl.testing import vision_shim

settings.register_profile("ci", derandomize=True)
settings.register_profile("explore", derandomize=False)
settings.load_profile("ci")

# PyPI's torchvision, where installed, must be prepared before anything imports
# `transformers` (which imports torchvision): see `rlx_xdsl/testing/vision_shim.py`.
vision_shim.prepare()


def _print_module(module, printer, cycle) -> None:
    """A failing example's module as IR text: Hypothesis's default repr of an xDSL module
    walks every object field by field and takes minutes on a ten-op graph."""
    printer.text(str(module))


for_type_by_name("xdsl.dialects.builtin", "ModuleOp", _print_module)
