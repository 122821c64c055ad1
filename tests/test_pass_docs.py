"""docs/passes.md is generated from the pass registry; these tests keep it in sync, and
check that every example it shows runs through the pipeline parsers it names."""

import importlib.util
import re
from pathlib import Path

import pytest
from xdsl.utils.arg_spec import parse_pipeline as xdsl_parse_pipeline

from rlx_xdsl.transforms import get_all_passes
from rlx_xdsl.transforms.options import check_options, describe_options, pass_options
from rlx_xdsl.transforms.pipeline import PipelineError, parse_pipeline

ROOT = Path(__file__).resolve().parent.parent


def _load_generator():
    spec = importlib.util.spec_from_file_location("gen_pass_docs", ROOT / "scripts" / "gen_pass_docs.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


GEN = _load_generator()
TEXT = GEN.generate()


def _section(name: str) -> str:
    return TEXT.split(f"## `{name}`\n", 1)[1].split("\n## ", 1)[0]


def test_docs_passes_md_is_up_to_date():
    committed = (ROOT / "docs" / "passes.md").read_text()
    assert committed == TEXT, "docs/passes.md is stale: run `python scripts/gen_pass_docs.py`"


def test_the_check_flag_reports_a_stale_file(tmp_path):
    stale = tmp_path / "passes.md"
    stale.write_text("old\n")
    assert GEN.main(["--check", "--output", str(stale)]) == 1
    assert GEN.main(["--output", str(stale)]) == 0
    assert GEN.main(["--check", "--output", str(stale)]) == 0


def test_every_pass_has_a_section_with_every_option():
    for name, loader in get_all_passes().items():
        section = _section(name)
        for option in pass_options(loader()):
            assert f"| `{option.name}` |" in section, (name, option.name)


def test_options_that_stock_xdsl_opt_needs_quoted_say_so():
    section = _section("rlx-specialize")
    assert "| `shapes` | `NAME=DIMS,...` | empty | quote values |" in section
    assert "| `target` | `cpu\\|metal\\|cuda\\|rocm\\|tpu\\|wgpu\\|best` | `cpu` |  |" in _section("rlx-fusion-pipeline")


def test_rlx_grad_modes_are_explained():
    section = _section("rlx-grad")
    assert "`mode=strict` (the default) is an error" in section
    assert "`mode=training` gives\nit a gradient of zeros" in section


def test_the_calibration_file_of_rlx_insert_qdq_is_required_in_docs_and_list_passes():
    section = _section("rlx-insert-qdq")
    assert "| `calibration` | `FILE.json` | required | quote values |" in section
    assert "rlx-opt model.mlir -p 'rlx-insert-qdq{calibration=calibration.json}'" in section
    listed = describe_options(get_all_passes()["rlx-insert-qdq"]())  # what --list-passes prints
    assert listed[0] == "--calibration=FILE.json (required)"
    with pytest.raises(PipelineError, match=r"option 'calibration' is required \(calibration=FILE.json\)"):
        parse_pipeline("rlx-insert-qdq", get_all_passes())


def test_no_default_is_shown_as_an_empty_code_span():
    assert "| `` |" not in TEXT
    assert all('(default: "")' not in line for name, loader in get_all_passes().items() for line in describe_options(loader()))


EXAMPLES = re.findall(r"^(rlx-opt|xdsl-opt) model\.mlir -p '([^']*)'$", TEXT, re.MULTILINE)


def test_every_pass_has_an_example():
    assert {pipeline.split("{")[0] for tool, pipeline in EXAMPLES if tool == "rlx-opt"} == set(get_all_passes())


@pytest.mark.parametrize(("tool", "pipeline"), EXAMPLES)
def test_every_example_is_accepted_by_its_tool(tool, pipeline):
    """rlx-opt's form through rlx-opt's parser; the xdsl-opt form through xDSL's own."""
    passes = get_all_passes()
    if tool == "rlx-opt":
        assert parse_pipeline(pipeline, passes).passes
        return
    (spec,) = xdsl_parse_pipeline(pipeline)
    cls = passes[spec.name]()
    check_options(cls, spec)
    cls.from_spec(spec)


def test_readme_links_the_pass_reference():
    assert "docs/passes.md" in (ROOT / "README.md").read_text()
