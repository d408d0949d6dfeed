"""A wheel's dataset names its release and never passes a content hash off as a commit: the
release (package, version), its upload time as the package index reports it (a local index
server here, speaking the JSON simple API as PyPI does), what its commit is, and no date made up."""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from crawler.model.records import PACKAGE_PATTERN, RELEASE_VERSION_PATTERN, SCHEMA_VERSION, SDIST_NAME_PATTERN, UTC_TIME_PATTERN, WHEEL_NAME_PATTERN, Release
from tests.package_index import _Index, pip_uses, release_sdist, release_wheel

UPSTREAM_SHA = "4ba787ec9c0d8e3f5e1a2b3c4d5e6f7a8b9c0d1e"


@pytest.fixture
def index(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A package index on localhost that pip downloads from and errcat asks; nothing else."""
    with pip_uses(tmp_path / "index", monkeypatch) as files:
        yield files


def crawl(cli, version: str, out: Path):
    return cli("crawl", "--pypi", f"relpkg=={version}", "--include", "relpkg/**/*.py", "--out", out)


def manifest_of(out: Path) -> dict:
    return json.loads((out / "acme" / "relpkg" / "manifest.json").read_text(encoding="utf-8"))


def record_of(out: Path) -> dict:
    (path,) = (out / "acme" / "relpkg" / "errors").glob("*.json")
    return json.loads(path.read_text(encoding="utf-8"))


def test_a_release_that_records_no_commit_is_named_by_its_release_and_upload_time(index, cli, cache_dir, tmp_path):
    wheel = release_wheel(index, "1.0", None)
    _Index.times[wheel.name] = "2024-06-01T04:29:44.284977Z"
    result = crawl(cli, "1.0", tmp_path / "out")
    assert result.exit_code == 0, result.output
    manifest = manifest_of(tmp_path / "out")
    assert manifest["schema_version"] == SCHEMA_VERSION
    assert manifest["release"] == {
        "package": "relpkg",
        "version": "1.0",
        "uploaded": "2024-06-01T04:29:44.284977+00:00",
        "wheel": wheel.name,
        "commit": "files",
    }
    assert manifest["commit_date"] is None and manifest["upstream_commit"] is None
    assert manifest["source"] == "pypi:relpkg==1.0"  # no note about hashes: the release says what the commit is
    assert any("json" in accept for accept in _Index.asked)
    record = record_of(tmp_path / "out")
    assert record["provenance"]["commit_date"] is None
    assert record["provenance"]["permalinks"] == {"basis": "none", "reason": record["provenance"]["permalinks"]["reason"]}
    # the page names the release, never the digest as a commit
    shown = cli("show", record["id"], "--data", tmp_path / "out", "--no-pager", "--color", "never")
    assert shown.exit_code == 0, shown.output
    assert "at relpkg==1.0 (" in shown.output and manifest["commit"][:12] not in shown.output
    # asked once: the upload time is kept beside the cached wheel, and a second crawl is the same
    asked = len(_Index.asked)
    again = crawl(cli, "1.0", tmp_path / "again")
    assert again.exit_code == 0, again.output
    assert len(_Index.asked) == asked
    assert (tmp_path / "again" / "acme" / "relpkg" / "manifest.json").read_bytes() == (tmp_path / "out" / "acme" / "relpkg" / "manifest.json").read_bytes()


def test_a_release_that_records_its_commit_names_it(index, cli, cache_dir, tmp_path):
    wheel = release_wheel(index, "2.0", f"__commit_id__ = commit_id = '{UPSTREAM_SHA}'\n")
    _Index.times[wheel.name] = "2025-01-02T03:04:05+00:00"
    (tmp_path / "errcat.toml").write_text(
        '[upstreams.relpkg]\nurl = "https://github.com/acme/relpkg"\npypi = "relpkg"\ninclude = ["relpkg/**/*.py"]\n'
        'version_file = "relpkg/_version.py"\ntag = "v{version}"\n',
        encoding="utf-8",
    )
    result = cli("crawl", "--config", tmp_path / "errcat.toml", "--upstream", "relpkg", "--pypi", "relpkg==2.0", "--out", tmp_path / "out")
    assert result.exit_code == 0, result.output
    manifest = manifest_of(tmp_path / "out")
    assert manifest["commit"] == UPSTREAM_SHA and manifest["release"]["commit"] == "recorded"
    assert manifest["release"]["uploaded"] == "2025-01-02T03:04:05+00:00" and manifest["commit_date"] is None
    assert record_of(tmp_path / "out")["provenance"]["permalinks"] == {"basis": "commit", "rev": UPSTREAM_SHA}


@pytest.mark.parametrize(
    "said", [None, "yesterday", "2024-06-01T04:29:44", 12, "2024-06-01T04:29:44Z\n<script>", "0001-01-01T00:00:00+01:00", "9999-12-31T23:59:59-01:00"]
)
def test_an_upload_time_the_index_does_not_give_is_not_invented(index, cli, cache_dir, tmp_path, said):
    """No time, one that does not parse, one with no offset, a number, one with more after it,
    one that is no time in UTC (the first hour of year 1 east of Greenwich, the last of 9999 west
    of it: an OverflowError to convert): the release's upload time is null, never a date taken
    from elsewhere, never a traceback."""
    wheel = release_wheel(index, "1.0", None)
    _Index.told_errcat[wheel.name] = said
    result = crawl(cli, "1.0", tmp_path / "out")
    assert result.exit_code == 0, result.output
    manifest = manifest_of(tmp_path / "out")
    assert manifest["release"]["uploaded"] is None and manifest["commit_date"] is None


def test_an_index_page_nested_past_the_json_decoder_is_no_page(index, cli, cache_dir, tmp_path):
    """The index's page of the package as 200,000 nested arrays (within the page's size limit):
    json.loads raised RecursionError, a traceback out of errcat crawl --pypi. It is a page that is
    no JSON page, as one that does not parse: said in one line, the upload time unknown."""
    release_wheel(index, "1.0", None)
    _Index.errcat_page = b'{"files": ' + b"[" * 200_000 + b"]" * 200_000 + b"}"
    result = crawl(cli, "1.0", tmp_path / "out")
    assert result.exit_code == 0, result.output
    assert "the upload time of relpkg-1.0-py3-none-any.whl is not known: the package index's page of relpkg is not JSON\n" in result.stderr
    assert "Traceback" not in result.output
    assert manifest_of(tmp_path / "out")["release"]["uploaded"] is None


def test_without_an_index_to_ask_the_upload_time_is_unknown(cli, cache_dir, tmp_path, monkeypatch):
    """A find-links directory (PIP_NO_INDEX) has no upload times: none is asked for, none made up."""
    release_wheel(tmp_path / "links", "1.0", None)
    monkeypatch.setenv("PIP_CONFIG_FILE", os.devnull)
    monkeypatch.setenv("PIP_NO_INDEX", "1")
    monkeypatch.setenv("PIP_FIND_LINKS", str(tmp_path / "links"))
    result = crawl(cli, "1.0", tmp_path / "out")
    assert result.exit_code == 0, result.output
    assert manifest_of(tmp_path / "out")["release"]["uploaded"] is None


def test_a_git_dataset_names_no_release(fixture_repo, cli, tmp_path):
    fixture_repo.commit({"pkg/a.py": "raise ValueError('x')\n"})
    result = cli("crawl", "--repo", fixture_repo.path, "--name", "acme/pkg", "--include", "pkg/**/*.py", "--out", tmp_path / "out")
    assert result.exit_code == 0, result.output
    manifest = json.loads((tmp_path / "out" / "acme" / "pkg" / "manifest.json").read_text(encoding="utf-8"))
    assert "release" not in manifest and manifest["commit_date"] == "2026-01-02T03:04:05+00:00"


@pytest.mark.parametrize(
    ("field", "good"),
    [
        ("package", "vllm"),
        ("version", "0.6.6.post1"),
        ("uploaded", "2024-06-01T04:29:44.284977+00:00"),
        ("wheel", "vllm-0.4.3-cp310-cp310-manylinux1_x86_64.whl"),
        ("sdist", "vllm-0.1.0.tar.gz"),
    ],
)
def test_a_release_field_with_a_newline_or_more_around_it_is_refused(field, good):
    from jsonschema import Draft202012Validator
    from pydantic import ValidationError

    from crawler.model.schemas import schema_for

    base = {"package": "vllm", "version": "1.0", "uploaded": None, "wheel": "vllm-1.0-py3-none-any.whl", "commit": "files"}
    if field == "sdist":
        base = {**base, "wheel": None}
    assert Release.model_validate({**base, field: good})
    validator = Draft202012Validator(schema_for("manifest"))
    pattern = {
        "package": PACKAGE_PATTERN,
        "version": RELEASE_VERSION_PATTERN,
        "uploaded": UTC_TIME_PATTERN,
        "wheel": WHEEL_NAME_PATTERN,
        "sdist": SDIST_NAME_PATTERN,
    }[field]
    for bad in (good + "\n", "\n" + good, good + " x", "../" + good):
        with pytest.raises(ValidationError):
            Release.model_validate({**base, field: bad})
        assert not validator.evolve(schema={"type": "string", "pattern": pattern}).is_valid(bad)


def test_a_release_with_no_wheel_is_read_from_its_source_distribution(index, cli, cache_dir, tmp_path):
    """vLLM 0.0.1 to 0.1.3 have only an sdist: it is fetched from the index itself (pip would build
    it, running its setup.py), never extracted, and read under its top directory; what is no
    regular file, or lies outside that directory, is skipped with why."""
    import tarfile

    link = tarfile.TarInfo("relpkg-0.9/relpkg/link.py")
    link.type, link.linkname = tarfile.SYMTYPE, "/etc/passwd"
    hard = tarfile.TarInfo("relpkg-0.9/relpkg/hard.py")
    hard.type, hard.linkname = tarfile.LNKTYPE, "relpkg-0.9/relpkg/__init__.py"
    elsewhere = tarfile.TarInfo("../relpkg/evil.py")
    elsewhere.size = 3
    sdist = release_sdist(index, "0.9", "bad value in an sdist", [link, hard, elsewhere])
    _Index.times[sdist.name] = "2023-06-20T17:49:37.112235Z"
    result = cli("crawl", "--pypi", "relpkg==0.9", "--out", tmp_path / "out")  # the upstream's own globs (relpkg/**)
    assert result.exit_code == 0, result.output
    assert "relpkg==0.9 has no wheel on the index: reading its source distribution relpkg-0.9.tar.gz" in result.output
    manifest = manifest_of(tmp_path / "out")
    assert manifest["source"] == "pypi:relpkg==0.9 (sdist relpkg-0.9.tar.gz)"
    assert manifest["commit_date"] is None
    release = manifest["release"]
    assert release["sdist"] == "relpkg-0.9.tar.gz" and "wheel" not in release  # the one file read, so a fold can order it
    assert release["uploaded"] == "2023-06-20T17:49:37.112235+00:00"  # the index's time of that file, as for a wheel
    assert {(s["path"], s["reason"]) for s in manifest["skipped"]} == {("relpkg/link.py", "symlink"), ("relpkg/hard.py", "hard link")}
    assert record_of(tmp_path / "out")["message"]["text"] == "bad value in an sdist"
    # kept in the cache: a second crawl asks the index for nothing
    again = cli("crawl", "--pypi", "relpkg==0.9", "--out", tmp_path / "again")
    assert again.exit_code == 0 and "no wheel" not in again.output, again.output


def test_an_sdist_that_is_not_what_the_index_lists_is_refused_in_one_line(index, cli, cache_dir, tmp_path):
    sdist = release_sdist(index, "0.9")
    _Index.sdist_hashes[sdist.name] = "0" * 64
    result = cli("crawl", "--pypi", "relpkg==0.9", "--out", tmp_path / "out")
    assert result.exit_code == 2, result.output
    assert result.stderr.strip().splitlines()[-1] == "errcat: the source distribution of relpkg does not have the SHA-256 the index gave"
    assert "Traceback" not in result.output
    assert not (tmp_path / "out").exists()


def test_a_release_with_neither_wheel_nor_sdist_is_no_such_release(index, cli, cache_dir, tmp_path):
    release_wheel(index, "1.0", None)
    result = cli("crawl", "--pypi", "relpkg==0.9", "--out", tmp_path / "out")
    assert result.exit_code == 2 and "Traceback" not in result.output
    assert result.stderr.strip().splitlines()[-1].startswith("errcat: no such release: relpkg==0.9 is not on the package index")


def test_a_release_whose_wheels_are_for_another_python_is_read_from_one_of_them(index, cli, cache_dir, tmp_path):
    """vLLM 0.1.4 to 0.3.3 have cp38-cp311 wheels only: pip on another Python finds none, so errcat
    fetches one itself (checked against the index's SHA-256), and the dataset names it as its release."""
    built = release_wheel(index, "0.8", None, "bad value in an old wheel")
    wheel = built.rename(index / "relpkg-0.8-cp27-cp27mu-manylinux1_x86_64.whl")
    release_sdist(index, "0.8")  # the wheel is taken before the sdist
    _Index.times[wheel.name] = "2023-08-25T04:12:53Z"
    result = crawl(cli, "0.8", tmp_path / "out")
    assert result.exit_code == 0, result.output
    assert "relpkg==0.8: no wheel for this Python; reading relpkg-0.8-cp27-cp27mu-manylinux1_x86_64.whl" in result.output
    manifest = manifest_of(tmp_path / "out")
    assert manifest["release"]["wheel"] == wheel.name and manifest["release"]["version"] == "0.8"
    assert manifest["source"] == "pypi:relpkg==0.8"
    assert record_of(tmp_path / "out")["message"]["text"] == "bad value in an old wheel"


def test_a_release_names_one_file_a_wheel_or_an_sdist():
    from pydantic import ValidationError

    base = {"package": "vllm", "version": "0.1.0", "uploaded": None, "commit": "files"}
    for both_or_none in ({"wheel": "vllm-0.1.0-py3-none-any.whl", "sdist": "vllm-0.1.0.tar.gz"}, {}):
        with pytest.raises(ValidationError, match="one file"):
            Release.model_validate({**base, **both_or_none})
    assert Release.model_validate({**base, "sdist": "vllm-0.1.0.tar.gz"}).model_dump(mode="json") == {**base, "sdist": "vllm-0.1.0.tar.gz"}
