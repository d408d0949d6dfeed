"""Fixtures shared by the catalogue stage's tests."""

from __future__ import annotations

import pytest

from tests.helpers import MEANING_CONFIG, MEANING_TREE


def _repo(fixture_repo, tmp_path, tree):
    fixture_repo.commit(tree, tag="v1")
    config = tmp_path / "errcat.toml"
    config.write_text(MEANING_CONFIG)
    return fixture_repo, config


@pytest.fixture
def meaning_repo(fixture_repo, tmp_path):
    """The fixture repository of every derived-meaning mechanism (tag v1) and its errcat.toml."""
    return _repo(fixture_repo, tmp_path, MEANING_TREE)


@pytest.fixture
def parsing_meaning_repo(fixture_repo, tmp_path):
    """The same without its test file that does not parse: such a file is tried with libcst in a
    child process, whose timeout on a loaded machine makes the result provisional (never cached)."""
    return _repo(fixture_repo, tmp_path, {k: v for k, v in MEANING_TREE.items() if k != "tests/test_broken.py"})
