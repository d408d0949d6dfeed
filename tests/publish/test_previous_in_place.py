"""The dataset in place a crawl keeps records from (publish.dataset.previous_records) is hostile:
only its own files are taken over."""

from __future__ import annotations

import shutil

import pytest
from helpers import crawl_widgets as _crawl

from crawler.publish import writer

SOURCE = """
def check(x):
    if x < 0:
        raise ValueError(f"x must be positive, got {x}")
    raise KeyError(f"no such key {x}")
"""


@pytest.mark.slow
def test_an_errors_directory_that_is_a_symlink_lends_no_file(fixture_repo, cli, cache_dir, tmp_path):
    """errors/ of the dataset in place a symlink to a directory elsewhere holding the very files:
    none of them is linked into the new dataset (it would share its inodes with files outside it,
    which whoever owns them can change after the crawl); the records are written, the same bytes."""
    fixture_repo.commit({"pkg/__init__.py": "", "pkg/a.py": SOURCE}, tag="v1")
    fixture_repo.commit({"pkg/b.py": "# a comment, no error\n"}, tag="v2")
    out = tmp_path / "out"
    dataset = out / "acme" / "widgets"
    _crawl(cli, fixture_repo, out, "v1")
    shutil.copytree(out, tmp_path / "plain", symlinks=True)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (dataset / "errors").rename(elsewhere / "errors")
    (dataset / "errors").symlink_to(elsewhere / "errors", target_is_directory=True)
    outside = {(p.stat().st_dev, p.stat().st_ino) for p in (elsewhere / "errors").iterdir()}
    assert len(outside) == 2
    _crawl(cli, fixture_repo, out, "v2")
    assert not (dataset / "errors").is_symlink()
    inside = {(p.lstat().st_dev, p.lstat().st_ino) for p in (dataset / "errors").iterdir()}
    assert len(inside) == 2 and inside.isdisjoint(outside)
    _crawl(cli, fixture_repo, tmp_path / "plain", "v2", "--no-cache")
    assert writer.read_dataset(dataset) == writer.read_dataset(tmp_path / "plain" / "acme" / "widgets")
