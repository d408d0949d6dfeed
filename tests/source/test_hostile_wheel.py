"""A wheel whose zip entries record a DOS date no calendar has (month 0, day 0: the fields are
stored unchecked, and some tools write zeros) is crawled like any other; it once ended the crawl
in a traceback from ``datetime``. No date is taken from the archive at all now: a wheel dates no
commit, and its dataset names the release instead (``manifest.release``)."""

from __future__ import annotations

import json
import zipfile

import pytest


@pytest.mark.slow
@pytest.mark.parametrize("date_time", [(1980, 0, 0, 0, 0, 0), (2020, 13, 32, 25, 61, 62)])
def test_a_wheel_with_dates_no_calendar_has_is_crawled(cli, cache_dir, tmp_path, date_time):
    wheel = cache_dir / "pypi" / "oddzip-1.0" / "oddzip-1.0-py3-none-any.whl"
    wheel.parent.mkdir(parents=True)
    with zipfile.ZipFile(wheel, "w") as zf:
        for name, text in {
            "oddzip/__init__.py": "def f():\n    raise ValueError('from an odd zip')\n",
            "oddzip-1.0.dist-info/METADATA": "Metadata-Version: 2.1\nName: oddzip\nVersion: 1.0\n"
                                             "Project-URL: Source, https://github.com/acme/oddzip\n",
            "oddzip-1.0.dist-info/top_level.txt": "oddzip\n",
        }.items():
            zf.writestr(zipfile.ZipInfo(name, date_time=date_time), text)
    out = tmp_path / "out"
    result = cli("crawl", "--pypi", "oddzip==1.0", "--out", out)
    assert result.exit_code == 0, result.output
    manifest = json.loads((out / "acme" / "oddzip" / "manifest.json").read_text(encoding="utf-8"))
    assert manifest["commit_date"] is None
    assert manifest["release"] == {"package": "oddzip", "version": "1.0", "uploaded": None,
                                   "wheel": "oddzip-1.0-py3-none-any.whl", "commit": "files"}
    assert manifest["counts"]["entries"] == 1
