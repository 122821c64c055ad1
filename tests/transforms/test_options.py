"""Pass options as users see them (`transforms/options.py`): names, syntax, which values
stock xdsl-opt needs quoted (derived from the option's type and values), and the
messages that reject an option."""

from dataclasses import dataclass, field
from typing import Literal

import pytest
from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass
from xdsl.utils.arg_spec import ArgSpec, parse_spec

from rlx_xdsl.transforms.options import OptionError, check_options, pass_options, quote_value


@dataclass(frozen=True)
class KindsPass(ModulePass):
    """One option of each kind."""

    name = "test-kinds"

    size: int
    ratio: float = 0.5
    skip_all: bool = False
    label: str | None = None
    names: tuple[str, ...] = ()
    dims: tuple[int, ...] = (1,)
    flavour: str = field(default="plain", metadata={"syntax": "plain|spicy|extra-hot"})
    odd: str = field(default="a", metadata={"syntax": "a|b.c"})
    mode: Literal["fast", "slow"] = "fast"
    pairs: tuple[str, ...] = field(default=(), metadata={"syntax": "KEY=VALUE,...", "example": "k=v"})

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        pass


OPTIONS = {o.name: o for o in pass_options(KindsPass)}


def test_names_are_kebab_case_and_syntax_comes_from_the_type_or_the_metadata():
    assert list(OPTIONS) == ["size", "ratio", "skip-all", "label", "names", "dims", "flavour", "odd", "mode", "pairs"]
    assert OPTIONS["label"].syntax == "<str>"  # `None` only makes it optional
    assert OPTIONS["flavour"].choices == ("plain", "spicy", "extra-hot")
    assert OPTIONS["pairs"].choices == ()
    assert [OPTIONS[n].default_text for n in ("size", "label", "names", "skip-all", "flavour")] == [
        "(required)", "(optional)", "(default: empty)", "(default: false)", '(default: "plain")'
    ]  # fmt: skip


def test_an_empty_string_default_reads_empty():
    @dataclass(frozen=True)
    class BlankPass(ModulePass):
        name = "test-blank"
        path: str = ""

    assert pass_options(BlankPass)[0].default_text == "(default: empty)"


def test_which_options_need_quotes_in_xdsl_opt_follows_from_type_and_values():
    quoted = {name for name, o in OPTIONS.items() if o.needs_quotes}
    # free text (str, tuples of str) may need quotes; numbers, booleans, literals and
    # closed sets of plain words never do; a closed set with a non-word value does.
    assert quoted == {"label", "names", "pairs", "odd"}
    assert OPTIONS["pairs"].quoting_note.endswith('as in pairs="k=v"')


@pytest.mark.parametrize(
    ("value", "quoted"),
    [("x", "x"), ("2x8", "2x8"), ("-1.5", "-1.5"), ("x=2x8", '"x=2x8"'), ("a.b", '"a.b"'), ('"q"', '"q"'), ('a"b', '"a\\"b"')],
)
def test_quote_value(value, quoted):
    assert quote_value(value) == quoted


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("test-kinds{size=abc}", "size=abc: 'abc' is not an integer"),
        ("test-kinds{size=1,2}", "size=1,2: expects one value, an integer, not 2"),
        ("test-kinds{size=1 ratio=x}", "ratio=x: 'x' is not a decimal number (2.5, 1.0)"),
        ("test-kinds{size=1 skip-all=1}", "skip-all=1: '1' is not true or false"),
        ("test-kinds{size=1 dims=1,x}", "dims=1,x: 'x' is not an integer"),
        ("test-kinds{size=1 ratio=2}", "ratio=2: '2' is not a decimal number (2.5, 1.0)"),
        ("test-kinds{size=1 flavour=spicey}", "flavour=spicey: 'spicey' is not one of plain, spicy, extra-hot; did you mean 'spicy'?"),
        ("test-kinds{size=1 mode=medium}", "mode=medium: 'medium' is not one of fast, slow"),
        ("test-kinds{size=1 skip_al=true}", "unknown option 'skip_al'; did you mean 'skip-all'? (options: size, ratio, skip-all"),
        ("test-kinds{ratio=1.0}", "option 'size' is required (size=<int>)"),
        ("test-kinds{size}", "size: expects an integer"),
    ],
)
def test_rejected_options_are_named_as_written_with_what_they_take(spec, message):
    with pytest.raises(OptionError) as error:
        check_options(KindsPass, parse_spec(spec))
    assert str(error.value).startswith(message)


def test_accepted_options_build_the_pass():
    spec = parse_spec('test-kinds{size=3 ratio=2.0 skip_all=true label="a.b" names=x,y mode=slow pairs="k=v"}')
    check_options(KindsPass, spec)
    built = KindsPass.from_spec(spec)
    assert (built.size, built.skip_all, built.label, built.names, built.pairs) == (3, True, "a.b", ("x", "y"), ("k=v",))
    check_options(KindsPass, ArgSpec("test-kinds", {"size": (1,), "label": ()}))  # an optional flag without value


@dataclass(frozen=True)
class RangedPass(ModulePass):
    """Integer options with and without a declared range."""

    name = "test-ranged"

    count: int = field(default=1, metadata={"range": (1, 8)})
    offset: int = 0
    dims: tuple[int, ...] = ()

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        pass


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("test-ranged{count=0}", "count=0: 0 is out of range (an integer in [1, 8])"),
        ("test-ranged{count=9}", "count=9: 9 is out of range (an integer in [1, 8])"),
        # every integer must fit i64, declared range or not
        ("test-ranged{offset=9223372036854775808}",
         "offset=9223372036854775808: 9223372036854775808 is out of range (an integer in [-9223372036854775808, 9223372036854775807])"),
        ("test-ranged{dims=1,-99999999999999999999}", "dims=1,-99999999999999999999: -99999999999999999999 is out of range"),
    ],
)  # fmt: skip
def test_integer_options_outside_their_range_are_rejected(spec, message):
    with pytest.raises(OptionError) as error:
        check_options(RangedPass, parse_spec(spec))
    assert str(error.value).startswith(message)


def test_integer_options_at_the_ends_of_their_range_are_accepted():
    check_options(RangedPass, parse_spec("test-ranged{count=1 offset=-9223372036854775808 dims=9223372036854775807}"))
    check_options(RangedPass, parse_spec("test-ranged{count=8}"))
