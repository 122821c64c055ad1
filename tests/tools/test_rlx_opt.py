"""rlx-opt as users see it: exit codes, located diagnostics, pipelines, -o, --verify-diagnostics.

Most tests run the driver in-process (`run_opt`), where test-only passes can be
registered; a few run the installed `rlx-opt` script to check the real process
boundary (exit status, no traceback, stdin, files on disk). Expected line numbers
are computed from the test inputs themselves (`line_of`), not hard-coded.
"""

import dataclasses
import inspect
import os
import stat
import subprocess
import sys
import threading
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from xdsl.context import Context
from xdsl.dialects.builtin import IntegerAttr, ModuleOp, TensorType, i32
from xdsl.dialects.func import FuncOp
from xdsl.passes import ModulePass
from xdsl.rewriter import Rewriter
from xdsl.utils.exceptions import PassFailedException, VerifyException

from rlx_xdsl.ir.diagnostics import OpError
from rlx_xdsl.ir.locations import LineIndex
from rlx_xdsl.tools import rlx_opt
from rlx_xdsl.tools.expectations import parse_expectations
from rlx_xdsl.tools.rlx_opt import run_opt
from rlx_xdsl.transforms import get_all_passes
from rlx_xdsl.transforms import pipeline as pipeline_module
from rlx_xdsl.transforms.pipeline import ReportsChanges, parse_pipeline

# Inputs -----------------------------------------------------------------------------------

GOOD = """\
func.func @f(%a: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %0 = mir.relu %a : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %1 = mir.relu %a : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %dead = mir.neg %a : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %2 = mir.add %0, %1 : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  func.return %2 : tensor<2x3xf32>
}
func.func @g(%b: tensor<4xf32>) -> tensor<4xf32> {
  %0 = mir.abs %b : (tensor<4xf32>) -> tensor<4xf32>
  %1 = mir.abs %b : (tensor<4xf32>) -> tensor<4xf32>
  %2 = mir.mul %0, %1 : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  func.return %2 : tensor<4xf32>
}
"""

BAD_BROADCAST = "%1 = mir.add %a, %b : (tensor<2x3xf32>, tensor<4xf32>) -> tensor<2x3xf32>"
BROADCAST_MESSAGE = "'mir.add' shapes [2, 3], [4] do not broadcast"

BAD_VERIFY = f"""\
// A verifier error in the second op of the function.
func.func @f(%a: tensor<2x3xf32>, %b: tensor<4xf32>) -> tensor<2x3xf32> {{
  %0 = mir.relu %a : (tensor<2x3xf32>) -> tensor<2x3xf32>
  {BAD_BROADCAST}
  func.return %0 : tensor<2x3xf32>
}}
"""

BAD_PARSE = """\
func.func @f(%a: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %0 = mir.relu %a : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %1 = mir.relu %0 : (tensor<2x3xf32>) -> tensor<2x3xq32>
  func.return %1 : tensor<2x3xf32>
}
"""


def line_of(text: str, needle: str, start_line: int = 1) -> int:
    """1-based number of the first line at or after `start_line` that contains `needle`."""
    for number, line in enumerate(text.splitlines(), start=1):
        if number >= start_line and needle in line:
            return number
    raise AssertionError(f"{needle!r} not in the test input")


def col_of(text: str, needle: str) -> int:
    line = text.splitlines()[line_of(text, needle) - 1]
    return len(line) - len(line.lstrip()) + 1


# Test-only passes ----------------------------------------------------------------------------


@dataclass(frozen=True)
class RaisePass(ModulePass):
    """Test pass: raise the kind of exception named by `kind`."""

    name = "test-raise"

    kind: str = "verify"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        target = next(o for o in op.walk() if o.name == "mir.add")
        match self.kind:
            case "verify":
                raise VerifyException("raised a verify exception")
            case "pass-failed":
                raise PassFailedException("raised a pass failure")
            case "value":
                raise ValueError("raised a value error")
            case "op":
                raise OpError(target, "this add is wrong")
            case _:
                raise AssertionError(self.kind)


@dataclass(frozen=True)
class BreakPass(ModulePass):
    """Test pass: give every mir.add an i32 result type the verifier must reject."""

    name = "test-break"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        for add in [o for o in op.walk() if o.name == "mir.add"]:
            shape = add.results[0].type.get_shape()
            Rewriter.replace_value_with_new_type(add.results[0], TensorType(i32, shape))


@dataclass(frozen=True)
class BreakSilentlyPass(ReportsChanges, ModulePass):
    """Test pass: break the IR like `test-break`, then claim it changed nothing."""

    name = "test-break-silently"

    def apply_and_report(self, ctx: Context, op: ModuleOp) -> bool:
        BreakPass().apply(ctx, op)
        return False


@dataclass(frozen=True)
class CountSiblingsPass(ModulePass):
    """Test pass: tag each function with how many ops the module it is given holds."""

    name = "test-count-siblings"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        count = len(list(op.ops))
        for child in op.ops:
            if isinstance(child, FuncOp):
                child.attributes["siblings"] = IntegerAttr(count, 64)


@dataclass(frozen=True)
class EraseFunctionsPass(ModulePass):
    """Test pass: erase every function it sees."""

    name = "test-erase-functions"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        for child in list(op.ops):
            if isinstance(child, FuncOp):
                child.detach()
                child.erase()


@dataclass(frozen=True)
class OptionsPass(ModulePass):
    """Test pass with one option of each kind,
    documented over two lines.

    A second paragraph that --list-passes leaves out.
    """

    name = "test-options"

    count: int = 3
    label: str | None = None
    dims: tuple[int, ...] = (1, 2)
    flag: bool = False
    mode: str = "fast"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        pass


@dataclass(frozen=True)
class RequiredOptionPass(ModulePass):
    name = "test-required"

    size: int

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        pass


@dataclass(frozen=True)
class SyntaxPass(ModulePass):
    """Test pass whose option declares how it is written."""

    name = "test-syntax"

    pairs: tuple[str, ...] = field(default=(), metadata={"syntax": "KEY=VALUE,..."})

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        pass


TEST_PASSES = (
    RaisePass,
    BreakPass,
    BreakSilentlyPass,
    CountSiblingsPass,
    EraseFunctionsPass,
    OptionsPass,
    RequiredOptionPass,
    SyntaxPass,
)
TEST_REGISTRY = {p.name: (lambda p=p: p) for p in TEST_PASSES}


@pytest.fixture(autouse=True)
def _register_test_passes(monkeypatch):
    """rlx-opt run in-process also sees the test-only passes (the real registry is untouched)."""
    real = rlx_opt.get_all_passes
    monkeypatch.setattr(rlx_opt, "get_all_passes", lambda: {**real(), **TEST_REGISTRY})
    monkeypatch.delenv("RLX_DEBUG", raising=False)


# Runners ------------------------------------------------------------------------------------


@dataclass
class Run:
    status: int
    out: str
    err: str


@pytest.fixture
def opt(capsys):
    """Run rlx-opt in-process."""

    def run(*args: object) -> Run:
        status = run_opt([str(a) for a in args])
        out, err = capsys.readouterr()
        return Run(status, out, err)

    return run


def _rlx_opt_command() -> list[str]:
    script = Path(sys.executable).with_name("rlx-opt")
    return [str(script)] if script.exists() else [sys.executable, "-m", "rlx_xdsl.tools.rlx_opt"]


def cli(*args: object, stdin: str | None = None, cwd: Path | None = None) -> Run:
    """Run the installed rlx-opt in a subprocess."""
    env = {k: v for k, v in os.environ.items() if k != "RLX_DEBUG"}
    proc = subprocess.run(
        [*_rlx_opt_command(), *map(str, args)],
        input=stdin,
        capture_output=True,
        text=True,
        env=env,
        cwd=cwd,
        timeout=120,
    )
    return Run(proc.returncode, proc.stdout, proc.stderr)


@pytest.fixture
def write(tmp_path):
    def write(name: str, text: str) -> Path:
        path = tmp_path / name
        path.write_text(text)
        return path

    return write


# Parse errors ---------------------------------------------------------------------------------


def test_parse_error_is_located_without_traceback(write):
    path = write("bad.mlir", BAD_PARSE)
    run = cli(path)
    assert run.status == 1
    assert run.out == ""
    line = line_of(BAD_PARSE, "q32")
    col = BAD_PARSE.splitlines()[line - 1].index("q32") + 1
    assert run.err.splitlines()[0] == f"{path}:{line}:{col}: error: Expected shape type."
    assert "Traceback" not in run.err


def test_parse_error_in_a_later_chunk_reports_the_file_line(opt, write):
    text = GOOD + "// -----\n" + GOOD + "// -----\n" + BAD_PARSE
    path = write("split.mlir", text)
    run = opt(path, "--split-input-file")
    assert run.status == 1
    assert run.err.startswith(f"{path}:{line_of(text, 'q32')}:")
    assert run.out.count("func.func @f") == 2  # the two good chunks are still printed


def test_undefined_value_is_reported_at_its_use(opt, write):
    text = "func.func @f() {\n  %0 = mir.relu %x : (tensor<2xf32>) -> tensor<2xf32>\n  func.return\n}\n"
    path = write("undef.mlir", text)
    run = opt(path)
    assert run.status == 1
    assert run.err.startswith(f"{path}:2:3: error: use of undefined value '%x'")


def test_out_of_range_literal_is_located_at_the_literal(opt, write):
    text = "func.func @f() -> i8 {\n  %0 = arith.constant 300 : i8\n  func.return %0 : i8\n}\n"
    path = write("range.mlir", text)
    run = opt(path)
    assert run.status == 1
    assert run.err.startswith(f"{path}:2:23: error: integer literal 300 is out of range for i8 [-128, 255]")


# Verifier errors ------------------------------------------------------------------------------


def test_verifier_error_is_located_at_the_failing_op(opt, write):
    path = write("verify.mlir", BAD_VERIFY)
    run = opt(path)
    line, col = line_of(BAD_VERIFY, BAD_BROADCAST), col_of(BAD_VERIFY, BAD_BROADCAST)
    assert run.status == 1
    assert run.out == ""
    lines = run.err.splitlines()
    assert lines[0] == f"{path}:{line}:{col}: error: {BROADCAST_MESSAGE}"
    assert lines[1] == f"  {BAD_BROADCAST}"  # the source line, then a caret under the op
    assert lines[2] == " " * (col - 1) + "^"
    assert lines[3] == f'{path}:{line}:{col}: note: see current operation: %1 = "mir.add"(%a, %b) : (tensor<2x3xf32>, tensor<4xf32>) -> tensor<2x3xf32>'


def test_verifier_error_deep_inside_nested_regions(opt, write):
    text = (
        "builtin.module {\n"
        "  builtin.module {\n"
        "    func.func @f(%a: tensor<2x3xf32>, %b: tensor<4xf32>) -> tensor<2x3xf32> {\n"
        f"      {BAD_BROADCAST}\n"
        "      func.return %a : tensor<2x3xf32>\n"
        "    }\n"
        "  }\n"
        "}\n"
    )
    path = write("nested.mlir", text)
    run = opt(path)
    assert run.status == 1
    assert run.err.startswith(f"{path}:4:7: error: {BROADCAST_MESSAGE}\n")


def test_verifier_errors_of_every_chunk_are_reported_at_file_lines(opt, write):
    text = BAD_VERIFY + "// -----\n" + GOOD + "// -----\n" + BAD_VERIFY
    path = write("chunks.mlir", text)
    run = opt(path, "--split-input-file")
    first = line_of(text, BAD_BROADCAST)
    second = line_of(text, BAD_BROADCAST, start_line=first + 1)
    errors = [line for line in run.err.splitlines() if ": error: " in line]
    assert errors == [
        f"{path}:{first}:3: error: {BROADCAST_MESSAGE}",
        f"{path}:{second}:3: error: {BROADCAST_MESSAGE}",
    ]
    assert run.status == 1
    assert "func.func @g" in run.out  # the valid middle chunk is printed
    assert "// -----" not in run.out  # separators only go between printed chunks


def test_a_valid_file_succeeds_silently(opt, write):
    run = opt(write("good.mlir", GOOD))
    assert (run.status, run.err) == (0, "")
    assert "%dead = mir.neg %a" in run.out


def test_a_chunk_of_only_comments_is_an_empty_module(opt, write):
    run = opt(write("comments.mlir", GOOD + "// -----\n// nothing here\n"), "--split-input-file")
    assert (run.status, run.err) == (0, "")
    assert run.out.endswith("// -----\nbuiltin.module {\n}\n\n")


# Pass failures ---------------------------------------------------------------------------------

RAISED = {
    "verify": "raised a verify exception",
    "pass-failed": "raised a pass failure",
    "value": "ValueError: raised a value error",
}


@pytest.mark.parametrize("kind", sorted(RAISED))
def test_pass_exception_is_located_at_the_op_the_pass_ran_on(opt, write, kind):
    path = write("good.mlir", GOOD)
    run = opt(path, "-p", f"test-raise{{kind={kind}}}")
    assert run.status == 1
    assert run.out == ""
    lines = run.err.splitlines()
    assert lines[0] == f"{path}:1:1: error: {RAISED[kind]}"  # the (implicit) module
    assert f"{path}:1:1: note: while running pass 'test-raise'" in lines
    assert any('note: see current operation: "builtin.module"()' in line for line in lines)
    assert "Traceback" not in run.err


def test_pass_exception_in_func_anchor_is_located_at_the_function(opt, write):
    path = write("good.mlir", GOOD)
    run = opt(path, "-p", "func.func(test-raise{kind=pass-failed})")
    assert run.status == 1
    assert run.err.startswith(f"{path}:1:1: error: raised a pass failure\n")
    assert 'see current operation: "func.func"() <{sym_name = "f"' in run.err


def test_pass_failure_shows_the_op_it_ran_on_without_its_body(opt, write):
    path = write("good.mlir", GOOD)
    module = opt(path, "-p", "test-raise{kind=value}")
    assert module.err.endswith(f'{path}:1:1: note: see current operation: "builtin.module"() ({{...}}) : () -> ()\n')
    function = opt(path, "-p", "func.func(test-raise{kind=pass-failed})")
    assert function.err.endswith(
        'note: see current operation: "func.func"() <{sym_name = "f", function_type = '
        "(tensor<2x3xf32>) -> tensor<2x3xf32>}> ({...}) : () -> ()\n"
    )
    for run in (module, function):
        assert "mir.relu" not in run.err and len(run.err.splitlines()) == 5


def test_the_whole_module_only_under_print_ir_after_failure(opt, write):
    path = write("good.mlir", GOOD)
    run = opt(path, "-p", "test-raise{kind=value}", "--mlir-print-ir-after-failure")
    dump, diagnostic = run.err.split(f"{path}:1:1: error:")
    assert dump.startswith("// -----// IR Dump After test-raise Failed")
    assert "mir.relu" in dump and "mir.relu" not in diagnostic


def test_rlx_grad_error_about_a_function_is_located_at_it(opt, write):
    path = write("good.mlir", GOOD)
    run = opt(path, "-p", "rlx-grad{func=g}")
    assert run.status == 1
    assert run.err.splitlines()[0] == (
        f"{path}:{line_of(GOOD, '@g')}:1: error: 'rlx-grad' @g has no rlx.param argument: "
        "name the arguments to differentiate with wrt=NAME,..."
    )
    assert run.err.endswith(
        f'{path}:{line_of(GOOD, "@g")}:1: note: see current operation: "func.func"() '
        '<{sym_name = "g", function_type = (tensor<4xf32>) -> tensor<4xf32>}> ({...}) : () -> ()\n'
    )


def test_pass_can_point_at_the_offending_op(opt, write):
    path = write("good.mlir", GOOD)
    run = opt(path, "-p", "test-raise{kind=op}")
    line = line_of(GOOD, "mir.add")
    assert run.status == 1
    assert run.err.startswith(f"{path}:{line}:3: error: this add is wrong\n")


def test_pass_that_breaks_the_ir_is_caught_by_the_verifier(opt, write):
    path = write("good.mlir", GOOD)
    line = line_of(GOOD, "mir.add")
    for pipeline in ("test-break", "func.func(test-break)"):
        run = opt(path, "-p", pipeline)
        assert run.status == 1
        assert run.err.startswith(f"{path}:{line}:3: error: 'mir.add' inferred result type"), pipeline
        assert "note: the IR became invalid in pass 'test-break'" in run.err


def test_no_verification_after_a_pass_that_reports_it_changed_nothing(opt, write):
    """As mlir-opt skips the verifier after a pass that preserved all analyses: the IR the
    last verification accepted is still valid. (A pass that lies is believed: this one
    breaks the IR and says it did not, so its output is printed unverified.)"""
    path = write("good.mlir", GOOD)
    for pipeline in ("test-break-silently", "func.func(test-break-silently)"):
        run = opt(path, "-p", pipeline)
        assert run.status == 0, run.err
        assert "-> tensor<2x3xi32>" in run.out


def test_verify_runs_after_exactly_the_passes_that_changed_the_ir(opt, write, monkeypatch):
    verified: list[str] = []
    real = pipeline_module.verify_after
    monkeypatch.setattr(pipeline_module, "verify_after", lambda pass_, op: (verified.append(pass_.name), real(pass_, op)))
    path = write("good.mlir", GOOD)
    # GOOD has one dead op: rlx-dce removes it; nothing is left for a second rlx-dce,
    # rlx-canonicalize, rlx-fold-casts, or rlx-specialize binding %a to its own shape.
    passes = "rlx-dce,rlx-dce,rlx-canonicalize,rlx-fold-casts,rlx-specialize{shapes=arg0=2x3 func=f},test-options"
    assert opt(path, "-p", passes).status == 0
    assert verified == ["rlx-dce", "test-options"]  # test-options does not report: always verified
    verified.clear()
    dynamic = write(
        "dynamic.mlir",
        "func.func @h(%x: tensor<?x3xf32>) -> tensor<?x3xf32> {\n"
        "  %0 = mir.relu %x : (tensor<?x3xf32>) -> tensor<?x3xf32>\n"
        "  func.return %0 : tensor<?x3xf32>\n}\n",
    )
    assert opt(dynamic, "-p", "rlx-specialize{shapes=arg0=2x3}").status == 0
    assert verified == ["rlx-specialize"]
    verified.clear()
    assert opt(path, "--disable-verify", "-p", "rlx-dce,test-options").status == 0
    assert verified == []


def test_failing_stock_pass_reports_without_traceback(write):
    path = write("good.mlir", GOOD)
    run = cli(path, "-p", 'func.func(mlir-opt{executable="false"})')
    assert run.status == 1
    assert run.err.startswith(f"{path}:1:1: error: Error executing mlir-opt pass\n")
    assert "Traceback" not in run.err


# Exit codes and usage errors ----------------------------------------------------------------


def test_missing_input_file(opt, tmp_path):
    missing = tmp_path / "x.mlir"
    run = opt(missing)
    assert run.status == 1
    assert run.err == f"rlx-opt: error: cannot open '{missing}': No such file or directory\n"


def test_missing_input_file_subprocess(tmp_path):
    run = cli("x.mlir", cwd=tmp_path)
    assert (run.status, run.err) == (1, "rlx-opt: error: cannot open 'x.mlir': No such file or directory\n")


def test_unknown_flag_is_a_usage_error(opt):
    with pytest.raises(SystemExit) as exc:
        opt("--no-such-flag")
    assert exc.value.code == 2


def test_stdin_input_and_errors_name_stdin():
    assert cli(stdin=GOOD).status == 0
    run = cli("-", stdin=BAD_VERIFY)
    assert run.status == 1
    assert run.err.startswith(f"<stdin>:{line_of(BAD_VERIFY, BAD_BROADCAST)}:3: error: {BROADCAST_MESSAGE}")


def test_internal_error_is_one_line_unless_debugging(opt, write, monkeypatch):
    def boom(self, text, offset):
        raise RuntimeError("boom")

    monkeypatch.setattr(rlx_opt.RlxOptMain, "process_chunk", boom)
    path = write("good.mlir", GOOD)
    run = opt(path)
    assert run.status == 1
    assert run.err == "rlx-opt: internal error: RuntimeError: boom (set RLX_DEBUG=1 for a traceback)\n"
    monkeypatch.setenv("RLX_DEBUG", "1")
    with pytest.raises(RuntimeError, match="boom"):
        run_opt([str(path)])


# -o ------------------------------------------------------------------------------------------


def _listing(directory: Path) -> list[str]:
    return sorted(p.name for p in directory.iterdir())


def test_output_file_holds_what_stdout_would(write, tmp_path):
    src = write("good.mlir", GOOD)
    out = tmp_path / "out.mlir"
    stdout_run = cli(src, "-p", "cse")
    file_run = cli(src, "-p", "cse", "-o", out)
    assert (file_run.status, file_run.out, file_run.err) == (0, "", "")
    assert out.read_text() == stdout_run.out
    assert _listing(tmp_path) == ["good.mlir", "out.mlir"]  # no temporary file left behind
    assert stat.S_IMODE(out.stat().st_mode) == 0o666 & ~_umask()


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def test_failed_run_creates_no_output_file(write, tmp_path):
    src = write("bad.mlir", BAD_VERIFY)
    before = src.read_bytes()
    run = cli(src, "-o", tmp_path / "out.mlir")
    assert run.status == 1
    assert _listing(tmp_path) == ["bad.mlir"]
    assert src.read_bytes() == before


def test_failed_run_keeps_an_existing_output_file(write, tmp_path):
    src = write("bad.mlir", BAD_PARSE)
    out = write("out.mlir", "previous contents\n")
    out.chmod(0o640)
    run = cli(src, "--split-input-file", "-o", out)
    assert run.status == 1
    assert out.read_text() == "previous contents\n"
    assert stat.S_IMODE(out.stat().st_mode) == 0o640
    assert _listing(tmp_path) == ["bad.mlir", "out.mlir"]


def test_output_over_existing_file_keeps_its_permissions(opt, write):
    src = write("good.mlir", GOOD)
    out = write("out.mlir", "old\n")
    out.chmod(0o640)
    assert opt(src, "-o", out).status == 0
    assert "func.func @f" in out.read_text()
    assert stat.S_IMODE(out.stat().st_mode) == 0o640


def test_failed_run_never_touches_the_input_even_as_output(write):
    src = write("bad.mlir", BAD_VERIFY)
    before = src.read_bytes()
    run = cli(src, "-o", src)
    assert run.status == 1
    assert src.read_bytes() == before


def test_write_failure_leaves_old_file_and_no_temporary(opt, write, tmp_path, monkeypatch):
    src = write("good.mlir", GOOD)
    out = write("out.mlir", "old\n")

    def refuse(*args):
        raise PermissionError(13, "Permission denied")

    monkeypatch.setattr(rlx_opt.os, "replace", refuse)
    run = opt(src, "-o", out)
    assert run.status == 1
    assert run.err == f"rlx-opt: error: cannot write '{out}': Permission denied\n"
    assert out.read_text() == "old\n"
    assert _listing(tmp_path) == ["good.mlir", "out.mlir"]


def test_output_to_a_character_device_writes_into_it_and_never_replaces_it(opt, write, tmp_path):
    src = write("good.mlir", GOOD)
    device = tmp_path / "null"
    os.mknod(device, 0o666 | stat.S_IFCHR, os.makedev(1, 3))  # a private /dev/null
    assert opt(src, "-o", device).status == 0
    assert stat.S_ISCHR(device.stat().st_mode)
    assert device.stat().st_rdev == os.makedev(1, 3)
    assert _listing(tmp_path) == ["good.mlir", "null"]


def test_output_to_a_fifo_streams_into_it(opt, write, tmp_path):
    src = write("good.mlir", GOOD)
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    received: list[str] = []
    reader = threading.Thread(target=lambda: received.append(fifo.read_text()))
    reader.start()
    assert opt(src, "-o", fifo).status == 0
    reader.join(timeout=10)
    assert "func.func @f" in received[0]
    assert stat.S_ISFIFO(fifo.stat().st_mode)


def test_output_through_a_symlink_replaces_the_target_and_keeps_the_link(opt, write, tmp_path):
    src = write("good.mlir", GOOD)
    target = write("real.mlir", "old\n")
    link = tmp_path / "link.mlir"
    link.symlink_to(target)
    assert opt(src, "-o", link).status == 0
    assert link.is_symlink()
    assert "func.func @f" in target.read_text()


def test_output_through_a_symlink_to_a_device_writes_into_the_device(opt, write, tmp_path):
    src = write("good.mlir", GOOD)
    device = tmp_path / "null"
    os.mknod(device, 0o666 | stat.S_IFCHR, os.makedev(1, 3))
    link = tmp_path / "out.mlir"
    link.symlink_to(device)
    assert opt(src, "-o", link).status == 0
    assert link.is_symlink() and stat.S_ISCHR(device.stat().st_mode)
    assert device.stat().st_rdev == os.makedev(1, 3)
    assert _listing(tmp_path) == ["good.mlir", "null", "out.mlir"]


def test_output_to_dev_stdout_reaches_a_pipe(write):
    src = write("good.mlir", GOOD)
    run = cli(src, "-o", "/dev/stdout")  # stdout is a pipe here, as in `rlx-opt ... -o /dev/stdout | cat`
    assert (run.status, run.err) == (0, "")
    assert run.out == cli(src).out


def test_output_to_a_descriptor_of_a_file_writes_through_the_descriptor(write, tmp_path):
    src = write("good.mlir", GOOD)
    out = write("out.mlir", "kept\n")
    with open(out, "a") as appended:  # `rlx-opt ... -o /dev/stdout >> out.mlir`
        proc = subprocess.run([*_rlx_opt_command(), str(src), "-o", "/dev/stdout"], stdout=appended, timeout=120, check=False)
    assert proc.returncode == 0
    assert out.read_text() == "kept\n" + cli(src).out
    assert _listing(tmp_path) == ["good.mlir", "out.mlir"]


@pytest.mark.skipif(not Path("/proc/version").is_file(), reason="needs Linux's /proc")
def test_output_to_a_pseudo_file_is_a_clear_error(opt, write):
    src = write("good.mlir", GOOD)
    before = Path("/proc/version").read_text()
    run = opt(src, "-o", "/proc/version")
    assert run.status == 1
    assert run.err == "rlx-opt: error: cannot write '/proc/version': cannot create a file in '/proc'\n"
    assert Path("/proc/version").read_text() == before


def _failing_reproducer_run(opt, write, path):
    src = write("good.mlir", GOOD)
    return opt(src, "-p", "test-raise{kind=value}", f"--mlir-pass-pipeline-crash-reproducer={path}")


def test_reproducer_into_a_device_writes_into_it_and_never_replaces_it(opt, write, tmp_path):
    device = tmp_path / "null"
    os.mknod(device, 0o666 | stat.S_IFCHR, os.makedev(1, 3))  # a private /dev/null
    link = tmp_path / "repro.mlir"
    link.symlink_to(device)
    for path in (device, link):
        run = _failing_reproducer_run(opt, write, path)
        assert run.status == 1
        assert f"reproducer generated at '{path}'" in run.err
    assert stat.S_ISCHR(device.stat().st_mode) and device.stat().st_rdev == os.makedev(1, 3)
    assert link.is_symlink()
    assert _listing(tmp_path) == ["good.mlir", "null", "repro.mlir"]


def test_reproducer_through_a_symlink_replaces_the_target_and_keeps_the_link(opt, write, tmp_path):
    target = write("real.mlir", "old\n")
    link = tmp_path / "repro.mlir"
    link.symlink_to(target)
    assert _failing_reproducer_run(opt, write, link).status == 1
    assert link.is_symlink()
    assert "mlir_reproducer" in target.read_text()


def test_reproducer_into_a_fifo_streams_into_it(opt, write, tmp_path):
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    received: list[str] = []
    reader = threading.Thread(target=lambda: received.append(fifo.read_text()), daemon=True)
    reader.start()
    assert _failing_reproducer_run(opt, write, fifo).status == 1
    reader.join(timeout=10)
    assert "mlir_reproducer" in received[0]
    assert stat.S_ISFIFO(fifo.stat().st_mode)


@pytest.mark.parametrize("via", ["itself", "symlink", "hard link"])
def test_reproducer_refuses_to_overwrite_the_input(opt, write, tmp_path, via):
    src = write("good.mlir", GOOD)
    path = {"itself": src, "symlink": tmp_path / "link.mlir", "hard link": tmp_path / "hard.mlir"}[via]
    if via == "symlink":
        path.symlink_to(src)
    elif via == "hard link":
        os.link(src, path)
    run = opt(src, "-p", "test-raise{kind=value}", f"--mlir-pass-pipeline-crash-reproducer={path}")
    assert run.status == 1
    assert run.err == (
        f"rlx-opt: error: --mlir-pass-pipeline-crash-reproducer: '{path}' is the input file; "
        "the reproducer would overwrite it (name another file)\n"
    )
    assert src.read_text() == GOOD


def test_reproducer_that_cannot_be_written_still_reports_the_pass_error(opt, write, tmp_path, monkeypatch):
    def refuse(*args):
        raise PermissionError(13, "Permission denied")

    monkeypatch.setattr(rlx_opt.os, "replace", refuse)
    path = tmp_path / "repro.mlir"
    run = _failing_reproducer_run(opt, write, path)
    assert run.status == 1
    assert run.err.startswith(f"{tmp_path / 'good.mlir'}:1:1: error: ValueError: raised a value error\n")
    assert f"no reproducer: cannot write '{path}': Permission denied\n" in run.err
    assert _listing(tmp_path) == ["good.mlir"]


@pytest.mark.parametrize("target", ["wgsl", "wat", "csl", "llvm", "x86-asm", "riscv-asm", "arm-asm", "mps"])
def test_xdsl_targets_that_take_no_mir_are_refused_in_one_line(opt, write, target):
    run = opt(write("good.mlir", GOOD), "-t", target)
    assert (run.status, run.out) == (1, "")
    assert run.err == (
        f"rlx-opt: error: -t {target}: xDSL's target for other dialects, it does not print MIR (rlx-opt writes: mlir)\n"
    )


def test_only_the_mir_targets_are_listed_and_accepted(opt, write, capsys):
    with pytest.raises(SystemExit):
        run_opt(["--help"])
    assert "output format: mlir (default: mlir)" in " ".join(capsys.readouterr().out.split())
    run = opt(write("good.mlir", GOOD), "-t", "nope")
    assert (run.status, run.err) == (1, "rlx-opt: error: -t nope: not an output format (rlx-opt writes: mlir)\n")
    assert opt(write("good.mlir", GOOD), "-t", "mlir").out == opt(write("good.mlir", GOOD)).out


def test_output_into_missing_directory_is_an_error(opt, write, tmp_path):
    src = write("good.mlir", GOOD)
    target = tmp_path / "no" / "out.mlir"
    run = opt(src, "-o", target)
    assert run.status == 1
    assert run.err == f"rlx-opt: error: cannot write '{target}': No such file or directory\n"


# Printing options --------------------------------------------------------------------------------


def test_locations_are_printed_only_with_print_debuginfo(opt, write):
    path = write("good.mlir", GOOD)
    assert "loc(" not in opt(path).out
    out = opt(path, "--print-debuginfo").out
    assert f'mir.add %0, %1 : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32> loc("{path}":5:3)' in out


def test_print_op_generic_round_trips(opt, write):
    path = write("good.mlir", GOOD)
    generic = opt(path, "--print-op-generic").out
    assert '%0 = "mir.relu"(%a) : (tensor<2x3xf32>) -> tensor<2x3xf32>' in generic
    again = write("generic.mlir", generic)
    assert opt(again).out == opt(path).out


# --list-passes and --help ----------------------------------------------------------------------


def _pass_block(listing: str, name: str) -> list[str]:
    """The lines describing one pass in --list-passes output."""
    lines = listing.splitlines()
    start = lines.index(f"  {name}")
    end = next((i for i in range(start + 1, len(lines)) if not lines[i].startswith("      ")), len(lines))
    return lines[start:end]


def test_list_passes_shows_names_descriptions_and_option_defaults(opt):
    run = opt("--list-passes")
    assert run.status == 0
    quoting = "          (in xdsl-opt, quote any value with characters other than letters, digits, _ and -)"
    assert _pass_block(run.out, "test-options") == [
        "  test-options",
        "      Test pass with one option of each kind, documented over two lines.",
        "      --count=<int> (default: 3)",
        "      --label=<str> (optional)",
        quoting,
        "      --dims=<tuple[int, ...]> (default: 1,2)",
        "      --flag=<bool> (default: false)",
        '      --mode=<str> (default: "fast")',
        quoting,
    ]
    assert _pass_block(run.out, "test-required") == ["  test-required", "      (no description)", "      --size=<int> (required)"]
    assert _pass_block(run.out, "test-syntax")[2:] == ["      --pairs=KEY=VALUE,... (default: empty)", quoting]


def test_list_passes_says_how_to_write_specialize_bindings(opt):
    block = _pass_block(opt("--list-passes").out, "rlx-specialize")
    assert block[2:] == [
        "      --shapes=NAME=DIMS,... (default: empty)",
        "          (in xdsl-opt, quote any value with characters other than letters, digits, _ and -, "
        'as in shapes="x=2x8x32")',
        "      --func=NAME (optional)",
        "          (in xdsl-opt, quote any value with characters other than letters, digits, _ and -)",
    ]


def test_list_passes_covers_rlx_and_xdsl_passes(opt):
    out = opt("--list-passes").out
    rlx_part, other_part = out.split("Other passes (xDSL and plugins):")
    assert rlx_part.startswith("RLX passes:\n")
    for name, loader in get_all_passes().items():
        doc_first_line = inspect.getdoc(loader()).splitlines()[0]
        block = _pass_block(rlx_part, name)
        assert block[1].strip().startswith(doc_first_line)
        fields = [f.name.replace("_", "-") for f in dataclasses.fields(loader())]
        options = [line.strip().split("=")[0] for line in block[2:] if line.strip().startswith("--")]
        assert options == [f"--{f}" for f in fields]
    assert _pass_block(other_part, "canonicalize")[1].strip() == "Applies all canonicalization patterns."
    assert "  cse\n" in other_part


def test_help_describes_the_tool(opt):
    with pytest.raises(SystemExit) as exc:
        opt("--help")
    assert exc.value.code == 0


def test_help_text_lists_the_main_options():
    run = cli("--help")
    assert run.status == 0
    for fragment in ("--list-passes", "--pass-pipeline", "-p PIPELINE", "--verify-diagnostics",
                     "--split-input-file", "--print-op-generic", "-o FILE", "func.func(", "RLX_DEBUG"):
        assert fragment in run.out, fragment
    assert "RLX passes: " + ", ".join(sorted(get_all_passes())) in run.out


# Pipelines ------------------------------------------------------------------------------------

EQUIVALENT_PIPELINES = [
    ("cse", "builtin.module(cse)"),
    ("rlx-dce,cse", "builtin.module(rlx-dce,cse)"),
    ("func.func(cse),dce", "builtin.module(func.func(cse),dce)"),
    ("func.func(cse, dce), test-count-siblings", "builtin.module(func.func(cse,dce),test-count-siblings)"),
    ("builtin.module(func.func(test-count-siblings))", "builtin.module(func.func(test-count-siblings))"),
    ("test-options{count=4 dims=3,4}", "builtin.module(test-options{count=4 dims=3,4})"),
]


@pytest.mark.parametrize(("short", "mlir"), EQUIVALENT_PIPELINES)
def test_pass_pipeline_and_p_are_equivalent(opt, write, short, mlir):
    path = write("good.mlir", GOOD)
    by_p = opt(path, "-p", short, "--dump-pass-pipeline")
    by_mlir = opt(path, "--pass-pipeline", mlir, "--dump-pass-pipeline")
    assert by_p.status == by_mlir.status == 0
    assert by_p.out == by_mlir.out
    assert by_p.err == by_mlir.err  # the dumped pipeline
    assert by_p.err.startswith("builtin.module(")


def test_dumped_pipeline_is_canonical(opt, write):
    path = write("good.mlir", GOOD)
    run = opt(path, "-p", " func.func( cse ,dce ) , test-options{count=4}", "--dump-pass-pipeline")
    assert run.err == "builtin.module(func.func(cse,dce),test-options{count=4 label dims=1,2 flag=false mode=\"fast\"})\n"


def test_func_anchor_runs_passes_on_each_function_alone(opt, write):
    path = write("good.mlir", GOOD)
    module_level = opt(path, "-p", "test-count-siblings").out
    anchored = opt(path, "-p", "func.func(test-count-siblings)").out
    assert module_level.count("attributes {siblings = 2 : i64}") == 2
    assert anchored.count("attributes {siblings = 1 : i64}") == 2  # each saw only itself
    assert anchored.index("func.func @f") < anchored.index("func.func @g")  # order kept


def test_func_anchor_transforms_every_function(opt, write):
    path = write("good.mlir", GOOD)
    anchored = opt(path, "-p", "func.func(cse)").out
    assert anchored == opt(path, "-p", "cse").out
    assert anchored.count("mir.relu") == 1 and anchored.count("mir.abs") == 1


def test_func_anchor_tolerates_passes_that_erase_the_function(opt, write):
    run = opt(write("good.mlir", GOOD), "-p", "func.func(test-erase-functions,cse)")
    assert run.status == 0
    assert "func.func" not in run.out


def test_module_anchor_inside_root_targets_nested_modules(opt, write):
    text = "builtin.module {\n  func.func @outer() {\n    func.return\n  }\n  builtin.module {\n" \
           "    func.func @inner() {\n      func.return\n    }\n  }\n}\n"
    out = opt(write("nested.mlir", text), "-p", "builtin.module(func.func(test-count-siblings))").out
    assert "@outer() attributes {siblings = 1 : i64}" in out
    assert "siblings" not in out.split("@inner")[1]
    out = opt(write("nested.mlir", text), "-p", "builtin.module(builtin.module(test-count-siblings))").out
    assert "@inner() attributes {siblings = 1 : i64}" in out
    assert "siblings" not in out.split("@inner")[0]


MALFORMED = [
    ("-p", "func.func(cse", "unbalanced '(': 'func.func(' is never closed"),
    ("-p", "cse)", "unbalanced ')'"),
    ("-p", "cse{", "unbalanced '{'"),
    ("-p", "foo.bar(cse)", "unknown anchor 'foo.bar'"),
    ("-p", "func.func(func.func(cse))", "'func.func' cannot be nested in 'func.func'"),
    ("-p", "func.func", "expected '(' after 'func.func'"),
    ("-p", "cse,,dce", "expected a pass name"),
    ("-p", "cse dce", "expected ','"),
    ("-p", "no-such-pass", "unknown pass 'no-such-pass'"),
    ("-p", "func.func(no-such-pass)", "unknown pass 'no-such-pass'"),
    ("-p", "test-options{bogus=1}", "invalid options for pass 'test-options'"),
    ("-p", "test-options{count=many}", "invalid options for pass 'test-options'"),
    ("-p", "test-options{count=1,2 flag}", "invalid options for pass 'test-options'"),
    ("-p", "test-options{count=1,count=2}", "invalid options for pass 'test-options'"),
    ("-p", "test-required", "invalid options for pass 'test-required'"),
    ("-p", "test-options{count=1;}", "invalid options for pass 'test-options'"),
    ("-p", "test-options{count=4 =2}", "invalid pass pipeline: Expected argument name here"),
    ("-p", "test-options{dims=1,,2}", "invalid pass pipeline: Unknown argument value"),
    ("-p", "test-options{a.b=1}", "invalid pass pipeline: Unknown token"),
    ("-p", 'test-options{label="unterminated}', "unbalanced '{'"),
    ("--pass-pipeline", "cse", "expected 'builtin.module(...)' around the passes"),
    ("--pass-pipeline", "builtin.module(cse", "unbalanced '('"),
]


@pytest.mark.parametrize(("flag", "pipeline", "message"), MALFORMED)
def test_malformed_pipelines_are_rejected_clearly(opt, write, flag, pipeline, message):
    run = opt(write("good.mlir", GOOD), flag, pipeline)
    assert run.status == 1
    assert run.out == ""
    assert run.err.startswith("rlx-opt: error: ")
    assert message in run.err.splitlines()[0]
    assert f"  {pipeline}\n" in run.err  # the pipeline is quoted, with a caret


def test_malformed_pipeline_subprocess_has_no_traceback(write):
    run = cli(write("good.mlir", GOOD), "--pass-pipeline", "builtin.module(func.func(cse)")
    assert run.status == 1
    assert run.err.startswith("rlx-opt: error: invalid pass pipeline: unbalanced '('")
    assert "Traceback" not in run.err


def test_p_and_pass_pipeline_together_is_a_usage_error(opt, write):
    with pytest.raises(SystemExit) as exc:
        opt(write("good.mlir", GOOD), "-p", "cse", "--pass-pipeline", "builtin.module(cse)")
    assert exc.value.code == 2


# Pass options ---------------------------------------------------------------------------------

DYNAMIC = """\
func.func @mlp(%x: tensor<?x8xf32> {rlx.name = "x"}, %w: tensor<8x?xf32> {rlx.name = "w"}) -> tensor<?x?xf32> {
  %0 = mir.matmul %x, %w : (tensor<?x8xf32>, tensor<8x?xf32>) -> tensor<?x?xf32>
  %1 = mir.relu %0 : (tensor<?x?xf32>) -> tensor<?x?xf32>
  func.return %1 : tensor<?x?xf32>
}
"""

BOUND = [
    '  func.func @mlp(%x: tensor<2x8xf32> {rlx.name = "x"}, %w: tensor<8x16xf32> {rlx.name = "w"}) -> tensor<2x16xf32> {',
    "    %0 = mir.matmul %x, %w : (tensor<2x8xf32>, tensor<8x16xf32>) -> tensor<2x16xf32>",
    "    %1 = mir.relu %0 : (tensor<2x16xf32>) -> tensor<2x16xf32>",
    "    func.return %1 : tensor<2x16xf32>",
]

UNQUOTED_AND_QUOTED = [
    ("-p", "rlx-specialize{shapes=x=2x8,w=8x16}", 'rlx-specialize{shapes="x=2x8","w=8x16"}'),
    (
        "--pass-pipeline",
        "builtin.module(rlx-specialize{shapes=x=2x8,w=8x16})",
        'builtin.module(rlx-specialize{shapes="x=2x8","w=8x16"})',
    ),
    ("-p", "func.func(rlx-specialize{shapes=x=2x8,w=8x16 func=mlp})", 'func.func(rlx-specialize{shapes="x=2x8","w=8x16" func="mlp"})'),
    (
        "--pass-pipeline",
        "builtin.module(func.func(rlx-specialize{shapes=x=2x8,w=8x16}))",
        'builtin.module(func.func(rlx-specialize{shapes="x=2x8","w=8x16"}))',
    ),
    ("-p", 'rlx-specialize{ shapes=x=2x8,"w=8x16"   func=mlp }', 'rlx-specialize{shapes="x=2x8","w=8x16" func=mlp}'),
]


@pytest.mark.parametrize(("flag", "unquoted", "quoted"), UNQUOTED_AND_QUOTED)
def test_pass_option_values_need_no_quotes(opt, write, flag, unquoted, quoted):
    path = write("dynamic.mlir", DYNAMIC)
    plain = opt(path, flag, unquoted, "--dump-pass-pipeline")
    with_quotes = opt(path, flag, quoted, "--dump-pass-pipeline")
    assert plain.status == with_quotes.status == 0
    assert plain.out.splitlines()[1:5] == BOUND
    assert plain.out == with_quotes.out
    assert plain.err == with_quotes.err  # the dumped pipeline
    assert 'shapes="x=2x8","w=8x16"' in plain.err


def test_unquoted_binding_keeps_question_mark_dims(opt, write):
    run = opt(write("dynamic.mlir", DYNAMIC), "-p", "rlx-specialize{shapes=x=?x8,w=8x16}")
    assert run.status == 0, run.err
    assert 'func.func @mlp(%x: tensor<?x8xf32> {rlx.name = "x"}, %w: tensor<8x16xf32> {rlx.name = "w"}) -> tensor<?x16xf32> {' in run.out


def test_unquoted_malformed_binding_is_the_pass_s_error(opt, write):
    path = write("dynamic.mlir", DYNAMIC)
    run = opt(path, "-p", "rlx-specialize{shapes=x=2xq}")
    assert run.status == 1
    assert run.err.startswith(
        f"{path}:1:1: error: malformed binding 'x=2xq': dimension 'q' is not a non-negative integer or '?'\n"
    )


def _options(pipeline: str) -> ModulePass:
    (pass_,) = parse_pipeline(pipeline, TEST_REGISTRY).passes
    return pass_


@pytest.mark.parametrize(
    ("options", "expected"),
    [
        ("count=-2 flag=true dims=3,4", OptionsPass(count=-2, flag=True, dims=(3, 4))),
        ("label=main.f mode=x=1", OptionsPass(label="main.f", mode="x=1")),
        ("mode=?x4", OptionsPass(mode="?x4")),
        ('label="a, b} c" mode="p q"', OptionsPass(label="a, b} c", mode="p q")),
        ('mode="x=1"', OptionsPass(mode="x=1")),
        ("mode=[1,2]", OptionsPass(mode="[1,2]")),
        ("mode=(a,b)", OptionsPass(mode="(a,b)")),
        ("mode=a\\b", OptionsPass(mode="a\\b")),
        ("  count=7   mode=m  ", OptionsPass(count=7, mode="m")),
        ("", OptionsPass()),
    ],
)
def test_option_values_parse_to_python_values(options, expected):
    assert _options(f"test-options{{{options}}}") == expected


def test_list_option_values_split_at_top_level_commas_only():
    assert _options('test-syntax{pairs=a=1,"b=2,3",c=(4,5)}') == SyntaxPass(pairs=("a=1", "b=2,3", "c=(4,5)"))


def test_options_round_trip_through_the_dumped_pipeline():
    first = parse_pipeline("func.func(test-options{label=main.f mode=x=?x4 dims=1,2})", TEST_REGISTRY)
    again = parse_pipeline(str(first), TEST_REGISTRY)
    assert again == first
    assert str(again) == 'builtin.module(func.func(test-options{label="main.f" mode="x=?x4"}))'


# --verify-diagnostics ---------------------------------------------------------------------------

ALL_EXPECTED = f"""\
// Every way of writing an expectation, each met exactly once.
func.func @next_line(%a: tensor<2x3xf32>, %b: tensor<4xf32>) -> tensor<2x3xf32> {{
  // expected-error@+1 {{{{do not broadcast}}}}
  {BAD_BROADCAST}
  func.return %a : tensor<2x3xf32>
}}

// -----

func.func @same_line(%a: tensor<2x3xf32>, %b: tensor<4xf32>) -> tensor<2x3xf32> {{
  {BAD_BROADCAST} // expected-error {{{{{BROADCAST_MESSAGE}}}}}
  func.return %a : tensor<2x3xf32>
}}

// -----

func.func @previous_line(%a: tensor<2x3xf32>, %b: tensor<4xf32>) -> tensor<2x3xf32> {{
  {BAD_BROADCAST}
  // expected-error@-1 {{{{shapes [2, 3], [4]}}}}
  func.return %a : tensor<2x3xf32>
}}

// -----

func.func @above(%a: tensor<2x3xf32>, %b: tensor<4xf32>) -> tensor<2x3xf32> {{
  {BAD_BROADCAST}
  // expected-note@above {{{{}}}}
  // expected-error@above {{{{'mir.add'}}}}
  func.return %a : tensor<2x3xf32>
}}

// -----

func.func @below(%a: tensor<2x3xf32>, %b: tensor<4xf32>) -> tensor<2x3xf32> {{
  // expected-error@below {{{{do not broadcast}}}}
  // expected-remark@+1 {{{{}}}}
  {BAD_BROADCAST}
  func.return %a : tensor<2x3xf32>
}}

// -----

func.func @regex(%a: tensor<2x3xf32>, %b: tensor<4xf32>) -> tensor<2x3xf32> {{
  // expected-error-re@+1 {{{{shapes [{{{{[0-9, ]+}}}}], [4] do not}}}}
  {BAD_BROADCAST}
  func.return %a : tensor<2x3xf32>
}}

// -----

func.func @parse_error(%a: tensor<2x3xf32>) -> tensor<2x3xf32> {{
  // expected-error@+1 {{{{use of undefined value '%nope'}}}}
  %0 = mir.relu %nope : (tensor<2x3xf32>) -> tensor<2x3xf32>
  func.return %0 : tensor<2x3xf32>
}}
"""


def test_verify_diagnostics_all_met_is_silent_success(opt, write):
    # The note and remark expectations above are unmet on purpose, so drop them first.
    text = "\n".join(line for line in ALL_EXPECTED.splitlines() if "-note@" not in line and "-remark@" not in line)
    run = opt(write("expected.mlir", text + "\n"), "--split-input-file", "--verify-diagnostics")
    assert (run.status, run.out, run.err) == (0, "", "")


def test_verify_diagnostics_reports_unmet_note_and_remark(opt, write):
    path = write("expected.mlir", ALL_EXPECTED)
    run = opt(path, "--split-input-file", "--verify-diagnostics")
    note, remark = line_of(ALL_EXPECTED, "expected-note"), line_of(ALL_EXPECTED, "expected-remark")
    assert run.status == 1
    assert run.err.splitlines()[0::3] == [
        f'{path}:{note}:6: error: expected note "" was not produced',
        f'{path}:{remark}:6: error: expected remark "" was not produced',
    ]


def test_verify_diagnostics_reports_an_unexpected_error(opt, write):
    path = write("bad.mlir", BAD_VERIFY)
    run = opt(path, "--verify-diagnostics")
    line = line_of(BAD_VERIFY, BAD_BROADCAST)
    assert run.status == 1
    assert run.err.splitlines() == [
        f"{path}:{line}:3: error: unexpected error: {BROADCAST_MESSAGE}",
        f"  {BAD_BROADCAST}",
        "  ^",
    ]


def test_verify_diagnostics_reports_a_missing_error(opt, write):
    text = "func.func @f() {\n  // expected-error@+1 {{never happens}}\n  func.return\n}\n"
    path = write("missing.mlir", text)
    run = opt(path, "--verify-diagnostics")
    assert run.status == 1
    assert run.err.splitlines()[0] == f'{path}:2:6: error: expected error "never happens" was not produced'
    assert "func.func @f" in run.out  # the chunk itself was fine and is printed, as in mlir-opt


def test_verify_diagnostics_requires_the_right_line(opt, write):
    text = BAD_VERIFY.replace(f"  {BAD_BROADCAST}", f"  // expected-error@+2 {{{{do not broadcast}}}}\n  {BAD_BROADCAST}")
    path = write("offbyone.mlir", text)
    run = opt(path, "--verify-diagnostics")
    errors = [line for line in run.err.splitlines() if ": error: " in line]
    assert run.status == 1
    assert errors == [
        f"{path}:{line_of(text, BAD_BROADCAST)}:3: error: unexpected error: {BROADCAST_MESSAGE}",
        f'{path}:{line_of(text, "expected-error")}:6: error: expected error "do not broadcast" was not produced',
    ]


def test_verify_diagnostics_requires_the_message(opt, write):
    text = BAD_VERIFY.replace(f"  {BAD_BROADCAST}", f"  // expected-error@+1 {{{{do broadcast}}}}\n  {BAD_BROADCAST}")
    run = opt(write("wrong.mlir", text), "--verify-diagnostics")
    assert run.status == 1
    assert "unexpected error: " + BROADCAST_MESSAGE in run.err
    assert 'expected error "do broadcast" was not produced' in run.err


def test_verify_diagnostics_matches_pass_failures(opt, write):
    text = "// expected-error@+1 {{raised a pass failure}}\n" + GOOD
    path = write("pass.mlir", text)
    assert opt(path, "--verify-diagnostics", "-p", "func.func(test-raise{kind=pass-failed})").status == 0
    assert opt(path, "--verify-diagnostics").status == 1  # no pass, no error


def test_verify_diagnostics_one_error_per_chunk_in_other_engineers_style(opt, write):
    text = (
        "// RUN: rlx-opt %s --split-input-file --verify-diagnostics\n\n"
        "func.func @a(%x: tensor<4xi32>) -> tensor<4xi32> {\n"
        "  // expected-error@+1 {{'mir.exp' operand must have a floating-point element type}}\n"
        "  %0 = mir.exp %x : (tensor<4xi32>) -> tensor<4xi32>\n"
        "  func.return %0 : tensor<4xi32>\n"
        "}\n\n// -----\n\n"
        "func.func @b(%x: tensor<4xf32>) -> tensor<4xi1> {\n"
        "  // expected-error@+1 {{'mir.relu' inferred result type tensor<4xf32> does not match declared type tensor<4xi1>}}\n"
        "  %0 = mir.relu %x : (tensor<4xf32>) -> tensor<4xi1>\n"
        "  func.return %0 : tensor<4xi1>\n"
        "}\n"
    )
    run = cli(write("invalid.mlir", text), "--split-input-file", "--verify-diagnostics")
    assert (run.status, run.out, run.err) == (0, "", "")


def test_expectation_targets():
    text = "a\n// expected-error@above {{x}}\n// expected-error@below {{y}}\n// expected-warning@+3 {{z}}\n\nb\n"
    found = parse_expectations(LineIndex(text, "f.mlir", line_offset=10))
    assert [(e.severity, e.text, e.line) for e in found] == [
        ("error", "x", 11),
        ("error", "y", 15),
        ("warning", "z", 17),
    ]
    assert [e.written_at.line for e in found] == [12, 13, 14]


# --verify-roundtrip -------------------------------------------------------------------------


def test_verify_roundtrip_passes_ir_that_survives_both_forms(opt, write):
    run = opt(write("ok.mlir", GOOD), "--verify-roundtrip")
    assert run.status == 0 and run.err == ""
    assert "func.func @f" in run.out


def test_verify_roundtrip_names_the_form_and_line_that_changed(opt, write, monkeypatch):
    """A printer whose generic form loses a value: the check reads it back and says where."""
    import rlx_xdsl.tools.rlx_opt as tool

    real = tool.print_ir

    def lossy(op, **options):
        text = real(op, **options)
        return text.replace("f32", "f64") if options.get("print_generic_format") else text

    monkeypatch.setattr(tool, "print_ir", lossy)
    path = write("ok.mlir", GOOD)
    run = opt(path, "--verify-roundtrip")
    assert run.status == 1 and run.out == ""
    assert f"{path}:" in run.err and "error: round-trip: the generic form parses back to different IR; custom line" in run.err
    monkeypatch.setattr(tool, "print_ir", lambda op, **o: "garbage" if o.get("print_generic_format") else real(op, **o))
    run = opt(path, "--verify-roundtrip")
    assert run.status == 1 and "round-trip: the generic form does not parse back" in run.err


def test_disable_verify_in_process_leaves_attribute_verification_on(opt, write):
    """xDSL's --disable-verify switches attribute verifiers off process-wide; run_opt restores them."""
    from xdsl.utils.exceptions import VerifyException

    from rlx_xdsl.dialects.lir.attrs import SlotAttr

    assert opt(write("good.mlir", GOOD), "--disable-verify").status == 0
    with pytest.raises(VerifyException, match="#lir.slot offset must be >= 0, got -1"):
        SlotAttr(-1, 4)
