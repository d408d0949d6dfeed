"""The extractor's cases as files: each ``cases/<name>.py`` is a source file, and
``cases/<name>.expected.json`` what ``extract_file`` gives for it (the whole result: sites,
classes, counts, calls, declarations, graph). A new case is a new pair of files, no new test
code, as ruff's fixtures and snapshots or check-jsonschema's example folders.

- A case is extracted as ``pkg/<name>.py`` (module ``pkg.<name>``) with the default kinds
  (raise, assert, log). ``cases/<name>.settings.json``, when there is one, gives other
  ``kinds``, the upstream's ``responses`` or another ``path``.
- What a case shows is said in its own comments, next to the code it is about.
- To write the expected files anew (a new case, or a change of the extractor's output that is
  meant): ``ERRCAT_UPDATE_CASES=1 python -m pytest -n 0 tests/extract/test_cases.py``, then
  read ``git diff tests/extract/cases``: a reviewer diffs the expected files, not the code.
"""

from __future__ import annotations

import difflib
import json
import os
from pathlib import Path

import pytest

from crawler.extract import surface
from crawler.extract.visitor import extract_file

CASES = Path(__file__).parent / "cases"
UPDATE = os.environ.get("ERRCAT_UPDATE_CASES") == "1"
NAMES = sorted(p.name.removesuffix(".py") for p in CASES.glob("*.py"))


def _extract(name: str) -> str:
    """The case's result as its expected file holds it (sorted keys, one field a line)."""
    options_file = CASES / f"{name}.settings.json"
    options = json.loads(options_file.read_text(encoding="utf-8")) if options_file.exists() else {}
    settings = surface.Settings(tuple(options.get("kinds", surface.DEFAULT.kinds)), tuple(options.get("responses", ())))
    result = extract_file(options.get("path", f"pkg/{name}.py"), (CASES / f"{name}.py").read_bytes(), settings)
    return json.dumps(result, indent=1, sort_keys=True, ensure_ascii=False) + "\n"


@pytest.mark.parametrize("name", NAMES)
def test_case(name):
    expected_file = CASES / f"{name}.expected.json"
    got = _extract(name)
    if UPDATE:
        expected_file.write_text(got, encoding="utf-8")
        return
    assert expected_file.exists(), f"no {expected_file.name}: write it with ERRCAT_UPDATE_CASES=1 (see this module's doc)"
    expected = expected_file.read_text(encoding="utf-8")
    if got != expected:
        diff = "".join(difflib.unified_diff(expected.splitlines(True), got.splitlines(True), f"{name}.expected.json", "extracted"))
        pytest.fail(f"{name}: the extraction differs from its expected file (ERRCAT_UPDATE_CASES=1 rewrites it):\n{diff}")


def test_the_cases_folder_holds_only_pairs():
    """An expected file (or settings file) whose case is gone would be kept and never checked."""
    assert NAMES, "no cases found"
    for path in CASES.iterdir():
        stem = path.name.split(".", 1)[0]
        assert path.name.endswith((".py", ".expected.json", ".settings.json")), f"{path.name}: not a case's file"
        assert stem in NAMES, f"{path.name}: no case {stem}.py"
