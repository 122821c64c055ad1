"""The `xdsl.universe` entry point: stock `xdsl-opt` sees RLX dialects and passes.

Kept import-light because every xdsl-opt start imports it.
"""

from xdsl.universe import Universe

from rlx_xdsl.context import RLX_DIALECTS
from rlx_xdsl.transforms import get_all_passes

RLX_UNIVERSE = Universe(all_dialects=dict(RLX_DIALECTS), all_passes=get_all_passes())
