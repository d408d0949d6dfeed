"""Messages assembled before the raise beyond one expression (issue #19): a message set to one text
per branch, and a list of messages a helper function builds and its caller joins. Extracted from
fixture code, then crawled from a real repository and matched through the real CLI."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.helpers import best_match, crawl_with_config

#: The crawled repository's sources are two of the extractor's cases (tests/extract/test_cases.py).
CASES = Path(__file__).parent / "cases"
BRANCHES = (CASES / "branch_alternatives.py").read_text(encoding="utf-8")

HELPERS = (CASES / "helper_lists.py").read_text(encoding="utf-8")


TOML = """
default = "acme"

[upstreams.acme]
url = "https://github.com/acme/server"
include = ["srv/**/*.py"]
kinds = ["raise", "assert", "log"]
"""


@pytest.fixture
def crawled(fixture_repo, cli, tmp_path):
    files = {"srv/__init__.py": "", "srv/branches.py": BRANCHES, "srv/helpers.py": HELPERS}
    data, records = crawl_with_config(fixture_repo, cli, tmp_path, files, TOML)
    assert cli("validate", data).exit_code == 0
    return data, records


@pytest.mark.slow
@pytest.mark.parametrize(
    "paste, text",
    [
        ("ValueError: No backend was selected.", "Backend B needs compute capability {v} or newer."),
        ("ValueError: Backend B needs compute capability 9.0 or newer.", "Backend B needs compute capability {v} or newer."),
        ("ValueError: Cannot load: Unknown model foo.", "Cannot load: {msg}"),
        (
            "ERROR 11-30 14:21:45 [branches.py:21] Transfer failure: handshake_failed | Context: {'id': 1}",
            "Transfer failure: {failure_type} | Context: {context}",
        ),
        ("ValueError: Adapter rank 64 is greater than max_rank 16.", "{' '.join(error_msg)}"),
        (
            "RuntimeError: Cannot use the backend: tensor parallel size 2 is not supported; the backend was built without it",
            'Cannot use the backend: {"; ".join(why)}',
        ),
    ],
)
def test_match_finds_each_branch_and_each_helper_piece(crawled, cli, paste, text):
    data, records = crawled
    assert best_match(cli, data, paste) == records[text]["id"]


@pytest.mark.slow
def test_match_claims_no_text_the_branches_do_not_set(crawled, cli):
    data, records = crawled
    got = json.loads(cli("match", "--data", data, "--json", "ValueError: Backend C is broken.").stdout)
    assert records["Backend B needs compute capability {v} or newer."]["id"] not in [m["id"] for m in got["matches"]]
