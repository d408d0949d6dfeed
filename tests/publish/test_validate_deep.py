"""JSON nested past the interpreter's recursion limit in a hostile dataset: one more problem,
never a traceback. ``json.loads`` recurses, and its RecursionError once ended ``errcat validate``
(either engine) that way."""

from __future__ import annotations

import gzip

import pytest

DEEP = "[" * 100_000 + "]" * 100_000


@pytest.mark.slow
@pytest.mark.parametrize("engine", ["fast", "reference"])
@pytest.mark.parametrize("where", ["a record file", "a line of errors.jsonl.gz", "the index"])
def test_validate_reports_json_nested_too_deeply_as_a_problem(cli, fixture_repo, tmp_path, engine, where):
    fixture_repo.commit({"pkg/a.py": "def f():\n    raise ValueError('boom')\n"}, tag="v1")
    out = tmp_path / "out"
    assert cli("crawl", "--repo", fixture_repo.path, "--ref", "v1", "--name", "acme/widgets", "--include", "pkg/**/*.py", "--out", out).exit_code == 0
    data = out / "acme" / "widgets"
    if where == "a record file":
        path = next((data / "errors").glob("*.json"))
        path.write_text(path.read_text(encoding="utf-8").replace('"title":', f'"x": {DEEP}, "title":', 1), encoding="utf-8")
        label = f"errors/{path.name}"
    elif where == "the index":
        path = data / "index.json"
        path.write_text(f'{{"x": {DEEP}}}\n', encoding="utf-8")
        label = "index.json"
    else:
        path = data / "errors.jsonl.gz"
        path.write_bytes(gzip.compress(f'{{"x": {DEEP}}}\n'.encode()))
        label = "errors.jsonl.gz:1"
    result = cli("validate", out, "--engine", engine)
    assert result.exit_code == 1, result.output
    assert f"{label}: not valid JSON: nested too deeply" in result.output
    assert "Traceback" not in result.output
