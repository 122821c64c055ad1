"""rlx-xdsl: an MLIR-style ML graph compiler (RLX's middle-end) on xDSL."""

__version__ = "0.1.0"

# Modules moved into packages in 0.2 (the root is grouped by layer: `ARCHITECTURE.md`).
# Their old import paths keep working, with a DeprecationWarning, for one release.
_MOVED = {
    **{name: f"ir.{name}" for name in ("parser", "printer", "source", "locations", "literals", "dense")},
    **{name: f"ir.{name}" for name in ("diagnostics", "dominance", "suggest", "graph", "sharding", "emitter")},
    **{name: f"formats.{name}" for name in ("weights", "quantformats", "quantpack", "quantpack_k")},
    "builder": "building.builder",
    "memo": "support.memo",
    "progress": "support.progress",
    "structured_builder": "building.structured_builder",
}


def _install_moved_module_aliases() -> None:
    import importlib
    import importlib.abc
    import importlib.util
    import sys
    import warnings

    class MovedModules(importlib.abc.MetaPathFinder, importlib.abc.Loader):
        """`import rlx_xdsl.building.builder` gives `rlx_xdsl.building.builder`, with a warning."""

        def find_spec(self, fullname, path, target=None):
            package, _, name = fullname.rpartition(".")
            if package != __name__ or name not in _MOVED:
                return None
            return importlib.util.spec_from_loader(fullname, self)

        def create_module(self, spec):
            new = f"{__name__}.{_MOVED[spec.name.rpartition('.')[2]]}"
            warnings.warn(f"{spec.name} moved to {new}", DeprecationWarning, stacklevel=2)
            return importlib.import_module(new)

        def exec_module(self, module):
            pass  # the moved module is already imported

    sys.meta_path.insert(0, MovedModules())  # before any finder that could find a stale copy


_install_moved_module_aliases()
