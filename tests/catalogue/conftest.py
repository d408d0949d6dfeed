"""Fixtures shared by the catalogue stage's tests."""

from __future__ import annotations

import pytest

from tests.helpers import MEANING_CONFIG, MEANING_TREE


@pytest.fixture
def meaning_repo(fixture_repo, tmp_path):
    """The fixture repository of every derived-meaning mechanism (tag v1) and its errcat.toml."""
    fixture_repo.commit(MEANING_TREE, tag="v1")
    config = tmp_path / "errcat.toml"
    config.write_text(MEANING_CONFIG)
    return fixture_repo, config
