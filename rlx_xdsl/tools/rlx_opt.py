"""rlx-opt: parse, verify, transform and print RLX IR, with MLIR-style diagnostics.

Built on xDSL's `xDSLOptMain` (dialect/pass/target registries and printing); this
module adds what RLX's tests and users need on top of it:

* pipelines in `-p` or MLIR `--pass-pipeline` syntax with `func.func(...)`
  anchoring (`pipeline.py`);
* `FILE:LINE:COL: error:` diagnostics for parse, verifier and pass errors, showing
  the offending op, and never a traceback (`diagnostics.py`, `locations.py`);
* MLIR's `--verify-diagnostics` (`expectations.py`);
* `-o` written atomically, `--list-passes`, `--dump-pass-pipeline`;
* mlir-opt's pipeline debugging flags, with their MLIR names and output, on stderr:
  IR dumps, timing, statistics, crash reproducers (`tools/instrumentation/`, watching
  the passes through `transforms/instrument.py`; `docs/rlx-opt.md` lists every flag).
"""

from __future__ import annotations

import argparse
import dataclasses
import importlib.metadata
import os
import sys
from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager, contextmanager, nullcontext
from dataclasses import dataclass
from io import BytesIO, StringIO
from pathlib import Path
from typing import TYPE_CHECKING, Any

from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Attribute, Operation
from xdsl.passes import ModulePass
from xdsl.utils.arg_spec import parse_spec
from xdsl.xdsl_opt_main import VersionAction, xDSLOptMain

from rlx_xdsl.context import register_dialects
from rlx_xdsl.formats.files import (
    OutputError,
    check_writable,
    make_directory,
    same_file,
    write_new_file,
    write_output,
)
from rlx_xdsl.ir.diagnostics import (
    Diagnostic,
    OpError,
    collecting_notes,
    describe,
    op_diagnostic,
    render,
    verify_located,
)
from rlx_xdsl.ir.locations import LineIndex, SourcePos
from rlx_xdsl.ir.printer import RlxMLIRTarget, print_ir
from rlx_xdsl.ir.source import (
    SPLIT_MARKER,
    TOO_DEEP,
    SourceError,
    decode,
    parse_source,
    split_chunks,
    verify_source,
)
from rlx_xdsl.tools.collector import tool_run_pace
from rlx_xdsl.tools.deep import run_deep
from rlx_xdsl.tools.expectations import check_diagnostics, parse_expectations
from rlx_xdsl.transforms import get_all_passes
from rlx_xdsl.transforms.instrument import PassInstrumentation, instrumented
from rlx_xdsl.transforms.options import describe_options, pass_summary
from rlx_xdsl.transforms.pipeline import (
    PassFailure,
    Pipeline,
    PipelineError,
    parse_pipeline,
    run_passes,
)

if TYPE_CHECKING:  # the debugging aids are imported only when a flag asks for one
    from rlx_xdsl.tools.instrumentation.ir_printing import IRPrinting
    from rlx_xdsl.tools.instrumentation.pass_statistics import PassStatistics
    from rlx_xdsl.tools.instrumentation.reproducer import CrashReproducer
    from rlx_xdsl.tools.instrumentation.timing import Timing

PROG = "rlx-opt"
BROKEN_PIPE = 141  # the shell's status for a process killed by SIGPIPE

DESCRIPTION = """\
Parse an .mlir file (RLX's mir dialect plus builtin, func, arith and
every other xDSL dialect), verify it, run a pass pipeline over it and print the
result. Errors are reported as FILE:LINE:COL: error: ... and the exit status is 1."""

EPILOG = """\
pass pipelines:
  -p 'rlx-dce,func.func(cse,rlx-fusion-pipeline{target=best})'
  --pass-pipeline='builtin.module(rlx-dce,func.func(cse,rlx-fusion-pipeline{target=best}))'
  Both spellings mean the same. Passes inside func.func(...) run on each function
  separately. Pass options are space-separated key=value pairs, lists are
  comma-separated, and values need no quotes:
  -p 'rlx-specialize{shapes=x=2x128,w=?x64 func=main}'
  --list-passes shows every pass with its options.

examples:
  rlx-opt model.mlir -p rlx-dce -o out.mlir
  rlx-opt invalid.mlir --split-input-file --verify-diagnostics
  rlx-opt model.mlir --print-op-generic | rlx-opt

environment:
  RLX_DEBUG=1  show Python tracebacks for internal errors"""


class ToolError(Exception):
    """A usage or I/O problem: reported as `rlx-opt: error: <message>`, exit 1."""


@dataclass
class ChunkResult:
    """What processing one input chunk produced: printed IR or diagnostics."""

    source: LineIndex
    output: str | None = None
    diagnostics: list[Diagnostic] = dataclasses.field(default_factory=list[Diagnostic])


class RlxOptMain(xDSLOptMain):
    """The `rlx-opt` driver: xDSL's registries and printers, RLX's diagnostics and pipelines."""

    version_format = "rlx-opt {version} (xdsl {xdsl_version})"
    pipeline_spec: Pipeline
    # The debugging aids the flags ask for (`setup_instrumentation`).
    instrumentations: Sequence[PassInstrumentation] = ()
    reproducer: CrashReproducer | None = None
    statistics: PassStatistics | None = None
    timing: Timing | None = None
    reproducer_input: str | None = None
    """Under --run-reproducer: the input without its trailer."""

    def __init__(self, args: Sequence[str] | None = None):
        super().__init__(description=DESCRIPTION, args=args)

    # Registries ---------------------------------------------------------------------

    def register_all_dialects(self):
        register_dialects(self.ctx)

    def register_all_targets(self):
        """Only `mlir`: xDSL's other targets (wgsl, wat, csl, llvm, the assemblers, mps)
        print their own dialects, which no RLX pipeline produces; `-t` refuses them."""
        self.available_targets["mlir"] = lambda: RlxMLIRTarget  # constants printed bit-exactly

    def output_target(self, text: str) -> str:
        """`-t`'s value, checked: an output format this tool writes (else a one-line `ToolError`)."""
        name = parse_spec(text).name
        if name not in self.available_targets:
            from xdsl.universe import Universe

            xdsl = name in Universe.get_multiverse().all_targets
            why = "xDSL's target for other dialects, it does not print MIR" if xdsl else "not an output format"
            raise ToolError(f"-t {name}: {why} (rlx-opt writes: {', '.join(self.available_targets)})")
        return text

    def register_all_passes(self):
        super().register_all_passes()
        for name, loader in get_all_passes().items():
            self.available_passes.setdefault(name, loader)

    # Command line ---------------------------------------------------------------------

    def register_all_arguments(self, arg_parser: argparse.ArgumentParser):
        """Our own option list: xDSL's `--verify-diagnostics` means something else."""
        arg_parser.prog = PROG
        rlx_passes = ", ".join(sorted(get_all_passes()))
        arg_parser.epilog = f"RLX passes: {rlx_passes} (plus every xDSL pass; see --list-passes)\n\n{EPILOG}"
        arg_parser.formatter_class = argparse.RawDescriptionHelpFormatter
        version = self.version_format.replace("{version}", _rlx_version())
        arg_parser.add_argument(
            "-v", "--version", action=VersionAction, version_format=version, help="print the version and exit"
        )

        source = arg_parser.add_argument_group("input")
        source.add_argument("input_file", nargs="?", metavar="INPUT", help="the .mlir file (default or '-': stdin)")
        source.add_argument("-f", "--frontend", choices=list(self.available_frontends), help="input format")
        _add_flags(
            source,
            ("--allow-unregistered-dialect", "accept ops of unknown dialects"),
            ("--no-implicit-module", "require an explicit top-level builtin.module"),
            ("--disable-verify", "skip the verifier (before and after passes)"),
        )

        output = arg_parser.add_argument_group("output")
        output.add_argument("-o", "--output-file", metavar="FILE", help="write to FILE (atomically; untouched on failure)")
        targets = ", ".join(self.available_targets)
        output.add_argument(
            "-t", "--target", default="mlir", type=self.output_target, help=f"output format: {targets} (default: mlir)"
        )
        output.add_argument(
            "--emit",
            choices=("mlir", "stablehlo"),
            default="mlir",
            help="what to write after the passes: the IR (default), or the StableHLO module of one "
            "function, as JAX/XLA lower it (XLA and iree-compile --iree-input-type=stablehlo read it; "
            "needs pip install -e '.[xla]')",
        )
        output.add_argument(
            "--emit-func", metavar="NAME", help="with --emit=stablehlo: the function to export (default: the first)"
        )
        _add_flags(
            output,
            ("--split-input-file", f"process each '{SPLIT_MARKER}'-separated chunk independently"),
            (("--mlir-print-op-generic", "--print-op-generic"), "print ops in MLIR's generic form"),
            ("--print-no-properties", "print properties as attributes"),
            (("--mlir-print-debuginfo", "--print-debuginfo"), 'print op locations: loc("file":line:col)'),
            ("--mlir-print-local-scope", "print attributes and types inline (xDSL always does: accepted for mlir-opt)"),
            ("--syntax-highlight", "colour the output on a terminal"),
        )
        output.add_argument(
            "--mlir-elide-elementsattrs-if-larger",
            type=_count,
            metavar="N",
            help="print dense constants of more than N elements (splats excepted) as dense_resource<__elided__>",
        )

        passes = arg_parser.add_argument_group("pass pipeline")
        spellings = passes.add_mutually_exclusive_group()
        spellings.add_argument("-p", "--passes", default="", metavar="PIPELINE", help="passes to run: 'cse,func.func(dce)'")
        spellings.add_argument("--pass-pipeline", metavar="PIPELINE", help="MLIR form: 'builtin.module(cse,func.func(dce))'")
        passes.add_argument(
            "--fusion-report",
            nargs="?",
            const="text",
            choices=("text", "json"),
            metavar="FORMAT",
            help="print the fusion report (counts before/after the passes, missed fusions and why) "
            "to stderr: text (default) or json",
        )
        passes.add_argument(
            "--dispatch-report",
            nargs="?",
            const="text",
            choices=("text", "json"),
            metavar="FORMAT",
            help="print how each op kind of the input reaches the backend of the pipeline's last "
            "rlx-legalize (else its last rlx-fusion-pipeline's target, else the primitive target): "
            "native, common IR, rewritten, unsupported, and whether it is compile-ready, "
            "to stderr: text (default) or json",
        )
        _add_flags(
            passes,
            ("--list-passes", "list the passes with descriptions and options, then exit"),
            ("--dump-pass-pipeline", "print the parsed pipeline, every option spelled out, to stderr"),
            ("--mlir-disable-threading", "accepted for mlir-opt: rlx-opt runs passes on one thread"),
        )
        passes.add_argument(
            "--verify-each",
            type=_boolean,
            nargs="?",
            const=True,
            default=True,
            metavar="BOOL",
            help="verify the IR after each pass that changed it (default: true)",
        )
        self.register_debugging_arguments(arg_parser)

        _add_flags(
            arg_parser.add_argument_group("diagnostics"),
            (
                "--verify-diagnostics",
                "check diagnostics against the input's '// expected-error@+N {{...}}' annotations (as in "
                "mlir-opt): exit 0, silently, iff every diagnostic was expected and every expectation met",
            ),
            ("--parsing-diagnostics", "accepted for xdsl-opt compatibility (parse errors are always diagnostics)"),
            (
                "--verify-roundtrip",
                "after the passes, print the IR in the custom and the generic form, parse each back and "
                "check it prints as the custom form did (as in mlir-opt): an error names the first differing line",
            ),
        )

    def register_debugging_arguments(self, arg_parser: argparse.ArgumentParser) -> None:
        """mlir-opt's pipeline debugging flags (docs/rlx-opt.md): reports and dumps go to stderr."""
        dumps = arg_parser.add_argument_group("IR printing (to stderr)")
        for when in ("before", "after"):
            dumps.add_argument(
                f"--mlir-print-ir-{when}",
                action="append",
                default=[],
                metavar="PASS[,PASS]",
                help=f"print the IR {when} each run of the named passes",
            )
        _add_flags(
            dumps,
            ("--mlir-print-ir-before-all", "print the IR before every pass"),
            (("--mlir-print-ir-after-all", "--print-between-passes"), "print the IR after every pass"),
            ("--mlir-print-ir-after-change", "with the after flags: only after passes that changed the IR"),
            ("--mlir-print-ir-after-failure", "print the IR as a failing pass left it"),
            ("--mlir-print-ir-module-scope", "print the whole module, not only the op a func.func(...) pass ran on"),
        )
        dumps.add_argument(
            "--mlir-print-ir-tree-dir",
            metavar="DIR",
            help="write each dump to its own file under DIR (DIR/builtin_module_no-symbol-name/func_func_f/0_0_cse.mlir)",
        )
        timing = arg_parser.add_argument_group("timing (to stderr)")
        _add_flags(timing, (("--mlir-timing", "--time-passes"), "report the time of parsing, each pass and output"))
        timing.add_argument(
            "--mlir-timing-display", choices=("list", "tree"), default="tree", help="the report's layout (default: tree)"
        )
        crashes = arg_parser.add_argument_group("crash reproducers")
        crashes.add_argument(
            "--mlir-pass-pipeline-crash-reproducer",
            metavar="FILE",
            help="when a pass fails, write the pipeline's input and the pipeline to FILE (replay: --run-reproducer)",
        )
        _add_flags(
            crashes,
            ("--mlir-pass-pipeline-local-reproducer", "narrow the reproducer to the failing pass and its input"),
            ("--run-reproducer", "run the pipeline named in the input's reproducer trailer"),
        )
        statistics = arg_parser.add_argument_group("statistics (to stderr)")
        _add_flags(statistics, ("--mlir-pass-statistics", "report each pass's counters (rewrites per pattern, ...)"))
        statistics.add_argument(
            "--mlir-pass-statistics-display",
            choices=("list", "pipeline"),
            default="pipeline",
            help="the report's layout (default: pipeline)",
        )

    def setup_pipeline(self):
        """Parse the pipeline once, up front: a bad pipeline is a usage error."""
        args = self.args
        if args.run_reproducer:
            text, require_root = self.read_reproducer(), True
        elif args.pass_pipeline is not None:
            text, require_root = args.pass_pipeline, True
        else:
            text, require_root = args.passes, False
        try:
            self.pipeline_spec = parse_pipeline(
                text,
                self.available_passes,
                require_root=require_root,
                verify_each=not args.disable_verify and args.verify_each,
            )
        except PipelineError as e:
            raise ToolError(str(e)) from e

    def read_reproducer(self) -> str:
        """--run-reproducer: the input's IR (kept for `read_chunks`) and its trailer's pipeline."""
        if self.args.pass_pipeline is not None or self.args.passes:
            raise ToolError("--run-reproducer takes the pipeline from the reproducer; drop -p/--pass-pipeline")
        from rlx_xdsl.tools.instrumentation.reproducer import ReproducerError, read_reproducer

        try:
            reproducer = read_reproducer(self.read_input(), self.input_name)
        except ReproducerError as e:
            raise ToolError(str(e)) from e
        self.reproducer_input = reproducer.ir
        self.args.verify_each = self.args.verify_each and reproducer.verify_each
        return reproducer.pipeline

    # Running --------------------------------------------------------------------------

    @property
    def input_name(self) -> str:
        path = self.args.input_file
        return "<stdin>" if path in (None, "-") else path

    def run(self) -> bool:
        """Process the input; True on success (the exit status is derived from it)."""
        if self.args.list_passes:
            sys.stdout.write(self.list_passes())
            return True
        if self.args.emit == "stablehlo":
            from rlx_xdsl.backends.xla.export import XlaUnavailable, require_jax

            try:
                require_jax()
            except XlaUnavailable as e:
                raise ToolError(f"--emit=stablehlo: {e}") from None
        elif self.args.emit_func is not None:
            raise ToolError("--emit-func needs --emit=stablehlo")
        self.setup_instrumentation()
        if self.args.dump_pass_pipeline:
            from rlx_xdsl.tools.instrumentation.reproducer import pipeline_text

            print(pipeline_text(self.pipeline_spec.passes), file=sys.stderr)
        try:
            return self.run_chunks()
        finally:
            if self.statistics is not None:
                sys.stderr.write(self.statistics.report(self.pipeline_spec.passes))
            if self.timing is not None:
                sys.stderr.write(self.timing.report())

    def setup_instrumentation(self) -> None:
        """The debugging aids the flags ask for (`tools/instrumentation`), checked before any work."""
        args = self.args
        self.instrumentations = []
        printing = self.ir_printing()
        if printing is not None:
            self.instrumentations.append(printing)
        self.reproducer = self.crash_reproducer()
        if self.reproducer is not None:
            self.instrumentations.append(self.reproducer)
        if args.mlir_pass_statistics:
            from rlx_xdsl.tools.instrumentation.pass_statistics import PassStatistics

            self.statistics = PassStatistics(args.mlir_pass_statistics_display)
            self.instrumentations.append(self.statistics)
        if args.time_passes:
            from rlx_xdsl.tools.instrumentation.timing import Timing

            self.timing = Timing(args.mlir_timing_display)
            self.instrumentations.append(self.timing)  # last: its timers start after, and stop before, the others

    def ir_printing(self) -> IRPrinting | None:
        args = self.args
        before_all, after_all = args.mlir_print_ir_before_all, args.print_between_passes
        before = self.pass_names(args.mlir_print_ir_before, "before")
        after = self.pass_names(args.mlir_print_ir_after, "after")
        if not (before_all or before or after_all or after or args.mlir_print_ir_after_failure):
            return None
        from rlx_xdsl.tools.instrumentation.ir_printing import ALL, IRPrinting

        if before_all:
            before = ALL
        if after_all:
            after = ALL
        tree_dir = args.mlir_print_ir_tree_dir
        if tree_dir is not None:
            make_directory(tree_dir)
        return IRPrinting(
            self.print_ir,
            before=before,
            after=after,
            after_change=args.mlir_print_ir_after_change,
            after_failure=args.mlir_print_ir_after_failure,
            module_scope=args.mlir_print_ir_module_scope,
            tree_dir=tree_dir,
            write_file=write_new_file,
        )

    def crash_reproducer(self) -> CrashReproducer | None:
        path = self.args.mlir_pass_pipeline_crash_reproducer
        if path is None:
            return None
        check_writable(path)
        if self.args.input_file not in (None, "-") and same_file(path, self.args.input_file):
            raise ToolError(
                f"--mlir-pass-pipeline-crash-reproducer: '{path}' is the input file; "
                "the reproducer would overwrite it (name another file)"
            )
        from rlx_xdsl.tools.instrumentation.reproducer import CrashReproducer

        return CrashReproducer(
            path,
            local=self.args.mlir_pass_pipeline_local_reproducer,
            passes=self.pipeline_spec.passes,
            verify_each=self.args.verify_each and not self.args.disable_verify,
            print_ir=print_ir,
            write_file=write_output,
        )

    def pass_names(self, values: list[str], when: str) -> frozenset[str]:
        """The pass names of `--mlir-print-ir-{when}=a,b` (repeatable), each a known pass."""
        names = frozenset(name.strip() for value in values for name in value.split(",") if name.strip())
        for name in sorted(names):
            if name not in self.available_passes:
                from rlx_xdsl.ir.suggest import did_you_mean

                hint = did_you_mean(name, self.available_passes)
                raise ToolError(
                    f"--mlir-print-ir-{when}: unknown pass '{name}'{hint} "
                    f"(known passes: {', '.join(sorted(get_all_passes()))}; --list-passes shows all)"
                )
        return names

    def run_chunks(self) -> bool:
        output = StringIO() if self.args.output_file else sys.stdout
        ok = True
        wrote = False
        try:
            chunks = self.read_chunks()
        except SourceError as e:  # e.g. invalid UTF-8
            return self.report(ChunkResult(e.source, diagnostics=[e.diagnostic]))
        for text, offset in chunks:
            result = self.process_chunk(text, offset)
            ok &= self.report(result)
            if result.output is not None:
                output.write((SPLIT_MARKER + "\n" if wrote else "") + result.output)
                output.flush()
                wrote = True
        if ok and self.args.output_file:  # (stdout itself may be a StringIO in-process)
            write_output(self.args.output_file, output.getvalue())
        return ok

    def read_input(self) -> str:
        """The input file's text (stdin's for none or '-')."""
        path = self.args.input_file
        try:
            data = sys.stdin.buffer.read() if path in (None, "-") else Path(path).read_bytes()
        except OSError as e:
            raise ToolError(f"cannot open '{path}': {e.strerror}") from e
        return decode(data, self.input_name)

    def read_chunks(self) -> list[tuple[str, int]]:
        """The input text, split at `// -----` if asked, with each chunk's line offset."""
        text = self.reproducer_input if self.reproducer_input is not None else self.read_input()
        if not self.args.split_input_file:
            return [(text, 0)]
        return split_chunks(text)

    def process_chunk(self, text: str, offset: int) -> ChunkResult:
        """Parse, verify, transform and print one chunk; failures become diagnostics."""
        try:
            module, lines = self.parse(text, offset)
        except SourceError as e:
            return ChunkResult(e.source, diagnostics=[e.diagnostic])
        result = ChunkResult(lines)
        baseline = None
        if self.args.fusion_report:
            from rlx_xdsl.transforms.fusion.report import MirBaseline

            baseline = MirBaseline()
            baseline.offer(module)
        if self.args.dispatch_report:
            sys.stderr.write(self.dispatch_report(module))
        try:
            with collecting_notes() as notes:
                try:
                    self.apply_passes(module, after_each=None if baseline is None else baseline.offer)
                finally:
                    result.diagnostics.extend(notes)
        except OpError as e:
            result.diagnostics.append(op_diagnostic(e.op, e.message, e.note))
            return result
        except PassFailure as e:
            message = TOO_DEEP if isinstance(e.cause, RecursionError) else describe(e.cause)
            result.diagnostics.append(op_diagnostic(e.op, message, f"while running pass '{e.pass_.name}'"))
            return result
        except RecursionError:
            result.diagnostics.append(op_diagnostic(module, TOO_DEEP))
            return result
        if self.args.verify_roundtrip:
            mismatch = self.roundtrip_mismatch(module)
            if mismatch is not None:
                result.diagnostics.append(op_diagnostic(module, mismatch))
                return result
        if baseline is not None:
            from rlx_xdsl.transforms.fusion.report import FusionReport

            sys.stderr.write(FusionReport.analyze(baseline.graph, module).render(self.args.fusion_report))
        try:
            with self.phase("Output"):
                result.output = self.output_resulting_program(module)
        except OpError as e:  # an op that --emit=stablehlo cannot export
            result.diagnostics.append(op_diagnostic(e.op, e.message, e.note))
        except (ToolError, OutputError):
            raise
        except RecursionError:
            result.diagnostics.append(op_diagnostic(module, f"cannot print the result: {TOO_DEEP}"))
        except Exception as e:
            result.diagnostics.append(op_diagnostic(module, f"cannot print the result: {describe(e)}"))
        return result

    def roundtrip_mismatch(self, module: ModuleOp) -> str | None:
        """Why `module` does not survive printing and parsing back (None: it does). The custom
        form is the reference; it and the generic form must each parse to IR that prints as it."""
        custom = print_ir(module)
        for form, text in (("custom", custom), ("generic", print_ir(module, print_generic_format=True))):
            try:
                reparsed, _ = parse_source(self.ctx, text, f"<{form} form>", allow_implicit_module=False)
            except SourceError as e:
                return f"round-trip: the {form} form does not parse back: {e.diagnostic.message}"
            again = print_ir(reparsed)
            if again != custom:
                line = next(
                    (i for i, (a, b) in enumerate(zip(custom.splitlines(), again.splitlines()), 1) if a != b),
                    min(len(custom.splitlines()), len(again.splitlines())) + 1,
                )
                return (
                    f"round-trip: the {form} form parses back to different IR; custom line {line} was "
                    f"'{_line(custom, line)}', now '{_line(again, line)}'"
                )
        return None

    def dispatch_report(self, module: ModuleOp) -> str:
        """The dispatch report of the input for the supported set of the pipeline's last
        `rlx-legalize` or, failing one, its last `rlx-fusion-pipeline`'s target."""
        from rlx_xdsl.transforms.dispatch_report import DispatchReport
        from rlx_xdsl.transforms.fusion.pipeline import FusionPipelinePass
        from rlx_xdsl.transforms.legalize import LegalizePass

        passes = self.pipeline_spec.passes
        legalizers = [p for p in passes if isinstance(p, LegalizePass)]
        fusions = [LegalizePass(target=p.target) for p in passes if isinstance(p, FusionPipelinePass)]
        legalizer = (legalizers or fusions or [LegalizePass()])[-1]
        supported = legalizer.supported_ops(self.ctx)
        return DispatchReport.analyze(module, supported).render(self.args.dispatch_report)

    def parse(self, text: str, offset: int) -> tuple[ModuleOp, LineIndex]:
        """Parse and (unless --disable-verify) verify one chunk; errors are `SourceError`s."""
        verify = not self.args.disable_verify
        frontend = self.args.frontend or "mlir"
        if frontend == "mlir":
            implicit = not self.args.no_implicit_module
            with self.phase("Parser"):
                module, lines = parse_source(
                    self.ctx, text, self.input_name, line_offset=offset, allow_implicit_module=implicit, verify=False
                )
            if verify:
                with self.phase("Verifier"):
                    verify_source(module, lines)
            return module, lines
        lines = LineIndex(text, self.input_name, offset)  # a plugin frontend: no source locations
        try:
            with self.phase("Parser"):
                module = self.available_frontends[frontend](BytesIO(text.encode()))
        except Exception as e:
            raise SourceError(Diagnostic(describe(e), SourcePos(self.input_name, offset + 1, 1)), lines) from e
        if verify:
            try:
                verify_located(module)
            except OpError as e:
                raise SourceError(op_diagnostic(e.op, e.message, e.note), lines) from e
        return module, lines

    def phase(self, name: str) -> AbstractContextManager[None]:
        """Time a phase of the run (`Parser`, `Output`) under --mlir-timing."""
        return self.timing.phase(name) if self.timing is not None else nullcontext()

    def apply_passes(self, prog: ModuleOp, after_each: Callable[[ModuleOp], None] | None = None) -> None:
        """Run each pass, verifying after it as mlir-opt does: unless verification is off, or
        the pass reported that it left the IR alone (the input was verified when parsed);
        then `after_each(prog)` if given (the fusion report's baseline watches the IR)."""
        verify = not self.args.disable_verify and self.args.verify_each
        if self.reproducer is not None:
            self.reproducer.start(prog)
        watchers = tuple(self.instrumentations)
        if after_each is not None:
            watchers += (_AfterEachPass(prog, after_each),)
        with instrumented(*watchers):
            run_passes(self.pipeline_spec.passes, self.ctx, prog, verify=verify)

    def output_resulting_program(self, prog: ModuleOp) -> str:
        """The output text: the MLIR target with rlx-opt's printing options, or the
        StableHLO of one function (`--emit=stablehlo`)."""
        if self.args.emit == "stablehlo":
            return self.emit_stablehlo(prog)
        spec = parse_spec(self.args.target)
        if spec.name != "mlir":
            return super().output_resulting_program(prog)
        target = dataclasses.replace(RlxMLIRTarget.from_spec(spec), **self.printing_options())
        target = dataclasses.replace(target, syntax_highlight=self.args.syntax_highlight)
        output = StringIO()
        target.emit(self.ctx, prog, output)
        return output.getvalue()

    def emit_stablehlo(self, prog: ModuleOp) -> str:
        """`--emit=stablehlo`: JAX's lowering of the function's JAX translation. Not a pass:
        the result is StableHLO text made by JAX/XLA, not xDSL IR (ARCHITECTURE.md)."""
        from rlx_xdsl.backends.xla.export import to_stablehlo

        try:
            return to_stablehlo(prog, self.args.emit_func)
        except KeyError as e:
            from xdsl.dialects import func

            names = ", ".join(f"'{f.sym_name.data}'" for f in prog.ops if isinstance(f, func.FuncOp)) or "none"
            raise ToolError(f"--emit=stablehlo: {e.args[0]} (functions: {names})") from None

    def printing_options(self) -> dict[str, Any]:
        """The printer's options, for the output and for IR dumps alike."""
        return {
            "print_generic_format": self.args.print_op_generic,
            "print_properties_as_attributes": self.args.print_no_properties,
            "print_debuginfo": self.args.print_debuginfo,
            "elide_elements_if_larger": self.args.mlir_elide_elementsattrs_if_larger,
        }

    def print_ir(self, op: Operation) -> str:
        """`op` as an IR dump shows it."""
        return print_ir(op, **self.printing_options())

    def report(self, result: ChunkResult) -> bool:
        """Print the chunk's diagnostics (or, under --verify-diagnostics, the mismatches)."""
        diagnostics, with_context = result.diagnostics, True
        if self.args.verify_diagnostics:
            diagnostics = check_diagnostics(diagnostics, parse_expectations(result.source))
            with_context = False
        for diag in diagnostics:
            sys.stderr.write(render(diag, result.source, with_context))
        if self.reproducer is not None and self.reproducer.note is not None:
            sys.stderr.write(f"{self.input_name}: note: {self.reproducer.note}\n")
            self.reproducer.note = None
        sys.stderr.flush()
        return not any(d.severity == "error" for d in diagnostics)

    # --list-passes ----------------------------------------------------------------------

    def list_passes(self) -> str:
        rlx_names = set(get_all_passes())
        groups = {
            "RLX passes": sorted(n for n in self.available_passes if n in rlx_names),
            "Other passes (xDSL and plugins)": sorted(n for n in self.available_passes if n not in rlx_names),
        }
        lines: list[str] = []
        for title, names in groups.items():
            lines.append(f"{title}:")
            for name in names:
                lines.extend(self._describe_pass(name))
        return "\n".join(lines) + "\n"

    def _describe_pass(self, name: str) -> list[str]:
        try:
            cls = self.available_passes[name]()
        except Exception as e:
            return [f"  {name}", f"      (cannot be loaded: {describe(e)})"]
        lines = [f"  {name}", f"      {pass_summary(cls)}"]
        lines.extend(f"      {line}" for line in describe_options(cls))
        return lines


class _AfterEachPass(PassInstrumentation):
    """Calls `callback(module)` after every pass that succeeds."""

    def __init__(self, module: ModuleOp, callback: Callable[[ModuleOp], None]):
        self.module = module
        self.callback = callback

    def after_pass(self, pass_: ModulePass, ops: Sequence[Operation], changed: bool) -> None:
        self.callback(self.module)


def _add_flags(group: Any, *flags: tuple[str | tuple[str, ...], str]) -> None:
    """Add boolean `--flag`s with their help to a parser or argument group; a tuple of
    spellings is one flag (the first names it, the others are aliases: old rlx-opt names)."""
    for spellings, help in flags:
        names = (spellings,) if isinstance(spellings, str) else spellings
        dest = names[-1].lstrip("-").replace("-", "_")  # the old name: what xDSL's driver reads
        group.add_argument(*names, dest=dest, action="store_true", help=help)


def _line(text: str, number: int) -> str:
    """Line `number` (1-based) of `text`, stripped ("" past its end)."""
    lines = text.splitlines()
    return lines[number - 1].strip() if number <= len(lines) else ""


def _count(text: str) -> int:
    """A non-negative integer option value."""
    try:
        value = int(text)
    except ValueError:
        value = -1
    if value < 0:
        raise argparse.ArgumentTypeError(f"expected a non-negative integer, got '{text}'")
    return value


def _boolean(text: str) -> bool:
    """An MLIR boolean option value: true/false (also 1/0)."""
    value = {"true": True, "1": True, "false": False, "0": False}.get(text.lower())
    if value is None:
        raise argparse.ArgumentTypeError(f"expected true or false, got '{text}'")
    return value


def _rlx_version() -> str:
    try:
        return importlib.metadata.version("rlx-xdsl")
    except importlib.metadata.PackageNotFoundError:
        return "(not installed)"


# Output ----------------------------------------------------------------------------------


def print_or_write(tool: str, output_file: str | None, text: str) -> int:
    """A tool's exit status after sending `text` to stdout, or atomically to `output_file`
    (an error names `tool` and leaves any existing file as it was)."""
    if output_file is None:
        sys.stdout.write(text)
        return 0
    try:
        write_output(output_file, text)
    except (ToolError, OutputError) as e:
        print(f"{tool}: error: {e}", file=sys.stderr)
        return 1
    return 0


# Entry points ----------------------------------------------------------------------------


@contextmanager
def attribute_verification_kept():
    """xDSL's `--disable-verify` turns attribute verification off for the whole process
    (xdsl_opt_main.py replaces `Attribute.__post_init__`); rlx-opt run in-process (a test, a
    program embedding `run_opt`) gives it back when the run ends."""
    saved = Attribute.__post_init__
    try:
        yield
    finally:
        Attribute.__post_init__ = saved  # type: ignore[method-assign]


def run_opt(argv: Sequence[str] | None = None) -> int:
    """Run rlx-opt in-process and return its exit status.

    Every failure becomes a one-line `rlx-opt: error:` (usage, I/O) or
    `rlx-opt: internal error:` (a bug) message; tracebacks only with RLX_DEBUG=1.
    argparse's own exits (--help, --version, bad flags) still raise SystemExit.
    """
    try:
        with tool_run_pace(), attribute_verification_kept():
            return 0 if run_deep(lambda: RlxOptMain(args=argv).run()) else 1
    except (ToolError, OutputError) as e:
        print(f"{PROG}: error: {e}", file=sys.stderr)
    except BrokenPipeError:
        return BROKEN_PIPE
    except KeyboardInterrupt:
        print(f"{PROG}: interrupted", file=sys.stderr)
        return 130
    except SystemExit:
        raise
    except BaseException as e:  # xDSL raises some errors as BaseException
        if os.environ.get("RLX_DEBUG"):
            raise
        print(f"{PROG}: internal error: {describe(e)} (set RLX_DEBUG=1 for a traceback)", file=sys.stderr)
    return 1


def main(argv: Sequence[str] | None = None) -> None:
    status = run_opt(argv)
    if status == BROKEN_PIPE:  # e.g. `rlx-opt big.mlir | head`: stop quietly
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
    sys.exit(status)


if __name__ == "__main__":
    main()
