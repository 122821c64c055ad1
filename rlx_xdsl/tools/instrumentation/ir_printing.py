"""IR dumps around passes: `--mlir-print-ir-before/after[-all]`, `-after-change`,
`-after-failure`, `-module-scope` and `-tree-dir`, in mlir-opt's format.

Each dump is a header, `// -----// IR Dump After rlx-dce (rlx-dce) //----- //`,
then the op the pass ran on (the anchored `func.func` inside `func.func(...)`,
or with module scope the whole module), written to stderr or, with a tree
directory, to one file per dump named as MLIR names them:
`DIR/builtin_module_no-symbol-name/func_func_f/0_1_cse.mlir`.
"""

from __future__ import annotations

import os
import sys
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from xdsl.dialects.builtin import StringAttr
from xdsl.ir import Operation
from xdsl.passes import ModulePass

from rlx_xdsl.transforms.instrument import PassInstrumentation
from rlx_xdsl.transforms.pipeline import AnchoredPipelinePass

ALL = None
"""A pass filter matching every pass."""


@dataclass
class IRPrinting(PassInstrumentation):
    """Dumps the IR before and/or after the passes named in `before`/`after` (`ALL`: every pass)."""

    print_ir: Callable[[Operation], str]
    before: frozenset[str] | None = frozenset()
    after: frozenset[str] | None = frozenset()
    after_change: bool = False
    after_failure: bool = False
    module_scope: bool = False
    tree_dir: str | None = None
    write_file: Callable[[str, str], None] | None = None
    """How a tree-directory file is written (atomically, by `rlx-opt`)."""

    _fingerprints: list[str | None] = field(default_factory=list[str | None])
    _counters: Counter[str] = field(default_factory=Counter[str])
    _prefix: list[int] = field(default_factory=list[int])

    def before_pass(self, pass_: ModulePass, op: Operation) -> None:
        if isinstance(pass_, AnchoredPipelinePass):
            self._prefix.append(self._next_number(op))
            return
        if _selected(self.before, pass_):
            self._dump("Before", pass_, op)
        self._fingerprints.append(self.print_ir(op) if self.after_change else None)

    def after_pass(self, pass_: ModulePass, ops: Sequence[Operation], changed: bool) -> None:
        if isinstance(pass_, AnchoredPipelinePass):
            self._prefix.pop()
            return
        before = self._fingerprints.pop()
        if not _selected(self.after, pass_) or (self.after_change and not changed):
            return
        for op in ops:
            if before is None or self.print_ir(op) != before:
                self._dump("After", pass_, op)

    def after_pass_failed(self, pass_: ModulePass, ops: Sequence[Operation], error: BaseException) -> None:
        if isinstance(pass_, AnchoredPipelinePass):
            self._prefix.pop()
            return
        self._fingerprints.pop()
        if self.after_failure:
            for op in ops:
                self._dump("After", pass_, op, failed=True)

    # Writing --------------------------------------------------------------------------------

    def _dump(self, when: str, pass_: ModulePass, op: Operation, failed: bool = False) -> None:
        name = pass_.name
        header = f"// -----// IR Dump {when} {name}{' Failed' if failed else ''} ({name})"
        target = op
        if self.module_scope and op.parent_op() is not None:
            header += f" ('{op.name}' operation{_symbol_suffix(op)})"
            target = _root(op)
        text = f"{header} //----- //\n{self.print_ir(target)}\n\n"
        if target is not op:
            text += "\n"
        if self.tree_dir is None:
            sys.stderr.write(text)
            return
        number = self._next_number(op)
        filename = "_".join(map(str, [*self._prefix, number])) + f"_{name}.mlir"
        assert self.write_file is not None
        self.write_file(os.path.join(self.tree_dir, *map(_directory_name, _ancestry(op)), filename), text)

    def _next_number(self, op: Operation) -> int:
        """The next dump number at `op`: each op counts its dumps and anchored groups, as MLIR does."""
        key = "/".join(map(_directory_name, _ancestry(op)))
        number = self._counters[key]
        self._counters[key] += 1
        return number


def _selected(names: frozenset[str] | None, pass_: ModulePass) -> bool:
    return names is ALL or pass_.name in names


def _ancestry(op: Operation) -> list[Operation]:
    """`op` and the ops enclosing it, outermost first."""
    chain = [op]
    while (parent := chain[-1].parent_op()) is not None:
        chain.append(parent)
    return chain[::-1]


def _root(op: Operation) -> Operation:
    return _ancestry(op)[0]


def _symbol(op: Operation) -> str | None:
    name = op.properties.get("sym_name") or op.attributes.get("sym_name")
    return name.data if isinstance(name, StringAttr) else None


def _symbol_suffix(op: Operation) -> str:
    symbol = _symbol(op)
    return f": @{symbol}" if symbol is not None else ""


def _directory_name(op: Operation) -> str:
    """MLIR's tree-directory name of an op: `func_func_f`, `builtin_module_no-symbol-name`."""
    return f"{op.name.replace('.', '_')}_{_symbol(op) or 'no-symbol-name'}"
