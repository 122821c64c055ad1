"""The repository stands alone: nothing in it cites files outside it (a sibling
`shared/` directory of reference notes, `anchors.md`). Cite public sources instead."""

import re
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
OUTSIDE = re.compile(r"\.\./shared|shared/(reference|seeds)|anchors\.md|rlx-semantics\.md|xdsl-0\.74-notes")


def _tracked_files() -> list[Path]:
    listed = subprocess.run(["git", "ls-files"], cwd=ROOT, capture_output=True, text=True)
    if listed.returncode == 0 and listed.stdout:
        return [ROOT / name for name in listed.stdout.splitlines()]
    skip = {".git", ".venv", "Output", ".hypothesis", "__pycache__"}
    return [p for p in ROOT.rglob("*") if p.is_file() and not skip & set(p.relative_to(ROOT).parts)]


def test_no_file_cites_files_outside_the_repository():
    offenders = []
    for path in _tracked_files():
        if path == Path(__file__).resolve() or not path.is_file():
            continue
        try:
            text = path.read_text(encoding="utf-8")
        except UnicodeDecodeError:
            continue
        for number, line in enumerate(text.splitlines(), 1):
            if OUTSIDE.search(line):
                offenders.append(f"{path.relative_to(ROOT)}:{number}: {line.strip()}")
    assert not offenders, "citations of files outside the repository:\n" + "\n".join(offenders)
