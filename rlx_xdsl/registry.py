"""Per-op knowledge kept in tables keyed by op class.

Interpreter kernels, graph-generator recipes, VJP rules, lowerings and fusion
facts are all "one entry per op". `OpRegistry` is the one shape they share:

    KERNELS = OpRegistry("interpreter kernel")

    @KERNELS.register(AddOp, SubOp)
    def binary(op, lhs, rhs): ...

    KERNELS.lookup(op)         # the entry for op's class, or None
    KERNELS[AddOp]             # the entry, or MissingEntry naming the op
    KERNELS.missing(MIR.operations)   # ops with no entry, for coverage tests

Entries are keyed by the op *class*, never by its name, so a dialect of another
project registers its own ops the same way and two ops with the same short name
in different dialects cannot collide. A subclass inherits no entry: every op
class is registered explicitly, next to its group.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from typing import Generic, TypeVar

from xdsl.ir import Operation

T = TypeVar("T")
OpClass = type[Operation]


class MissingEntry(KeyError):
    """No entry for an op class; `str()` names the registry and the op."""

    def __init__(self, what: str, op_class: OpClass):
        super().__init__(f"no {what} for '{op_class.name}'")
        self.message = f"no {what} for '{op_class.name}'"
        self.op_class = op_class

    def __str__(self) -> str:
        return self.message


class OpRegistry(Generic[T]):
    """A mapping from op classes to entries of one kind (kernels, recipes, rules...)."""

    def __init__(self, what: str):
        self.what = what
        """What an entry is, for messages: "interpreter kernel", "VJP rule"..."""
        self._entries: dict[OpClass, T] = {}
        # Bumped by every add and remove, so caches derived from the entries can tell they
        # are stale (a length cannot: removing one entry and adding another keeps it).
        self.version = 0

    def add(self, op_class: OpClass, entry: T) -> None:
        """Register `entry` for `op_class`; registering a class twice is a bug."""
        if op_class in self._entries:
            raise ValueError(f"'{op_class.name}' already has a {self.what}")
        self._entries[op_class] = entry
        self.version += 1

    def remove(self, op_class: OpClass) -> T:
        """Unregister `op_class` (tests that register a temporary entry undo it)."""
        entry = self._entries.pop(op_class)
        self.version += 1
        return entry

    def register(self, *op_classes: OpClass) -> Callable[[T], T]:
        """Decorator registering the decorated entry for every class in `op_classes`."""

        def decorate(entry: T) -> T:
            for op_class in op_classes:
                self.add(op_class, entry)
            return entry

        return decorate

    def lookup(self, op: Operation | OpClass) -> T | None:
        """The entry for `op`'s class (or for the class itself), or None."""
        return self._entries.get(op if isinstance(op, type) else type(op))

    def __getitem__(self, op: Operation | OpClass) -> T:
        op_class = op if isinstance(op, type) else type(op)
        try:
            return self._entries[op_class]
        except KeyError:
            raise MissingEntry(self.what, op_class) from None

    def __contains__(self, op: Operation | OpClass) -> bool:
        return self.lookup(op) is not None

    def __iter__(self) -> Iterator[OpClass]:
        return iter(self._entries)

    def __len__(self) -> int:
        return len(self._entries)

    def missing(self, op_classes: Iterable[OpClass]) -> list[str]:
        """Names of the ops in `op_classes` without an entry, sorted (empty when covered)."""
        return sorted(c.name for c in op_classes if c not in self._entries)
