"""``errcat render`` links each page to its record's ``errors/<id>.json`` ("as JSON"): a file that
is not the record ``errors.jsonl.gz`` holds (edited, broken, gone, another crawl's) is refused in
one line before anything is written, so no published page links to a record it does not show."""

from __future__ import annotations

import json

import pytest

SOURCE = "def check(x):\n    if x is None:\n        raise ValueError('x must be set')\n    if x < 0:\n        raise ValueError(f'x is negative: {x}')\n"


def _tree(root):
    return {p.relative_to(root): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


@pytest.fixture
def rendered(cli, fixture_repo, tmp_path):
    fixture_repo.commit({"pkg/a.py": SOURCE}, tag="v1")
    out = tmp_path / "out"
    assert cli("crawl", "--repo", fixture_repo.path, "--ref", "v1", "--name", "acme/widgets", "--include", "pkg/**/*.py", "--out", out).exit_code == 0
    data, site = out / "acme" / "widgets", tmp_path / "site"
    assert cli("render", "--data", data, "--out", site).exit_code == 0
    return data, site


BREAKS = {
    "edited": lambda path, other: path.write_text(path.read_text().replace("x must be set", "x must be set to 7")),
    "another record": lambda path, other: path.write_bytes(other.read_bytes()),
    "not json": lambda path, other: path.write_text('{"id": '),
    "gone": lambda path, other: path.unlink(),
    "a symlink": lambda path, other: (path.unlink(), path.symlink_to(other)),
}


@pytest.mark.slow
@pytest.mark.parametrize("fmt", ["html", "markdown"])
@pytest.mark.parametrize("how", sorted(BREAKS))
def test_a_record_file_that_is_not_the_datasets_record_stops_render(cli, rendered, how, fmt):
    data, site = rendered
    first, other = sorted((data / "errors").glob("*.json"))
    before = _tree(site)
    BREAKS[how](first, other)
    result = cli("render", "--data", data, "--out", site, "--format", fmt)
    assert result.exit_code == 1
    assert result.stderr.startswith("errcat: ") and len(result.stderr.strip().splitlines()) == 1, result.stderr
    assert f"errors/{first.name}" in result.stderr and "Traceback" not in result.output
    assert _tree(site) == before  # the last good site, whole


@pytest.mark.slow
def test_a_record_file_laid_out_otherwise_is_the_same_record(cli, rendered):
    """The files are compared as records, not bytes: layout is no part of a record."""
    data, site = rendered
    first = sorted((data / "errors").glob("*.json"))[0]
    first.write_text(json.dumps(json.loads(first.read_text()), indent=4, sort_keys=True))
    assert cli("render", "--data", data, "--out", site).exit_code == 0


@pytest.mark.slow
@pytest.mark.parametrize("how", sorted(BREAKS))
def test_the_check_given_the_lines_read_refuses_what_it_refuses_reading_them(rendered, how):
    """``render`` hands the check the records the plain reader just read, so the lines are not
    parsed twice: the same files are refused, with the same line naming the same line."""
    from crawler.base.errors import DataError
    from crawler.publish.dataset import check_record_files, load_manifest, load_record_data

    data, _ = rendered
    lines = load_record_data(data, load_manifest(data))
    assert check_record_files(data, lines) == check_record_files(data) == len(lines) == 2
    first, other = sorted((data / "errors").glob("*.json"))
    BREAKS[how](first, other)
    with pytest.raises(DataError) as read_again:
        check_record_files(data)
    with pytest.raises(DataError) as given:
        check_record_files(data, lines)
    assert str(given.value) == str(read_again.value) and f"errors/{first.name}" in str(given.value)
