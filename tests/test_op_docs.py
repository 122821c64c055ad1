"""docs/mir.md, docs/hir.md and docs/lir.md are generated from the dialect definitions; these
tests keep them in sync."""

import importlib.util
from pathlib import Path

from rlx_xdsl.dialects import hir
from rlx_xdsl.dialects.mir import ALL_OPS

ROOT = Path(__file__).resolve().parent.parent


def _load_generator():
    spec = importlib.util.spec_from_file_location("gen_op_docs", ROOT / "scripts" / "gen_op_docs.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


GEN = _load_generator()


def test_docs_mir_md_is_up_to_date():
    committed = (ROOT / "docs" / "mir.md").read_text()
    assert committed == GEN.generate(), "docs/mir.md is stale: run `python scripts/gen_op_docs.py`"


def test_generation_is_deterministic():
    assert GEN.generate() == GEN.generate()


def test_every_op_has_a_section_with_its_format():
    text = GEN.generate()
    for op in ALL_OPS:
        assert f"### `{op.name}`" in text
        fmt = op.get_irdl_definition().assembly_format
        if fmt:
            assert fmt in text


def test_add_section_lists_traits_precision_and_builder():
    section = GEN.generate().split("### `mir.add`", 1)[1].split("### ", 1)[0]
    assert "- **Operands:** `lhs`: TensorType; `rhs`: TensorType" in section
    assert "- **Traits:** Commutative, Pure, WritesInPlace" in section
    assert "- **Precision class:** elementwise" in section
    assert "- **Elementwise:** yes" in section
    assert "- **Builder:** `b.mir.add(lhs, rhs)`" in section


def test_operand_roles_and_views_are_documented():
    text = GEN.generate()
    gather = text.split("### `mir.gather`", 1)[1].split("### ", 1)[0]
    assert "`indices`: TensorType (index)" in gather
    narrow = text.split("### `mir.narrow`", 1)[1].split("### ", 1)[0]
    assert "ViewOf (when: the dims before `axis` are all 1)" in narrow


def test_region_signatures_and_builder_helpers_are_documented():
    section = GEN.generate().split("### `mir.scan`", 1)[1].split("### ", 1)[0]
    assert "`body`: SingleBlockRegion, signature `(carry..., bcast..., x_t...) -> (carry...)`" in section
    assert "- **Builder:** `b.scan(init, body, length, *, bcasts=(), xs=()" in section


def test_enum_property_lists_its_values():
    section = GEN.generate().split("### `mir.compare`", 1)[1].split("### ", 1)[0]
    assert "`predicate`: one of `eq`, `ne`, `lt`, `le`, `gt`, `ge`" in section


def test_check_mode_detects_a_stale_file(tmp_path, capsys):
    stale = tmp_path / "mir.md"
    stale.write_text("# outdated\n")
    assert GEN.main(["--check", "--output", str(stale)]) == 1
    assert "stale" in capsys.readouterr().err
    assert GEN.main(["--output", str(stale)]) == 0
    assert GEN.main(["--check", "--output", str(stale)]) == 0
    assert stale.read_text() == GEN.generate()


def test_docs_hir_md_is_up_to_date():
    committed = (ROOT / "docs" / "hir.md").read_text()
    assert committed == GEN.generate("hir"), "docs/hir.md is stale: run `python scripts/gen_op_docs.py`"


def test_every_hir_op_has_a_section_with_its_label_and_builder():
    text = GEN.generate("hir")
    for op in hir.ALL_OPS:
        section = text.split(f"### `{op.name}`", 1)[1].split("### ", 1)[0]
        assert op.get_irdl_definition().assembly_format in section
        assert f"- **Default label:** `{op.DEFAULT_LABEL}`" in section
        assert f"- **Builder:** `b.hir.{op.name.removeprefix('hir.')}(" in section
    swiglu = text.split("### `hir.swiglu`", 1)[1].split("### ", 1)[0]
    assert "- **Default label:** `swiglu_ffn`" in swiglu


def test_check_mode_covers_both_references(tmp_path, capsys):
    stale = tmp_path / "hir.md"
    stale.write_text("# outdated\n")
    assert GEN.main(["--check", "--dialect", "hir", "--output", str(stale)]) == 1
    assert GEN.main(["--dialect", "hir", "--output", str(stale)]) == 0
    assert stale.read_text() == GEN.generate("hir")
    assert GEN.main(["--check"]) == 0


def test_docs_lir_md_is_up_to_date():
    committed = (ROOT / "docs" / "lir.md").read_text()
    assert committed == GEN.generate("lir"), "docs/lir.md is stale: run `python scripts/gen_op_docs.py`"


def test_every_lir_op_and_attribute_has_a_section():
    from rlx_xdsl.dialects import lir

    text = GEN.generate("lir")
    for op in lir.ALL_OPS:
        assert f"### `{op.name}`" in text and op.get_irdl_definition().assembly_format in text
    for attr in lir.ALL_ATTRIBUTES:
        assert f"### `#{attr.name}`" in text
    plan = text.split("### `lir.plan`", 1)[1].split("### ", 1)[0]
    assert "- **Builder:** `b.lir.plan(*, arena_bytes, naive_bytes, lower_bound_bytes, alignment, strategy=None)`" in plan
    assert "- **Parameters:** one of `prologue`, `steady`, `epilogue`" in text
