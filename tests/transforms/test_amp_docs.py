"""docs/amp.md's tables are the policies' own choices: each row is compared with the policy objects."""

from pathlib import Path

from rlx_xdsl.dialects.traits import Precision
from rlx_xdsl.transforms.amp.policy import CLASS_POLICIES, PROMOTE
from rlx_xdsl.transforms.amp.presets import TORCH_PRESETS, rule_text

DOC = Path(__file__).resolve().parents[2] / "docs" / "amp.md"


def table_after(heading: str) -> list[list[str]]:
    """The rows (cells without backticks) of the first table after `heading`, header excluded."""
    lines = DOC.read_text().split(heading, 1)[1].splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("|"))
    rows = []
    for line in lines[start + 2 :]:
        if not line.startswith("|"):
            break
        rows.append([cell.strip().replace("`", "") for cell in line.strip("|").split(" | ")])
    return rows


def test_the_class_policy_table_is_each_policys_choice_per_class():
    expected = [
        [name, *(policy.by_class.get(c, policy.default) for c in Precision)]
        for name, policy in CLASS_POLICIES.items()
    ]
    rows = table_after("## RLX's policies")
    assert [[row[0].removesuffix(" (default)"), *row[1:]] for row in rows] == expected
    header = DOC.read_text().split("## RLX's policies", 1)[1]
    assert "| policy | " + " | ".join(c.value for c in Precision) + " |" in header


def test_the_preset_table_is_each_presets_rule_per_op():
    tables = [table for table, _ in TORCH_PRESETS.values()]
    listed = sorted({op for table in tables for op in table}, key=lambda op: op.name)
    expected = [
        [op.name, *(rule_text(table.lookup(op) or PROMOTE) for table in tables)] for op in listed
    ]
    assert table_after("## PyTorch's presets") == expected
    assert "| op | " + " | ".join(f"`{name}`" for name in TORCH_PRESETS) + " |" in DOC.read_text()
