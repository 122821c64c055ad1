"""Pass options as users see them, read from the pass classes themselves.

A pass's options are the fields of its dataclass (xDSL's convention). This module
is the one description of them that users see: `rlx-opt --list-passes`,
`docs/passes.md` (`scripts/gen_pass_docs.py`) and the messages that reject an
option (`check_options`, called by the pipeline parser before the pass is built).
Everywhere an option is named as it is written, in kebab case (`skip-fusion`).

What a field may declare in its `metadata`:

* `syntax`: how a value is written (`NAME=DIMS,...`, `auto|first-fit|...`); a
  syntax of lower-case words joined by `|` is a closed set of values, checked here;
* `example`: a value for the pass's example invocation (required options need one);
* `range`: `(low, high)`, the integers an integer option takes (both included). Every
  integer value must fit i64 (`I64_RANGE`) whatever the option declares.
"""

from __future__ import annotations

import dataclasses
import inspect
import re
from dataclasses import dataclass
from types import NoneType, UnionType
from typing import Any, Literal, Union, get_args, get_origin, get_type_hints

from xdsl.passes import ModulePass
from xdsl.utils.arg_spec import ArgSpec, ArgSpecConvertible, ParameterListType
from xdsl.utils.hints import isa, type_repr

from rlx_xdsl.ir.suggest import did_you_mean

XDSL_VALUE = re.compile(
    r'[A-Za-z0-9_\-]+|[-+]?[0-9]+(\.[0-9]*([eE][-+]?[0-9]+)?)?|"(\\[nfvtr"\\]|[^\n\f\v\r"\\])*"'
)
"""What xDSL's option lexer reads as one value: an identifier, a number or a quoted
string (the IDENT, NUMBER and STRING_LIT rules of `xdsl.utils.arg_spec`); any other
value must be quoted."""

QUOTING_NOTE = "in xdsl-opt, quote any value with characters other than letters, digits, _ and -"

_WORD = re.compile(r"[a-z0-9][a-z0-9_\-]*")
I64_RANGE = (-(2**63), 2**63 - 1)
"""The integers any integer option takes: what an i64 attribute holds."""
_TYPE_WORDS = {int: "an integer", float: "a decimal number (2.5, 1.0)", bool: "true or false", str: "a string"}


class OptionError(ValueError):
    """An option a pass does not accept; the message names it as written (`key=value: ...`)."""


@dataclass(frozen=True)
class PassOption:
    """One option of a pass, as written in a pipeline."""

    name: str
    """Kebab case: `skip-fusion` for the field `skip_fusion`."""
    field: str
    hint: Any
    syntax: str
    """How a value is written: the field's `syntax` metadata, else its type (`<int>`)."""
    default: Any
    required: bool
    example: str | None
    range: tuple[int, int] = I64_RANGE
    """The integers the option takes (`range` metadata, within i64)."""

    @property
    def choices(self) -> tuple[str, ...]:
        """The closed set of values a `|`-joined syntax of words names (else empty)."""
        alternatives = self.syntax.split("|")
        if len(alternatives) < 2 or not all(_WORD.fullmatch(a) for a in alternatives):
            return ()
        return tuple(alternatives)

    @property
    def needs_quotes(self) -> bool:
        """Whether stock `xdsl-opt` may need this option's values quoted: the option
        takes free text (strings that are not one of a closed set of plain words).
        `rlx-opt` quotes such values itself."""
        if self.choices:
            return not all(XDSL_VALUE.fullmatch(c) for c in self.choices)
        return _takes_text(self.hint)

    @property
    def default_text(self) -> str:
        """`(default: 64)`, `(default: empty)`, `(optional)` or `(required)`."""
        value = self.default
        if self.required:
            return "(required)"
        if value is None:
            return "(optional)"
        if isinstance(value, bool):
            return f"(default: {str(value).lower()})"
        if isinstance(value, tuple):
            return f"(default: {','.join(map(str, value))})" if value else "(default: empty)"
        if isinstance(value, str):
            return f'(default: "{value}")' if value else "(default: empty)"
        return f"(default: {value})"

    @property
    def quoting_note(self) -> str:
        """What stock `xdsl-opt` needs (`needs_quotes`), with the example when it shows it."""
        if self.example is not None and self.xdsl_value(self.example) != self.example:
            return f"{QUOTING_NOTE}, as in {self.name}={self.xdsl_value(self.example)}"
        return QUOTING_NOTE

    def xdsl_value(self, value: str) -> str:
        """`value` (a comma-separated list in MLIR's unquoted form) as stock `xdsl-opt` reads it."""
        return ",".join(quote_value(v) for v in value.split(","))


def quote_value(value: str) -> str:
    """`value` as one xDSL option value: quoted (and escaped) unless it already is one."""
    if not value or XDSL_VALUE.fullmatch(value):
        return value
    return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'


def pass_options(cls: type[ModulePass]) -> list[PassOption]:
    """The options of a pass class, in declaration order."""
    try:
        hints = get_type_hints(cls)
    except Exception:  # a plugin pass with unresolvable annotations
        hints = {}
    options = []
    for f in dataclasses.fields(cls):
        if not f.init or f.name == "name":
            continue
        hint = hints.get(f.name, f.type)
        default, required = _default(f, hint)
        syntax = f.metadata.get("syntax") or _syntax(hint)
        low, high = f.metadata.get("range", I64_RANGE)
        option_range = (max(low, I64_RANGE[0]), min(high, I64_RANGE[1]))
        options.append(
            PassOption(f.name.replace("_", "-"), f.name, hint, syntax, default, required, f.metadata.get("example"), option_range)
        )
    return options


def pass_summary(cls: type[ModulePass]) -> str:
    """The opening paragraph of the pass class's own docstring, on one line."""
    return " ".join(_doc_paragraphs(cls)[0].split()) or "(no description)"


def pass_details(cls: type[ModulePass]) -> str:
    """The rest of the pass class's docstring (after the summary), as written."""
    return "\n\n".join(_doc_paragraphs(cls)[1:])


def _doc_paragraphs(cls: type[ModulePass]) -> list[str]:
    doc = cls.__dict__.get("__doc__") or ""
    if doc.startswith(f"{cls.__name__}("):  # dataclasses invent `Name(field: type = ...)` docstrings
        doc = ""
    return inspect.cleandoc(doc).split("\n\n")


def describe_options(cls: type[ModulePass]) -> list[str]:
    """`--name=SYNTAX (default: ...)` for each option (`--list-passes`), with the
    quoting note under each option whose values xdsl-opt may need quoted."""
    lines = []
    for option in pass_options(cls):
        lines.append(f"--{option.name}={option.syntax} {option.default_text}")
        if option.needs_quotes:
            lines.append(f"    ({option.quoting_note})")
    return lines


def example_pipeline(name: str, cls: type[ModulePass]) -> str:
    """The pass with the options that declare an `example` (`rlx-grad{func=loss}`)."""
    given = [f"{o.name}={o.example}" for o in pass_options(cls) if o.example is not None]
    return f"{name}{{{' '.join(given)}}}" if given else name


def xdsl_pipeline(name: str, cls: type[ModulePass]) -> str:
    """`example_pipeline` as stock `xdsl-opt` reads it (values quoted where needed)."""
    given = [f"{o.name}={o.xdsl_value(o.example)}" for o in pass_options(cls) if o.example is not None]
    return f"{name}{{{' '.join(given)}}}" if given else name


def spelled(pass_: ModulePass, include_default: bool = False) -> str:
    """A configured pass as a pipeline element, options in kebab case
    (`rlx-fusion-pipeline{skip-fusion=true}`; xDSL's own `str()` writes field names);
    with `include_default`, every option is spelled out, defaults too.
    A pass that spells itself (an anchored group) keeps its own `str()`."""
    if type(pass_).__str__ is not ArgSpecConvertible.__str__:
        return str(pass_)
    spec = pass_.spec(include_default=include_default)
    return str(ArgSpec(spec.name, {key.replace("_", "-"): value for key, value in spec.parameters.items()}))


# Checking a pass's options -----------------------------------------------------------


def check_options(cls: type[ModulePass], spec: ArgSpec) -> None:
    """Raise `OptionError` unless `spec`'s options are ones `cls` takes, of its types.

    xDSL's own messages name fields in snake case and print Python reprs
    (`Incompatible types: given ('abc',), expected <class 'int'>`); these name the
    option as the user wrote it and say what it takes: `alignment=abc: 'abc' is not an integer`.
    """
    options = {o.field: o for o in pass_options(cls)}
    for key, values in spec.parameters.items():
        option = options.get(key.replace("-", "_"))
        if option is None:
            names = [o.name for o in options.values()]
            known = f" (options: {', '.join(names)})" if names else f" ('{spec.name}' takes no options)"
            raise OptionError(f"unknown option '{key}'{did_you_mean(key, names)}{known}")
        _check_value(option, key, values)
    for option in options.values():
        if option.required and option.field not in {k.replace("-", "_") for k in spec.parameters}:
            raise OptionError(f"option '{option.name}' is required ({option.name}={option.syntax})")


def _check_value(option: PassOption, key: str, values: ParameterListType) -> None:
    written = f"{key}={','.join(_written(v) for v in values)}" if values else key
    _check_types(option, key, written, values)
    low, high = option.range
    for value in values:
        if isinstance(value, int) and not isinstance(value, bool) and not low <= value <= high:
            raise OptionError(f"{written}: {value} is out of range (an integer in [{low}, {high}])")


def _check_types(option: PassOption, key: str, written: str, values: ParameterListType) -> None:
    hint = option.hint
    if isinstance(hint, str):  # an annotation that could not be resolved: xDSL will judge it
        return
    if not values:  # a bare name: None, or an empty list (xDSL's reading of `arguments`)
        if _allows_none(hint) or isa((), hint):
            return
        raise OptionError(f"{written}: expects {_words(hint)}")
    if len(values) == 1 and isa(values[0], hint):
        value = values[0]
        if option.choices and isinstance(value, str) and value not in option.choices:
            raise OptionError(
                f"{written}: '{value}' is not one of {', '.join(option.choices)}{did_you_mean(value, option.choices)}"
            )
        return
    if isa(values, hint):
        return
    element = _element_hint(hint)
    if element is None and len(values) > 1:
        raise OptionError(f"{written}: expects one value, {_words(hint)}, not {len(values)}")
    bad = next((v for v in values if not isa(v, element if element is not None else hint)), values[0])
    raise OptionError(f"{written}: '{_written(bad)}' is not {_words(element if element is not None else hint)}")


def _written(value: object) -> str:
    return str(value).lower() if isinstance(value, bool) else str(value)


# Reading type hints --------------------------------------------------------------------


def _members(hint: Any) -> tuple[Any, ...]:
    """The alternatives of a union (`int | None`: `(int, NoneType)`), else `(hint,)`."""
    return get_args(hint) if get_origin(hint) in (Union, UnionType) else (hint,)


def _allows_none(hint: Any) -> bool:
    return NoneType in _members(hint)


def _element_hint(hint: Any) -> Any:
    """The element type of the `tuple[X, ...]` a hint allows, if any."""
    for member in _members(hint):
        if get_origin(member) is tuple and len(get_args(member)) == 2 and get_args(member)[1] is ...:
            return get_args(member)[0]
    return None


def _words(hint: Any) -> str:
    """What a type takes, in words: `an integer`, `a list of integers`, `one of fast, none`."""
    parts = []
    for member in _members(hint):
        if member is NoneType:
            continue
        if get_origin(member) is Literal:
            parts.append(f"one of {', '.join(map(str, get_args(member)))}")
        elif (element := _element_hint(member)) is not None:
            parts.append(f"a comma-separated list of {_plural(element)}")
        else:
            parts.append(_TYPE_WORDS.get(member, f"a value of type {type_repr(member)}"))
    return " or ".join(parts)


def _plural(hint: Any) -> str:
    words = {int: "integers", float: "decimal numbers", bool: "booleans", str: "strings"}
    return " or ".join(words.get(m, type_repr(m)) for m in _members(hint))


def _takes_text(hint: Any) -> bool:
    """Whether a hint admits free strings (`str`, `tuple[str | int, ...]`), not only literals."""
    for member in _members(hint):
        if member is str:
            return True
        element = _element_hint(member)
        if element is not None and _takes_text(element):
            return True
    return False


def _syntax(hint: Any) -> str:
    """`<int>`, `<bool>`, `<tuple[str, ...]>`: the type without its `None`."""
    members = [m for m in _members(hint) if m is not NoneType]
    return f"<{'|'.join(type_repr(m) for m in members)}>"


def _default(f: dataclasses.Field[Any], hint: Any) -> tuple[Any, bool]:
    """The field's default value and whether the option is required (xDSL's rule:
    no default and `None` not allowed)."""
    if f.default is not dataclasses.MISSING:
        return f.default, False
    if f.default_factory is not dataclasses.MISSING:
        return f.default_factory(), False
    return None, not _allows_none(hint)
