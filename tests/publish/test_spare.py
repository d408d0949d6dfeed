"""The spare (publish.writer._swap_in): the dataset a crawl replaced, kept in the cache to lend
its inodes to the next write, and left alone when it would lend nothing."""

from __future__ import annotations

import os
import shutil

import pytest
from helpers import crawl_widgets as _crawl

from crawler.publish import writer

SOURCE = """
def check(x):
    if x < 0:
        raise ValueError(f"x must be positive, got {x}")
    if x > 9:
        raise KeyError(f"no such key {x}")
    raise TypeError(f"not a number: {x}")
"""


def _inodes(directory):
    return {p.name: (p.lstat().st_dev, p.lstat().st_ino) for p in (directory / "errors").iterdir()}


@pytest.mark.slow
def test_a_spare_whose_files_are_not_the_kept_ones_is_left_alone(fixture_repo, cli, cache_dir, tmp_path, monkeypatch):
    """A dataset in place that is a copy (a checkout, a restored artifact) holds other inodes than
    the spare the last crawl left: linking each kept record into that spare would unlink every
    one of its files first. The write starts empty instead, the spare stays as it was, and the
    bytes are those of a crawl without cache over the same dataset; a spare that holds the kept files is still adopted."""
    fixture_repo.commit({"pkg/__init__.py": "", "pkg/a.py": SOURCE}, tag="v1")
    fixture_repo.commit({"pkg/b.py": "# a comment, no error\n"}, tag="v2")
    fixture_repo.commit({"pkg/c.py": "# another comment\n"}, tag="v3")
    out = tmp_path / "out"
    dataset = out / "acme" / "widgets"
    _crawl(cli, fixture_repo, out, "v1")
    adopted: list[object] = []
    real = writer._adopt
    monkeypatch.setattr(writer, "_adopt", lambda spare, target: adopted.append(spare) or real(spare, target))
    _crawl(cli, fixture_repo, out, "v2")  # the v1 dataset becomes the spare: its files are v2's (linked)
    [spare] = (cache_dir / "spare").iterdir()
    assert _inodes(spare) == _inodes(dataset) and len(_inodes(spare)) == 3
    adopted.clear()

    copy = tmp_path / "copy"
    shutil.copytree(dataset, copy)
    shutil.rmtree(dataset)
    copy.rename(dataset)
    before = _inodes(spare)
    shutil.copytree(out, tmp_path / "plain", symlinks=True)
    assert set(before.values()).isdisjoint(_inodes(dataset).values())
    removed: list[str] = []
    remove = writer._remove
    monkeypatch.setattr(writer, "_remove", lambda path: removed.append(path) or remove(path))
    _crawl(cli, fixture_repo, out, "v3")
    assert adopted == [] and not any("/errors/" in path for path in removed)
    assert _inodes(spare) == before  # not adopted, not replaced
    _crawl(cli, fixture_repo, tmp_path / "plain", "v3", "--no-cache")
    assert writer.read_dataset(dataset) == writer.read_dataset(tmp_path / "plain" / "acme" / "widgets")

    # the spare's files are the dataset's (its earlier copy, linked now): it lends them again
    shutil.rmtree(spare)
    shutil.copytree(dataset, spare, copy_function=os.link)
    fixture_repo.commit({"pkg/d.py": "# a third comment\n"}, tag="v4")
    _crawl(cli, fixture_repo, out, "v4")
    assert adopted == [spare]
