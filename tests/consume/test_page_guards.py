"""How a page lists the facts of an entry's site ("How the code gets there")."""

from __future__ import annotations

import json

import pytest

WRAPPED = """def choose(request, parsing_unavailable):
    if parsing_unavailable and request.tool_choice not in (
        None,
        "none",
    ):
        raise ValueError("tool choice needs a tool parser")
"""


@pytest.mark.slow
def test_a_guard_wrapped_over_lines_is_listed_on_one(fixture_repo, cli, tmp_path):
    """A condition vLLM's formatter wraps was listed with its line breaks and the source's
    indentation, a ragged block under 'How the code gets there'; Python reads the one line alike."""
    fixture_repo.commit({"pkg/__init__.py": "", "pkg/tools.py": WRAPPED}, tag="v1")
    out = tmp_path / "out"
    assert cli("crawl", "--repo", fixture_repo.path, "--ref", "v1", "--name", "acme/widgets", "--include", "pkg/**/*.py", "--out", out).exit_code == 0
    data = out / "acme" / "widgets"
    (record_file,) = (data / "errors").glob("*.json")
    record = json.loads(record_file.read_text())
    assert "\n" in record["sites"][0]["facts"]["guards"][0]  # the record keeps the code as written
    page = cli("show", "--data", data, record["id"]).output
    assert '  if parsing_unavailable and request.tool_choice not in (None, "none")\n' in page
    site = tmp_path / "site"
    assert cli("render", "--data", data, "--out", site).exit_code == 0
    html = (site / "errors" / f"{record['id']}.html").read_text()
    assert "<code>if parsing_unavailable and request.tool_choice not in (None, &quot;none&quot;)</code>" in html
