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
            "oddzip-1.0.dist-info/METADATA": "Metadata-Version: 2.1\nName: oddzip\nVersion: 1.0\nProject-URL: Source, https://github.com/acme/oddzip\n",
            "oddzip-1.0.dist-info/top_level.txt": "oddzip\n",
        }.items():
            zf.writestr(zipfile.ZipInfo(name, date_time=date_time), text)
    out = tmp_path / "out"
    result = cli("crawl", "--pypi", "oddzip==1.0", "--out", out)
    assert result.exit_code == 0, result.output
    manifest = json.loads((out / "acme" / "oddzip" / "manifest.json").read_text(encoding="utf-8"))
    assert manifest["commit_date"] is None
    assert manifest["release"] == {"package": "oddzip", "version": "1.0", "uploaded": None, "wheel": "oddzip-1.0-py3-none-any.whl", "commit": "files"}
    assert manifest["counts"]["entries"] == 1


def _sdist(path, members):
    import io
    import tarfile

    with tarfile.open(path, "w:gz") as t:
        for name, data in members:
            info = tarfile.TarInfo(name)
            info.size = len(data)
            t.addfile(info, io.BytesIO(data))
    return path


@pytest.mark.parametrize("damage", ["cut", "not-gzip", "empty"])
def test_a_damaged_sdist_is_one_clear_error(tmp_path, damage):
    """An sdist (vLLM's releases before 0.1.4 have no wheel) cut short, or no gzip at all, is a
    WheelError naming it (a cached one is set aside and fetched again, as a wheel is)."""
    from crawler.source.wheel import WheelError, wheel_info

    path = _sdist(tmp_path / "odd-1.0.tar.gz", [("odd-1.0/PKG-INFO", b"Name: odd\n"), ("odd-1.0/odd/__init__.py", b"x = 1\n" * 5000)])
    raw = path.read_bytes()
    path.write_bytes({"cut": raw[: len(raw) // 2], "not-gzip": b"PK\x03\x04" + raw[4:], "empty": b""}[damage])
    with pytest.raises(WheelError) as caught:
        wheel_info(path)
    assert str(caught.value).startswith(f"{path}: not a readable wheel: ") and "\n" not in str(caught.value)


def test_an_sdists_files_outside_its_directory_are_not_read(tmp_path):
    from crawler.source.wheel import wheel_info

    path = _sdist(
        tmp_path / "odd-1.0.tar.gz",
        [
            ("odd-1.0/PKG-INFO", b"Name: odd\nProject-URL: Source, https://github.com/acme/odd\n"),
            ("odd-1.0/odd/__init__.py", b""),
            ("odd-1.0/setup.py", b""),
            ("other/evil.py", b""),
        ],
    )
    info = wheel_info(path)
    assert info.packages == ["odd/**/*.py"] and info.urls == [("Source", "https://github.com/acme/odd")]
