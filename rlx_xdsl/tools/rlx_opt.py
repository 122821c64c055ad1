"""rlx-opt: run RLX pass pipelines over .mlir files (minimal bootstrap version)."""

from __future__ import annotations

from xdsl.xdsl_opt_main import xDSLOptMain

from rlx_xdsl.context import RLX_DIALECTS
from rlx_xdsl.transforms import get_all_passes


class RlxOptMain(xDSLOptMain):
    version_format = "rlx-opt {version} (xdsl {xdsl_version})"

    def register_all_dialects(self):
        super().register_all_dialects()
        for name, factory in RLX_DIALECTS.items():
            if name not in self.ctx.registered_dialect_names:
                self.ctx.register_dialect(name, factory)

    def register_all_passes(self):
        super().register_all_passes()
        for name, loader in get_all_passes().items():
            self.available_passes.setdefault(name, loader)


def main(argv=None) -> None:
    RlxOptMain(description="RLX modular optimizer driver", args=argv).run()


if __name__ == "__main__":
    main()
